//! The MCPL 0.5 vocabulary compiled by this crate's build script: the enum and the tree agree
//! with the file, path by path.
#![allow(clippy::unwrap_used)]

use rcip_runtime::mcpl::{CapabilityPath, VOCABULARY};
use rcip_runtime::rcip_core::mcpl::parse_vocabulary;

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
