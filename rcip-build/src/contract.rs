//! The catalog's contract checked at build time: the committed catalog export compared with a
//! lock file of the last published contract, by rcip-diff's rules.
//!
//! Why the export *file* and not the code: a build script runs before its crate compiles, so
//! it cannot ask the crate for its catalog (the schemas of `#[capability]` functions are
//! derived by schemars when the program runs). The check reads the export committed beside
//! the code instead, and the application's own test holds that file byte-equal to what the
//! code exports (for the polls example, `examples/tests/polls_transcript.rs` against
//! `examples/polls.catalog.json`). A contract change therefore travels: the code changes →
//! that test fails until the file is regenerated → the regenerated file, when it breaks the
//! locked contract, fails `cargo build` here. The messages say each next step.
//!
//! What a build script may write: only the lock, and only when there is none yet (the first
//! publication) or when the author asks with [`ACCEPT_BREAKING_ENV`]. A major version bump
//! passes without rewriting it, because `cargo publish` refuses a build script that changes
//! the packaged sources; the author records the new contract once it is published.
//!
//! Failures are `cargo::error` lines, as for the package compilers: Cargo prints each one and
//! fails the build, without the panic or the script's whole output a non-zero exit brings.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use rcip_diff::{Change, DiffError, Report, Severity, diff_catalogs};
use serde_json::Value;

use crate::cargo;

/// The environment variable that accepts the current export as the contract: set to `1`, the
/// check rewrites the lock with the export and the crate's version (and passes).
pub const ACCEPT_BREAKING_ENV: &str = "RCIP_ACCEPT_BREAKING";

/// The lock file's path when [`Contract::lock`] is not called.
pub const DEFAULT_LOCK: &str = "contract.lock";

/// A catalog export checked against the contract lock of its last published version, from a
/// `build.rs`: a breaking change fails the build with every breaking change listed.
///
/// ```no_run
/// // build.rs: `fn main() { ... }` around this line
/// rcip_build::Contract::new("polls.catalog.json")
///     .lock("polls.contract.lock")
///     .export_command("cargo run --example polls -- export > examples/polls.catalog.json")
///     .check_or_fail();
/// ```
///
/// The export is the catalog as the application exports it (`App::catalog_export()`,
/// pretty-printed), committed beside the code; keep it equal to the code's export with a test
/// (a build script cannot compute it: it runs before the crate is compiled). The lock is JSON,
/// `{"version": "0.1.0", "catalog": {...}}`: the crate version the contract was published
/// under, and that version's export. Both paths are relative to the crate's folder.
///
/// What [`check`](Self::check) does, in order:
///
/// - an empty export passes unchecked ([`Outcome::Regenerating`]): `cmd > file` empties the
///   file before Cargo builds `cmd`; the next build checks what it wrote;
/// - no lock yet: it is written from the export and the crate's version
///   ([`Outcome::Created`]; commit it);
/// - [`ACCEPT_BREAKING_ENV`] set (to anything but empty or `0`): the lock is rewritten from the
///   export and the crate's version ([`Outcome::Accepted`]; commit it). It is also how a
///   published major version becomes the new contract;
/// - nothing breaking from the lock's catalog to the export: passes ([`Outcome::Compatible`]),
///   the lock untouched (it stays the last *published* contract);
/// - breaking changes and the crate's version a major move from the lock's, by Cargo's rule
///   (the leftmost non-zero component grew: `0.1.x` → `0.2.0`, `1.x` → `2.0.0`): passes
///   ([`Outcome::MajorVersion`]);
/// - breaking changes otherwise: [`ContractError::Breaking`].
///
/// It asks Cargo to re-run the build script when either file or the variable changes.
#[derive(Debug, Clone)]
pub struct Contract {
    export: PathBuf,
    lock: PathBuf,
    export_command: Option<String>,
}

