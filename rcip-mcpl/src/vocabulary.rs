//! Capability-path vocabularies: the paths an MCPL peer may advertise and grant, as a tree,
//! and the advertisement walk over it (SPEC §5.1).
//!
//! A vocabulary file is `{"vocabulary": "mcpl/0.5", "paths": [...], "advertisedOutside":
//! ["tools"]}`; [`parse_vocabulary`] checks it and `rcip-build` compiles it into a `static`
//! [`Vocabulary`] (the tree below). The MCPL 0.5 vocabulary ships compiled in `rcip-runtime`.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashSet};

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

/// The most problems [`parse_vocabulary`] lists; past it the list ends with one
/// `TOO_MANY_PROBLEMS` problem.
pub const MAX_VOCABULARY_PROBLEMS: usize = 100;
/// The most paths a vocabulary may have (MCPL 0.5 has 17): the tree is built by scanning
/// the paths once per node, and every path becomes an enum variant in generated code.
pub const MAX_VOCABULARY_PATHS: usize = 1024;
/// The most segments of one path (MCPL 0.5's longest has 4): building the tree recurses
/// once per segment, and so does the advertisement walk.
pub const MAX_PATH_SEGMENTS: usize = 16;

/// Why a vocabulary file was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{pointer}: {message}")]
pub struct VocabularyError {
    /// JSON Pointer to the offending value.
    pub pointer: String,
    /// The stable code of the problem: `NOT_AN_OBJECT`, `UNKNOWN_KEY`, `INVALID_NAME`,
    /// `WRONG_TYPE`, `INVALID_PATH`, `PATH_TOO_DEEP`, `TOO_MANY_PATHS`, `DUPLICATE_PATH`,
    /// `NOT_A_LEAF`, `UNKNOWN_PATH`, or `TOO_MANY_PROBLEMS` for the last problem of a
    /// list cut at [`MAX_VOCABULARY_PROBLEMS`].
    pub code: &'static str,
    /// What is wrong.
    pub message: String,
}

/// The problems found so far: the first [`MAX_VOCABULARY_PROBLEMS`], and whether more
/// were dropped (the walks stop then: what they would find is not kept).
#[derive(Default)]
struct Problems {
    list: Vec<VocabularyError>,
    dropped: bool,
}

impl Problems {
    fn push(&mut self, pointer: impl Into<String>, code: &'static str, message: impl Into<String>) {
        if self.list.len() < MAX_VOCABULARY_PROBLEMS {
            self.list.push(VocabularyError {
                pointer: pointer.into(),
                code,
                message: message.into(),
            });
        } else {
            self.dropped = true;
        }
    }

