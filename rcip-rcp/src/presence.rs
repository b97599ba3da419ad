//! The presence rule, on its own: a JSON object where a key's presence means "supported".

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::error::{Advertiser, RcpError, RcpErrorCode};
use super::key::{META_KEY, is_vendor_key};

/// The message of an advertisement that is not a JSON object.
pub(crate) const NOT_AN_OBJECT: &str = "an advertisement must be a JSON object";

/// An advertisement in its raw form: the rules of "presence means supported" and nothing
/// about any particular key.
///
/// - a key whose value is anything but `null` is **present**; the value is metadata (`{}`,
///   and even `false`, still mean "present": only presence is tested, as in every RCP SDK);
/// - `null` counts as absent, and is dropped when the map is built;
/// - `_meta` is side-band data: kept apart, never a key;
/// - every other key, known to the reader or not, is kept for the round trip.
///
/// [`Capabilities`](super::Capabilities) is the typed RCP form built on these rules; an
/// RCIP client's optional surfaces (`rcip_runtime::ClientSurfaces`) are another.
///
/// ```
/// use rcip_rcp::{Advertiser, PresenceMap};
/// use serde_json::json;
///
/// let map = PresenceMap::from_value(json!({
///     "preflight": {"maxProposals": 16},
///     "subscribe": null,
///     "x-acme": false,
///     "_meta": {"build": 7}
/// }))
/// .unwrap();
/// assert!(map.is_present("preflight"));
/// assert!(!map.is_present("subscribe"));
/// assert!(map.is_present("x-acme"));
/// assert!(!map.is_present("_meta"));
/// assert_eq!(map.meta(), Some(&json!({"build": 7})));
/// let error = map.gate(Advertiser::Client, "subscribe").unwrap_err();
/// assert_eq!(error.to_string(), "[RCP -32003] client does not advertise 'subscribe'");
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PresenceMap {
    entries: Map<String, Value>,
    meta: Option<Value>,
}

impl PresenceMap {
    /// An empty map: nothing is supported.
    #[must_use]
    pub fn new() -> Self {
        PresenceMap::default()
    }

    /// Reads an advertisement. Fails only when `value` is not an object: `InvalidParams`
    /// (-32602) "an advertisement must be a JSON object".
    pub fn from_value(value: Value) -> Result<Self, RcpError> {
        match value {
            Value::Object(map) => Ok(PresenceMap::from_map(map)),
            _ => Err(RcpError::new(RcpErrorCode::InvalidParams, NOT_AN_OBJECT)),
        }
    }

    /// Reads an advertisement's members.
    #[must_use]
    pub fn from_map(map: Map<String, Value>) -> Self {
        let mut out = PresenceMap::new();
        for (key, value) in map {
            out.insert(key, value);
        }
        out
    }

    /// Whether `key` is present (and so supported, if the reader knows what it means).
    #[must_use]
    pub fn is_present(&self, key: &str) -> bool {
        self.entries.contains_key(key)
    }

    /// The metadata of a present key.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries.get(key)
    }

    /// `Ok(metadata)` when `key` is present, otherwise `CapabilityMissing` (-32003)
    /// `<advertiser> does not advertise '<key>'`. Nothing else happens either way.
    pub fn gate(&self, advertiser: Advertiser, key: &str) -> Result<&Value, RcpError> {
        self.get(key)
            .ok_or_else(|| RcpError::capability_missing(advertiser, key))
    }

    /// Sets a key. `null` removes it (absent and `null` are the same); `_meta` sets the
    /// side-band data instead of a key. Returns the previous metadata.
    pub fn insert(&mut self, key: impl Into<String>, value: Value) -> Option<Value> {
        let key = key.into();
        if key == META_KEY {
            let previous = self.meta.take();
            self.meta = (!value.is_null()).then_some(value);
            return previous;
        }
        if value.is_null() {
            self.entries.remove(&key)
        } else {
            self.entries.insert(key, value)
        }
    }

    /// Removes a key, returning its metadata.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        self.entries.remove(key)
    }

    /// The present keys and their metadata (not `_meta`).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The present vendor keys (`x-<vendor>`).
    pub fn vendor_keys(&self) -> impl Iterator<Item = &str> {
        self.entries
            .keys()
            .map(String::as_str)
            .filter(|k| is_vendor_key(k))
    }

    /// Whether no key is present (`_meta` does not count).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The side-band data (`_meta`), opaque.
    #[must_use]
    pub fn meta(&self) -> Option<&Value> {
        self.meta.as_ref()
    }

    /// Sets or (with `None`) clears the side-band data.
    pub fn set_meta(&mut self, meta: Option<Value>) {
        self.meta = meta.filter(|m| !m.is_null());
    }

    /// The advertisement as a JSON object: every present key, then `_meta` if any.
    #[must_use]
    pub fn to_map(&self) -> Map<String, Value> {
        let mut map = self.entries.clone();
        if let Some(meta) = &self.meta {
            map.insert(META_KEY.to_owned(), meta.clone());
        }
        map
    }
}

impl Serialize for PresenceMap {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_map().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for PresenceMap {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        PresenceMap::from_value(Value::deserialize(deserializer)?)
            .map_err(|e| serde::de::Error::custom(e.message))
    }
}
