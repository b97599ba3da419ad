//! Server request ids that name their instance, on a deployment of several instances.
//!
//! rmcp numbers the requests a 2025-11-25 session's server sends its client (an
//! elicitation, a sampling request, a roots listing) from 0, on each instance that serves
//! the session: two instances ask with the same ids. An answer reaches whichever instance
//! the balancer picks, and the relay hands it to the others. So an answer to one instance's
//! question (late, after the question gave up, or relayed after it was answered directly)
//! could resolve another instance's question that has the same id: a human's approval of
//! one operation taken as the approval of another.
//!
//! With a relay, each instance writes its requests' ids on the wire as
//! `rcip.<instance>.<n>`: on the streams it serves, and in the event store, so that a replay
//! served by another instance says the same. An answer's id becomes rmcp's number `n` again
//! only on the instance it names; elsewhere rmcp never sees a number it could match.

use std::sync::Arc;

use axum::body::Bytes;
use rmcp::model::{RequestId, ServerJsonRpcMessage, ServerNotification};
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::store::{
    EventId, EventStore, EventStoreError, EventStream,
};
use serde_json::Value;

/// The first part of every tagged id.
const SCHEME: &str = "rcip.";

/// This instance's tag, and what it does to ids.
#[derive(Debug, Clone)]
pub(crate) struct InstanceIds {
    /// `rcip.<instance>.`: a tagged id is this and rmcp's number.
    prefix: Arc<str>,
}

/// Whose answer a client's response is, by its id.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Owner {
    /// This instance asked: rmcp's own id.
    Mine(u64),
    /// Another instance asked.
    Another,
    /// Not a tagged id (a deployment of one instance, or an id rmcp never wrote).
    Untagged,
}

impl InstanceIds {
    /// A tag of its own for this endpoint: random, so that the deployment's instances differ.
    pub(crate) fn new() -> Self {
        Self::with_tag(&rcip_runtime::__private::shared::random_id(""))
    }

    fn with_tag(tag: &str) -> Self {
        Self {
            prefix: Arc::from(format!("{SCHEME}{tag}.")),
        }
    }

    /// `id` as the wire carries it: rmcp's numbers tagged, anything else as it is.
    fn tag(&self, id: &mut Value) -> bool {
        let Some(number) = id.as_u64() else {
            return false;
        };
        *id = Value::String(format!("{}{number}", self.prefix));
        true
    }

