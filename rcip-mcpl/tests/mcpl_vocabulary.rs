//! The MCPL 0.5 vocabulary tables this crate commits: the enum and the tree agree
//! with the file, path by path, and are what rcip-build generates from it today.
#![allow(clippy::unwrap_used)]

use rcip_mcpl::parse_vocabulary;
use rcip_mcpl::{CapabilityPath, VOCABULARY};

#[test]
fn the_compiled_vocabulary_is_the_file() {
    let file = include_str!("../vocabularies/mcpl-0.5.json");
    let parsed = parse_vocabulary(&serde_json::from_str(file).unwrap()).unwrap();
    assert_eq!(VOCABULARY, parsed);
    assert_eq!(CapabilityPath::ALL.len(), VOCABULARY.paths.len());
    for (path, text) in CapabilityPath::ALL.iter().zip(VOCABULARY.paths.iter()) {
        assert_eq!(path.as_str(), text);
        assert_eq!(CapabilityPath::parse(text), Some(*path));
        assert_eq!(path.to_string().parse::<CapabilityPath>(), Ok(*path));
    }
    assert_eq!(
        CapabilityPath::ContextHooksBeforeInferenceInjectBeforeUser.as_str(),
        "contextHooks.beforeInference.inject.beforeUser"
    );
    assert!("channels.observe".parse::<CapabilityPath>().is_err());
    assert_eq!(
        CapabilityPath::parse("contextHooks"),
        None,
        "interior nodes are not paths"
    );
}

/// `src/mcpl_0_5.rs` is committed (rcip-build depends on this crate, so this crate cannot run
/// it at build time); it must be exactly what rcip-build makes of the vocabulary file now.
/// `RCIP_BLESS=1 cargo test -p rcip-mcpl --test mcpl_vocabulary` rewrites it.
#[test]
fn the_committed_tables_are_current() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let fresh = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcpl_0_5.rs");
    rcip_build::VocabularyFile::new(dir.join("vocabularies/mcpl-0.5.json"))
        .crate_path("crate")
        .output(&fresh)
        .compile()
        .unwrap();
    let fresh = std::fs::read_to_string(fresh).unwrap();
    let committed_path = dir.join("src/mcpl_0_5.rs");
    if std::env::var_os("RCIP_BLESS").is_some() {
        std::fs::write(&committed_path, &fresh).unwrap();
    }
    let committed = std::fs::read_to_string(committed_path).unwrap();
    assert!(
        committed == fresh,
        "src/mcpl_0_5.rs is stale: run RCIP_BLESS=1 cargo test -p rcip-mcpl --test mcpl_vocabulary"
    );
}