/// What a passing check found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// There was no lock: it now holds the export at the crate's `version`.
    Created {
        /// The crate's version.
        version: String,
    },
    /// Nothing breaking since the contract locked at `locked`; `report` is what changed
    /// (warnings and info, possibly nothing). The lock is untouched.
    Compatible {
        /// The lock's version.
        locked: String,
        /// The changes from the lock's catalog to the export.
        report: Report,
    },
    /// Breaking changes, accepted because `version` is a major move from `locked`. The lock is
    /// untouched.
    MajorVersion {
        /// The lock's version.
        locked: String,
        /// The crate's version.
        version: String,
        /// The changes from the lock's catalog to the export.
        report: Report,
    },
    /// [`ACCEPT_BREAKING_ENV`] was set: the lock, which held `locked`, now holds the export at
    /// `version`.
    Accepted {
        /// The version the lock held.
        locked: String,
        /// The crate's version, now the lock's.
        version: String,
        /// The changes from the old lock's catalog to the export.
        report: Report,
    },
    /// The export file is empty (being regenerated): not checked this time.
    Regenerating,
}

/// Why a check failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ContractError {
    /// The export could not be read, or is not JSON.
    #[error("{}: {reason}", path.display())]
    Export {
        /// The export's path, as given.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The lock could not be read, or is not a lock (JSON with a `version` string of the form
    /// `MAJOR.MINOR.PATCH` and a `catalog`).
    #[error("{}: {reason}", path.display())]
    Lock {
        /// The lock's path, as given.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The lock could not be written.
    #[error("{}: cannot write the lock: {source}", path.display())]
    WriteLock {
        /// The lock's path, as given.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
    /// The lock's catalog or the export is not a catalog export (`old` is the lock's, `new`
    /// the export).
    #[error("{} against {}: {source}", lock.display(), export.display())]
    NotACatalog {
        /// The lock's path, as given.
        lock: PathBuf,
        /// The export's path, as given.
        export: PathBuf,
        /// What is wrong, and in which.
        source: DiffError,
    },
    /// The crate's version is unknown (not run by Cargo) or not `MAJOR.MINOR.PATCH`.
    #[error("the crate's version: {0}")]
    Version(String),
    /// The export breaks the locked contract, and neither the version nor the author accepts
    /// it.
    #[error("{0}")]
    Breaking(Box<Breaking>),
}

/// The breaking changes that failed a check; its `Display` lists them, one
/// `breaking <rule> <capability> <pointer>: <message>` line each, and what to do next.
#[derive(Debug, Clone)]
pub struct Breaking {
    /// The export's path, as given.
    pub export: PathBuf,
    /// The lock's path, as given.
    pub lock: PathBuf,
    /// The lock's version.
    pub locked: String,
    /// The crate's version.
    pub version: String,
    /// Every change from the lock's catalog to the export (the breaking ones and the rest).
    pub report: Report,
    export_command: Option<String>,
    package: Option<String>,
}

impl fmt::Display for Breaking {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.report.count(Severity::Breaking);
        writeln!(
            f,
            "{} breaks the contract locked in {} at version {}: {count} breaking change{}",
            self.export.display(),
            self.lock.display(),
            self.locked,
            if count == 1 { "" } else { "s" },
        )?;
        for change in breaking(&self.report) {
            writeln!(f, "{change}")?;
        }
        let command = self
            .export_command
            .as_ref()
            .map(|command| format!(", `{command}`"))
            .unwrap_or_default();
        writeln!(
            f,
            "{} is the committed copy of the code's catalog export{command}; either",
            self.export.display(),
        )?;
        writeln!(
            f,
            "- keep the contract: undo the change in the code, then regenerate {}",
            self.export.display(),
        )?;
        // The lock's next major, whatever the crate's version says now (it is not above it).
        let next = Version::parse(&self.locked).map(Version::next_major);
        match next {
            Some(next) => writeln!(
                f,
                "- or publish the break as a major version: the crate's version from {} to {next}",
                self.version,
            )?,
            None => writeln!(f, "- or publish the break as a major version")?,
        }
        write!(
            f,
            "- or accept it in this version: `{}` rewrites {} (commit it)",
            accept_command(self.package.as_deref()),
            self.lock.display(),
        )
    }
}

/// What a check reads from Cargo's environment, apart so tests give it.
struct Environment {
    /// `CARGO_PKG_VERSION`.
    version: String,
    /// `CARGO_PKG_NAME`, for the commands the messages suggest.
    package: Option<String>,
    /// [`ACCEPT_BREAKING_ENV`] is set.
    accept: bool,
}

impl Contract {
    /// The catalog export at `export` (relative paths are relative to the crate's manifest
    /// folder when run by Cargo), locked in [`DEFAULT_LOCK`] unless [`lock`](Self::lock)
    /// says otherwise.
    pub fn new(export: impl Into<PathBuf>) -> Self {
        Self {
            export: export.into(),
            lock: PathBuf::from(DEFAULT_LOCK),
            export_command: None,
        }
    }

    /// The lock file (relative to the crate's manifest folder under Cargo).
    #[must_use]
    pub fn lock(mut self, path: impl Into<PathBuf>) -> Self {
        self.lock = path.into();
        self
    }

    /// The command that regenerates the export, shown in the messages (a build script cannot
    /// know how the application prints its catalog).
    #[must_use]
    pub fn export_command(mut self, command: impl Into<String>) -> Self {
        self.export_command = Some(command.into());
        self
    }

    /// Compares the export with the lock (see the type's docs for the order of the rules);
    /// writes the lock when there is none or when [`ACCEPT_BREAKING_ENV`] is set. Prints the
    /// `cargo::rerun-if-changed` lines for both files and `cargo::rerun-if-env-changed` for
    /// the variable.
    ///
    /// # Errors
    ///
    /// [`ContractError::Breaking`] when the export breaks the locked contract and neither a
    /// major version move nor the variable accepts it; an unreadable or invalid export or
    /// lock, a lock that cannot be written, or no crate version (not run by Cargo).
    pub fn check(&self) -> Result<Outcome, ContractError> {
        let (export, lock) = (cargo::resolve(&self.export), cargo::resolve(&self.lock));
        println!("cargo::rerun-if-changed={}", export.display());
        println!("cargo::rerun-if-changed={}", lock.display());
        println!("cargo::rerun-if-env-changed={ACCEPT_BREAKING_ENV}");
        let version = std::env::var("CARGO_PKG_VERSION").map_err(|_| {
            ContractError::Version(
                "CARGO_PKG_VERSION is not set: call this from a build script".to_owned(),
            )
        })?;
        let environment = Environment {
            version,
            package: std::env::var("CARGO_PKG_NAME").ok(),
            accept: accepts(),
        };
        self.check_files(&export, &lock, &environment)
    }

    /// [`check`](Self::check) for a `build.rs`: a failure becomes `cargo::error` lines (Cargo
    /// prints them and fails the build), a pass that accepted or locked something
    /// `cargo::warning` lines saying what, and so do changes rated warning.
    pub fn check_or_fail(&self) {
        let package = std::env::var("CARGO_PKG_NAME").ok();
        match self.check() {
            Ok(outcome) => {
                for line in self.notes(&outcome, package.as_deref()) {
                    println!("cargo::warning={line}");
                }
            }
            Err(error) => {
                let mut text = error.to_string();
                if let (ContractError::Export { .. }, Some(command)) =
                    (&error, &self.export_command)
                {
                    text.push_str(&format!("\nregenerate it with `{command}`"));
                }
                cargo::fail(&text);
            }
        }
    }

    /// The check on resolved paths, with the environment given.
    fn check_files(
        &self,
        export_file: &Path,
        lock_file: &Path,
        environment: &Environment,
    ) -> Result<Outcome, ContractError> {
        let export_error = |reason: String| ContractError::Export {
            path: self.export.clone(),
            reason,
        };
        let lock_error = |reason: String| ContractError::Lock {
            path: self.lock.clone(),
            reason,
        };
        let text = fs::read_to_string(export_file).map_err(|e| export_error(e.to_string()))?;
        if text.trim().is_empty() {
            return Ok(Outcome::Regenerating);
        }
        let export: Value =
            serde_json::from_str(&text).map_err(|e| export_error(format!("not JSON: {e}")))?;
        let version = environment.version.clone();
        let current = Version::parse(&version).ok_or_else(|| {
            ContractError::Version(format!("{version:?} is not MAJOR.MINOR.PATCH"))
        })?;
        let new_lock = lock_text(&version, &export);
        let old_lock = match fs::read_to_string(lock_file) {
            Ok(text) => text,
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                // Compared with itself, only to refuse locking what is no catalog.
                self.diff(&export, &export)?;
                self.write_lock(lock_file, &new_lock)?;
                return Ok(Outcome::Created { version });
            }
            Err(error) => return Err(lock_error(format!("cannot read: {error}"))),
        };
        let (locked, catalog) = parse_lock(&old_lock).map_err(lock_error)?;
        let report = self.diff(&catalog, &export)?;
        if environment.accept {
            // The same bytes: nothing to accept, and not rewriting keeps the file's time, so
            // Cargo does not run the script again for it.
            if old_lock == new_lock {
                return Ok(Outcome::Compatible { locked, report });
            }
            self.write_lock(lock_file, &new_lock)?;
            return Ok(Outcome::Accepted {
                locked,
                version,
                report,
            });
        }
        if !report.reaches(Severity::Breaking) {
            return Ok(Outcome::Compatible { locked, report });
        }
        // parse_lock checked the lock's version.
        if Version::parse(&locked).is_some_and(|old| current.is_major_move_from(old)) {
            return Ok(Outcome::MajorVersion {
                locked,
                version,
                report,
            });
        }
        Err(ContractError::Breaking(Box::new(Breaking {
            export: self.export.clone(),
            lock: self.lock.clone(),
            locked,
            version,
            report,
            export_command: self.export_command.clone(),
            package: environment.package.clone(),
        })))
    }

    fn diff(&self, old: &Value, new: &Value) -> Result<Report, ContractError> {
        diff_catalogs(old, new).map_err(|source| ContractError::NotACatalog {
            lock: self.lock.clone(),
            export: self.export.clone(),
            source,
        })
    }

    fn write_lock(&self, file: &Path, text: &str) -> Result<(), ContractError> {
        fs::write(file, text).map_err(|source| ContractError::WriteLock {
            path: self.lock.clone(),
            source,
        })
    }

    /// The `cargo::warning` lines of a pass.
    fn notes(&self, outcome: &Outcome, package: Option<&str>) -> Vec<String> {
        let (export, lock) = (self.export.display(), self.lock.display());
        let mut lines = Vec::new();
        match outcome {
            Outcome::Created { version } => lines.push(format!(
                "{lock}: no lock existed; it now holds the contract of {export} at version \
                 {version} (commit it)"
            )),
            Outcome::Compatible { locked, report } => {
                let look: Vec<&Change> = report
                    .changes
                    .iter()
                    .filter(|c| c.severity == Severity::Warning)
                    .collect();
                if !look.is_empty() {
                    lines.push(format!(
                        "{export}: {} change{} since the contract locked at {locked} to look at:",
                        look.len(),
                        if look.len() == 1 { "" } else { "s" },
                    ));
                    lines.extend(look.into_iter().map(Change::to_string));
                }
            }
            Outcome::MajorVersion {
                locked,
                version,
                report,
            } => {
                lines.push(format!(
                    "{export}: version {version} is a major move from {locked}, the locked \
                     contract's; it accepts {}:",
                    changes(report.count(Severity::Breaking)),
                ));
                lines.extend(breaking(report).map(Change::to_string));
                lines.push(format!(
                    "once {version} is published, lock its contract: `{}` (commit {lock})",
                    accept_command(package),
                ));
            }
            Outcome::Accepted {
                locked,
                version,
                report,
            } => {
                let mut line = format!(
                    "{ACCEPT_BREAKING_ENV}: {lock} now holds the contract of {export} at version \
                     {version} (commit it)"
                );
                // A refresh after a publication accepts nothing: no clause to read then.
                let count = report.count(Severity::Breaking);
                if count > 0 {
                    line.push_str(&format!("; it accepts {} since {locked}:", changes(count)));
                }
                lines.push(line);
                lines.extend(breaking(report).map(Change::to_string));
            }
            Outcome::Regenerating => lines.push(format!(
                "{export} is empty (being regenerated?): its contract is checked on the next build"
            )),
        }
        lines
    }
}

