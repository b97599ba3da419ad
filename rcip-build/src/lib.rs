//! Compiles `relationship/v1` program packages into Rust, from a `build.rs`.
//!
//! Each `*.json` file of a folder is validated by `rcip-core`'s package validator; valid
//! packages become one module per namespace (named after it) in
//! `$OUT_DIR/rcip_programs.rs`, which the application includes with
//! `rcip_relationship::include_programs!()`. An invalid package fails the build with the
//! validator's messages, one `file: pointer: message` line per problem.
//!
//! ```no_run
//! // build.rs: `fn main() { ... }` around this line
//! rcip_build::Programs::new("programs").compile_or_fail();
//! ```
//!
//! ```ignore
//! // src/main.rs
//! mod programs {
//!     rcip_relationship::include_programs!();
//! }
//! use programs::polls;
//!
//! assert_eq!(polls::poll::State::INITIAL.as_str(), "open");
//! assert_eq!(polls::poll::CLOSE.to.as_deref(), Some("closed"));
//! rcip_runtime::catalog! {
//!     pub struct App {
//!         id = "polls", name = "Polls", description = "Polls.",
//!         scopes = [("polls", "Polls", "Every poll.")],
//!         capability_sets = [polls::Capabilities],
//!     }
//! }
//! ```
//!
//! What each package module holds (see `docs/relationship-v1.md` for the identifier rules):
//!
//! | item | what |
//! | --- | --- |
//! | `PACKAGE` | the whole package as a `static` [`Package`] |
//! | `<type>::TYPE` | the type's descriptor |
//! | `<type>::State` | the lifecycle states (types with a lifecycle): `ALL`, `INITIAL`, `as_str`, `FromStr` |
//! | `<type>::<COMMAND>` | a command's descriptor: input schema, guard, `from`/`to`, `set_data`, `emit` |
//! | `Capabilities` | the package's commands as an RCIP capability set for `catalog!` |
//!
//! ## Several versions of a namespace
//!
//! A folder may hold several versions of one namespace (content identity decides what
//! clashes: one `namespace/version` with two different contents is `VERSION_CONFLICT`, and
//! the same package given twice is compiled once). The namespace's module is then its
//! highest version (the items above, re-exported), and each version is also a submodule
//! `v1`, `v2`, ... with its own tables, so code that still handles records of an older
//! version names them: `polls::PACKAGE` is the newest, `polls::v1::PACKAGE` the first.
//! Every version's `Capabilities` declares the same capability ids (they are named after the
//! namespace, not the version): list one of them in `catalog!`, usually the module's own.
//! A type named like a version submodule (`v1`) is reachable only as `ns::vN::v1`.
//!
//! ## The catalog's contract
//!
//! [`Contract`] fails the build when the application's catalog breaks the contract it last
//! published, by `rcip-diff`'s rules (a capability removed, an input made stricter, an effect
//! escalated, ...), unless the crate's major version moved:
//!
//! ```no_run
//! // build.rs
//! rcip_build::Contract::new("polls.catalog.json")
//!     .lock("polls.contract.lock")
//!     .export_command("cargo run --example polls -- export > examples/polls.catalog.json")
//!     .check_or_fail();
//! ```
//!
//! A build script runs before its crate is compiled, so it cannot compute the catalog (the
//! schemas of `#[capability]` functions are derived when the program runs): it checks the
//! catalog export committed beside the code, which a test of the application keeps equal to
//! what the code exports. The lock (`polls.contract.lock`, committed too) holds the version
//! the contract was published under and that version's export; the first build writes it.
//! How a change goes:
//!
//! 1. The code's catalog changes: the application's export test fails until the export is
//!    regenerated (`cargo run --example polls -- export > examples/polls.catalog.json`).
//! 2. The regenerated export is compared with the lock. Nothing breaking: the build passes.
//!    Breaking: `cargo build` fails with one `breaking <rule> <capability> <pointer>:
//!    <message>` line per change, and the ways on:
//!    - keep the contract: undo the change in the code and regenerate the export;
//!    - publish a major version: the crate's version from `0.1.x` to `0.2.0` (Cargo's rule:
//!      the leftmost non-zero component) passes, warning what it breaks;
//!    - accept the break: `RCIP_ACCEPT_BREAKING=1 cargo build -p <crate>` rewrites the lock
//!      with the export and the crate's version ([`ACCEPT_BREAKING_ENV`]); commit it.
//! 3. Once a major version is published, the same variable records its contract as the new
//!    lock (a build script rewrites no source file unasked: `cargo publish` refuses that).
#![deny(missing_docs)]

mod cargo;
mod contract;
mod generate;
mod rust_names;
mod string_enum;
mod tokens;
mod vocabulary;

