//! MCPL 0.5 (RFC-003): the manifest digest and its RFC 8785 canonical JSON, and manifest
//! change tracking (`changed_domains`, [`ManifestTracker`]).
//!
//! `manifest_digest` is the content revision of a manifest:
//! `"sha256:" + base64url_unpadded(SHA-256(JCS(manifest without its root "revision")))`, with
//! the three set-valued arrays (`featureSets.*.uses`, `.tagOntology.coreTags`,
//! `.tagOntology.tags.*.implies`) sorted by UTF-8 bytes and deduplicated when all their members
//! are strings, and every identifier position checked against `[A-Za-z0-9._:*-]`. The digest
//! is total: any JSON object digests, except one with a bad identifier
//! (`identifier_charset`); anything else is `manifest_not_object`. Which positions are
//! identifiers follows the spec's list plus `facet`, as the conformance vectors do; arrays
//! under capability members are not descended into, and a set or list with a non-string
//! member is hashed verbatim and not checked.
//!
//! The crate's tests run the official vectors (`rcip-core/tests/vectors/mcpl/`).

mod digest;
mod grants;
mod jcs;
mod tracker;
mod vocabulary;

pub use digest::{
    DigestError, digest_of_canonical, manifest_canonical_json, manifest_digest, normalize_manifest,
    sort_set,
};
pub use grants::{
    AcceptedReceipt, DisabledReason, Fallback, FeatureSetsUpdate, GrantState, McplErrorCode,
    Receipt, RefusedReceipt, UnavailableFeature, UpdateForm, UpdateOutcome, degradation_receipt,
    feature_set_states, monostate, pattern_matches,
};
pub use jcs::canonical_json;
pub use tracker::{
    ChangeDomain, ConnectionId, ManifestChange, ManifestChanged, ManifestTracker, Transaction,
    TransactionError, changed_domains,
};
pub use vocabulary::{VocabNode, Vocabulary, VocabularyError, parse_vocabulary};
