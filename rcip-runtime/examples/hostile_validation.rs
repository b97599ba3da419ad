//! Measures the worst-case invalid inputs under the default 4 MiB limit, side by side: for
//! each, the time per invoke (parse included), the parse alone, the rest (validation and the
//! outcome), and the outcome's size. Run with `--release`:
//!
//! ```text
//! cargo run --release -p rcip-runtime --example hostile_validation
//! ```
//!
//! The cases: about 2 million numbers where strings are wanted (past `FULL_REPORT_VALUES`:
//! the first error only); the largest such array that still gets a full report; 200,000
//! unknown keys; and 2,000 wrong items under a 2 MB key (past `FULL_REPORT_WEIGHT`).

use std::time::{Duration, Instant};

use rcip_runtime::*;
use serde_json::{Value, json};

const ROUNDS: u32 = 10;

fn main() {
    let tokio = tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(|e| e.to_string());
    let Ok(tokio) = tokio else {
        panic!("a current-thread runtime builds");
    };
    let list = json!({
        "type": "object",
        "properties": {"a": {"type": "array", "items": {"type": "string"}}},
        "required": ["a"],
        "additionalProperties": false
    });
    let map = json!({
        "type": "object",
        "additionalProperties": {"type": "array", "items": {"type": "string"}}
    });

    // The largest `{"a":[1,1,...]}` under the limit.
    let most = (DEFAULT_MAX_INPUT_BYTES - 8) / 2;
    let cases = [
        ("2M wrong items", list.clone(), numbers(most)),
        (
            "16,382 wrong items (full report)",
            list.clone(),
            numbers(FULL_REPORT_VALUES - 2),
        ),
        ("200,000 unknown keys", list, unknown_keys(200_000)),
        (
            "2,000 wrong items under a 2 MB key",
            map,
            format!(
                "{{\"{}\":[{}]}}",
                "k".repeat(2_000_000),
                vec!["1"; 2_000].join(",")
            ),
        ),
    ];
    for (name, schema, text) in cases {
        assert!(text.len() <= DEFAULT_MAX_INPUT_BYTES);
        let runtime = runtime(schema);
        let client = runtime.client();
        let parse = time(|| {
            let parsed: Result<Value, _> = serde_json::from_str(&text);
            assert!(parsed.is_ok());
        });
        let mut size = 0;
        let invoke = time(|| {
            let request = InvocationRequest::new("h.take", Input::text(text.clone()));
            let outcome = tokio.block_on(client.invoke(request));
            assert!(outcome.error().is_some());
            size = serde_json::to_string(&outcome).map_or(0, |s| s.len());
        });
        println!(
            "{name}: input {} bytes; invoke {:.2} ms (parse {:.2} ms, rest {:.2} ms); outcome {size} bytes",
            text.len(),
            ms(invoke),
            ms(parse),
            ms(invoke.saturating_sub(parse)),
        );
    }
}

fn runtime(schema: Value) -> Runtime {
    let definition = ApplicationDefinition::new("hostile", "Hostile", "Hostile inputs.")
        .capability(
            CapabilityDefinition::new("h.take", Effect::Read, "Take", "Takes a list.")
                .input_schema(schema)
                .output_schema(json!({})),
        );
    let Ok(runtime) = Runtime::new(definition, RuntimeOptions::default()) else {
        panic!("the definition is valid");
    };
    let bound = runtime.host().bind(
        "h.take",
        Binding::new(|_input: Value, _ctx: InvocationContext| async {
            Ok::<_, HandlerError>(Value::Null)
        }),
    );
    let Ok(guard) = bound else {
        panic!("the capability exists");
    };
    guard.keep();
    runtime
}

/// The mean time of one run of `work` over [`ROUNDS`].
fn time(mut work: impl FnMut()) -> Duration {
    let started = Instant::now();
    for _ in 0..ROUNDS {
        work();
    }
    started.elapsed() / ROUNDS
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

fn numbers(count: usize) -> String {
    let mut text = String::with_capacity(2 * count + 8);
    text.push_str("{\"a\":[1");
    for _ in 1..count {
        text.push_str(",1");
    }
    text.push_str("]}");
    text
}

fn unknown_keys(count: usize) -> String {
    let mut text = String::from("{\"a\":[]");
    for i in 0..count {
        text.push_str(&format!(",\"k{i}\":0"));
    }
    text.push('}');
    text
}
