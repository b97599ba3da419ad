//! Measures the worst-case invalid input under the default 4 MiB limit: an array of about
//! 2 million numbers where strings are wanted. Prints the time per invoke (parse included),
//! the parse alone, and the outcome's size. Run with `--release`.

use std::time::Instant;

use rcip_runtime::*;
use serde_json::{Value, json};

fn main() {
    let schema = json!({
        "type": "object",
        "properties": {"a": {"type": "array", "items": {"type": "string"}}},
        "required": ["a"],
        "additionalProperties": false
    });
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

    // The largest such input under the limit: `{"a":[1,1,...]}`.
    let items = (DEFAULT_MAX_INPUT_BYTES - 8) / 2;
    let mut text = String::with_capacity(DEFAULT_MAX_INPUT_BYTES);
    text.push_str("{\"a\":[1");
    for _ in 1..items {
        text.push_str(",1");
    }
    text.push_str("]}");
    assert!(text.len() <= DEFAULT_MAX_INPUT_BYTES);

    let rounds = 10;
    let started = Instant::now();
    for _ in 0..rounds {
        let parsed: Result<Value, _> = serde_json::from_str(&text);
        assert!(parsed.is_ok());
    }
    let parse = started.elapsed() / rounds;

    let client = runtime.client();
    let tokio = tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(|e| e.to_string());
    let Ok(tokio) = tokio else {
        panic!("a current-thread runtime builds");
    };
    let mut size = 0;
    let started = Instant::now();
    for _ in 0..rounds {
        let request = InvocationRequest::new("h.take", Input::text(text.clone()));
        let outcome = tokio.block_on(client.invoke(request));
        size = serde_json::to_string(&outcome).map_or(0, |s| s.len());
    }
    let invoke = started.elapsed() / rounds;
    println!(
        "input {} bytes, {items} wrong items; invoke {:.1} ms (parse {:.1} ms, rest {:.1} ms); outcome {size} bytes",
        text.len(),
        invoke.as_secs_f64() * 1e3,
        parse.as_secs_f64() * 1e3,
        invoke.saturating_sub(parse).as_secs_f64() * 1e3,
    );
}
