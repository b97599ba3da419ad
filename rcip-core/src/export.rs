//! The catalog export: an application definition as JSON, with a content revision.
//!
//! The revision is the MCPL manifest digest's machinery applied to the export: RFC 8785
//! canonical JSON of the definition (without the revision), SHA-256, unpadded base64url,
//! `sha256:` prefix. Two builds of the same catalog agree on it; any change to a contract
//! (an id, a text, a schema keyword) changes it.

use serde_json::Value;

use crate::ApplicationDefinition;
use crate::jcs::{canonical_json, digest_of_canonical};

/// The content revision of `definition`.
///
/// ```
/// use rcip_core::{ApplicationDefinition, catalog_revision};
/// let a = ApplicationDefinition::new("notes", "Notes", "A notebook.");
/// let b = ApplicationDefinition::new("notes", "Notes", "A notebook!");
/// assert!(catalog_revision(&a).starts_with("sha256:"));
/// assert_eq!(catalog_revision(&a), catalog_revision(&a.clone()));
/// assert_ne!(catalog_revision(&a), catalog_revision(&b));
/// ```
#[must_use]
pub fn catalog_revision(definition: &ApplicationDefinition) -> String {
    revision_of(&definition_json(definition))
}

/// The export: the definition's JSON with a root `"revision"` member (the
/// [`catalog_revision`]); the revision is the digest of the export without that member.
#[must_use]
pub fn catalog_export(definition: &ApplicationDefinition) -> Value {
    let mut value = definition_json(definition);
    let revision = revision_of(&value);
    if let Value::Object(map) = &mut value {
        map.insert("revision".to_owned(), Value::String(revision));
    }
    value
}

/// The definition as JSON (a definition always serializes).
fn definition_json(definition: &ApplicationDefinition) -> Value {
    serde_json::to_value(definition).unwrap_or(Value::Null)
}

/// The content revision of an export's JSON without its `"revision"`.
fn revision_of(value: &Value) -> String {
    digest_of_canonical(&canonical_json(value))
}