pub use contract::{ACCEPT_BREAKING_ENV, Breaking, Contract, ContractError, DEFAULT_LOCK, Outcome};
pub use vocabulary::VocabularyFile;

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use rcip_relationship::{Package, PackageError, duplicate_namespaces, parse_package};

/// The file written into `$OUT_DIR`.
pub const OUTPUT_FILE: &str = "rcip_programs.rs";

/// A folder of program packages to compile.
#[derive(Debug, Clone)]
pub struct Programs {
    dir: PathBuf,
    crate_path: String,
    output: Option<PathBuf>,
}

/// Why the packages could not be compiled.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The folder or a file could not be read, or the output not written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
    /// `OUT_DIR` is not set (not running from a build script) and no output was given.
    #[error("OUT_DIR is not set: call this from a build script, or set an output file")]
    NoOutDir,
    /// Packages with problems: every problem of every file.
    #[error("{}", Invalid(.0))]
    Invalid(Vec<PackageError>),
    /// A vocabulary with problems: one `file: pointer: message` line each.
    #[error("{}", .0.join("\n"))]
    Vocabulary(Vec<String>),
    /// The path given to `crate_path` is not a Rust path.
    #[error("crate path {0:?} is not a Rust path (like `::rcip_relationship` or `crate`)")]
    CratePath(String),
}

/// The crate path a builder was given, as a path to generate code with.
fn crate_path(path: &str) -> Result<syn::Path, BuildError> {
    syn::parse_str(path).map_err(|_| BuildError::CratePath(path.to_owned()))
}

struct Invalid<'a>(&'a [PackageError]);

impl fmt::Display for Invalid<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

impl Programs {
    /// The packages in `dir` (relative paths are relative to the crate's manifest folder when
    /// run by Cargo).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            crate_path: "::rcip_relationship".to_owned(),
            output: None,
        }
    }

    /// The path the generated code reaches `rcip-relationship` by (default `::rcip_relationship`), for
    /// crates that rename or re-export it.
    #[must_use]
    pub fn crate_path(mut self, path: impl Into<String>) -> Self {
        self.crate_path = path.into();
        self
    }

    /// Writes to `path` instead of `$OUT_DIR/rcip_programs.rs`.
    #[must_use]
    pub fn output(mut self, path: impl Into<PathBuf>) -> Self {
        self.output = Some(path.into());
        self
    }

    /// Validates every package and writes the generated Rust; returns the file written.
    /// Prints the `cargo::rerun-if-changed` lines for the folder and each package.
    ///
    /// # Errors
    ///
    /// [`BuildError::Invalid`] with every problem of every invalid package (nothing is
    /// written then), or an I/O error.
    pub fn compile(&self) -> Result<PathBuf, BuildError> {
        let dir = cargo::resolve(&self.dir);
        println!("cargo::rerun-if-changed={}", dir.display());
        let files = package_files(&dir)?;
        let mut packages = Vec::with_capacity(files.len());
        // One error per package file at most (each cut at MAX_PACKAGE_PROBLEMS, and
        // duplicate namespaces one per package): bounded by the crate's own folder.
        let mut errors = Vec::new();
        for file in &files {
            let shown = file
                .strip_prefix(cargo::manifest_dir())
                .unwrap_or(file)
                .to_path_buf();
            let text = cargo::read_tracked(file)?;
            match parse_package(&text) {
                Ok(package) => packages.push((shown, package)),
                Err(error) => errors.push(error.in_file(shown)),
            }
        }
        errors.extend(duplicate_namespaces(&packages));
        if !errors.is_empty() {
            return Err(BuildError::Invalid(errors));
        }
        let krate = crate_path(&self.crate_path)?;
        let packages: Vec<&Package> = packages.iter().map(|(_, p)| p).collect();
        let code = generate::generate(&packages, &krate);
        cargo::write_output(self.output.as_ref(), OUTPUT_FILE, code)
    }

    /// [`compile`](Self::compile) for a `build.rs`: on failure, reports each problem as a
    /// `cargo::error` line (Cargo prints them and fails the build) instead of panicking.
    pub fn compile_or_fail(&self) {
        cargo::report(self.compile());
    }
}

/// The `*.json` files of `dir`, sorted by name.
fn package_files(dir: &Path) -> Result<Vec<PathBuf>, BuildError> {
    let io_error = |source| BuildError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).map_err(io_error)? {
        let path = entry.map_err(io_error)?.path();
        if path.extension().is_some_and(|e| e == "json") && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::{BuildError, crate_path};

    #[test]
    fn a_crate_path_must_be_a_rust_path() {
        assert!(crate_path("::rcip_relationship").is_ok());
        assert!(crate_path("crate").is_ok());
        // Not pasted into the code any more: text that is no path is refused.
        let hostile = "x; pub fn injected() {}";
        assert!(matches!(crate_path(hostile), Err(BuildError::CratePath(p)) if p == hostile));
    }
}
