//! What changed between two RCIP catalog exports, judged from the consumer's side: an agent
//! or tool that sends a capability's input and reads its output.
//!
//! - **breaking**: a consumer that worked with the old catalog can fail with the new one (a
//!   capability removed, an input made stricter, an output made looser in a way a reader of
//!   the old closed schema refuses, an effect escalated, a scope added or removed, an
//!   idempotent capability no longer idempotent);
//! - **warning**: it keeps working, but should look (an effect de-escalated, idempotent
//!   now, a default value changed);
//! - **info**: everything else that changed.
//!
//! The input is the export `cargo run --example polls -- export` prints (the catalog with
//! its content revision). Two exports with the same revision have no changes.
//!
//! ```
//! use rcip_diff::{Severity, diff_catalogs};
//! use serde_json::json;
//!
//! let old = json!({"application": {"id": "notes"}, "scopes": [], "capabilities": [
//!     {"id": "notes.add", "effect": "write", "scopeIds": [],
//!      "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
//!                      "additionalProperties": false},
//!      "outputSchema": {"type": "null"}}
//! ]});
//! let mut new = old.clone();
//! new["capabilities"][0]["inputSchema"]["required"] = json!(["text"]);
//! let report = diff_catalogs(&old, &new).unwrap();
//! assert_eq!(report.changes[0].rule, "input-required-added");
//! assert_eq!(report.changes[0].severity, Severity::Breaking);
//! assert_eq!(report.changes[0].pointer, "/inputSchema/required");
//! ```
#![deny(missing_docs)]

mod catalog;
mod manifest;
mod package;
mod schema;
mod tools;

use serde_json::{Value, json};

pub use catalog::diff_catalogs;
pub use manifest::{diff_manifests, diff_manifests_with};
pub use package::diff_packages;
pub use schema::MAX_SCHEMA_DEPTH;
pub use tools::diff_exports;

/// Every rule id a [`Change`] can carry, each documented with an example pair in the
/// project's `docs/diff-rules.md`.
pub const RULES: &[&str] = &[
    "capability-removed",
    "capability-added",
    "effect-escalated",
    "effect-de-escalated",
    "scope-added",
    "scope-removed",
    "idempotent-dropped",
    "idempotent-added",
    "member-changed",
    "application-changed",
    "scope-declared",
    "scope-withdrawn",
    "input-type-changed",
    "output-type-changed",
    "input-enum-changed",
    "output-enum-changed",
    "input-bound-changed",
    "output-bound-changed",
    "input-format-changed",
    "output-format-changed",
    "input-pattern-changed",
    "output-pattern-changed",
    "input-required-added",
    "output-required-added",
    "input-required-removed",
    "output-required-removed",
    "input-property-added",
    "output-property-added",
    "input-property-removed",
    "output-property-removed",
    "input-additional-properties-changed",
    "output-additional-properties-changed",
    "input-composition-changed",
    "output-composition-changed",
    "input-unique-items-changed",
    "output-unique-items-changed",
    "input-schema-changed",
    "output-schema-changed",
    "default-changed",
    "schema-text-changed",
    "tool-retargeted",
    "tool-export-refused",
    "package-version-changed",
    "package-version-not-raised",
    "package-text-changed",
    "package-type-removed",
    "package-type-added",
    "package-type-kind-changed",
    "record-schema-stricter",
    "record-schema-looser",
    "record-schema-changed",
    "package-lifecycle-changed",
    "package-state-removed",
    "package-state-added",
    "package-initial-state-changed",
    "package-role-removed",
    "package-role-required-added",
    "package-role-added",
    "package-role-bounds-narrowed",
    "package-role-bounds-widened",
    "package-role-types-narrowed",
    "package-role-types-widened",
    "package-command-removed",
    "package-command-added",
    "package-command-from-narrowed",
    "package-command-from-widened",
    "package-command-to-changed",
    "package-command-guard-added",
    "package-command-guard-removed",
    "package-command-effects-changed",
    "package-view-removed",
    "package-view-added",
    "package-view-changed",
    "mcpl-version-changed",
    "mcpl-capability-withdrawn",
    "mcpl-capability-advertised",
    "mcpl-capabilities-rewritten",
    "mcpl-extension-changed",
    "mcpl-feature-set-removed",
    "mcpl-feature-set-disabled",
    "mcpl-feature-set-added",
    "mcpl-feature-set-uses-added",
    "mcpl-feature-set-uses-removed",
    "mcpl-feature-set-changed",
    "mcpl-tag-removed",
    "mcpl-tag-added",
    "mcpl-tag-ontology-changed",
];

/// How much a change matters to a consumer of the old catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Changed, and nothing a consumer relies on.
    Info,
    /// A consumer keeps working but should look.
    Warning,
    /// A consumer of the old catalog can fail.
    Breaking,
}

impl Severity {
    /// `breaking`, `warning` or `info`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Breaking => "breaking",
        }
    }
}

/// One change between the two catalogs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// How much it matters.
    pub severity: Severity,
    /// The rule that found it (a stable id, documented with an example pair).
    pub rule: &'static str,
    /// The capability it is about, if any.
    pub capability: Option<String>,
    /// Where, as a JSON pointer into the capability (or the catalog, without one).
    pub pointer: String,
    /// What changed, in words.
    pub message: String,
}

