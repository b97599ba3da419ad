//! The typed RCP capability object.

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::{Advertiser, RcpError, RcpErrorCode};
use super::key::{Capability, KeyKind, META_KEY, Method, is_vendor_key, vendor_method_key};
use super::metadata::{
    CapabilityProblem, CatalogCapability, CitationsCapability, Decode, EmbedCapability,
    FilterCapability, GraphCapability, IndexCapability, LogCapability, MarkerCapability,
    MemoryCapability, MultiVectorCapability, RerankCapability, RetrieveCapability,
    SessionCapability, SparseEmbedCapability, TransformCapability,
};
use super::presence::PresenceMap;

/// An RCP capability object (spec §6, schema `Capabilities`): what a server offers in its
/// `initialize` result, or the hints a client sends in its `initialize` params.
///
/// **Presence means supported.** A core key is advertised when its field is `Some`; the
/// value is metadata (an empty value is fine). When reading JSON, a key whose value is `null`
/// is absent; any other value, even `false` or one of the wrong shape, is present (members
/// that do not fit their shape are dropped and reported by [`decode`](Self::decode)).
///
/// **Everything else is kept and ignored.** Vendor keys (`x-<vendor>`) are kept and can be
/// queried ([`supports_vendor`](Self::supports_vendor), [`vendor`](Self::vendor)); keys this
/// version does not know are kept for the round trip ([`unknown`](Self::unknown)) but are never
/// reported as supported; unknown members inside a known key stay in that value's `extra`.
/// `_meta` is opaque side-band data ([`meta`](Self::meta)).
///
/// A retrieval server's advertisement:
///
/// ```
/// use std::num::NonZeroU64;
/// use rcip_rcp::*;
/// use serde_json::json;
///
/// let mut caps = Capabilities::new();
/// caps.retrieve = Some(RetrieveCapability {
///     max_k: NonZeroU64::new(200),
///     modes: Some(vec![RetrievalMode::Dense, RetrievalMode::Sparse, RetrievalMode::Hybrid]),
///     fusion: Some(vec![FusionMethod::Rrf, FusionMethod::Weighted]),
///     mmr: Some(true),
///     ..RetrieveCapability::default()
/// });
/// caps.rerank = Some(RerankCapability {
///     methods: Some(vec![RerankMethod::CrossEncoder, RerankMethod::Colbert]),
///     ..RerankCapability::default()
/// });
/// caps.citations = Some(CitationsCapability::default());
/// caps.insert_vendor("x-acme", json!({"boost": true}))?;
///
/// assert_eq!(
///     caps.to_value(),
///     json!({
///         "retrieve": {
///             "maxK": 200,
///             "modes": ["dense", "sparse", "hybrid"],
///             "fusion": ["rrf", "weighted"],
///             "mmr": true
///         },
///         "rerank": {"methods": ["cross-encoder", "colbert"]},
///         "citations": {},
///         "x-acme": {"boost": true}
///     })
/// );
/// assert!(caps.supports(Capability::Retrieve));
/// assert!(!caps.supports(Capability::Graph));
/// assert!(caps.supports_vendor("x-acme"));
/// # Ok::<(), RcpError>(())
/// ```
///
/// A consumer gating on what it read:
///
/// ```
/// use rcip_rcp::{Capabilities, Capability, Method};
/// use serde_json::json;
///
/// let caps = Capabilities::from_value(json!({
///     "retrieve": {"maxK": 100, "x-acme-boost": 2},
///     "embed": null,
///     "index": {"writable": false},
///     "frobnicate": {}
/// }))?;
/// assert!(caps.supports(Capability::Retrieve));
/// assert!(!caps.supports(Capability::Embed)); // null is absent
/// assert!(!caps.supports_key("frobnicate")); // unknown keys are ignored
/// assert_eq!(caps.retrieve.as_ref().unwrap().extra["x-acme-boost"], 2);
///
/// let error = caps.gate_method(Method::Embed).unwrap_err();
/// assert_eq!(error.code, -32003);
/// assert_eq!(error.message, "server does not advertise 'embed'");
/// assert!(caps.gate_method(Method::IndexDelete).is_ok());
/// assert!(caps.gate_method(Method::IndexAdd).is_err()); // needs writable: true
/// # Ok::<(), rcip_rcp::RcpError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Capabilities {
    /// `embed`.
    pub embed: Option<EmbedCapability>,
    /// `sparseEmbed`.
    pub sparse_embed: Option<SparseEmbedCapability>,
    /// `multiVector`.
    pub multi_vector: Option<MultiVectorCapability>,
    /// `rerank`.
    pub rerank: Option<RerankCapability>,
    /// `retrieve`.
    pub retrieve: Option<RetrieveCapability>,
    /// `transform`.
    pub transform: Option<TransformCapability>,
    /// `graph`.
    pub graph: Option<GraphCapability>,
    /// `index`.
    pub index: Option<IndexCapability>,
    /// `session`.
    pub session: Option<SessionCapability>,
    /// `feedback`.
    pub feedback: Option<MarkerCapability>,
    /// `memory`.
    pub memory: Option<MemoryCapability>,
    /// `filter`.
    pub filter: Option<FilterCapability>,
    /// `streaming`.
    pub streaming: Option<MarkerCapability>,
    /// `pagination`.
    pub pagination: Option<MarkerCapability>,
    /// `citations` (`"citations": false` is present: see [`CitationsCapability`]).
    pub citations: Option<CitationsCapability>,
    /// `log`.
    pub log: Option<LogCapability>,
    /// `catalog`.
    pub catalog: Option<CatalogCapability>,
    /// Vendor keys, unknown keys and `_meta`; never a core key.
    others: PresenceMap,
}

