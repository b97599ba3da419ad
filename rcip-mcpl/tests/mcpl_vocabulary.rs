//! The MCPL 0.5 vocabulary tables this crate commits: the enum and the tree agree with the
//! file, path by path. That they are what rcip-build generates from it today is checked by
//! rcip-build's `tests/mcpl_tables.rs` (a dev-dependency on rcip-build here would be a cycle).
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
