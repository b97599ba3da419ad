//! Helpers shared by rcip-mcpl's integration tests (`mod common;`).
#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use rcip_mcpl::{Vocabulary, parse_vocabulary};

/// The MCPL 0.5 vocabulary file rcip ships, parsed.
pub fn mcpl() -> Vocabulary {
    let text = include_str!("../../vocabularies/mcpl-0.5.json");
    parse_vocabulary(&serde_json::from_str(text).unwrap()).unwrap()
}