/// Runs `$body` with `$slot` bound to the core field of `$capability` (`&` the field, or
/// `&mut` it with `mut`): the one table from capability to field.
macro_rules! each_core_field {
    (mut $caps:expr, $capability:expr, |$slot:ident| $body:expr) => {
        each_core_field!(@ (&mut) $caps, $capability, |$slot| $body)
    };
    ($caps:expr, $capability:expr, |$slot:ident| $body:expr) => {
        each_core_field!(@ (&) $caps, $capability, |$slot| $body)
    };
    (@ ($($borrow:tt)*) $caps:expr, $capability:expr, |$slot:ident| $body:expr) => {
        match $capability {
            Capability::Embed => {
                let $slot = $($borrow)* $caps.embed;
                $body
            }
            Capability::SparseEmbed => {
                let $slot = $($borrow)* $caps.sparse_embed;
                $body
            }
            Capability::MultiVector => {
                let $slot = $($borrow)* $caps.multi_vector;
                $body
            }
            Capability::Rerank => {
                let $slot = $($borrow)* $caps.rerank;
                $body
            }
            Capability::Retrieve => {
                let $slot = $($borrow)* $caps.retrieve;
                $body
            }
            Capability::Transform => {
                let $slot = $($borrow)* $caps.transform;
                $body
            }
            Capability::Graph => {
                let $slot = $($borrow)* $caps.graph;
                $body
            }
            Capability::Index => {
                let $slot = $($borrow)* $caps.index;
                $body
            }
            Capability::Session => {
                let $slot = $($borrow)* $caps.session;
                $body
            }
            Capability::Feedback => {
                let $slot = $($borrow)* $caps.feedback;
                $body
            }
            Capability::Memory => {
                let $slot = $($borrow)* $caps.memory;
                $body
            }
            Capability::Filter => {
                let $slot = $($borrow)* $caps.filter;
                $body
            }
            Capability::Streaming => {
                let $slot = $($borrow)* $caps.streaming;
                $body
            }
            Capability::Pagination => {
                let $slot = $($borrow)* $caps.pagination;
                $body
            }
            Capability::Citations => {
                let $slot = $($borrow)* $caps.citations;
                $body
            }
            Capability::Log => {
                let $slot = $($borrow)* $caps.log;
                $body
            }
            Capability::Catalog => {
                let $slot = $($borrow)* $caps.catalog;
                $body
            }
        }
    };
}

impl Capabilities {
    /// Nothing advertised.
    #[must_use]
    pub fn new() -> Self {
        Capabilities::default()
    }

