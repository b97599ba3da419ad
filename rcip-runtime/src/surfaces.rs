//! An RCIP client's optional surfaces, advertised the way RCP advertises capabilities.

use std::fmt;
use std::num::NonZeroUsize;

use rcip_rcp::{Advertiser, KeyKind, PresenceMap, RcpError, is_vendor_key, read_integer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::Error;

/// An optional surface of [`RcipClient`](crate::RcipClient): a trait method whose default does
/// not do the work, so a consumer cannot tell from the type whether a client offers it.
///
/// What every client must do (`get_snapshot`, `list_capabilities`, `subscribe`, `invoke`) is
/// not a surface, as RCP's `initialize` and `ping` are not capabilities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Surface {
    /// `preflight`: [`RcipClient::preflight`](crate::RcipClient::preflight) checks batches
    /// of proposals. Metadata: [`PreflightSurface`].
    Preflight,
}

impl Surface {
    /// Every surface.
    pub const ALL: [Surface; 1] = [Surface::Preflight];

    /// The key in the advertisement.
    #[must_use]
    pub const fn key(self) -> &'static str {
        match self {
            Surface::Preflight => "preflight",
        }
    }

    /// The surface with this key.
    #[must_use]
    pub fn from_key(key: &str) -> Option<Surface> {
        Surface::ALL.into_iter().find(|s| s.key() == key)
    }
}

impl fmt::Display for Surface {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// The metadata of the `preflight` surface: `{"maxProposals": 16}`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PreflightSurface {
    /// The largest batch the client checks (`maxProposals`); absent means the protocol's
    /// limit, [`PREFLIGHT_MAX_PROPOSALS`](crate::rcip_core::PREFLIGHT_MAX_PROPOSALS).
    pub max_proposals: Option<NonZeroUsize>,
    /// Members this version does not know: kept, never read.
    pub extra: Map<String, Value>,
}

impl PreflightSurface {
    /// A preflight surface that checks up to `max_proposals` proposals per batch (`0` states
    /// no limit of its own).
    #[must_use]
    pub fn new(max_proposals: usize) -> Self {
        PreflightSurface {
            max_proposals: NonZeroUsize::new(max_proposals),
            extra: Map::new(),
        }
    }

    /// Reads the metadata leniently: anything but an object means none, and a `maxProposals`
    /// that is not an integer ≥ 1 (`16.0` is one) is treated as absent.
    #[must_use]
    pub fn from_value(value: &Value) -> Self {
        let Some(map) = value.as_object() else {
            return PreflightSurface::default();
        };
        let mut extra = map.clone();
        let max_proposals = extra
            .remove("maxProposals")
            .as_ref()
            .and_then(read_integer)
            .and_then(|n| usize::try_from(n).ok())
            .and_then(NonZeroUsize::new);
        PreflightSurface {
            max_proposals,
            extra,
        }
    }

    /// The metadata as JSON.
    #[must_use]
    pub fn to_value(&self) -> Value {
        let mut map = self.extra.clone();
        map.remove("maxProposals");
        if let Some(max) = self.max_proposals {
            map.insert("maxProposals".into(), json!(max.get()));
        }
        Value::Object(map)
    }
}

/// What optional surfaces an [`RcipClient`](crate::RcipClient) offers, as an RCP-style
/// presence map: a surface is offered when its key is present (its value is metadata), absent
/// or `null` means not offered, unknown keys are kept but never count, vendor surfaces live
/// under `x-<vendor>` keys and `_meta` is side-band data. The rules are
/// [`rcip_rcp::PresenceMap`]'s, the same as for RCP capabilities.
///
/// Consumer helpers that need a surface gate on it before doing anything, and fail with
/// [`Error::CapabilityMissing`]: the RCP `CapabilityMissing` (-32003) error, message
/// `client does not advertise '<key>'`.
///
/// ```
/// use rcip_runtime::{ClientSurfaces, PreflightSurface, Surface};
/// use serde_json::json;
///
/// let surfaces = ClientSurfaces::new().with_preflight(PreflightSurface::new(16));
/// assert_eq!(surfaces.to_value(), json!({"preflight": {"maxProposals": 16}}));
/// assert!(surfaces.supports(Surface::Preflight));
///
/// let none = ClientSurfaces::new();
/// let error = none.gate(Surface::Preflight).unwrap_err();
/// assert_eq!(error.code(), "CAPABILITY_MISSING");
/// assert_eq!(error.to_string(), "[RCP -32003] client does not advertise 'preflight'");
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClientSurfaces {
    presence: PresenceMap,
}

