//! RCP error codes (spec §12, schema `ErrorCode`) and the error value every RCP operation
//! returns.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The RCP/1 error codes: the JSON-RPC reserved codes and the RCP range.
///
/// A receiver treats a code it does not know as a generic failure, never as a broken frame:
/// [`RcpError`] keeps the raw integer, and [`RcpErrorCode::from_code`] answers `None` for it.
///
/// ```
/// use rcip_rcp::RcpErrorCode;
/// let code = RcpErrorCode::from_code(-32003).unwrap();
/// assert_eq!(code, RcpErrorCode::CapabilityMissing);
/// assert_eq!(code.name(), "CapabilityMissing");
/// assert!(!code.retryable());
/// assert!(RcpErrorCode::RateLimited.retryable());
/// assert_eq!(RcpErrorCode::from_code(-32099), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RcpErrorCode {
    /// -32700: the frame is not JSON.
    ParseError,
    /// -32600: not a valid request; an empty batch; a second `initialize`; a
    /// `notifications/cancel` that carries an `id`.
    InvalidRequest,
    /// -32601: reserved by JSON-RPC; RCP answers [`UnknownMethod`](Self::UnknownMethod)
    /// instead.
    MethodNotFound,
    /// -32602: malformed params, an unadvertised filter field, a broken funnel
    /// (`candidateK ≥ rerank.topN ≥ k`), a count that is not an integer ≥ 1, a vector blob
    /// of the wrong length, an oversized batch.
    InvalidParams,
    /// -32603: the server failed.
    InternalError,
    /// -32001: a call before `initialize`.
    NotInitialized,
    /// -32002: no common protocol version.
    VersionMismatch,
    /// -32003: the method is defined by RCP but its capability is not advertised. Clients
    /// raise it themselves, before any I/O.
    CapabilityMissing,
    /// -32004: the method is not defined by RCP.
    UnknownMethod,
    /// -32005: an option value outside what was advertised (`data.option` names it).
    OptionUnsupported,
    /// -32006: the reply to a cancelled request.
    Cancelled,
    /// -32010: a model or index is down, or a pinned `indexVersion` is gone.
    BackendUnavailable,
    /// -32011: load shedding.
    RateLimited,
    /// -32012: not authorised for this corpus or method.
    Unauthorized,
    /// -32013: the request is over a limit.
    PayloadTooLarge,
    /// -32014: the server's own deadline passed.
    Timeout,
    /// -32015: an unknown `memoryId` or `sessionId`, or an expired cursor.
    NotFound,
    /// -32016: a duplicate id on an `index/add` that does not upsert.
    Conflict,
}

impl RcpErrorCode {
    /// Every code, in the order of the spec's table (§12).
    pub const ALL: [RcpErrorCode; 18] = [
        RcpErrorCode::ParseError,
        RcpErrorCode::InvalidRequest,
        RcpErrorCode::MethodNotFound,
        RcpErrorCode::InvalidParams,
        RcpErrorCode::InternalError,
        RcpErrorCode::NotInitialized,
        RcpErrorCode::VersionMismatch,
        RcpErrorCode::CapabilityMissing,
        RcpErrorCode::UnknownMethod,
        RcpErrorCode::OptionUnsupported,
        RcpErrorCode::Cancelled,
        RcpErrorCode::BackendUnavailable,
        RcpErrorCode::RateLimited,
        RcpErrorCode::Unauthorized,
        RcpErrorCode::PayloadTooLarge,
        RcpErrorCode::Timeout,
        RcpErrorCode::NotFound,
        RcpErrorCode::Conflict,
    ];

    /// The integer on the wire.
    #[must_use]
    pub const fn code(self) -> i64 {
        match self {
            RcpErrorCode::ParseError => -32700,
            RcpErrorCode::InvalidRequest => -32600,
            RcpErrorCode::MethodNotFound => -32601,
            RcpErrorCode::InvalidParams => -32602,
            RcpErrorCode::InternalError => -32603,
            RcpErrorCode::NotInitialized => -32001,
            RcpErrorCode::VersionMismatch => -32002,
            RcpErrorCode::CapabilityMissing => -32003,
            RcpErrorCode::UnknownMethod => -32004,
            RcpErrorCode::OptionUnsupported => -32005,
            RcpErrorCode::Cancelled => -32006,
            RcpErrorCode::BackendUnavailable => -32010,
            RcpErrorCode::RateLimited => -32011,
            RcpErrorCode::Unauthorized => -32012,
            RcpErrorCode::PayloadTooLarge => -32013,
            RcpErrorCode::Timeout => -32014,
            RcpErrorCode::NotFound => -32015,
            RcpErrorCode::Conflict => -32016,
        }
    }