    /// Tags what this instance sends its client: a request's id, and the id a cancellation
    /// names (rmcp cancels a request that timed out). Whether anything changed.
    pub(crate) fn tag_message(&self, message: &mut Value) -> bool {
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            return false;
        };
        if method == "notifications/cancelled" {
            return message
                .pointer_mut("/params/requestId")
                .is_some_and(|id| self.tag(id));
        }
        message.get_mut("id").is_some_and(|id| self.tag(id))
    }

    /// One server-sent event of rmcp's (each body chunk is one whole event) with its message
    /// tagged. Only a request or a cancellation is read (told by how rmcp starts writing
    /// them); every other event, results of any size included, passes as it is.
    pub(crate) fn tag_event(&self, chunk: Bytes) -> Bytes {
        const REQUEST: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":";
        const CANCEL: &[u8] = b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\"";
        let Some(start) = data_start(&chunk) else {
            return chunk;
        };
        let data = &chunk[start..];
        let end = data.iter().position(|&b| b == b'\n').unwrap_or(data.len());
        let data = &data[..end];
        let is_request = data.strip_prefix(REQUEST).is_some_and(|rest| {
            let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
            digits > 0 && rest[digits..].starts_with(b",\"method\":")
        });
        if !is_request && !data.starts_with(CANCEL) {
            return chunk;
        }
        let Ok(mut message) = serde_json::from_slice::<Value>(data) else {
            return chunk;
        };
        if !self.tag_message(&mut message) {
            return chunk;
        }
        let mut tagged = Vec::with_capacity(chunk.len() + self.prefix.len());
        tagged.extend_from_slice(&chunk[..start]);
        tagged.extend_from_slice(message.to_string().as_bytes());
        tagged.extend_from_slice(&chunk[start + end..]);
        Bytes::from(tagged)
    }

    /// Whose answer a response with this id is.
    pub(crate) fn owner(&self, id: &Value) -> Owner {
        let Some(id) = id.as_str().filter(|id| id.starts_with(SCHEME)) else {
            return Owner::Untagged;
        };
        match id.strip_prefix(&*self.prefix).map(str::parse::<u64>) {
            Some(Ok(number)) => Owner::Mine(number),
            _ => Owner::Another,
        }
    }

    /// Whose answer `message` is, when it is a response (an id, no method); `None` for a
    /// client's own request or notification.
    pub(crate) fn response_owner(&self, message: &Value) -> Option<Owner> {
        match message.get("id") {
            Some(id) if message.get("method").is_none() => Some(self.owner(id)),
            _ => None,
        }
    }

    /// A client's message as rmcp must get it here from another instance: a response with
    /// rmcp's own id when this instance asked, `None` for any other response (another
    /// instance's, or untagged: with a relay no instance asks with a bare number, and rmcp
    /// would match one against its own), anything else unchanged.
    pub(crate) fn untag_response(&self, mut message: Value) -> Option<Value> {
        match self.response_owner(&message) {
            Some(Owner::Mine(number)) => {
                message["id"] = Value::from(number);
                Some(message)
            }
            Some(Owner::Another | Owner::Untagged) => None,
            None => Some(message),
        }
    }

    /// `message` tagged, when it is a request or a cancellation (for the event store).
    fn tag_server_message(&self, message: &ServerJsonRpcMessage) -> Option<ServerJsonRpcMessage> {
        let worth = match message {
            ServerJsonRpcMessage::Request(request) => matches!(request.id, RequestId::Number(_)),
            ServerJsonRpcMessage::Notification(notification) => matches!(
                notification.notification,
                ServerNotification::CancelledNotification(_)
            ),
            _ => false,
        };
        if !worth {
            return None;
        }
        let tagged = serde_json::to_value(message).ok().and_then(|mut value| {
            self.tag_message(&mut value)
                .then(|| serde_json::from_value(value).ok())
                .flatten()
        });
        if tagged.is_none() {
            // Never expected; the replay would then carry rmcp's bare number.
            tracing::warn!(target: "rcip::mcp", "a request to a client was stored without its instance's tag");
        }
        tagged
    }
}

/// Where an event's `data: ` line's text starts, if it has one.
fn data_start(chunk: &[u8]) -> Option<usize> {
    const DATA: &[u8] = b"data: ";
    let mut line = 0;
    while line < chunk.len() {
        if chunk[line..].starts_with(DATA) {
            return Some(line + DATA.len());
        }
        line += chunk[line..].iter().position(|&b| b == b'\n')? + 1;
    }
    None
}

/// An event store that keeps requests and cancellations with their tagged ids, as the live
/// stream sent them, so that a replay by any instance names the instance that asked.
pub(crate) struct TaggingEventStore {
    pub(crate) inner: Arc<dyn EventStore>,
    pub(crate) ids: InstanceIds,
}

#[async_trait::async_trait]
impl EventStore for TaggingEventStore {
    async fn store_event(
        &self,
        stream_id: &str,
        event: &ServerSseMessage,
    ) -> Result<EventId, EventStoreError> {
        let tagged = event
            .message
            .as_deref()
            .and_then(|message| self.ids.tag_server_message(message));
        match tagged {
            Some(message) => {
                let mut event = event.clone();
                event.message = Some(Arc::new(message));
                self.inner.store_event(stream_id, &event).await
            }
            None => self.inner.store_event(stream_id, event).await,
        }
    }

