//! A gated RCP client: every request passes its capability gate before a transport sees it.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::capabilities::Capabilities;
use super::error::{RcpError, RcpErrorCode};
use super::key::{Capability, Method, vendor_method_key};

/// The RCP protocol version this crate speaks.
pub const PROTOCOL_VERSION: u64 = 1;

/// The lowest protocol version this crate accepts.
pub const MIN_PROTOCOL_VERSION: u64 = 1;

/// A peer's identity (schema `PeerInfo`): `name` is required, `version` optional.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerInfo {
    /// The name.
    pub name: String,
    /// The version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

impl PeerInfo {
    /// A peer with a name and a version.
    #[must_use]
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        PeerInfo {
            name: name.into(),
            version: Some(version.into()),
        }
    }
}

/// The result of `initialize` (and of `info`; schema `InitializeResult`). Unknown members
/// are ignored.
///
/// ```
/// use rcip_rcp::{Capability, InitializeResult};
/// use serde_json::json;
///
/// let result: InitializeResult = serde_json::from_value(json!({
///     "protocolVersion": 1,
///     "server": {"name": "my-engine", "version": "2.3.1"},
///     "capabilities": {"retrieve": {"maxK": 200}, "embed": {"dimension": 384, "identity": "bge-small-en"}},
///     "_meta": {"conformance": "L1"}
/// }))
/// .unwrap();
/// assert!(result.capabilities.supports(Capability::Embed));
/// assert_eq!(result.meta.unwrap()["conformance"], "L1");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The negotiated version (≥ 1).
    pub protocol_version: u64,
    /// The server.
    pub server: PeerInfo,
    /// What the server offers, frozen for the session.
    pub capabilities: Capabilities,
    /// Side-band data (`_meta`: `conformance`, `session`, ...), opaque.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// A request that has passed its capability gate: the only thing an [`RcpTransport`] can be
/// given, and nothing outside this module can make one. So a transport never sees a request
/// that was not gated, whoever calls it.
#[derive(Debug, Clone, PartialEq)]
pub struct GatedRequest {
    method: String,
    params: Map<String, Value>,
}

impl GatedRequest {
    /// The method name.
    #[must_use]
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The params (always an object).
    #[must_use]
    pub fn params(&self) -> &Map<String, Value> {
        &self.params
    }

    /// The JSON-RPC 2.0 request frame with this `id`.
    #[must_use]
    pub fn to_frame(&self, id: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": self.method, "params": self.params})
    }
}

/// Carries gated requests to a server and brings back the `result`, or the `error` as an
/// [`RcpError`]. Framing (ids, newline-delimited JSON, HTTP) is the transport's business.
pub trait RcpTransport {
    /// Sends one request and waits for its reply.
    fn request(&mut self, request: GatedRequest) -> Result<Value, RcpError>;
}

impl<T: RcpTransport + ?Sized> RcpTransport for &mut T {
    fn request(&mut self, request: GatedRequest) -> Result<Value, RcpError> {
        (**self).request(request)
    }
}

impl<T: RcpTransport + ?Sized> RcpTransport for Box<T> {
    fn request(&mut self, request: GatedRequest) -> Result<Value, RcpError> {
        (**self).request(request)
    }
}

/// An RCP client over any [`RcpTransport`]. Every operation checks the server's advertisement
/// first and fails with `CapabilityMissing` (-32003) `server does not advertise '<key>'`
/// before building a request or touching the transport; there is no ungated way to send.
///
/// ```
/// use rcip_rcp::*;
/// use serde_json::{Map, Value, json};
///
/// /// A transport that answers `initialize` and counts what it is sent.
/// #[derive(Default)]
/// struct Loopback { sent: Vec<String> }
///
/// impl RcpTransport for Loopback {
///     fn request(&mut self, request: GatedRequest) -> Result<Value, RcpError> {
///         self.sent.push(request.method().to_owned());
///         Ok(match request.method() {
///             "initialize" => json!({
///                 "protocolVersion": 1,
///                 "server": {"name": "engine"},
///                 "capabilities": {"retrieve": {"maxK": 100}}
///             }),
///             _ => json!({"hits": []}),
///         })
///     }
/// }
///
/// let mut client = RcpClient::connect(
///     Loopback::default(),
///     PeerInfo::new("my-app", "1.0"),
///     Capabilities::new(),
/// )?;
/// if client.supports(Capability::Retrieve) {
///     let mut params = Map::new();
///     params.insert("query".into(), json!("eiffel tower"));
///     params.insert("k".into(), json!(3));
///     client.retrieve(params)?;
/// }
/// // Not advertised: refused here, and the transport never hears of it.
/// let error = client.rerank(Map::new()).unwrap_err();
/// assert_eq!(error.kind(), Some(RcpErrorCode::CapabilityMissing));
/// assert_eq!(error.message, "server does not advertise 'rerank'");
/// assert_eq!(client.transport().sent, ["initialize", "retrieve"]);
/// # Ok::<(), RcpError>(())
/// ```
#[derive(Debug)]
pub struct RcpClient<T> {
    transport: T,
    session: InitializeResult,
}

impl<T: RcpTransport> RcpClient<T> {
    /// Runs the `initialize` handshake: sends version 1, `client` and the client's `hints`,
    /// and keeps the server's answer for the session. A version below 1 is
    /// `VersionMismatch` (-32002) "server offered no usable protocol version"; a result that
    /// is not an `InitializeResult` is `InvalidParams` (-32602) "the initialize result is
    /// malformed" (the reason in `data.detail`).
    pub fn connect(
        mut transport: T,
        client: PeerInfo,
        hints: Capabilities,
    ) -> Result<Self, RcpError> {
        let mut params = Map::new();
        params.insert("protocolVersion".into(), json!(PROTOCOL_VERSION));
        params.insert("client".into(), json!(client));
        params.insert("capabilities".into(), hints.to_value());
        let result = transport.request(GatedRequest {
            method: Method::Initialize.name().to_owned(),
            params,
        })?;
        let mut session = parse_initialize_result(result)?;
        session.protocol_version = session.protocol_version.min(PROTOCOL_VERSION);
        Ok(RcpClient { transport, session })
    }

