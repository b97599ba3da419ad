//! Names: the 17 core capability keys, vendor keys, `_meta`, and the methods they gate.

use std::fmt;
use std::str::FromStr;

use super::error::RcpError;

/// The key of side-band data (`_meta`): never a capability, never changes core meaning.
pub const META_KEY: &str = "_meta";

/// One of the 17 core capability keys of RCP/1 (spec §6).
///
/// ```
/// use rcip_rcp::Capability;
/// assert_eq!(Capability::SparseEmbed.wire_key(), "sparseEmbed");
/// assert_eq!("multiVector".parse::<Capability>(), Ok(Capability::MultiVector));
/// assert_eq!(Capability::ALL.len(), 17);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Capability {
    /// `embed`: dense vectors (method `embed`).
    Embed,
    /// `sparseEmbed`: learned-sparse term weights (method `embed/sparse`).
    SparseEmbed,
    /// `multiVector`: late-interaction matrices (method `embed/multi`).
    MultiVector,
    /// `rerank`: reranking (method `rerank`).
    Rerank,
    /// `retrieve`: query to hits (method `retrieve`).
    Retrieve,
    /// `transform`: query transforms (method `query/transform`).
    Transform,
    /// `graph`: graph retrieval (method `graph`).
    Graph,
    /// `index`: document add and delete (methods `index/add`, which also needs
    /// `writable: true`, and `index/delete`).
    Index,
    /// `session`: the `sessionId` hint.
    Session,
    /// `feedback`: relevance and reward signals (method `feedback`).
    Feedback,
    /// `memory`: memory build and recall (methods `memory/build`, `memory/recall`).
    Memory,
    /// `filter`: the `retrieve.filter` parameter.
    Filter,
    /// `streaming`: progress notifications and incremental hits.
    Streaming,
    /// `pagination`: `cursor` / `nextCursor`.
    Pagination,
    /// `citations`: hits carry `citation` and `trust`.
    Citations,
    /// `log`: log notifications.
    Log,
    /// `catalog`: the server federates downstream engines (method `catalog/list`).
    Catalog,
}

impl Capability {
    /// Every core capability, in the spec's table order.
    pub const ALL: [Capability; 17] = [
        Capability::Embed,
        Capability::SparseEmbed,
        Capability::MultiVector,
        Capability::Rerank,
        Capability::Retrieve,
        Capability::Transform,
        Capability::Graph,
        Capability::Index,
        Capability::Session,
        Capability::Feedback,
        Capability::Memory,
        Capability::Filter,
        Capability::Streaming,
        Capability::Pagination,
        Capability::Citations,
        Capability::Log,
        Capability::Catalog,
    ];

    /// The JSON key.
    #[must_use]
    pub const fn wire_key(self) -> &'static str {
        match self {
            Capability::Embed => "embed",
            Capability::SparseEmbed => "sparseEmbed",
            Capability::MultiVector => "multiVector",
            Capability::Rerank => "rerank",
            Capability::Retrieve => "retrieve",
            Capability::Transform => "transform",
            Capability::Graph => "graph",
            Capability::Index => "index",
            Capability::Session => "session",
            Capability::Feedback => "feedback",
            Capability::Memory => "memory",
            Capability::Filter => "filter",
            Capability::Streaming => "streaming",
            Capability::Pagination => "pagination",
            Capability::Citations => "citations",
            Capability::Log => "log",
            Capability::Catalog => "catalog",
        }
    }

    /// The core capability with this JSON key (case-sensitive).
    #[must_use]
    pub fn from_wire_key(key: &str) -> Option<Capability> {
        Capability::ALL.into_iter().find(|c| c.wire_key() == key)
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.wire_key())
    }
}

/// A name that is not a core capability key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not an RCP/1 capability key")]
pub struct UnknownCapability(pub String);

impl FromStr for Capability {
    type Err = UnknownCapability;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Capability::from_wire_key(s).ok_or_else(|| UnknownCapability(s.to_owned()))
    }
}

/// Whether `key` is a vendor capability key: `x-` followed by one or more of `a-z`, `0-9`
/// and `-` (`x-acme`, `x-acme-rank`). The character set is the one the RCP schema's
/// `MethodName` allows for a vendor method's prefix, so every vendor method `x-<vendor>/...`
/// has a vendor key to be gated on.
///
/// ```
/// use rcip_rcp::is_vendor_key;
/// assert!(is_vendor_key("x-acme"));
/// assert!(is_vendor_key("x-acme-rank"));
/// assert!(!is_vendor_key("x-"));
/// assert!(!is_vendor_key("x-Acme"));
/// assert!(!is_vendor_key("x-acme/search"));
/// assert!(!is_vendor_key("retrieve"));
/// ```
#[must_use]
pub const fn is_vendor_key(key: &str) -> bool {
    let bytes = key.as_bytes();
    if bytes.len() < 3 || bytes[0] != b'x' || bytes[1] != b'-' {
        return false;
    }
    let mut i = 2;
    while i < bytes.len() {
        let b = bytes[i];
        if !(b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-') {
            return false;
        }
        i += 1;
    }
    true
}

/// What a key of an advertisement is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyKind {
    /// One of the 17 core keys.
    Core(Capability),
    /// A vendor key (`x-<vendor>`, see [`is_vendor_key`]).
    Vendor,
    /// `_meta`: side-band data, not a capability.
    Meta,
    /// Anything else (a later revision's key, a typo): informational, never supported.
    Unknown,
}

