//! The MCPL manifest digest (RFC-003, SPEC §17.2):
//! `"sha256:" + base64url_unpadded(SHA-256(JCS(manifest without its root "revision")))`,
//! with the set-valued arrays sorted and deduplicated and the identifier positions checked.

use serde_json::{Map, Value};

use rcip_core::depth::exceeds_depth;
use rcip_core::jcs::{JcsError, MAX_CANONICAL_DEPTH, digest_of_canonical, write_members};

/// Why a manifest has no digest.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DigestError {
    /// A string in an identifier position is empty or outside `[A-Za-z0-9._:*-]`.
    #[error(
        "identifier_charset: {value:?} at {position} is not a non-empty [A-Za-z0-9._:*-] identifier"
    )]
    IdentifierCharset {
        /// Where, as a dotted path (`featureSets.demo.uses[0]`).
        position: String,
        /// The offending string.
        value: String,
    },
    /// The manifest is not a JSON object.
    #[error("manifest_not_object: a manifest is a JSON object")]
    ManifestNotObject,
    /// The manifest nests more than [`MAX_MANIFEST_DEPTH`] arrays and objects (only a
    /// manifest built in memory can: serde_json refuses such text).
    #[error("value_too_deep: a manifest nests at most {limit} arrays and objects")]
    TooDeep {
        /// The limit, [`MAX_MANIFEST_DEPTH`].
        limit: usize,
    },
}

/// The deepest manifest digested: the canonical JSON writer's limit (serde_json's limit
/// for text), the root object counting as one level.
pub const MAX_MANIFEST_DEPTH: usize = MAX_CANONICAL_DEPTH;

impl From<JcsError> for DigestError {
    fn from(error: JcsError) -> Self {
        match error {
            JcsError::TooDeep { limit } => Self::TooDeep { limit },
            // `JcsError` may grow; any other failure is still a manifest too deep to write.
            _ => Self::TooDeep {
                limit: MAX_MANIFEST_DEPTH,
            },
        }
    }
}

impl DigestError {
    /// The vector file's error code, `identifier_charset` or `manifest_not_object`, or
    /// `value_too_deep` (not a vector code: text never reaches it).
    #[must_use]
    pub const fn code(&self) -> &'static str {
        match self {
            Self::IdentifierCharset { .. } => "identifier_charset",
            Self::ManifestNotObject => "manifest_not_object",
            Self::TooDeep { .. } => "value_too_deep",
        }
    }
}

/// The canonical JSON the digest hashes: root `revision` stripped, set-valued arrays sorted
/// and deduplicated, identifiers checked.
///
/// # Errors
///
/// [`DigestError`]; then there is no revision at all.
pub fn manifest_canonical_json(manifest: &Value) -> Result<String, DigestError> {
    let (root, feature_sets) = digest_members(manifest)?;
    let mut out = String::with_capacity(256);
    // Written straight from the received members: only `featureSets` is rebuilt.
    write_members(&mut out, members(root, feature_sets.as_ref()))?;
    Ok(out)
}

/// The root of a manifest, checked, with its normalized `featureSets` (when an object).
fn digest_members(manifest: &Value) -> Result<(&Map<String, Value>, Option<Value>), DigestError> {
    let Value::Object(root) = manifest else {
        return Err(DigestError::ManifestNotObject);
    };
    // Measured before any walk: the identifier check, the normalization and the clones
    // below all recurse.
    if exceeds_depth(manifest, MAX_MANIFEST_DEPTH) {
        return Err(DigestError::TooDeep {
            limit: MAX_MANIFEST_DEPTH,
        });
    }
    check_identifiers(root)?;
    let feature_sets = match root.get("featureSets") {
        Some(Value::Object(sets)) => Some(Value::Object(normalize_feature_sets(sets))),
        _ => None,
    };
    Ok((root, feature_sets))
}

/// The members the digest hashes: every root member but `revision`, with `featureSets`
/// replaced by its normal form.
fn members<'a>(
    root: &'a Map<String, Value>,
    feature_sets: Option<&'a Value>,
) -> impl Iterator<Item = (&'a str, &'a Value)> {
    root.iter()
        .filter(|(name, _)| *name != "revision")
        .map(move |(name, value)| match (name.as_str(), feature_sets) {
            ("featureSets", Some(normal)) => (name.as_str(), normal),
            _ => (name.as_str(), value),
        })
}

/// The manifest as the digest sees it: the root `revision` removed, the set-valued arrays
/// sorted and deduplicated, identifiers checked. Its canonical JSON is what is hashed.
///
/// # Errors
///
/// [`DigestError`].
pub fn normalize_manifest(manifest: &Value) -> Result<Map<String, Value>, DigestError> {
    let (root, feature_sets) = digest_members(manifest)?;
    Ok(members(root, feature_sets.as_ref())
        .map(|(name, value)| (name.to_owned(), value.clone()))
        .collect())
}

/// The manifest's revision: `sha256:` and 43 base64url characters.
///
/// ```
/// use rcip_mcpl::manifest_digest;
/// use serde_json::json;
/// assert_eq!(manifest_digest(&json!({})).unwrap(),
///            "sha256:RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o");
/// // The root revision never influences it.
/// assert_eq!(manifest_digest(&json!({"revision": "sha256:x"})).unwrap(),
///            manifest_digest(&json!({})).unwrap());
/// ```
///
/// # Errors
///
/// [`DigestError`].
pub fn manifest_digest(manifest: &Value) -> Result<String, DigestError> {
    let canonical = manifest_canonical_json(manifest)?;
    Ok(digest_of_canonical(&canonical))
}

