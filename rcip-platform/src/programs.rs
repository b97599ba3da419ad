//! Programs at run time: drafting a package (the one validator, every problem at its
//! pointer), content identity (the digest) and the activation rule, and the bundled example
//! packages.
//!
//! `namespace/version` pins content: activating the same version with the same digest is a
//! no-op, with another digest a conflict, whoever activated it first (the workspace or the
//! installed packages). Several versions of one namespace are normal.

use http::StatusCode;
use rcip_core::ValidationIssue;
use rcip_core::jcs::canonical_json;
use serde::Serialize;
use serde_json::Value;

use super::directory::{Applied, DirectoryError, ProgramVersion};
use super::error::PlatformError;
use rcip_records::{Activation, Pin, PinConflict, pin_rule};
use rcip_relationship::{MAX_PACKAGE_BYTES, Package, PackageError, ProblemCode, validate_package};

/// A package that passed the validator, with its content identity.
#[derive(Debug, Clone)]
pub struct CheckedPackage {
    /// The package, parsed.
    pub package: Package,
    /// [`Package::digest`]: `sha256:` + base64url of the SHA-256 of the RFC 8785 canonical
    /// normalized package.
    pub digest: String,
}

impl CheckedPackage {
    /// Its namespace.
    #[must_use]
    pub fn namespace(&self) -> &str {
        &self.package.namespace
    }

    /// Its version.
    #[must_use]
    pub fn version(&self) -> u64 {
        self.package.version
    }
}

/// The content identity of a package given as JSON: [`Package::digest`] of the package it
/// validates to (`sha256:` + unpadded base64url of the SHA-256 of the RFC 8785 canonical
/// form of the normalized package, every schema default written out). Key order, whitespace
/// and defaults left implicit do not change it; any other change does. The engine and the
/// directory pin versions by this one identity.
///
/// ```
/// use rcip_platform::package_digest;
/// use serde_json::json;
/// let note = |max: Option<u64>| {
///     let mut text = json!({"type": "string"});
///     if let Some(max) = max { text["maxLength"] = json!(max); }
///     json!({"protocol": "relationship/v1", "namespace": "notes", "version": 1,
///         "types": {"note": {"kind": "entity", "schema": {"type": "object",
///         "properties": {"text": text}, "required": ["text"], "additionalProperties": false}}}})
/// };
/// // The default bound written out is the same program.
/// assert_eq!(package_digest(&note(None)).unwrap(), package_digest(&note(Some(4000))).unwrap());
/// assert_ne!(package_digest(&note(None)).unwrap(), package_digest(&note(Some(10))).unwrap());
/// ```
///
/// # Errors
///
/// 422 `PROGRAM_INVALID`, as [`check_package`].
pub fn package_digest(package: &Value) -> Result<String, PlatformError> {
    check_package(package).map(|checked| checked.digest)
}

fn canonical(package: &Value) -> Result<String, PlatformError> {
    canonical_json(package).map_err(|error| {
        program_invalid(vec![ValidationIssue::new(
            "/package",
            ProblemCode::PackageTooDeep.as_str(),
            error.to_string(),
        )])
    })
}

/// Checks a package for `program.draft` and `program.activate`: the crate's one validator
/// ([`validate_package`]), then its digest.
///
/// Every problem becomes an issue whose `instance_path` is the problem's pointer under
/// `/package` (a pointer into the call's arguments) and whose `keyword` is the problem's
/// code; the validator already bounds their number.
///
/// ```
/// use rcip_platform::check_package;
/// use serde_json::json;
/// let error = check_package(&json!({"protocol": "relationship/v1", "namespace": "polls",
///     "version": 0, "types": {}})).unwrap_err();
/// assert_eq!((error.code, error.status.as_u16()), ("PROGRAM_INVALID", 422));
/// assert!(error.issues.iter().any(|i| i.instance_path == "/package/version"
///     && i.keyword == "INVALID_VERSION"));
/// ```
///
/// # Errors
///
/// 422 `PROGRAM_INVALID` with every problem.
pub fn check_package(package: &Value) -> Result<CheckedPackage, PlatformError> {
    // The canonical form first: it bounds the depth for the validator too, and the size is
    // measured on it (the bytes a store keeps), as `parse_package` measures a file.
    let text = canonical(package)?;
    if text.len() > MAX_PACKAGE_BYTES {
        return Err(program_invalid(vec![ValidationIssue::new(
            "/package",
            ProblemCode::PackageTooLarge.as_str(),
            format!(
                "the package is {} bytes in canonical form; at most {MAX_PACKAGE_BYTES} are accepted",
                text.len()
            ),
        )]));
    }
    let package = validate_package(package).map_err(|error| program_invalid(issues(&error)))?;
    // One identity with the engine's: the normalized package's, not the text as given.
    let digest = package.digest();
    Ok(CheckedPackage { package, digest })
}

