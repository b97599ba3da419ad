//! Formats: `uuid::Uuid` and chrono date-times as capability inputs. Their generated schemas
//! carry `format`, and the runtime validates the supported formats (`uuid`, `date-time`,
//! `date`, `email`, `uri`): a value breaking one fails with INPUT_INVALID and keyword
//! `format` before the handler runs.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use chrono::{DateTime, NaiveDate, Utc};
use proptest::prelude::*;
use rcip_runtime::__private::shared::SchemaValidator;
use rcip_runtime::rcip_core::SchemaRole;
use rcip_runtime::rcip_core::schema::strict_schema_for;
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

/// A contact, with a format on an output field.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Contact {
    #[schemars(extend("format" = "email"))]
    email: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Lookup {
    name: String,
}

/// Look up a room's contact (whatever the name is, as an address).
#[capability(effect = "read")]
fn contact(input: Lookup) -> Contact {
    Contact { email: input.name }
}

catalog! {
    struct Rooms {
        id = "rooms",
        name = "Rooms",
        description = "Meeting rooms.",
        capabilities = [book, contact],
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

#[tokio::test]
async fn an_output_breaking_its_format_is_output_invalid() {
    let runtime = runtime(&Arc::new(AtomicUsize::new(0)));
    let ask = |name: &str| {
        InvocationRequest::new(
            <contact as rcip_runtime::CapabilitySpec>::ID,
            json!({"name": name}),
        )
    };
    let good = runtime.client().invoke(ask("desk@example.com")).await;
    assert!(
        matches!(good, InvocationOutcome::Succeeded { .. }),
        "{good:?}"
    );
    let bad = runtime.client().invoke(ask("front desk")).await;
    assert_eq!(bad.error_code(), Some(ErrorCode::OutputInvalid), "{bad:?}");
}

/// The values serde writes for the format types pass the runtime's format checks: a `Uuid`
/// (any 128 bits), a chrono `DateTime<Utc>` (years 0 to 9999, the range RFC 3339 has, with
/// nanoseconds) and a `NaiveDate`, so such an output, or an input that a client serialized
/// from the same types, is never refused for its format.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Stamp {
    id: uuid::Uuid,
    at: DateTime<Utc>,
    day: NaiveDate,
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn serde_forms_pass_the_format_checks(
        bits in any::<u128>(),
        // 0000-01-01T00:00:00Z to 9999-12-31T23:59:59Z.
        seconds in -62_167_219_200_i64..=253_402_300_799,
        nanos in 0_u32..1_000_000_000,
    ) {
        let at = DateTime::<Utc>::from_timestamp(seconds, nanos).unwrap();
        let stamp = Stamp { id: uuid::Uuid::from_u128(bits), at, day: at.date_naive() };
        let value = serde_json::to_value(&stamp).unwrap();
        for role in [SchemaRole::Input, SchemaRole::Output] {
            let schema = strict_schema_for::<Stamp>(role).unwrap();
            let validator = SchemaValidator::compile(&schema).unwrap();
            prop_assert_eq!(validator.check(&value), Ok(()), "{}", value);
        }
        // And serde reads its own form back.
        let back: Stamp = serde_json::from_value(value).unwrap();
        prop_assert_eq!(back.at, at);
    }
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
        .host()
        .bind_capability::<contact>(())
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