/// One line, as `rcip diff` prints it and a build check reports it: `<severity> <rule>
/// [<capability>] [<pointer>]: <message>`, the parts a reader greps for first, the sentence
/// last; a part the change has not is left out.
///
/// ```
/// use rcip_diff::{Change, Severity};
///
/// let change = Change {
///     severity: Severity::Breaking,
///     rule: "input-required-added",
///     capability: Some("notes.add".to_owned()),
///     pointer: "/inputSchema/required".to_owned(),
///     message: "The property text is now required.".to_owned(),
/// };
/// assert_eq!(
///     change.to_string(),
///     "breaking input-required-added notes.add /inputSchema/required: The property text is now required."
/// );
/// ```
impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.severity.as_str(), self.rule)?;
        for part in [self.capability.as_deref(), Some(self.pointer.as_str())]
            .into_iter()
            .flatten()
            .filter(|part| !part.is_empty())
        {
            write!(f, " {part}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Every change, in the order found (capabilities in the old catalog's order, then those
/// added; within one, its members and then its schemas, depth first).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// The changes.
    pub changes: Vec<Change>,
}

impl Report {
    /// How many changes there are of `severity`.
    #[must_use]
    pub fn count(&self, severity: Severity) -> usize {
        self.changes
            .iter()
            .filter(|c| c.severity == severity)
            .count()
    }

    /// Whether some change is at or above `level`.
    #[must_use]
    pub fn reaches(&self, level: Severity) -> bool {
        self.changes.iter().any(|c| c.severity >= level)
    }

    /// The report as JSON: `{"changes": [{"severity", "rule", "capability", "pointer",
    /// "message"}], "summary": {"breaking", "warning", "info"}}`.
    #[must_use]
    pub fn to_json(&self) -> Value {
        let changes: Vec<Value> = self
            .changes
            .iter()
            .map(|c| {
                json!({
                    "severity": c.severity.as_str(),
                    "rule": c.rule,
                    "capability": c.capability,
                    "pointer": c.pointer,
                    "message": c.message,
                })
            })
            .collect();
        json!({
            "changes": changes,
            "summary": {
                "breaking": self.count(Severity::Breaking),
                "warning": self.count(Severity::Warning),
                "info": self.count(Severity::Info),
            }
        })
    }
}

/// Why two documents could not be compared.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiffError {
    /// The document is not of the kind compared: what is wrong, and where.
    #[error("{which} {kind}: {reason}")]
    Invalid {
        /// `old` or `new`.
        which: &'static str,
        /// `catalog`, `package` or `manifest`.
        kind: &'static str,
        /// What is wrong.
        reason: String,
    },
}

/// The contracts `rcip diff` compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contract {
    /// A catalog export (`{"capabilities": [...]}`).
    Catalog,
    /// A `relationship/v1` program package (`{"protocol": "relationship/v1", ...}`).
    Package,
    /// An MCPL manifest (`{"version": "0.5", ...}`, the `experimental.mcpl` object).
    Manifest,
}

impl Contract {
    /// What `document` is, by its marks: `protocol: "relationship/v1"` for a package, a
    /// `capabilities` array for a catalog, a string `version` or a `featureSets` object for a
    /// manifest.
    ///
    /// ```
    /// use rcip_diff::Contract;
    /// use serde_json::json;
    /// assert_eq!(Contract::detect(&json!({"capabilities": []})), Some(Contract::Catalog));
    /// assert_eq!(Contract::detect(&json!({"version": "0.5"})), Some(Contract::Manifest));
    /// assert_eq!(Contract::detect(&json!([1])), None);
    /// ```
    #[must_use]
    pub fn detect(document: &Value) -> Option<Contract> {
        if document.get("protocol").and_then(Value::as_str) == Some("relationship/v1") {
            Some(Contract::Package)
        } else if document.get("capabilities").is_some_and(Value::is_array) {
            Some(Contract::Catalog)
        } else if document.get("version").is_some_and(Value::is_string)
            || document.get("featureSets").is_some_and(Value::is_object)
        {
            Some(Contract::Manifest)
        } else {
            None
        }
    }

    /// `catalog`, `package` or `manifest`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Contract::Catalog => "catalog",
            Contract::Package => "package",
            Contract::Manifest => "manifest",
        }
    }

    /// Compares `old` with `new` as this kind of contract.
    ///
    /// # Errors
    ///
    /// [`DiffError::Invalid`] when a document is not of this kind.
    pub fn diff(self, old: &Value, new: &Value) -> Result<Report, DiffError> {
        match self {
            Contract::Catalog => diff_catalogs(old, new),
            Contract::Package => diff_packages(old, new),
            Contract::Manifest => diff_manifests(old, new),
        }
    }
}

/// A JSON pointer token (RFC 6901), escaped by rcip-core's pointer builder.
pub(crate) fn token(name: &str) -> String {
    let mut pointer = String::new();
    rcip_core::pointer::push_token(&mut pointer, name);
    pointer.split_off(1)
}