impl KeyKind {
    /// Classifies a key.
    ///
    /// ```
    /// use rcip_rcp::{Capability, KeyKind};
    /// assert_eq!(KeyKind::of("retrieve"), KeyKind::Core(Capability::Retrieve));
    /// assert_eq!(KeyKind::of("x-acme"), KeyKind::Vendor);
    /// assert_eq!(KeyKind::of("_meta"), KeyKind::Meta);
    /// assert_eq!(KeyKind::of("Retrieve"), KeyKind::Unknown);
    /// ```
    #[must_use]
    pub fn of(key: &str) -> KeyKind {
        if let Some(capability) = Capability::from_wire_key(key) {
            KeyKind::Core(capability)
        } else if is_vendor_key(key) {
            KeyKind::Vendor
        } else if key == META_KEY {
            KeyKind::Meta
        } else {
            KeyKind::Unknown
        }
    }
}

/// An RCP/1 request method (spec §7), with the capability that gates it (§6, B.6).
///
/// ```
/// use rcip_rcp::{Capability, Method};
/// assert_eq!(Method::IndexAdd.name(), "index/add");
/// assert_eq!(Method::IndexAdd.capability(), Some(Capability::Index));
/// assert_eq!(Method::Ping.capability(), None);
/// assert_eq!("query/transform".parse::<Method>().unwrap(), Method::Transform);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Method {
    /// `initialize`: always allowed.
    Initialize,
    /// `info`: always allowed, even before `initialize`.
    Info,
    /// `ping`: always allowed, even before `initialize`.
    Ping,
    /// `shutdown`: always allowed, even before `initialize`.
    Shutdown,
    /// `embed`, gated by `embed`.
    Embed,
    /// `embed/sparse`, gated by `sparseEmbed`.
    EmbedSparse,
    /// `embed/multi`, gated by `multiVector`.
    EmbedMulti,
    /// `rerank`, gated by `rerank`.
    Rerank,
    /// `retrieve`, gated by `retrieve`.
    Retrieve,
    /// `query/transform`, gated by `transform`.
    Transform,
    /// `graph`, gated by `graph`.
    Graph,
    /// `index/add`, gated by `index` with `writable: true`.
    IndexAdd,
    /// `index/delete`, gated by `index`.
    IndexDelete,
    /// `catalog/list`, gated by `catalog`.
    CatalogList,
    /// `feedback`, gated by `feedback`.
    Feedback,
    /// `memory/build`, gated by `memory`.
    MemoryBuild,
    /// `memory/recall`, gated by `memory`.
    MemoryRecall,
}

impl Method {
    /// Every request method, in the schema's `MethodName` order.
    pub const ALL: [Method; 17] = [
        Method::Initialize,
        Method::Info,
        Method::Ping,
        Method::Shutdown,
        Method::Embed,
        Method::EmbedSparse,
        Method::EmbedMulti,
        Method::Rerank,
        Method::Retrieve,
        Method::Transform,
        Method::Graph,
        Method::IndexAdd,
        Method::IndexDelete,
        Method::CatalogList,
        Method::Feedback,
        Method::MemoryBuild,
        Method::MemoryRecall,
    ];

    /// The method name on the wire.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Method::Initialize => "initialize",
            Method::Info => "info",
            Method::Ping => "ping",
            Method::Shutdown => "shutdown",
            Method::Embed => "embed",
            Method::EmbedSparse => "embed/sparse",
            Method::EmbedMulti => "embed/multi",
            Method::Rerank => "rerank",
            Method::Retrieve => "retrieve",
            Method::Transform => "query/transform",
            Method::Graph => "graph",
            Method::IndexAdd => "index/add",
            Method::IndexDelete => "index/delete",
            Method::CatalogList => "catalog/list",
            Method::Feedback => "feedback",
            Method::MemoryBuild => "memory/build",
            Method::MemoryRecall => "memory/recall",
        }
    }

    /// The capability that gates the method; `None` for the four that are always allowed.
    #[must_use]
    pub const fn capability(self) -> Option<Capability> {
        Some(match self {
            Method::Initialize | Method::Info | Method::Ping | Method::Shutdown => return None,
            Method::Embed => Capability::Embed,
            Method::EmbedSparse => Capability::SparseEmbed,
            Method::EmbedMulti => Capability::MultiVector,
            Method::Rerank => Capability::Rerank,
            Method::Retrieve => Capability::Retrieve,
            Method::Transform => Capability::Transform,
            Method::Graph => Capability::Graph,
            Method::IndexAdd | Method::IndexDelete => Capability::Index,
            Method::CatalogList => Capability::Catalog,
            Method::Feedback => Capability::Feedback,
            Method::MemoryBuild | Method::MemoryRecall => Capability::Memory,
        })
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Method {
    type Err = RcpError;

    /// The core method with this name; anything else is `UnknownMethod` (-32004)
    /// `unknown method '<name>'`. Vendor methods are not [`Method`]s: see
    /// [`vendor_method_key`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Method::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| RcpError::unknown_method(s))
    }
}

/// The vendor key that gates a vendor method: `x-acme/search` is gated by `x-acme`. `None`
/// when `method` is not `<vendor key>/<name>` with a non-empty name.
///
/// ```
/// use rcip_rcp::vendor_method_key;
/// assert_eq!(vendor_method_key("x-acme/search"), Some("x-acme"));
/// assert_eq!(vendor_method_key("x-acme-labs/v2/search"), Some("x-acme-labs"));
/// assert_eq!(vendor_method_key("x-acme"), None);
/// assert_eq!(vendor_method_key("x-acme/"), None);
/// assert_eq!(vendor_method_key("retrieve"), None);
/// ```
#[must_use]
pub fn vendor_method_key(method: &str) -> Option<&str> {
    let (key, name) = method.split_once('/')?;
    (is_vendor_key(key) && !name.is_empty()).then_some(key)
}