    fn into_list(mut self) -> Vec<VocabularyError> {
        if self.dropped {
            self.list.push(VocabularyError {
                pointer: String::new(),
                code: "TOO_MANY_PROBLEMS",
                message: format!(
                    "more problems were found; only the first {MAX_VOCABULARY_PROBLEMS} are listed"
                ),
            });
        }
        self.list
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
/// Paths are `[A-Za-z0-9_-]` segments joined by `.` (at most [`MAX_PATH_SEGMENTS`]),
/// unique, at most [`MAX_VOCABULARY_PATHS`] of them, and `advertisedOutside` names paths
/// of the vocabulary that have no children. Unknown keys are refused. The file is read
/// only to the depth of its form (a path that is an array is a `WRONG_TYPE`, however deep).
///
/// ```
/// use rcip_mcpl::parse_vocabulary;
/// use serde_json::json;
/// let vocabulary = parse_vocabulary(&json!({"vocabulary": "demo/1",
///     "paths": ["a", "a.b", "c.d"], "advertisedOutside": []})).unwrap();
/// assert_eq!(vocabulary.roots.len(), 2);
/// assert!(vocabulary.roots[1].path.is_none()); // `c` only groups `c.d`
///
/// let problems = parse_vocabulary(&json!({"vocabulary": "demo/1", "paths": ["a", "a"]}))
///     .unwrap_err();
/// assert_eq!(problems[0].code, "DUPLICATE_PATH");
/// ```
///
/// # Errors
///
/// Every problem found, in document order: at most [`MAX_VOCABULARY_PROBLEMS`], then one
/// `TOO_MANY_PROBLEMS` if there were more.
pub fn parse_vocabulary(file: &Value) -> Result<Vocabulary, Vec<VocabularyError>> {
    let mut problems = Problems::default();
    let Value::Object(map) = file else {
        problems.push("", "NOT_AN_OBJECT", "a vocabulary is a JSON object");
        return Err(problems.into_list());
    };
    for key in map.keys() {
        if problems.dropped {
            break;
        }
        if !matches!(key.as_str(), "vocabulary" | "paths" | "advertisedOutside") {
            problems.push(
                format!("/{key}"),
                "UNKNOWN_KEY",
                format!("unknown key {key:?} (allowed: vocabulary, paths, advertisedOutside)"),
            );
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
            problems.push(
                "/vocabulary",
                "INVALID_NAME",
                "expected the vocabulary's name (a non-empty string of [A-Za-z0-9._/-])",
            );
            String::new()
        }
    };
    let mut paths: Vec<String> = Vec::new();
    // For the duplicate checks: a scan of `paths` per path would be quadratic.
    let mut seen: HashSet<&str> = HashSet::new();
    match map.get("paths") {
        Some(Value::Array(items)) if items.len() > MAX_VOCABULARY_PATHS => problems.push(
            "/paths",
            "TOO_MANY_PATHS",
            format!(
                "{} paths; a vocabulary has at most {MAX_VOCABULARY_PATHS}",
                items.len()
            ),
        ),
        Some(Value::Array(items)) if !items.is_empty() => {
            for (i, item) in items.iter().enumerate() {
                if problems.dropped {
                    break;
                }
                let at = format!("/paths/{i}");
                let Some(path) = item.as_str() else {
                    problems.push(at, "WRONG_TYPE", "expected a path (a string)");
                    continue;
                };
                if !path.split('.').all(is_segment) {
                    problems.push(
                        at,
                        "INVALID_PATH",
                        format!("invalid path {path:?}: segments of [A-Za-z0-9_-] joined by '.'"),
                    );
                } else if path.split('.').count() > MAX_PATH_SEGMENTS {
                    problems.push(
                        at,
                        "PATH_TOO_DEEP",
                        format!("a path has at most {MAX_PATH_SEGMENTS} segments"),
                    );
                } else if !seen.insert(path) {
                    problems.push(
                        at,
                        "DUPLICATE_PATH",
                        format!("path {path:?} is listed twice"),
                    );
                } else {
                    paths.push(path.to_owned());
                }
            }
        }
        _ => problems.push(
            "/paths",
            "WRONG_TYPE",
            "expected a non-empty array of paths",
        ),
    }
    let mut outside = Vec::new();
    match map.get("advertisedOutside") {
        None => {}
        Some(Value::Array(items)) if items.len() > MAX_VOCABULARY_PATHS => problems.push(
            "/advertisedOutside",
            "TOO_MANY_PATHS",
            format!(
                "{} paths; a vocabulary has at most {MAX_VOCABULARY_PATHS}",
                items.len()
            ),
        ),
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                if problems.dropped {
                    break;
                }
                let at = format!("/advertisedOutside/{i}");
                match item.as_str() {
                    Some(path) if seen.contains(path) => {
                        if paths.iter().any(|p| p.starts_with(&format!("{path}."))) {
                            problems.push(at, "NOT_A_LEAF", format!("{path:?} has paths beneath it; only a leaf can be advertised outside"));
                        } else {
                            outside.push(Cow::Owned(path.to_owned()));
                        }
                    }
                    Some(path) => problems.push(
                        at,
                        "UNKNOWN_PATH",
                        format!("{path:?} is not a path of this vocabulary"),
                    ),
                    None => problems.push(at, "WRONG_TYPE", "expected a path (a string)"),
                }
            }
        }
        Some(_) => problems.push(
            "/advertisedOutside",
            "WRONG_TYPE",
            "expected an array of paths",
        ),
    }
    if !problems.list.is_empty() {
        return Err(problems.into_list());
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