    /// Reads a capability object. Fails only when `value` is not a JSON object
    /// (`InvalidParams`, -32602); members that do not fit their shape are dropped (see
    /// [`decode`](Self::decode) for the list).
    pub fn from_value(value: Value) -> Result<Self, RcpError> {
        Capabilities::decode(value).map(|(caps, _)| caps)
    }

    /// Reads a capability object and lists what could not be read: each
    /// [`CapabilityProblem`] is a member treated as absent (or a core key whose value is not
    /// an object, which stays present with no metadata).
    ///
    /// ```
    /// use rcip_rcp::{Capabilities, Capability};
    /// use serde_json::json;
    ///
    /// let (caps, problems) =
    ///     Capabilities::decode(json!({"retrieve": {"maxK": 0, "mmr": true}, "graph": true}))?;
    /// assert!(caps.supports(Capability::Retrieve));
    /// assert!(caps.supports(Capability::Graph));
    /// assert_eq!(caps.retrieve.as_ref().unwrap().max_k, None);
    /// assert_eq!(caps.retrieve.as_ref().unwrap().mmr, Some(true));
    /// let pointers: Vec<&str> = problems.iter().map(|p| p.pointer.as_str()).collect();
    /// assert_eq!(pointers, ["/retrieve/maxK", "/graph"]);
    /// assert_eq!(caps.to_value(), json!({"retrieve": {"mmr": true}, "graph": {}}));
    /// # Ok::<(), rcip_rcp::RcpError>(())
    /// ```
    pub fn decode(value: Value) -> Result<(Self, Vec<CapabilityProblem>), RcpError> {
        let mut others = PresenceMap::from_value(value)?;
        // Bounded by the shapes, not the input: at most one problem per capability and per
        // known member of it (each is taken out of its map once), so never cut. Each member
        // is read only as deep as its shape (no recursion into a caller's deep value).
        let mut problems = Vec::new();
        let mut caps = Capabilities::default();
        for capability in Capability::ALL {
            let key = capability.wire_key();
            let Some(value) = others.remove(key) else {
                continue;
            };
            let pointer = format!("/{key}");
            each_core_field!(mut caps, capability, |slot| {
                *slot = Some(Decode::decode(value, &pointer, &mut problems));
            });
        }
        caps.others = others;
        Ok((caps, problems))
    }

    /// The capability object as JSON (serialized, it lists the core keys in the spec's
    /// order, then vendor and unknown keys, then `_meta`).
    #[must_use]
    pub fn to_value(&self) -> Value {
        // The metadata types serialize to JSON without fail: strings, integers, finite
        // numbers, booleans, arrays and objects with string keys.
        serde_json::to_value(self).unwrap_or_default()
    }

    /// Whether `capability` is advertised (its key is present).
    #[must_use]
    pub fn supports(&self, capability: Capability) -> bool {
        each_core_field!(self, capability, |slot| slot.is_some())
    }

    /// Whether the vendor key `key` (`x-<vendor>`) is advertised. `false` for any key that
    /// is not a vendor key.
    #[must_use]
    pub fn supports_vendor(&self, key: &str) -> bool {
        is_vendor_key(key) && self.others.is_present(key)
    }

    /// Whether the key `key` is advertised: a core key by [`supports`](Self::supports), a
    /// vendor key by [`supports_vendor`](Self::supports_vendor). An unknown key, or `_meta`,
    /// is never supported, present or not: unknown keys are informational.
    #[must_use]
    pub fn supports_key(&self, key: &str) -> bool {
        match KeyKind::of(key) {
            KeyKind::Core(capability) => self.supports(capability),
            KeyKind::Vendor => self.supports_vendor(key),
            KeyKind::Meta | KeyKind::Unknown => false,
        }
    }