/// Sorts (by UTF-8 bytes) and deduplicates a set of strings, as the set-valued arrays are.
///
/// ```
/// use rcip_mcpl::sort_set;
/// assert_eq!(sort_set(vec!["b".into(), "A".into(), "b".into(), "a".into()]), ["A", "a", "b"]);
/// ```
#[must_use]
pub fn sort_set(mut members: Vec<String>) -> Vec<String> {
    // `str`'s order is UTF-8 byte order (= code point order), not UTF-16.
    members.sort();
    members.dedup();
    members
}

fn is_identifier(text: &str) -> bool {
    !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'*' | b'-'))
}

fn identifier(value: &str, position: impl FnOnce() -> String) -> Result<(), DigestError> {
    if is_identifier(value) {
        Ok(())
    } else {
        Err(DigestError::IdentifierCharset {
            position: position(),
            value: value.to_owned(),
        })
    }
}

/// The strings of an array, when every member is one (a set or list with a non-string member
/// is hashed verbatim and never checked).
fn all_strings(value: &Value) -> Option<Vec<&str>> {
    value.as_array()?.iter().map(Value::as_str).collect()
}

/// Checks every identifier position (the vector file's list, plus capability member names
/// at every depth outside arrays).
fn check_identifiers(root: &Map<String, Value>) -> Result<(), DigestError> {
    for (name, value) in root {
        match name.as_str() {
            "version" | "revision" => {}
            "featureSets" => {
                if let Value::Object(sets) = value {
                    check_feature_sets(sets)?;
                }
            }
            _ => {
                identifier(name, || name.clone())?;
                check_member_names(value, name)?;
            }
        }
    }
    Ok(())
}

/// Capability member names, recursively through objects (not into arrays).
fn check_member_names(value: &Value, at: &str) -> Result<(), DigestError> {
    if let Value::Object(map) = value {
        for (name, nested) in map {
            let position = format!("{at}.{name}");
            identifier(name, || position.clone())?;
            check_member_names(nested, &position)?;
        }
    }
    Ok(())
}

fn check_strings(value: Option<&Value>, at: impl Fn() -> String) -> Result<(), DigestError> {
    if let Some(strings) = value.and_then(all_strings) {
        for (i, member) in strings.iter().enumerate() {
            identifier(member, || format!("{}[{i}]", at()))?;
        }
    }
    Ok(())
}

fn check_feature_sets(sets: &Map<String, Value>) -> Result<(), DigestError> {
    for (name, set) in sets {
        let at = format!("featureSets.{name}");
        identifier(name, || at.clone())?;
        let Value::Object(set) = set else { continue };
        check_strings(set.get("uses"), || format!("{at}.uses"))?;
        let Some(Value::Object(ontology)) = set.get("tagOntology") else {
            continue;
        };
        let at = format!("{at}.tagOntology");
        check_strings(ontology.get("coreTags"), || format!("{at}.coreTags"))?;
        if let Some(Value::Object(tags)) = ontology.get("tags") {
            for (tag, definition) in tags {
                let tag_at = format!("{at}.tags.{tag}");
                identifier(tag, || tag_at.clone())?;
                check_strings(definition.get("implies"), || format!("{tag_at}.implies"))?;
                if let Some(Value::String(facet)) = definition.get("facet") {
                    identifier(facet, || format!("{tag_at}.facet"))?;
                }
            }
        }
        if let Some(Value::Object(keyed)) = ontology.get("keyed") {
            for (key, definition) in keyed {
                let key_at = format!("{at}.keyed.{key}");
                identifier(key, || key_at.clone())?;
                check_strings(definition.get("values"), || format!("{key_at}.values"))?;
            }
        }
        if let Some(Value::Array(rules)) = ontology.get("suggestedTreatment") {
            for (i, rule) in rules.iter().enumerate() {
                for list in ["tagsAny", "tagsAll", "tagsNone"] {
                    check_strings(rule.get(list), || {
                        format!("{at}.suggestedTreatment[{i}].{list}")
                    })?;
                }
            }
        }
    }
    Ok(())
}

/// The object-shaped `featureSets` with its three set-valued paths sorted and deduplicated
/// (only where every member is a string).
fn normalize_feature_sets(sets: &Map<String, Value>) -> Map<String, Value> {
    let mut sets = sets.clone();
    for set in sets.values_mut() {
        let Value::Object(set) = set else { continue };
        normalize_set(set.get_mut("uses"));
        let Some(Value::Object(ontology)) = set.get_mut("tagOntology") else {
            continue;
        };
        normalize_set(ontology.get_mut("coreTags"));
        if let Some(Value::Object(tags)) = ontology.get_mut("tags") {
            for definition in tags.values_mut() {
                if let Value::Object(definition) = definition {
                    normalize_set(definition.get_mut("implies"));
                }
            }
        }
    }
    sets
}

fn normalize_set(value: Option<&mut Value>) {
    let Some(value) = value else { return };
    let Some(strings) = all_strings(value) else {
        return;
    };
    let sorted = sort_set(strings.into_iter().map(str::to_owned).collect());
    *value = Value::Array(sorted.into_iter().map(Value::String).collect());
}