    /// A client for a session whose handshake happened elsewhere.
    #[must_use]
    pub fn with_session(transport: T, session: InitializeResult) -> Self {
        RcpClient { transport, session }
    }

    /// The session: negotiated version, server, capabilities.
    #[must_use]
    pub fn session(&self) -> &InitializeResult {
        &self.session
    }

    /// The server's capabilities.
    #[must_use]
    pub fn capabilities(&self) -> &Capabilities {
        &self.session.capabilities
    }

    /// Whether the server advertises `capability`.
    #[must_use]
    pub fn supports(&self, capability: Capability) -> bool {
        self.session.capabilities.supports(capability)
    }

    /// The transport.
    #[must_use]
    pub fn transport(&self) -> &T {
        &self.transport
    }

    /// The transport, mutably (it still accepts only gated requests).
    pub fn transport_mut(&mut self) -> &mut T {
        &mut self.transport
    }

    /// The transport, giving up the client.
    #[must_use]
    pub fn into_transport(self) -> T {
        self.transport
    }

    /// Calls a core method after its gate ([`Capabilities::gate_method`]). `initialize` is
    /// refused with `InvalidRequest` (-32600) "the session is already initialized".
    pub fn call(&mut self, method: Method, params: Map<String, Value>) -> Result<Value, RcpError> {
        self.call_with(method, || params)
    }

    /// As [`call`](Self::call), building the params only once the gate has passed.
    pub fn call_with(
        &mut self,
        method: Method,
        params: impl FnOnce() -> Map<String, Value>,
    ) -> Result<Value, RcpError> {
        if method == Method::Initialize {
            return Err(RcpError::new(
                RcpErrorCode::InvalidRequest,
                "the session is already initialized",
            ));
        }
        self.session.capabilities.gate_method(method)?;
        self.transport.request(GatedRequest {
            method: method.name().to_owned(),
            params: params(),
        })
    }

    /// Calls a vendor method `x-<vendor>/<name>` after gating it on its vendor key; any other
    /// name is `UnknownMethod` (-32004) here (use [`call`](Self::call) for core methods).
    pub fn call_vendor(
        &mut self,
        method: &str,
        params: Map<String, Value>,
    ) -> Result<Value, RcpError> {
        let Some(key) = vendor_method_key(method) else {
            return Err(RcpError::unknown_method(method));
        };
        self.session.capabilities.gate_vendor(key)?;
        self.transport.request(GatedRequest {
            method: method.to_owned(),
            params,
        })
    }

    /// `info`: the server's identity and capabilities. The session's capabilities are not
    /// replaced: they are frozen for the session (spec §13).
    pub fn info(&mut self) -> Result<InitializeResult, RcpError> {
        let result = self.call(Method::Info, Map::new())?;
        parse_initialize_result(result)
    }

    /// `ping`, with optional params (`{"nonce": ...}` is echoed).
    pub fn ping(&mut self, params: Map<String, Value>) -> Result<Value, RcpError> {
        self.call(Method::Ping, params)
    }

    /// `shutdown`.
    pub fn shutdown(&mut self) -> Result<Value, RcpError> {
        self.call(Method::Shutdown, Map::new())
    }
}

/// One named, gated operation per gated core method.
macro_rules! gated_operations {
    ($( $(#[$meta:meta])* $name:ident => $method:ident, )*) => {
        impl<T: RcpTransport> RcpClient<T> {
            $(
                $(#[$meta])*
                pub fn $name(&mut self, params: Map<String, Value>) -> Result<Value, RcpError> {
                    self.call(Method::$method, params)
                }
            )*
        }
    };
}

gated_operations! {
    /// `embed`, gated by `embed`.
    embed => Embed,
    /// `embed/sparse`, gated by `sparseEmbed`.
    embed_sparse => EmbedSparse,
    /// `embed/multi`, gated by `multiVector`.
    embed_multi => EmbedMulti,
    /// `rerank`, gated by `rerank`.
    rerank => Rerank,
    /// `retrieve`, gated by `retrieve`.
    retrieve => Retrieve,
    /// `query/transform`, gated by `transform`.
    transform => Transform,
    /// `graph`, gated by `graph`.
    graph => Graph,
    /// `index/add`, gated by `index` with `writable: true`.
    index_add => IndexAdd,
    /// `index/delete`, gated by `index`.
    index_delete => IndexDelete,
    /// `catalog/list`, gated by `catalog`.
    catalog_list => CatalogList,
    /// `feedback`, gated by `feedback`.
    feedback => Feedback,
    /// `memory/build`, gated by `memory`.
    memory_build => MemoryBuild,
    /// `memory/recall`, gated by `memory`.
    memory_recall => MemoryRecall,
}

fn parse_initialize_result(result: Value) -> Result<InitializeResult, RcpError> {
    let session = InitializeResult::deserialize(result).map_err(|e| {
        RcpError::new(
            RcpErrorCode::InvalidParams,
            "the initialize result is malformed",
        )
        .with_data(json!({"detail": e.to_string()}))
    })?;
    if session.protocol_version < MIN_PROTOCOL_VERSION {
        return Err(RcpError::new(
            RcpErrorCode::VersionMismatch,
            "server offered no usable protocol version",
        ));
    }
    Ok(session)
}