/// Whether [`ACCEPT_BREAKING_ENV`] is set to something other than empty or `0`.
fn accepts() -> bool {
    std::env::var_os(ACCEPT_BREAKING_ENV).is_some_and(|value| !value.is_empty() && value != "0")
}

/// The command the messages suggest for accepting.
fn accept_command(package: Option<&str>) -> String {
    match package {
        Some(package) => format!("{ACCEPT_BREAKING_ENV}=1 cargo build -p {package}"),
        None => format!("{ACCEPT_BREAKING_ENV}=1 cargo build"),
    }
}

/// `N breaking change(s)`.
fn changes(count: usize) -> String {
    format!(
        "{count} breaking change{}",
        if count == 1 { "" } else { "s" }
    )
}

fn breaking(report: &Report) -> impl Iterator<Item = &Change> {
    report
        .changes
        .iter()
        .filter(|c| c.severity == Severity::Breaking)
}

/// The lock's text: `version` first, then the catalog, pretty-printed. Written around the
/// catalog by hand so the order does not depend on serde_json's map, and the same contract is
/// always the same bytes (a stable file to review and to compare).
fn lock_text(version: &str, catalog: &Value) -> String {
    // Pretty JSON has no line break inside a string (they are escaped), so indenting every
    // line nests the catalog without changing it.
    let catalog = format!("{catalog:#}").replace('\n', "\n  ");
    format!(
        "{{\n  \"version\": {},\n  \"catalog\": {catalog}\n}}\n",
        Value::from(version)
    )
}

