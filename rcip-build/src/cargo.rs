//! What every compiler of this crate does inside a build script: resolve input paths against
//! the crate's manifest folder, read, write into `$OUT_DIR`, and report failures to Cargo.

use std::fs;
use std::path::{Path, PathBuf};

use crate::BuildError;

/// The crate's manifest folder (empty outside Cargo).
pub(crate) fn manifest_dir() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(PathBuf::new, PathBuf::from)
}

/// `path` as given when absolute, else under the manifest folder.
pub(crate) fn resolve(path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        manifest_dir().join(path)
    }
}

/// Reads `file`, asking Cargo to re-run the build script when it changes.
pub(crate) fn read_tracked(file: &Path) -> Result<String, BuildError> {
    println!("cargo::rerun-if-changed={}", file.display());
    fs::read_to_string(file).map_err(|source| BuildError::Io {
        path: file.to_path_buf(),
        source,
    })
}

/// Writes `code` to `output`, or to `$OUT_DIR/<file_name>`; returns the file written.
pub(crate) fn write_output(
    output: Option<&PathBuf>,
    file_name: &str,
    code: String,
) -> Result<PathBuf, BuildError> {
    let output = match output {
        Some(output) => output.clone(),
        None => {
            PathBuf::from(std::env::var_os("OUT_DIR").ok_or(BuildError::NoOutDir)?).join(file_name)
        }
    };
    fs::write(&output, code).map_err(|source| BuildError::Io {
        path: output.clone(),
        source,
    })?;
    Ok(output)
}

/// A build script's way to fail: each line of the error as a `cargo::error` (Cargo prints
/// them and fails the build), no panic.
pub(crate) fn report(result: Result<PathBuf, BuildError>) {
    if let Err(error) = result {
        fail(&error.to_string());
    }
}

/// Each line of `text` as a `cargo::error`.
pub(crate) fn fail(text: &str) {
    for line in text.lines() {
        println!("cargo::error={line}");
    }
}
