//! Capability sets: capabilities declared by generated code.

use crate::CapabilityDefinition;

/// Capabilities declared by generated code rather than by Rust functions: `rcip-build` writes
/// one set per relationship program package (one capability per command). List a set in
/// `catalog!`'s `capability_sets = [...]`; the catalog checks its ids and scopes at compile
/// time like the others.
pub trait CapabilitySet {
    /// Every capability id of the set, in the order of [`definitions`](Self::definitions).
    const IDS: &'static [&'static str];
    /// Every scope the set's capabilities name.
    const SCOPES: &'static [&'static str];

    /// The definitions, with their schemas.
    fn definitions() -> Vec<CapabilityDefinition>;
}