/// The lock's version and catalog.
fn parse_lock(text: &str) -> Result<(String, Value), String> {
    let mut lock: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let version = lock
        .get("version")
        .and_then(Value::as_str)
        .ok_or("not a contract lock: no \"version\" string")?
        .to_owned();
    if Version::parse(&version).is_none() {
        return Err(format!("version {version:?} is not MAJOR.MINOR.PATCH"));
    }
    let catalog = lock
        .get_mut("catalog")
        .map(Value::take)
        .ok_or("not a contract lock: no \"catalog\"")?;
    Ok((version, catalog))
}

/// The three numbers of a Cargo (semver) version; pre-release and build metadata are
/// dropped, as they do not change which releases are compatible.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Version {
    major: u64,
    minor: u64,
    patch: u64,
}

impl Version {
    fn parse(text: &str) -> Option<Self> {
        let core = text.split(['-', '+']).next()?;
        let mut numbers = core.split('.').map(|n| {
            // `u64::from_str` takes a leading `+`; a version number does not.
            n.bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| n.parse::<u64>().ok())
                .flatten()
        });
        let version = Self {
            major: numbers.next()??,
            minor: numbers.next()??,
            patch: numbers.next()??,
        };
        numbers.next().is_none().then_some(version)
    }

    /// What Cargo compares for compatibility: the leftmost non-zero component, and the zeros
    /// before it (`1.4.2` → `(1, 0, 0)`, `0.3.1` → `(0, 3, 0)`, `0.0.7` → `(0, 0, 7)`).
    fn compatibility(self) -> (u64, u64, u64) {
        match self {
            Self {
                major: 0, minor: 0, ..
            } => (0, 0, self.patch),
            Self { major: 0, .. } => (0, self.minor, 0),
            _ => (self.major, 0, 0),
        }
    }

    /// Whether `self` is a release Cargo would not take for `old` (`^old`), upwards: a
    /// version that may break what `old` promised.
    fn is_major_move_from(self, old: Version) -> bool {
        self.compatibility() > old.compatibility()
    }

    /// The first version that is a major move from `self`.
    fn next_major(self) -> Version {
        let (major, minor, patch) = match self.compatibility() {
            (0, 0, patch) => (0, 0, patch + 1),
            (0, minor, _) => (0, minor + 1, 0),
            (major, _, _) => (major + 1, 0, 0),
        };
        Version {
            major,
            minor,
            patch,
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::fs;
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::{Value, json};

    use super::{Contract, ContractError, Environment, Outcome, Version, lock_text, parse_lock};

    fn version(text: &str) -> Version {
        Version::parse(text).unwrap()
    }

    #[test]
    fn versions_parse_as_three_numbers_without_pre_release_or_build() {
        assert_eq!(
            version("1.22.333"),
            Version {
                major: 1,
                minor: 22,
                patch: 333
            }
        );
        assert_eq!(version("2.0.0-alpha.1+build.5"), version("2.0.0"));
        assert_eq!(version("0.1.0+meta"), version("0.1.0"));
        for bad in [
            "", "1", "1.2", "1.2.3.4", "a.b.c", "1.+2.3", "1..3", "-1.2.3",
        ] {
            assert_eq!(Version::parse(bad), None, "{bad:?}");
        }
    }

    /// Cargo's rule: the leftmost non-zero component is the major one.
    #[test]
    fn a_major_move_is_the_leftmost_non_zero_component_growing() {
        for (old, new) in [
            ("0.1.0", "0.2.0"),
            ("0.1.7", "0.2.0"),
            ("0.1.0", "1.0.0"),
            ("1.2.3", "2.0.0"),
            ("1.9.9", "3.0.0"),
            ("0.0.1", "0.0.2"),
            ("0.0.3", "0.1.0"),
            ("1.0.0", "2.0.0-rc.1"),
        ] {
            assert!(
                version(new).is_major_move_from(version(old)),
                "{old} → {new}"
            );
        }
        for (old, new) in [
            ("0.1.0", "0.1.0"),
            ("0.1.0", "0.1.9"),
            ("1.2.3", "1.3.0"),
            ("1.2.3", "1.2.4"),
            ("0.2.0", "0.1.0"),
            ("2.0.0", "1.0.0"),
            ("1.0.0", "0.9.0"),
        ] {
            assert!(
                !version(new).is_major_move_from(version(old)),
                "{old} → {new}"
            );
        }
    }

    #[test]
    fn the_next_major_follows_the_same_rule() {
        for (from, to) in [
            ("0.1.3", "0.2.0"),
            ("1.4.2", "2.0.0"),
            ("0.0.3", "0.0.4"),
            ("2.0.0-beta", "3.0.0"),
        ] {
            assert_eq!(version(from).next_major().to_string(), to);
            assert!(version(to).is_major_move_from(version(from)));
        }
    }

    /// A scratch folder per test (tests run in parallel in one process).
    fn scratch() -> PathBuf {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "rcip-build-contract-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn catalog(required: &[&str], extra: bool) -> Value {
        let mut capabilities = vec![json!({
            "id": "notes.add", "effect": "write", "scopeIds": ["notes"],
            "inputSchema": {"type": "object", "additionalProperties": false,
                            "properties": {"text": {"type": "string"}, "tag": {"type": "string"}},
                            "required": required},
            "outputSchema": {"type": "null"}
        })];
        if extra {
            capabilities.push(json!({
                "id": "notes.list", "effect": "read", "scopeIds": ["notes"],
                "inputSchema": {"type": "object", "additionalProperties": false},
                "outputSchema": {"type": "array", "items": {"type": "string"}}
            }));
        }
        json!({"application": {"id": "notes"}, "scopes": [{"id": "notes"}],
               "capabilities": capabilities})
    }

    struct Case {
        dir: PathBuf,
        contract: Contract,
    }

    impl Case {
        fn new() -> Self {
            let dir = scratch();
            let contract = Contract::new(dir.join("app.catalog.json"))
                .lock(dir.join("app.contract.lock"))
                .export_command("app export > app.catalog.json");
            Self { dir, contract }
        }

        fn export(&self, catalog: &Value) {
            fs::write(
                self.dir.join("app.catalog.json"),
                format!("{catalog:#}\n").as_bytes(),
            )
            .unwrap();
        }

        fn lock(&self) -> Option<String> {
            fs::read_to_string(self.dir.join("app.contract.lock")).ok()
        }

        fn check(&self, version: &str, accept: bool) -> Result<Outcome, ContractError> {
            self.contract.check_files(
                &self.dir.join("app.catalog.json"),
                &self.dir.join("app.contract.lock"),
                &Environment {
                    version: version.to_owned(),
                    package: Some("app".to_owned()),
                    accept,
                },
            )
        }
    }

    impl Drop for Case {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }

    #[test]
    fn the_first_check_locks_the_export_with_the_version_first() {
        let case = Case::new();
        case.export(&catalog(&[], false));
        let outcome = case.check("0.1.0", false).unwrap();
        assert_eq!(
            outcome,
            Outcome::Created {
                version: "0.1.0".to_owned()
            }
        );
        let lock = case.lock().unwrap();
        assert!(lock.starts_with("{\n  \"version\": \"0.1.0\",\n  \"catalog\": {\n"));
        assert!(lock.ends_with("\n  }\n}\n"));
        let (locked, locked_catalog) = parse_lock(&lock).unwrap();
        assert_eq!(
            (locked.as_str(), locked_catalog),
            ("0.1.0", catalog(&[], false))
        );
        // Locked again from the same contract: the same bytes.
        assert_eq!(lock, lock_text("0.1.0", &catalog(&[], false)));
        // Then unchanged: compatible, nothing to report.
        match case.check("0.1.0", false).unwrap() {
            Outcome::Compatible { locked, report } => {
                assert_eq!(locked, "0.1.0");
                assert!(report.changes.is_empty());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_added_capability_passes_and_leaves_the_lock_alone() {
        let case = Case::new();
        case.export(&catalog(&[], false));
        case.check("0.1.0", false).unwrap();
        let before = case.lock().unwrap();
        case.export(&catalog(&[], true));
        match case.check("0.1.1", false).unwrap() {
            Outcome::Compatible { report, .. } => {
                assert_eq!(report.changes.len(), 1);
                assert_eq!(report.changes[0].rule, "capability-added");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(case.lock().unwrap(), before);
    }

    #[test]
    fn a_breaking_change_fails_with_each_change_and_the_ways_on() {
        let case = Case::new();
        case.export(&catalog(&[], true));
        case.check("0.1.0", false).unwrap();
        let before = case.lock().unwrap();
        case.export(&catalog(&["text"], false));
        let error = case.check("0.1.4", false).unwrap_err();
        let ContractError::Breaking(breaking) = &error else {
            panic!("{error:?}");
        };
        assert_eq!(breaking.locked, "0.1.0");
        assert_eq!(breaking.version, "0.1.4");
        let text = error.to_string();
        let dir = case.dir.display();
        let expected = [
            format!(
                "{dir}/app.catalog.json breaks the contract locked in {dir}/app.contract.lock at \
                 version 0.1.0: 2 breaking changes"
            ),
            "breaking input-required-added notes.add /inputSchema/required: ".to_owned(),
            "breaking capability-removed notes.list: The capability notes.list was removed"
                .to_owned(),
            "export, `app export > app.catalog.json`; either".to_owned(),
            "- keep the contract: undo the change in the code, then regenerate".to_owned(),
            "- or publish the break as a major version: the crate's version from 0.1.4 to 0.2.0"
                .to_owned(),
            format!(
                "- or accept it in this version: `RCIP_ACCEPT_BREAKING=1 cargo build -p app` \
                 rewrites {dir}/app.contract.lock (commit it)"
            ),
        ];
        for part in expected {
            assert!(text.contains(&part), "{part:?} not in:\n{text}");
        }
        assert_eq!(text.lines().count(), 7, "{text}");
        assert_eq!(case.lock().unwrap(), before);
    }

    #[test]
    fn a_major_version_passes_the_break_and_leaves_the_lock_alone() {
        let case = Case::new();
        case.export(&catalog(&[], false));
        case.check("1.3.0", false).unwrap();
        let before = case.lock().unwrap();
        case.export(&catalog(&["text"], false));
        assert!(matches!(
            case.check("1.4.0", false),
            Err(ContractError::Breaking(_))
        ));
        match case.check("2.0.0", false).unwrap() {
            Outcome::MajorVersion {
                locked, version, ..
            } => assert_eq!((locked.as_str(), version.as_str()), ("1.3.0", "2.0.0")),
            other => panic!("{other:?}"),
        }
        assert_eq!(case.lock().unwrap(), before);
    }

    #[test]
    fn accepting_rewrites_the_lock_with_the_export_and_version() {
        let case = Case::new();
        case.export(&catalog(&[], false));
        case.check("0.1.0", false).unwrap();
        case.export(&catalog(&["text"], false));
        match case.check("0.1.1", true).unwrap() {
            Outcome::Accepted {
                locked,
                version,
                report,
            } => {
                assert_eq!((locked.as_str(), version.as_str()), ("0.1.0", "0.1.1"));
                assert_eq!(report.changes[0].rule, "input-required-added");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            case.lock().unwrap(),
            lock_text("0.1.1", &catalog(&["text"], false))
        );
        // Still set, nothing new: not rewritten.
        assert!(matches!(
            case.check("0.1.1", true).unwrap(),
            Outcome::Compatible { .. }
        ));
        // And the accepted contract is the one checked from now on.
        assert!(matches!(
            case.check("0.1.1", false).unwrap(),
            Outcome::Compatible { .. }
        ));
    }

    #[test]
    fn an_emptied_export_is_being_regenerated() {
        let case = Case::new();
        fs::write(case.dir.join("app.catalog.json"), "").unwrap();
        assert_eq!(case.check("0.1.0", false).unwrap(), Outcome::Regenerating);
        assert_eq!(case.lock(), None, "an empty export is never locked");
    }

    #[test]
    fn unreadable_and_invalid_files_name_the_file_and_the_reason() {
        let case = Case::new();
        let dir = case.dir.display().to_string();
        let error = case.check("0.1.0", false).unwrap_err();
        assert!(matches!(error, ContractError::Export { .. }), "{error:?}");
        assert!(
            error
                .to_string()
                .starts_with(&format!("{dir}/app.catalog.json: "))
        );

        fs::write(case.dir.join("app.catalog.json"), "{\"capabilities\": [").unwrap();
        let error = case.check("0.1.0", false).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with(&format!("{dir}/app.catalog.json: not JSON: ")),
            "{error}"
        );

        case.export(&json!({"application": {"id": "notes"}}));
        let error = case.check("0.1.0", false).unwrap_err();
        assert!(
            matches!(error, ContractError::NotACatalog { .. }),
            "{error:?}"
        );
        assert!(
            error.to_string().contains("no \"capabilities\" list"),
            "{error}"
        );
        assert_eq!(case.lock(), None);

        case.export(&catalog(&[], false));
        for (lock, reason) in [
            ("{", "not JSON: "),
            (
                "{\"catalog\": {}}",
                "not a contract lock: no \"version\" string",
            ),
            (
                "{\"version\": \"1.0\", \"catalog\": {}}",
                "version \"1.0\" is not MAJOR.MINOR.PATCH",
            ),
            (
                "{\"version\": \"1.0.0\"}",
                "not a contract lock: no \"catalog\"",
            ),
        ] {
            fs::write(case.dir.join("app.contract.lock"), lock).unwrap();
            let error = case.check("0.1.0", false).unwrap_err();
            assert!(
                error
                    .to_string()
                    .starts_with(&format!("{dir}/app.contract.lock: {reason}")),
                "{lock}: {error}"
            );
        }

        let error = case.check("one", false).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the crate's version: \"one\" is not MAJOR.MINOR.PATCH"
        );
    }

    #[test]
    fn a_change_line_leaves_out_what_the_change_has_not() {
        let old = catalog(&[], true);
        let mut new = catalog(&[], false);
        new["application"]["name"] = json!("Notes");
        let report = rcip_diff::diff_catalogs(&old, &new).unwrap();
        let lines: Vec<String> = report.changes.iter().map(ToString::to_string).collect();
        assert!(
            lines.contains(
                &"info application-changed /application: The application's metadata changed."
                    .to_owned()
            ),
            "{lines:?}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("breaking capability-removed notes.list: ")),
            "{lines:?}"
        );
    }
}