    /// The spec's symbol for the code (`"CapabilityMissing"`, ...).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            RcpErrorCode::ParseError => "ParseError",
            RcpErrorCode::InvalidRequest => "InvalidRequest",
            RcpErrorCode::MethodNotFound => "MethodNotFound",
            RcpErrorCode::InvalidParams => "InvalidParams",
            RcpErrorCode::InternalError => "InternalError",
            RcpErrorCode::NotInitialized => "NotInitialized",
            RcpErrorCode::VersionMismatch => "VersionMismatch",
            RcpErrorCode::CapabilityMissing => "CapabilityMissing",
            RcpErrorCode::UnknownMethod => "UnknownMethod",
            RcpErrorCode::OptionUnsupported => "OptionUnsupported",
            RcpErrorCode::Cancelled => "Cancelled",
            RcpErrorCode::BackendUnavailable => "BackendUnavailable",
            RcpErrorCode::RateLimited => "RateLimited",
            RcpErrorCode::Unauthorized => "Unauthorized",
            RcpErrorCode::PayloadTooLarge => "PayloadTooLarge",
            RcpErrorCode::Timeout => "Timeout",
            RcpErrorCode::NotFound => "NotFound",
            RcpErrorCode::Conflict => "Conflict",
        }
    }

    /// The code with this integer; `None` for a code RCP/1 does not define (treat it as a
    /// generic failure).
    #[must_use]
    pub const fn from_code(code: i64) -> Option<RcpErrorCode> {
        // `code` read backwards, so the table is written once.
        let mut i = 0;
        while i < RcpErrorCode::ALL.len() {
            if RcpErrorCode::ALL[i].code() == code {
                return Some(RcpErrorCode::ALL[i]);
            }
            i += 1;
        }
        None
    }

    /// The code whose [`name`](Self::name) this is.
    #[must_use]
    pub fn from_name(name: &str) -> Option<RcpErrorCode> {
        RcpErrorCode::ALL.into_iter().find(|c| c.name() == name)
    }

    /// Whether a request that failed with this code is worth retrying unchanged, when the
    /// error's `data.retryable` does not say: true for `BackendUnavailable`, `RateLimited`
    /// and `Timeout`, as in every reference SDK.
    ///
    /// The spec's table is more nuanced for a few codes that this answers `false` for:
    /// `InternalError` "maybe, once"; `NotInitialized` after initialising; `Unauthorized`
    /// once, after re-authenticating; `Conflict` maybe, after re-reading. Those need the
    /// caller to do something first, so they are not retryable as they stand.
    #[must_use]
    pub const fn retryable(self) -> bool {
        matches!(
            self,
            RcpErrorCode::BackendUnavailable | RcpErrorCode::RateLimited | RcpErrorCode::Timeout
        )
    }
}

impl fmt::Display for RcpErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for RcpErrorCode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_i64(self.code())
    }
}

impl<'de> Deserialize<'de> for RcpErrorCode {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let code = i64::deserialize(deserializer)?;
        RcpErrorCode::from_code(code)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown RCP error code {code}")))
    }
}

/// Who made an advertisement: the party a [`CapabilityMissing`](RcpErrorCode::CapabilityMissing)
/// message names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Advertiser {
    /// The server (RCP's `initialize` result): `server does not advertise '<key>'`, the
    /// reference SDKs' text.
    Server,
    /// The client (RCP client hints, or an RCIP client's optional surfaces):
    /// `client does not advertise '<key>'`.
    Client,
}

impl Advertiser {
    /// `"server"` or `"client"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Advertiser::Server => "server",
            Advertiser::Client => "client",
        }
    }
}

/// An RCP error: the JSON-RPC `error` object (`{code, message, data?}`).
///
/// `Display` prints `[RCP <code>] <message>`, as every reference SDK does.
///
/// ```
/// use rcip_rcp::{Advertiser, RcpError, RcpErrorCode};
/// let error = RcpError::capability_missing(Advertiser::Server, "rerank");
/// assert_eq!(error.code, -32003);
/// assert_eq!(error.kind(), Some(RcpErrorCode::CapabilityMissing));
/// assert_eq!(error.to_string(), "[RCP -32003] server does not advertise 'rerank'");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RcpError {
    /// The code: one of [`RcpErrorCode`], or a code this version does not know.
    pub code: i64,
    /// The message.
    pub message: Cow<'static, str>,
    /// Structured detail; conventional members are `field`, `option`, `retryable`,
    /// `retryAfterMs` and `detail`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RcpError {
    /// An error with this code and message and no data.
    #[must_use]
    pub fn new(code: RcpErrorCode, message: impl Into<Cow<'static, str>>) -> Self {
        RcpError {
            code: code.code(),
            message: message.into(),
            data: None,
        }
    }

    /// An error with any integer code (for codes received from a peer).
    #[must_use]
    pub fn with_raw_code(code: i64, message: impl Into<Cow<'static, str>>) -> Self {
        RcpError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The same error with `data`.
    #[must_use]
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// `CapabilityMissing` (-32003) for `key`: `<advertiser> does not advertise '<key>'`.
    #[must_use]
    pub fn capability_missing(advertiser: Advertiser, key: &str) -> Self {
        RcpError::new(
            RcpErrorCode::CapabilityMissing,
            format!("{} does not advertise '{key}'", advertiser.as_str()),
        )
    }

    /// `UnknownMethod` (-32004) for `method`: `unknown method '<method>'`.
    #[must_use]
    pub fn unknown_method(method: &str) -> Self {
        RcpError::new(
            RcpErrorCode::UnknownMethod,
            format!("unknown method '{method}'"),
        )
    }

    /// The known code, or `None` for a code RCP/1 does not define.
    #[must_use]
    pub const fn kind(&self) -> Option<RcpErrorCode> {
        RcpErrorCode::from_code(self.code)
    }

    /// Whether the request is worth retrying: `data.retryable` when it is a boolean,
    /// otherwise [`RcpErrorCode::retryable`] (false for unknown codes).
    #[must_use]
    pub fn retryable(&self) -> bool {
        if let Some(flag) = self
            .data
            .as_ref()
            .and_then(|d| d.get("retryable"))
            .and_then(Value::as_bool)
        {
            return flag;
        }
        self.kind().is_some_and(RcpErrorCode::retryable)
    }

    /// The server's suggested backoff (`data.retryAfterMs`), when it is a non-negative
    /// integer.
    #[must_use]
    pub fn retry_after_ms(&self) -> Option<u64> {
        self.data
            .as_ref()
            .and_then(|d| d.get("retryAfterMs"))
            .and_then(Value::as_u64)
    }
}

impl fmt::Display for RcpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[RCP {}] {}", self.code, self.message)
    }
}

impl std::error::Error for RcpError {}
