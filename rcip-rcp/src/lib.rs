//! RCP (Retrieval Context Protocol, RCP/1) capability negotiation: the capability object,
//! its gating rules and error codes, for Rust applications that serve or consume retrieval.
//!
//! The rule, used wherever two parties negotiate what is offered (rcip applies it to its own
//! clients' optional surfaces too, see `rcip_runtime::ClientSurfaces`):
//!
//! - a key's **presence** means supported, and its value carries metadata (possibly `{}`);
//!   absence, or `null`, means unavailable;
//! - unknown keys, and unknown members inside known keys, are informational: kept for the
//!   round trip, never acted on;
//! - vendor extensions live under `x-<vendor>` keys, side-band data under `_meta`;
//! - a client **gates every call before any I/O**, failing with `CapabilityMissing`
//!   (-32003) and a message naming the key.
//!
//! What is here:
//!
//! - [`Capabilities`]: the 17 core keys as typed fields ([`RetrieveCapability`] with every
//!   member of spec §6.1, ...), vendor keys, unknown keys and `_meta`; [`supports`],
//!   [`gate`], [`gate_method`]. It interoperates with the `rcp-protocol` crate and validates
//!   against the RCP JSON Schema (both checked in this crate's tests).
//! - [`PresenceMap`]: the same rules without the RCP keys.
//! - [`RcpErrorCode`] (the 18 codes of spec §12) and [`RcpError`].
//! - [`RcpClient`]: a client over any [`RcpTransport`] whose every operation is gated; a
//!   transport only ever receives a [`GatedRequest`], which only this module can make.
//!
//! A retrieval server advertising what it offers, in its `initialize` result:
//!
//! ```
//! use std::num::NonZeroU64;
//! use rcip_rcp::*;
//! use serde_json::json;
//!
//! let mut capabilities = Capabilities::new();
//! capabilities.retrieve = Some(RetrieveCapability {
//!     max_k: NonZeroU64::new(200),
//!     modes: Some(vec![RetrievalMode::Dense, RetrievalMode::Sparse, RetrievalMode::Hybrid]),
//!     fusion: Some(vec![FusionMethod::Rrf]),
//!     units: Some(vec![RetrievalUnit::Chunk, RetrievalUnit::Document]),
//!     confidence: Some(true),
//!     score_scale: Some(ScoreScale::Cosine),
//!     ..RetrieveCapability::default()
//! });
//! capabilities.embed = Some(EmbedCapability {
//!     dimension: NonZeroU64::new(384),
//!     identity: Some("bge-small-en".into()),
//!     ..EmbedCapability::default()
//! });
//! capabilities.pagination = Some(MarkerCapability::default());
//!
//! let result = InitializeResult {
//!     protocol_version: PROTOCOL_VERSION,
//!     server: PeerInfo::new("my-engine", "2.3.1"),
//!     capabilities,
//!     meta: Some(json!({"conformance": "L1"})),
//! };
//! let wire = serde_json::to_value(&result).unwrap();
//! assert_eq!(wire["capabilities"]["retrieve"]["maxK"], 200);
//! assert_eq!(wire["capabilities"]["pagination"], json!({}));
//! assert!(wire["capabilities"].get("rerank").is_none()); // not offered: simply absent
//! ```
//!
//! A consumer gating a call on what the server advertised, before any I/O:
//!
//! ```
//! use rcip_rcp::{Capabilities, Capability, RcpErrorCode};
//! use serde_json::json;
//!
//! let advertised = Capabilities::from_value(json!({
//!     "retrieve": {"maxK": 200, "modes": ["dense"]},
//!     "rerank": null,
//!     "x-acme": {"boost": true}
//! }))?;
//!
//! fn rerank(caps: &Capabilities, passages: &[&str]) -> Result<Vec<f64>, rcip_rcp::RcpError> {
//!     caps.gate(Capability::Rerank)?; // nothing below runs when rerank is not advertised
//!     Ok(passages.iter().map(|_| 0.0).collect())
//! }
//!
//! let error = rerank(&advertised, &["a", "b"]).unwrap_err();
//! assert_eq!(error.kind(), Some(RcpErrorCode::CapabilityMissing));
//! assert_eq!(error.to_string(), "[RCP -32003] server does not advertise 'rerank'");
//! assert!(advertised.supports_vendor("x-acme"));
//! # Ok::<(), rcip_rcp::RcpError>(())
//! ```
//!
//! [`RcpClient`] does the same for every operation; its documentation has a worked example
//! with a transport.
//!
//! [`supports`]: Capabilities::supports
//! [`gate`]: Capabilities::gate
//! [`gate_method`]: Capabilities::gate_method
#![deny(missing_docs)]

mod capabilities;
mod client;
mod error;
mod key;
mod metadata;
mod presence;

pub use capabilities::Capabilities;
pub use client::{
    GatedRequest, InitializeResult, MIN_PROTOCOL_VERSION, PROTOCOL_VERSION, PeerInfo, RcpClient,
    RcpTransport,
};
pub use error::{Advertiser, RcpError, RcpErrorCode};
pub use key::{
    Capability, KeyKind, META_KEY, Method, UnknownCapability, is_vendor_key, vendor_method_key,
};
pub use metadata::{
    CapabilityProblem, CatalogCapability, CitationsCapability, EmbedCapability, FilterCapability,
    FilterFields, FusionMethod, GraphCapability, IndexCapability, LogCapability, MarkerCapability,
    MemoryCapability, MemoryScope, Modality, MultiVectorCapability, RerankCapability, RerankMethod,
    RetrievalMode, RetrievalUnit, RetrieveCapability, ScoreScale, SessionCapability, Similarity,
    SparseEmbedCapability, TransformCapability, TransformMethod, VectorEncoding, read_integer,
};
pub use presence::PresenceMap;
