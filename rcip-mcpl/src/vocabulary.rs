//! Capability-path vocabularies: the paths an MCPL peer may advertise and grant, as a tree,
//! and the advertisement walk over it (SPEC §5.1).
//!
//! A vocabulary file is `{"vocabulary": "mcpl/0.5", "paths": [...], "advertisedOutside":
//! ["tools"]}`; [`parse_vocabulary`] checks it and `rcip-build` compiles it into a `static`
//! [`Vocabulary`] (the tree below). The MCPL 0.5 vocabulary ships compiled in `rcip-runtime`.

use std::borrow::Cow;
use std::collections::BTreeSet;

use serde_json::Value;

/// One node of the vocabulary tree: a segment, whether it is a path itself, its children.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VocabNode {
    /// The segment (`beforeInference`).
    pub segment: Cow<'static, str>,
    /// The full path when this node is a path (`inferenceRequest`), `None` for a node that
    /// only groups others (`contextHooks`).
    pub path: Option<Cow<'static, str>>,
    /// The nodes beneath it, in the file's order.
    pub children: Cow<'static, [VocabNode]>,
}

/// A compiled vocabulary: its tree and where its paths are advertised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vocabulary {
    /// The vocabulary's name (`mcpl/0.5`).
    pub name: Cow<'static, str>,
    /// The top-level nodes.
    pub roots: Cow<'static, [VocabNode]>,
    /// Every path, in the file's order.
    pub paths: Cow<'static, [Cow<'static, str>]>,
    /// Paths advertised outside the MCPL object (by the outer MCP capabilities): `tools`.
    pub advertised_outside: Cow<'static, [Cow<'static, str>]>,
}

/// Why a vocabulary file was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{pointer}: {message}")]
pub struct VocabularyError {
    /// JSON Pointer to the offending value.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

fn error(pointer: impl Into<String>, message: impl Into<String>) -> VocabularyError {
    VocabularyError {
        pointer: pointer.into(),
        message: message.into(),
    }
}

fn is_segment(segment: &str) -> bool {
    !segment.is_empty()
        && segment
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Checks a vocabulary file and builds its tree.
///
/// Paths are `[A-Za-z0-9_-]` segments joined by `.`, unique, and `advertisedOutside` names
/// paths of the vocabulary that have no children. Unknown keys are refused.
///
/// ```
/// use rcip_mcpl::parse_vocabulary;
/// use serde_json::json;
/// let vocabulary = parse_vocabulary(&json!({"vocabulary": "demo/1",
///     "paths": ["a", "a.b", "c.d"], "advertisedOutside": []})).unwrap();
/// assert_eq!(vocabulary.roots.len(), 2);
/// assert!(vocabulary.roots[1].path.is_none()); // `c` only groups `c.d`
/// ```
///
/// # Errors
///
/// Every problem found, in document order.
pub fn parse_vocabulary(file: &Value) -> Result<Vocabulary, Vec<VocabularyError>> {
    let mut problems = Vec::new();
    let Value::Object(map) = file else {
        return Err(vec![error("", "a vocabulary is a JSON object")]);
    };
    for key in map.keys() {
        if !matches!(key.as_str(), "vocabulary" | "paths" | "advertisedOutside") {
            problems.push(error(
                format!("/{key}"),
                format!("unknown key {key:?} (allowed: vocabulary, paths, advertisedOutside)"),
            ));
        }
    }
    let name = match map.get("vocabulary") {
        // The name ends up in generated code: a plain grammar keeps it inert there.
        Some(Value::String(name))
            if !name.is_empty()
                && name.bytes().all(|b| {
                    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'/' | b'-')
                }) =>
        {
            name.clone()
        }
        _ => {
            problems.push(error(
                "/vocabulary",
                "expected the vocabulary's name (a non-empty string of [A-Za-z0-9._/-])",
            ));
            String::new()
        }
    };
    let mut paths: Vec<String> = Vec::new();
    match map.get("paths") {
        Some(Value::Array(items)) if !items.is_empty() => {
            for (i, item) in items.iter().enumerate() {
                let at = format!("/paths/{i}");
                let Some(path) = item.as_str() else {
                    problems.push(error(at, "expected a path (a string)"));
                    continue;
                };
                if !path.split('.').all(is_segment) {
                    problems.push(error(
                        at,
                        format!("invalid path {path:?}: segments of [A-Za-z0-9_-] joined by '.'"),
                    ));
                } else if paths.iter().any(|p| p == path) {
                    problems.push(error(at, format!("path {path:?} is listed twice")));
                } else {
                    paths.push(path.to_owned());
                }
            }
        }
        _ => problems.push(error("/paths", "expected a non-empty array of paths")),
    }
    let mut outside = Vec::new();
    match map.get("advertisedOutside") {
        None => {}
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                let at = format!("/advertisedOutside/{i}");
                match item.as_str() {
                    Some(path) if paths.iter().any(|p| p == path) => {
                        if paths.iter().any(|p| p.starts_with(&format!("{path}."))) {
                            problems.push(error(at, format!("{path:?} has paths beneath it; only a leaf can be advertised outside")));
                        } else {
                            outside.push(Cow::Owned(path.to_owned()));
                        }
                    }
                    Some(path) => problems.push(error(
                        at,
                        format!("{path:?} is not a path of this vocabulary"),
                    )),
                    None => problems.push(error(at, "expected a path (a string)")),
                }
            }
        }
        Some(_) => problems.push(error("/advertisedOutside", "expected an array of paths")),
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Vocabulary {
        name: Cow::Owned(name),
        roots: Cow::Owned(build_tree(&paths, "")),
        paths: Cow::Owned(paths.into_iter().map(Cow::Owned).collect()),
        advertised_outside: Cow::Owned(outside),
    })
}

