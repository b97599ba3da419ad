//! Raw input text through `client.invoke` against capabilities with varied strict schemas:
//! no panic, and the outcome is well formed for the request that produced it.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use rcip_core::OutcomeStatus;
use rcip_runtime::*;
use serde_json::{Value, json};

/// `(capability id, input schema)`: the echo handler returns its input, and each output
/// schema is the input schema, so a valid input must come back as `succeeded`.
fn schemas() -> Vec<(&'static str, Value)> {
    vec![
        (
            "t.note",
            json!({
                "type": "object",
                "properties": {
                    "title": {"type": "string", "minLength": 1, "maxLength": 80},
                    "count": {"type": "integer", "minimum": 0, "maximum": 100},
                    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 10}
                },
                "required": ["title"],
                "additionalProperties": false
            }),
        ),
        (
            "t.nested",
            json!({
                "type": "object",
                "properties": {
                    "items": {"type": "array", "maxItems": 50, "items": {
                        "type": "object",
                        "properties": {
                            "k": {"type": "string", "enum": ["a", "b", "c"]},
                            "v": {"type": "number", "exclusiveMinimum": -1.5, "multipleOf": 0.5}
                        },
                        "required": ["k", "v"],
                        "additionalProperties": false
                    }}
                },
                "required": ["items"],
                "additionalProperties": false
            }),
        ),
        ("t.any", json!({})),
        (
            "t.scalar",
            json!({"type": ["string", "null"], "maxLength": 5}),
        ),
        (
            "t.union",
            json!({"anyOf": [
                {"type": "object", "properties": {"x": {"type": "boolean"}},
                 "required": ["x"], "additionalProperties": false},
                {"type": "array", "items": {"type": "integer"}, "uniqueItems": true}
            ]}),
        ),
    ]
}

struct Fixture {
    tokio: tokio::runtime::Runtime,
    runtime: Runtime,
    ids: Vec<&'static str>,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let tokio = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("tokio runtime");
        let mut definition = ApplicationDefinition::new("fuzz", "Fuzz", "Fuzzed inputs.");
        let mut ids = Vec::new();
        for (id, schema) in schemas() {
            definition = definition.capability(
                CapabilityDefinition::new(id, Effect::Read, "Echo", "Returns its input.")
                    .input_schema(schema.clone())
                    .output_schema(schema),
            );
            ids.push(id);
        }
        let runtime = tokio.block_on(async {
            let runtime = Runtime::new(
                definition,
                RuntimeOptions::default().policy(policy_fn(|_| PolicyDecision::Allow)),
            )
            .expect("the fixture's schemas are strict");
            for id in &ids {
                runtime
                    .host()
                    .bind(
                        id,
                        Binding::new(|input: Value, _ctx: InvocationContext| async move {
                            Ok::<_, HandlerError>(input)
                        }),
                    )
                    .expect("bind")
                    .keep();
            }
            runtime
        });
        Fixture {
            tokio,
            runtime,
            ids,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, text)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    let fixture = fixture();
    let id = fixture.ids[usize::from(which) % fixture.ids.len()];
    let client = fixture.runtime.client();
    let outcome = fixture
        .tokio
        .block_on(client.invoke(InvocationRequest::new(id, Input::text(text))));
    assert_eq!(outcome.capability_id(), id, "{outcome:?}");
    assert!(!outcome.invocation_id().is_empty(), "{outcome:?}");
    match outcome.status() {
        OutcomeStatus::Succeeded => {
            // The echo handler returns the parsed input, so success means the text was JSON
            // and comes back unchanged.
            let parsed: Value = serde_json::from_str(text).expect("succeeded on non-JSON");
            assert_eq!(outcome.output(), Some(&parsed), "{outcome:?}");
        }
        OutcomeStatus::Failed | OutcomeStatus::Denied => {
            let error = outcome.error().expect("a failure carries an error");
            if let Some(issues) = &error.validation_issues {
                assert!(!issues.is_empty(), "an empty issue list: {outcome:?}");
            }
        }
        other => panic!("unexpected status {other:?}: {outcome:?}"),
    }
    // Whatever the outcome, its wire JSON must serialize.
    serde_json::to_string(&outcome).expect("outcome serializes");
});
