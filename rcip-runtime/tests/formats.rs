//! Formats: `uuid::Uuid` and chrono date-times as capability inputs. Their generated schemas
//! carry `format`, and the runtime validates the supported formats (`uuid`, `date-time`,
//! `date`, `email`, `uri`): a value breaking one fails with INPUT_INVALID and keyword
//! `format` before the handler runs.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use chrono::{DateTime, NaiveDate, Utc};
use rcip_runtime::{
    ErrorCode, HandlerError, InvocationOutcome, InvocationRequest, PolicyDecision, Runtime,
    RuntimeOptions, capability, catalog, policy_fn,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A meeting to book.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Booking {
    room: uuid::Uuid,
    starts_at: DateTime<Utc>,
    day: Option<NaiveDate>,
    #[schemars(extend("format" = "email"))]
    organizer: Option<String>,
    #[schemars(extend("format" = "uri"))]
    link: Option<String>,
}

/// Book a room.
#[capability(effect = "write")]
fn book(calls: Arc<AtomicUsize>, input: Booking) -> Result<String, HandlerError> {
    calls.fetch_add(1, Ordering::SeqCst);
    Ok(format!("{}@{}", input.room, input.starts_at.to_rfc3339()))
}

catalog! {
    struct Rooms {
        id = "rooms",
        name = "Rooms",
        description = "Meeting rooms.",
        capabilities = [book],
    }
}

async fn invoke(runtime: &Runtime, input: Value) -> InvocationOutcome {
    runtime
        .client()
        .invoke(InvocationRequest::new(
            <book as rcip_runtime::CapabilitySpec>::ID,
            input,
        ))
        .await
}

fn runtime(calls: &Arc<AtomicUsize>) -> Runtime {
    let runtime = Runtime::new(
        Rooms::definition().unwrap(),
        RuntimeOptions::default().policy(policy_fn(|_| PolicyDecision::Allow)),
    )
    .unwrap();
    runtime
        .host()
        .bind_capability::<book>(calls.clone())
        .unwrap()
        .keep();
    runtime
}

#[test]
fn the_generated_schema_carries_the_formats() {
    let definition = Rooms::definition().unwrap();
    let schema = &definition.capabilities[0].input_schema;
    assert_eq!(
        schema["properties"]["room"],
        json!({"type": "string", "format": "uuid"})
    );
    assert_eq!(schema["properties"]["starts_at"]["format"], "date-time");
    assert_eq!(schema["properties"]["day"]["format"], "date");
    assert_eq!(schema["properties"]["organizer"]["format"], "email");
    assert_eq!(schema["properties"]["link"]["format"], "uri");
}

#[tokio::test]
async fn valid_formats_reach_the_handler() {
    let calls = Arc::new(AtomicUsize::new(0));
    let runtime = runtime(&calls);
    let outcome = invoke(
        &runtime,
        json!({
            "room": "67e55044-10b1-426f-9247-bb680e5fe0c8",
            "starts_at": "2026-12-01T09:30:00Z",
            "day": "2026-12-01",
            "organizer": "ada@example.com",
            "link": "https://example.com/rooms/1",
        }),
    )
    .await;
    let InvocationOutcome::Succeeded { output, .. } = &outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(
        output,
        &json!("67e55044-10b1-426f-9247-bb680e5fe0c8@2026-12-01T09:30:00+00:00")
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_broken_format_is_input_invalid_with_keyword_format() {
    let calls = Arc::new(AtomicUsize::new(0));
    let runtime = runtime(&calls);
    let valid = json!({
        "room": "67e55044-10b1-426f-9247-bb680e5fe0c8",
        "starts_at": "2026-12-01T09:30:00Z",
    });
    let cases = [
        ("room", json!("not-a-uuid"), "uuid"),
        ("room", json!("67e55044-10b1-426f-9247"), "uuid"),
        ("starts_at", json!("2026-12-01 09:30"), "date-time"),
        ("starts_at", json!("2026-13-01T09:30:00Z"), "date-time"),
        ("day", json!("2026-02-30"), "date"),
        ("organizer", json!("not an address"), "email"),
        ("link", json!("no scheme"), "uri"),
    ];
    for (field, value, format) in cases {
        let mut input = valid.clone();
        input[field] = value.clone();
        let outcome = invoke(&runtime, input).await;
        assert_eq!(
            outcome.error_code(),
            Some(ErrorCode::InputInvalid),
            "{field} = {value}: {outcome:?}"
        );
        let issues = outcome
            .error()
            .and_then(|e| e.validation_issues.clone())
            .unwrap();
        assert_eq!(issues.len(), 1, "{issues:?}");
        assert_eq!(issues[0].keyword, "format");
        assert_eq!(issues[0].instance_path, format!("/{field}"));
        assert_eq!(issues[0].params.get("format"), Some(&json!(format)));
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0, "no handler call");
}