/// The nodes under `prefix` (`""` for the roots), in first-appearance order.
fn build_tree(paths: &[String], prefix: &str) -> Vec<VocabNode> {
    let mut segments: Vec<&str> = Vec::new();
    for path in paths {
        let Some(rest) = (if prefix.is_empty() {
            Some(path.as_str())
        } else {
            path.strip_prefix(prefix).and_then(|r| r.strip_prefix('.'))
        }) else {
            continue;
        };
        let segment = rest.split('.').next().unwrap_or(rest);
        if !segments.contains(&segment) {
            segments.push(segment);
        }
    }
    segments
        .into_iter()
        .map(|segment| {
            let full = if prefix.is_empty() {
                segment.to_owned()
            } else {
                format!("{prefix}.{segment}")
            };
            VocabNode {
                segment: Cow::Owned(segment.to_owned()),
                path: paths.contains(&full).then(|| Cow::Owned(full.clone())),
                children: Cow::Owned(build_tree(paths, &full)),
            }
        })
        .collect()
}

impl Vocabulary {
    /// Whether `path` is a path of the vocabulary.
    #[must_use]
    pub fn contains(&self, path: &str) -> bool {
        self.paths.iter().any(|p| p == path)
    }

    /// The paths `mcpl` (the `experimental.mcpl` object) advertises, plus those advertised
    /// outside it by `outer` (the MCP `capabilities` object: `tools` when present and not
    /// `null`). The walk is generic over the tree, never a list of nestable keys:
    ///
    /// - `true` at a node advertises every path at and beneath it;
    /// - an object at a node advertises the node when it is a path, then walks its members;
    /// - `false`, `null`, any other value, and absence advertise nothing;
    /// - members the vocabulary does not know (and `version`, `revision`, `featureSets`,
    ///   vendor extensions) mint nothing;
    /// - paths advertised outside are never taken from inside the MCPL object.
    ///
    /// ```
    /// use rcip_mcpl::parse_vocabulary;
    /// use serde_json::json;
    /// let vocabulary = parse_vocabulary(&json!({"vocabulary": "demo/1",
    ///     "paths": ["tools", "hooks.before.observe", "hooks.before.inject.system"],
    ///     "advertisedOutside": ["tools"]})).unwrap();
    /// let paths = vocabulary.advertised(&json!({"hooks": {"before": true}, "tools": true}), None);
    /// assert_eq!(paths.into_iter().collect::<Vec<_>>(),
    ///            ["hooks.before.inject.system", "hooks.before.observe"]);
    /// ```
    #[must_use]
    pub fn advertised(&self, mcpl: &Value, outer: Option<&Value>) -> BTreeSet<String> {
        let mut paths = BTreeSet::new();
        if let Value::Object(members) = mcpl {
            for node in self.roots.iter() {
                if let Some(value) = members.get(node.segment.as_ref()) {
                    self.walk(node, value, &mut paths);
                }
            }
        }
        if let Some(Value::Object(outer)) = outer {
            for path in self.advertised_outside.iter() {
                if outer.get(path.as_ref()).is_some_and(|v| !v.is_null()) {
                    paths.insert(path.to_string());
                }
            }
        }
        paths
    }

    fn walk(&self, node: &VocabNode, value: &Value, paths: &mut BTreeSet<String>) {
        match value {
            Value::Bool(true) => self.all_beneath(node, paths),
            Value::Object(members) => {
                if let Some(path) = &node.path {
                    self.insert(path, paths);
                }
                for child in node.children.iter() {
                    if let Some(value) = members.get(child.segment.as_ref()) {
                        self.walk(child, value, paths);
                    }
                }
            }
            _ => {}
        }
    }

    fn all_beneath(&self, node: &VocabNode, paths: &mut BTreeSet<String>) {
        if let Some(path) = &node.path {
            self.insert(path, paths);
        }
        for child in node.children.iter() {
            self.all_beneath(child, paths);
        }
    }

    fn insert(&self, path: &str, paths: &mut BTreeSet<String>) {
        if !self.advertised_outside.iter().any(|p| p == path) {
            paths.insert(path.to_owned());
        }
    }
}