    /// The advertised core capabilities, in the spec's order.
    pub fn advertised(&self) -> impl Iterator<Item = Capability> + '_ {
        Capability::ALL.into_iter().filter(|c| self.supports(*c))
    }

    /// `Ok` when `capability` is advertised, else `CapabilityMissing` (-32003)
    /// `server does not advertise '<key>'`. Does nothing else.
    pub fn gate(&self, capability: Capability) -> Result<(), RcpError> {
        if self.supports(capability) {
            Ok(())
        } else {
            Err(RcpError::capability_missing(
                Advertiser::Server,
                capability.wire_key(),
            ))
        }
    }

    /// The metadata of an advertised vendor key, else `CapabilityMissing` (-32003)
    /// `server does not advertise '<key>'` (also for a key that is not a vendor key).
    pub fn gate_vendor(&self, key: &str) -> Result<&Value, RcpError> {
        self.vendor(key)
            .ok_or_else(|| RcpError::capability_missing(Advertiser::Server, key))
    }

    /// Gates a method on its capability (B.6): always `Ok` for `initialize`, `info`, `ping`
    /// and `shutdown`; `index/add` also needs `index.writable: true`, and fails with
    /// `server does not advertise 'index' with 'writable: true'` when the key is present
    /// but not writable.
    pub fn gate_method(&self, method: Method) -> Result<(), RcpError> {
        let Some(capability) = method.capability() else {
            return Ok(());
        };
        self.gate(capability)?;
        if method == Method::IndexAdd && !self.index.as_ref().is_some_and(|i| i.is_writable()) {
            return Err(RcpError::new(
                RcpErrorCode::CapabilityMissing,
                "server does not advertise 'index' with 'writable: true'",
            ));
        }
        Ok(())
    }

    /// Gates a method by name: a core method as [`gate_method`](Self::gate_method), a vendor
    /// method `x-<vendor>/<name>` on its vendor key, anything else `UnknownMethod` (-32004)
    /// `unknown method '<name>'` (which wins over a missing capability, as on a server).
    pub fn gate_method_name(&self, method: &str) -> Result<(), RcpError> {
        if let Some(key) = vendor_method_key(method) {
            return self.gate_vendor(key).map(|_| ());
        }
        self.gate_method(method.parse::<Method>()?)
    }

    /// The metadata of a vendor key, if advertised.
    #[must_use]
    pub fn vendor(&self, key: &str) -> Option<&Value> {
        if is_vendor_key(key) {
            self.others.get(key)
        } else {
            None
        }
    }

    /// The advertised vendor keys.
    pub fn vendor_keys(&self) -> impl Iterator<Item = &str> {
        self.others.vendor_keys()
    }

    /// Advertises (or, with `null`, withdraws) a vendor capability; returns the previous
    /// metadata. A key that is not a vendor key is refused with `InvalidParams` (-32602)
    /// `'<key>' is not a vendor capability key (x-<vendor>)`: core keys have typed fields.
    pub fn insert_vendor(
        &mut self,
        key: impl Into<String>,
        value: Value,
    ) -> Result<Option<Value>, RcpError> {
        let key = key.into();
        if !is_vendor_key(&key) {
            return Err(RcpError::new(
                RcpErrorCode::InvalidParams,
                format!("'{key}' is not a vendor capability key (x-<vendor>)"),
            ));
        }
        Ok(self.others.insert(key, value))
    }

    /// Keys that are neither core, vendor nor `_meta`, with their values: kept for the round
    /// trip, never supported.
    pub fn unknown(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.others
            .iter()
            .filter(|(key, _)| KeyKind::of(key) == KeyKind::Unknown)
    }

    /// The side-band data (`_meta`), opaque.
    #[must_use]
    pub fn meta(&self) -> Option<&Value> {
        self.others.meta()
    }

    /// Sets or clears the side-band data (`_meta`).
    pub fn set_meta(&mut self, meta: Option<Value>) {
        self.others.set_meta(meta);
    }
}

impl Serialize for Capabilities {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_map(None)?;
        for capability in Capability::ALL {
            each_core_field!(self, capability, |slot| {
                if let Some(value) = slot {
                    out.serialize_entry(capability.wire_key(), value)?;
                }
            });
        }
        for (key, value) in self.others.iter() {
            out.serialize_entry(key, value)?;
        }
        if let Some(meta) = self.others.meta() {
            out.serialize_entry(META_KEY, meta)?;
        }
        out.end()
    }
}

impl<'de> Deserialize<'de> for Capabilities {
    /// As [`Capabilities::from_value`]: fails only on a value that is not an object.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Capabilities::from_value(Value::deserialize(deserializer)?)
            .map_err(|e| serde::de::Error::custom(e.message))
    }
}
