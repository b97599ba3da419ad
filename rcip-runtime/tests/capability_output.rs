//! A `#[capability]`'s output is serialized inside the future its `call` returns: an output
//! that does not serialize is `OUTPUT_INVALID` ("The capability output must be a JSON
//! value."), for plain and `async` functions and for methods, on a value input and on text
//! (which these tests, built with `typed-text`, take by the typed fast path where it
//! applies); the function's own failure comes first.
#![allow(missing_docs, clippy::unwrap_used)]

use std::sync::Arc;

use rcip_runtime::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Ask {
    /// What to answer.
    text: String,
}

/// An output whose schema is a plain object but whose `Serialize` always fails, as a map
/// keyed by a type schemars does not recognise as a key (a struct, a tuple) fails at run
/// time.
#[derive(JsonSchema)]
struct Refuses {
    /// Never written.
    text: String,
}

impl Serialize for Refuses {
    fn serialize<S: Serializer>(&self, _serializer: S) -> Result<S::Ok, S::Error> {
        Err(serde::ser::Error::custom(format!(
            "refused to serialize {}",
            self.text
        )))
    }
}

/// Answer plainly.
///
/// A plain function whose output does not serialize.
#[capability(effect = "read", scope = "out")]
fn plain(input: Ask) -> Refuses {
    Refuses { text: input.text }
}

/// Answer later.
///
/// An `async` function whose output does not serialize.
#[capability(effect = "read", scope = "out")]
async fn later(input: Ask) -> Result<Refuses, HandlerError> {
    Ok(Refuses { text: input.text })
}

/// Fail first.
///
/// Fails before any output exists: its own failure, not the output's.
#[capability(effect = "read", scope = "out", id = "out.fail_first")]
async fn fail_first(input: Ask) -> Result<Refuses, HandlerError> {
    Err(HandlerError::failed(format!("no answer to {}", input.text)))
}

/// Answer well.
///
/// An output that serializes, for contrast.
#[capability(effect = "read", scope = "out")]
fn echo(input: Ask) -> String {
    input.text
}

/// A service whose method's output does not serialize.
struct Service;

#[capabilities]
impl Service {
    /// Answer as a service.
    ///
    /// A method whose output does not serialize.
    #[capability(effect = "read", scope = "out")]
    fn served(&self, input: Ask) -> Refuses {
        Refuses { text: input.text }
    }
}

catalog! {
    struct Outputs {
        id = "outputs",
        name = "Outputs",
        description = "Outputs that do or do not serialize.",
        scopes = [("out", "Out", "The outputs.")],
        capabilities = [plain, later, fail_first, echo, service::served],
    }
}

fn client() -> Arc<dyn RcipClient> {
    let options = RuntimeOptions::default().policy(policy_fn(|_| PolicyDecision::Allow));
    let runtime = Outputs::runtime(options, (Arc::new(Service),)).unwrap();
    let client = runtime.client();
    // The runtime lives as long as its client's share of it.
    drop(runtime);
    client
}

#[tokio::test]
async fn an_output_that_does_not_serialize_is_output_invalid() {
    let client = client();
    for id in ["out.plain", "out.later", "out.served"] {
        let inputs = [
            Input::Value(json!({"text": "hi"})),
            Input::text(r#"{"text": "hi"}"#),
        ];
        for input in inputs {
            let outcome = client.invoke(InvocationRequest::new(id, input)).await;
            assert_eq!(outcome.status(), OutcomeStatus::Failed, "{id}: {outcome:?}");
            let error = outcome.error().unwrap();
            assert_eq!(error.code, ErrorCode::OutputInvalid, "{id}");
            assert_eq!(
                error.message, "The capability output must be a JSON value.",
                "{id}"
            );
        }
    }
}

#[tokio::test]
async fn the_function_s_own_failure_comes_before_its_output() {
    let outcome = client()
        .invoke(InvocationRequest::new(
            "out.fail_first",
            json!({"text": "hi"}),
        ))
        .await;
    let error = outcome.error().unwrap();
    assert_eq!(error.code, ErrorCode::ExecutionFailed);
    assert_eq!(
        error.message,
        "The application could not complete the capability."
    );
}

#[tokio::test]
async fn an_output_that_serializes_is_the_outcome_s_output() {
    let client = client();
    for input in [
        Input::Value(json!({"text": "hi"})),
        Input::text(r#"{"text":"hi"}"#),
    ] {
        let outcome = client
            .invoke(InvocationRequest::new("out.echo", input))
            .await;
        assert_eq!(outcome.output(), Some(&json!("hi")), "{outcome:?}");
    }
}
