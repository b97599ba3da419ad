//! What the fixture-crate tests share: the workspace root, a fixture copied into
//! `target/tmp`, and `cargo` run on it offline with one target folder (rcip-build is
//! compiled once for every fixture).
#![allow(clippy::unwrap_used, dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root.
pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// A copy of `rcip-build/tests/<source>` named `name` in `target/tmp`: its `Cargo.toml.in`
/// as `Cargo.toml` with `@ROOT@` and each of `vars` replaced, `files` copied as they are,
/// and the workspace's lock file (the same dependency versions, resolved offline).
pub(crate) fn copy_fixture(
    source: &str,
    name: &str,
    vars: &[(&str, &str)],
    files: &[&str],
) -> PathBuf {
    let source = root().join("rcip-build/tests").join(source);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("src")).unwrap();
    let mut manifest = fs::read_to_string(source.join("Cargo.toml.in"))
        .unwrap()
        .replace("@ROOT@", root().to_str().unwrap());
    for (name, value) in vars {
        manifest = manifest.replace(name, value);
    }
    fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    for file in files {
        fs::copy(source.join(file), dir.join(file)).unwrap();
    }
    fs::copy(root().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    dir
}

/// `cargo ARGS --offline --manifest-path DIR/Cargo.toml`, warnings denied, in the fixtures'
/// shared target folder.
pub(crate) fn cargo(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO"));
    command
        .args(args)
        .arg("--offline")
        .arg("--manifest-path")
        .arg(dir.join("Cargo.toml"))
        .env(
            "CARGO_TARGET_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("rcip-build-fixture-target"),
        )
        .env("RUSTFLAGS", "-Dwarnings");
    command
}