fn issues(error: &PackageError) -> Vec<ValidationIssue> {
    error
        .problems
        .iter()
        .map(|problem| {
            ValidationIssue::new(
                format!("/package{}", problem.pointer),
                problem.code.as_str(),
                problem.message.clone(),
            )
        })
        .collect()
}

fn program_invalid(issues: Vec<ValidationIssue>) -> PlatformError {
    let count = issues.len();
    PlatformError::new(
        StatusCode::UNPROCESSABLE_ENTITY,
        "PROGRAM_INVALID",
        format!(
            "the package is not a valid relationship/v1 program ({count} problem{})",
            if count == 1 { "" } else { "s" }
        ),
    )
    .with_issues(issues)
}

/// The activation rule, one place for every store: `existing` are the versions that share
/// the new one's `namespace/version` and may conflict with it (the workspace's and the
/// installed ones; for an installed package, every workspace's too).
///
/// ```
/// use rcip_platform::{ProgramVersion, activation};
/// use rcip_records::Activation;
/// let active = ProgramVersion {
///     workspace_id: None, namespace: "polls".into(), version: 1, digest: "sha256:a".into(),
///     package: serde_json::json!({}), activated_at: 0, activated_by: "host".into(),
/// };
/// assert_eq!(activation([&active], "polls", 1, "sha256:a").unwrap(), Activation::AlreadyActive);
/// assert_eq!(activation([&active], "polls", 2, "sha256:b").unwrap(), Activation::New);
/// assert_eq!(activation([&active], "polls", 1, "sha256:b").unwrap_err().code(), "VERSION_CONFLICT");
/// ```
///
/// # Errors
///
/// [`DirectoryError::VersionConflict`] when one of them pins other content.
pub fn activation<'a>(
    existing: impl IntoIterator<Item = &'a ProgramVersion>,
    namespace: &str,
    version: u64,
    digest: &str,
) -> Result<Activation, DirectoryError> {
    let pins = existing
        .into_iter()
        .filter(|active| active.namespace == namespace && active.version == version)
        .map(|active| Pin {
            installed: true,
            digest: &active.digest,
        });
    pin_rule(pins, false, digest).map_err(|PinConflict| DirectoryError::VersionConflict {
        namespace: namespace.to_owned(),
        version,
    })
}

/// The activation rule over what a store read: `existing`, every stored activation of the
/// version's `namespace/version` that it may conflict with (a workspace's: its own and the
/// installed; an installed one's: all). `Unchanged` when it is already active where it would
/// go (installed: among the installed); otherwise it is to be stored.
pub fn check_activation<'a>(
    existing: impl IntoIterator<Item = &'a ProgramVersion>,
    version: &ProgramVersion,
) -> Result<Option<Applied>, DirectoryError> {
    let pins = existing
        .into_iter()
        .filter(|v| v.namespace == version.namespace && v.version == version.version)
        .map(|v| Pin {
            installed: v.workspace_id.is_none(),
            digest: &v.digest,
        });
    let outcome =
        pin_rule(pins, version.workspace_id.is_none(), &version.digest).map_err(|PinConflict| {
            DirectoryError::VersionConflict {
                namespace: version.namespace.clone(),
                version: version.version,
            }
        })?;
    Ok((outcome == Activation::AlreadyActive).then_some(Applied::Unchanged))
}

/// A package bundled with the crate, listed by `examples.list`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExamplePackage {
    /// A short name (`polls`, `hiring`).
    pub name: &'static str,
    /// Its namespace.
    pub namespace: String,
    /// Its version.
    pub version: u64,
    /// Its content identity.
    pub digest: String,
    /// The package.
    pub package: Value,
}

/// The bundled packages' names and JSON texts (copies of the project's
/// `examples/programs/`, so that the crate packages on its own).
pub const EXAMPLE_PACKAGES: [(&str, &str); 2] = [
    ("polls", include_str!("../packages/polls.json")),
    ("hiring", include_str!("../packages/hiring.json")),
];

/// The bundled example packages, checked by the validator (a broken one is left out, which
/// the crate's tests make impossible).
///
/// ```
/// let examples = rcip_platform::example_packages();
/// let names: Vec<&str> = examples.iter().map(|e| e.name).collect();
/// assert_eq!(names, ["polls", "hiring"]);
/// assert!(examples.iter().all(|e| e.digest.starts_with("sha256:")));
/// ```
#[must_use]
pub fn example_packages() -> &'static [ExamplePackage] {
    static PARSED: std::sync::OnceLock<Vec<ExamplePackage>> = std::sync::OnceLock::new();
    PARSED.get_or_init(|| {
        EXAMPLE_PACKAGES
            .iter()
            .filter_map(|(name, text)| {
                let package: Value = serde_json::from_str(text).ok()?;
                let checked = check_package(&package).ok()?;
                Some(ExamplePackage {
                    name,
                    namespace: checked.namespace().to_owned(),
                    version: checked.version(),
                    digest: checked.digest,
                    package,
                })
            })
            .collect()
    })
}