impl ClientSurfaces {
    /// No optional surface.
    #[must_use]
    pub fn new() -> Self {
        ClientSurfaces::default()
    }

    /// Reads an advertisement (a JSON object; anything else is `InvalidParams`, -32602).
    pub fn from_value(value: Value) -> Result<Self, RcpError> {
        PresenceMap::from_value(value).map(|presence| ClientSurfaces { presence })
    }

    /// The advertisement as JSON.
    #[must_use]
    pub fn to_value(&self) -> Value {
        Value::Object(self.presence.to_map())
    }

    /// The same surfaces, with `preflight` offered.
    #[must_use]
    pub fn with_preflight(mut self, preflight: PreflightSurface) -> Self {
        self.presence
            .insert(Surface::Preflight.key(), preflight.to_value());
        self
    }

    /// The `preflight` metadata, if offered.
    #[must_use]
    pub fn preflight(&self) -> Option<PreflightSurface> {
        self.presence
            .get(Surface::Preflight.key())
            .map(PreflightSurface::from_value)
    }

    /// Whether `surface` is offered.
    #[must_use]
    pub fn supports(&self, surface: Surface) -> bool {
        self.presence.is_present(surface.key())
    }

    /// Whether the key is offered: a known surface or a vendor key by presence; an unknown
    /// key (or `_meta`) never.
    #[must_use]
    pub fn supports_key(&self, key: &str) -> bool {
        if Surface::from_key(key).is_some() || KeyKind::of(key) == KeyKind::Vendor {
            self.presence.is_present(key)
        } else {
            false
        }
    }

    /// `Ok` when `surface` is offered, else [`Error::CapabilityMissing`]
    /// (`client does not advertise '<key>'`). Does nothing else.
    pub fn gate(&self, surface: Surface) -> Result<(), Error> {
        self.presence
            .gate(Advertiser::Client, surface.key())
            .map(|_| ())
            .map_err(Error::CapabilityMissing)
    }

    /// The metadata of an offered vendor surface (`x-<vendor>`).
    #[must_use]
    pub fn vendor(&self, key: &str) -> Option<&Value> {
        if is_vendor_key(key) {
            self.presence.get(key)
        } else {
            None
        }
    }

    /// The metadata of an offered vendor surface, else [`Error::CapabilityMissing`].
    pub fn gate_vendor(&self, key: &str) -> Result<&Value, Error> {
        self.vendor(key).ok_or_else(|| {
            Error::CapabilityMissing(RcpError::capability_missing(Advertiser::Client, key))
        })
    }

    /// The same surfaces with a vendor surface offered (or, with `null`, withdrawn). A key that
    /// is not `x-<vendor>` is ignored: known surfaces have typed setters.
    #[must_use]
    pub fn with_vendor(mut self, key: &str, value: Value) -> Self {
        if is_vendor_key(key) {
            self.presence.insert(key, value);
        }
        self
    }

    /// Side-band data (`_meta`), opaque.
    #[must_use]
    pub fn meta(&self) -> Option<&Value> {
        self.presence.meta()
    }

    /// The raw presence map.
    #[must_use]
    pub fn as_presence_map(&self) -> &PresenceMap {
        &self.presence
    }
}

impl Serialize for ClientSurfaces {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.presence.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ClientSurfaces {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        PresenceMap::deserialize(deserializer).map(|presence| ClientSurfaces { presence })
    }
}
