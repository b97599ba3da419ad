//! The catalog export: an application definition as JSON, with a content revision.
//!
//! The revision is the MCPL manifest digest's machinery applied to the export: RFC 8785
//! canonical JSON of the definition (without the revision), SHA-256, unpadded base64url,
//! `sha256:` prefix. Two builds of the same catalog agree on it; any change to a contract
//! (an id, a text, a schema keyword) changes it.

use serde_json::Value;

use crate::ApplicationDefinition;
use crate::depth::exceeds_depth;
use crate::jcs::{JcsError, MAX_CANONICAL_DEPTH, canonical_json, digest_of_canonical};

/// The content revision of `definition`.
///
/// ```
/// use rcip_core::{ApplicationDefinition, catalog_revision};
/// let a = ApplicationDefinition::new("notes", "Notes", "A notebook.");
/// let b = ApplicationDefinition::new("notes", "Notes", "A notebook!");
/// assert!(catalog_revision(&a).unwrap().starts_with("sha256:"));
/// assert_eq!(catalog_revision(&a), catalog_revision(&a.clone()));
/// assert_ne!(catalog_revision(&a), catalog_revision(&b));
/// ```
///
/// # Errors
///
/// [`JcsError::TooDeep`] when a schema or example nests past [`MAX_CANONICAL_DEPTH`]
/// (a definition built in memory; one read from text never does).
pub fn catalog_revision(definition: &ApplicationDefinition) -> Result<String, JcsError> {
    revision_of(&definition_json(definition)?)
}

/// The export: the definition's JSON with a root `"revision"` member (the
/// [`catalog_revision`]); the revision is the digest of the export without that member.
///
/// # Errors
///
/// As [`catalog_revision`].
pub fn catalog_export(definition: &ApplicationDefinition) -> Result<Value, JcsError> {
    let mut value = definition_json(definition)?;
    let revision = revision_of(&value)?;
    if let Value::Object(map) = &mut value {
        map.insert("revision".to_owned(), Value::String(revision));
    }
    Ok(value)
}

/// The definition as JSON (a definition within the depth limit always serializes).
fn definition_json(definition: &ApplicationDefinition) -> Result<Value, JcsError> {
    // Serializing is itself recursive: the caller's values are measured first. The
    // definition wraps them in at most four levels (root, capabilities, one capability,
    // usage examples), which the margin below the limit leaves room for.
    let limit = MAX_CANONICAL_DEPTH - WRAPPING_DEPTH;
    let values = definition.capabilities.iter().flat_map(|capability| {
        let examples = capability
            .usage
            .iter()
            .flat_map(|usage| usage.examples.iter().flatten())
            .map(|example| &example.input);
        [
            capability.input_schema.as_value(),
            capability.output_schema.as_value(),
        ]
        .into_iter()
        .chain(examples)
    });
    for value in values {
        if exceeds_depth(value, limit) {
            return Err(JcsError::TooDeep {
                limit: MAX_CANONICAL_DEPTH,
            });
        }
    }
    Ok(serde_json::to_value(definition).unwrap_or(Value::Null))
}

/// How many levels the export adds above a capability's schema or example input.
const WRAPPING_DEPTH: usize = 6;

/// The content revision of an export's JSON without its `"revision"`.
fn revision_of(value: &Value) -> Result<String, JcsError> {
    Ok(digest_of_canonical(&canonical_json(value)?))
}
