//! No file of a workspace crate imports, through others, back from itself: each crate's
//! modules form layers (a helper lives below the features that use it, never in one of them).
//!
//! A module's edges are the `crate::a::b` and `super::a` paths in its file outside comments
//! and its `tests` module, resolved to the deepest module file they name; a module and its
//! own parent or child are one unit and not counted. Read from source text, so the check needs
//! nothing beyond the standard library.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The module path (`a::b`, the crate root `""`) of each `.rs` file under `src`.
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
    let mut found = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative = path
                .strip_prefix(src)
                .expect("under src")
                .with_extension("");
            let mut parts: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            if parts == ["lib"] || parts == ["main"] {
                parts.clear();
            }
            if parts.first().is_some_and(|p| p == "bin") {
                continue;
            }
            found.insert(parts.join("::"), path);
        }
    }
    found
}

/// The file's code: without comment lines and without its `#[cfg(test)] mod tests`.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text);
    let text = text
        .split("#[cfg(test)]\n#[allow(clippy::unwrap_used)]\nmod tests")
        .next()
        .unwrap_or(text);
    text.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The identifiers of a path starting right after `prefix` at each occurrence in `text`.
fn paths_after<'a>(text: &'a str, prefix: &str) -> Vec<Vec<&'a str>> {
    let mut paths = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(prefix) {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let mut path = Vec::new();
        let mut tail = rest;
        loop {
            let end = tail
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(tail.len());
            if end == 0 {
                break;
            }
            path.push(&tail[..end]);
            match tail[end..].strip_prefix("::") {
                Some(next) => tail = next,
                None => break,
            }
        }
        paths.push(path);
    }
    paths
}

fn related(a: &str, b: &str) -> bool {
    a.is_empty()
        || b.is_empty()
        || a == b
        || a.starts_with(&format!("{b}::"))
        || b.starts_with(&format!("{a}::"))
}

/// Each module's imports of other module files of the same crate.
fn edges(modules: &BTreeMap<String, PathBuf>) -> BTreeMap<String, BTreeSet<String>> {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, path) in modules {
        let text = code(&fs::read_to_string(path).expect("readable source"));
        let parent = module.rsplit_once("::").map_or("", |(p, _)| p);
        let mut targets = Vec::new();
        for path in paths_after(&text, "crate::") {
            targets.push(path.join("::"));
        }
        for path in paths_after(&text, "super::") {
            let joined = path.join("::");
            targets.push(if parent.is_empty() {
                joined
            } else {
                format!("{parent}::{joined}")
            });
        }
        for target in targets {
            // The deepest module the path names.
            let mut name = target.as_str();
            let resolved = loop {
                if modules.contains_key(name) {
                    break Some(name);
                }
                match name.rsplit_once("::") {
                    Some((shorter, _)) => name = shorter,
                    None => break None,
                }
            };
            if let Some(resolved) = resolved
                && !related(module, resolved)
            {
                edges
                    .entry(module.clone())
                    .or_default()
                    .insert(resolved.to_owned());
            }
        }
    }
    edges
}

/// The modules of each cycle (strongly connected component with more than one module).
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Reachability is enough at this size: a and b share a cycle when each reaches the other.
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_owned()];
        while let Some(at) = stack.pop() {
            for next in edges.get(&at).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> =
        edges.keys().map(|m| (m, reach(m))).collect();
    let mut placed = BTreeSet::new();
    let mut found = Vec::new();
    for (module, from) in &reached {
        if placed.contains(*module) || !from.contains(*module) {
            continue;
        }
        let cycle: Vec<String> = from
            .iter()
            .filter(|other| {
                reached
                    .get(other)
                    .is_some_and(|back| back.contains(*module))
            })
            .cloned()
            .collect();
        placed.extend(cycle.iter().cloned());
        found.push(cycle);
    }
    found
}

#[test]
fn no_crate_has_an_import_circle_between_its_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root");
    let mut report = Vec::new();
    let mut crates = 0;
    for entry in fs::read_dir(root).expect("workspace root").flatten() {
        let src = entry.path().join("src");
        if !entry.path().join("Cargo.toml").is_file() || !src.is_dir() {
            continue;
        }
        crates += 1;
        let modules = modules(&src);
        let edges = edges(&modules);
        for cycle in cycles(&edges) {
            let lines: Vec<String> = cycle
                .iter()
                .map(|m| {
                    let within: Vec<&String> =
                        edges[m].iter().filter(|t| cycle.contains(t)).collect();
                    format!("    {m} -> {within:?}")
                })
                .collect();
            report.push(format!(
                "{}:\n{}",
                entry.file_name().to_string_lossy(),
                lines.join("\n")
            ));
        }
    }
    assert!(
        crates >= 10,
        "found only {crates} crates under {}",
        root.display()
    );
    assert!(report.is_empty(), "import circles:\n{}", report.join("\n"));
}

#[test]
fn the_check_sees_a_circle() {
    let modules: BTreeMap<String, PathBuf> = BTreeMap::new();
    assert!(edges(&modules).is_empty());
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    edges.entry("a".into()).or_default().insert("b".into());
    edges.entry("b".into()).or_default().insert("c".into());
    edges.entry("c".into()).or_default().insert("a".into());
    edges.entry("d".into()).or_default().insert("a".into());
    assert_eq!(
        cycles(&edges),
        vec![vec!["a".to_owned(), "b".into(), "c".into()]]
    );
    let text = "use crate::a::B;\n// use crate::z;\nfn f() { super::c::g(); my_crate::x(); }";
    assert_eq!(paths_after(&code(text), "crate::"), vec![vec!["a", "B"]]);
    assert_eq!(paths_after(&code(text), "super::"), vec![vec!["c", "g"]]);
}