    async fn replay_events_after(
        &self,
        last_event_id: &str,
    ) -> Result<EventStream, EventStoreError> {
        self.inner.replay_events_after(last_event_id).await
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
// roots/list: deprecated in rmcp (SEP-2577), still sent on 2025-11-25.
#[allow(deprecated)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ids(tag: &str) -> InstanceIds {
        InstanceIds::with_tag(tag)
    }

    #[test]
    fn requests_and_cancellations_are_tagged_and_nothing_else() {
        let a = ids("a1");
        let mut request = json!({"jsonrpc": "2.0", "id": 7, "method": "elicitation/create"});
        assert!(a.tag_message(&mut request));
        assert_eq!(request["id"], "rcip.a1.7");
        let mut cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 7, "reason": "timed out"}});
        assert!(a.tag_message(&mut cancel));
        assert_eq!(cancel["params"]["requestId"], "rcip.a1.7");
        for mut untouched in [
            json!({"jsonrpc": "2.0", "id": 7, "result": {"method": "x"}}),
            json!({"jsonrpc": "2.0", "method": "notifications/progress",
                   "params": {"progressToken": 7}}),
            json!({"jsonrpc": "2.0", "id": "client-id", "method": "ping"}),
        ] {
            let before = untouched.clone();
            assert!(!a.tag_message(&mut untouched));
            assert_eq!(untouched, before);
        }
    }

    #[test]
    fn an_event_is_tagged_in_place_and_others_pass_as_they_are() {
        let a = ids("a1");
        let request = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"elicitation/create\",\"params\":{}}\nid: s-4\n\n";
        let tagged = a.tag_event(Bytes::from(request));
        let lines: Vec<&str> = std::str::from_utf8(&tagged).unwrap().split('\n').collect();
        assert_eq!(lines[0], "event: message");
        assert_eq!(
            serde_json::from_str::<Value>(lines[1].strip_prefix("data: ").unwrap()).unwrap(),
            json!({"jsonrpc": "2.0", "id": "rcip.a1.3", "method": "elicitation/create",
                   "params": {}})
        );
        assert_eq!(lines[2..], ["id: s-4", "", ""]);
        for other in [
            "data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"text\":\"\\\"method\\\":\"}}\nid: s-5\n\n",
            "data: \nid: s-0\nretry: 3000\n\n",
            ":\n\n",
            "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n",
        ] {
            assert_eq!(
                a.tag_event(Bytes::from(other)),
                Bytes::from(other),
                "{other}"
            );
        }
        let cancel = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":3}}\n\n";
        assert!(
            std::str::from_utf8(&a.tag_event(Bytes::from(cancel)))
                .unwrap()
                .contains("\"requestId\":\"rcip.a1.3\"")
        );
    }

    #[test]
    fn an_answer_goes_back_to_rmcp_only_where_it_was_asked() {
        let (a, b) = (ids("a1"), ids("b2"));
        let answer = json!({"jsonrpc": "2.0", "id": "rcip.a1.3", "result": {"action": "accept"}});
        assert_eq!(
            a.untag_response(answer.clone()),
            Some(json!({"jsonrpc": "2.0", "id": 3, "result": {"action": "accept"}}))
        );
        assert_eq!(b.untag_response(answer), None, "B never sees A's number");
        // An untagged answer is nobody's here: with a relay every question is tagged, and
        // rmcp would take a bare (or numeric string) id as its own number.
        for id in [json!(3), json!("3"), Value::Null] {
            let plain = json!({"jsonrpc": "2.0", "id": id, "result": {}});
            assert_eq!(a.response_owner(&plain), Some(Owner::Untagged));
            assert_eq!(a.untag_response(plain), None);
        }
        // A client's own request or notification is not an answer.
        let request = json!({"jsonrpc": "2.0", "id": "rcip.a1.3", "method": "ping"});
        assert_eq!(a.response_owner(&request), None);
        assert_eq!(a.untag_response(request.clone()), Some(request));
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": "rcip.b2.1"}});
        assert_eq!(a.untag_response(cancel.clone()), Some(cancel));
        // A forged or broken tag is another instance's, never this one's.
        for id in [
            "rcip.a1.",
            "rcip.a1.x",
            "rcip.a1.-1",
            "rcip.a10.3",
            "rcip.a1.18446744073709551616",
        ] {
            assert_eq!(a.owner(&json!(id)), Owner::Another, "{id}");
        }
        assert_eq!(a.owner(&json!("rcip-a1-3")), Owner::Untagged);
    }

    /// The fast check against rmcp's own serialization of what it sends (a field order
    /// changed by an rmcp upgrade fails here, not silently on the wire).
    #[test]
    fn rmcp_s_own_requests_and_cancellations_are_tagged() {
        use rmcp::model::{
            ElicitRequest, ElicitRequestParams, JsonRpcRequest, ListRootsRequest, ServerRequest,
        };
        let a = ids("a1");
        let params: ElicitRequestParams = serde_json::from_value(json!({
            "mode": "form", "message": "Allow?",
            "requestedSchema": {"type": "object", "properties": {}}}))
        .unwrap();
        let request = |request: ServerRequest| {
            ServerJsonRpcMessage::Request(JsonRpcRequest::new(RequestId::Number(41), request))
        };
        // Made by rmcp's own deserializer; what is checked is how rmcp writes it.
        let cancelled: ServerJsonRpcMessage = serde_json::from_value(json!({
            "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 41, "reason": "timed out"}}))
        .unwrap();
        for message in [
            request(ServerRequest::ElicitRequest(ElicitRequest::new(params))),
            request(ServerRequest::ListRootsRequest(ListRootsRequest::default())),
            cancelled,
        ] {
            let data = serde_json::to_string(&message).unwrap();
            let event = a.tag_event(Bytes::from(format!("data: {data}\nid: s-1\n\n")));
            let event = std::str::from_utf8(&event).unwrap();
            assert!(event.contains("\"rcip.a1.41\""), "{data} -> {event}");
            assert!(event.ends_with("\nid: s-1\n\n"), "{event}");
            // The event store keeps the same.
            let stored = serde_json::to_string(&a.tag_server_message(&message).unwrap()).unwrap();
            assert!(stored.contains("\"rcip.a1.41\""), "{stored}");
        }
    }

    /// What the event store keeps is tagged, so a replay (by any instance) is.
    #[tokio::test]
    async fn a_replay_names_the_instance_that_asked() {
        use futures_util::StreamExt;
        use rmcp::model::{JsonRpcRequest, ListRootsRequest, ServerRequest};
        let store = TaggingEventStore {
            inner: Arc::new(crate::MemoryEventStore::new()),
            ids: ids("a1"),
        };
        let mut first = ServerSseMessage::default();
        first.message = None;
        let priming = store.store_event("s", &first).await.unwrap();
        let mut asked = ServerSseMessage::default();
        asked.message = Some(Arc::new(ServerJsonRpcMessage::Request(
            JsonRpcRequest::new(
                RequestId::Number(5),
                ServerRequest::ListRootsRequest(ListRootsRequest::default()),
            ),
        )));
        store.store_event("s", &asked).await.unwrap();
        // The first event after the priming one (the replay may stay open for more).
        let mut replay = store.replay_events_after(&priming).await.unwrap();
        let event = tokio::time::timeout(std::time::Duration::from_secs(5), replay.next())
            .await
            .expect("an event within 5 s")
            .unwrap();
        let wire = serde_json::to_value(event.message.as_deref().unwrap()).unwrap();
        assert_eq!(wire["id"], "rcip.a1.5");
    }

    #[test]
    fn two_endpoints_have_different_tags() {
        assert_ne!(InstanceIds::new().prefix, InstanceIds::new().prefix);
    }
}
