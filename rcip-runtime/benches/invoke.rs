//! Invoke cost, measured side by side in one run:
//!
//! - `invoke/catalog_10`: a full `client.invoke` of a small read capability (title string,
//!   count integer, up to 10 tags -> id and title; allow policy; trivial typed handler) in
//!   a catalog of 10 bound capabilities, from raw JSON text;
//! - `invoke/catalog_10000`: the same in a catalog of 10,000 bound capabilities;
//! - `invoke/floor`: no runtime: deserialize the same JSON text into the typed input, call
//!   the same handler, serialize its output;
//! - `runtime/from_catalog_100`: creating a runtime from an already compiled catalog of 100
//!   capabilities.
//!
//! Run: `cargo bench -p rcip-runtime --bench invoke`. The ratios to report are
//! catalog_10000 / catalog_10 (target < 1.2) and catalog_10 / floor (target < 3).
#![allow(missing_docs, clippy::unwrap_used)]

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use rcip_runtime::*;
use serde::{Deserialize, Serialize};
use serde_json::json;

const INPUT: &str = r#"{"title":"Weekly sync","count":7,"tags":["team","sync","weekly"]}"#;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoteInput {
    title: String,
    #[allow(dead_code)]
    count: Option<u32>,
    #[allow(dead_code)]
    tags: Option<Vec<String>>,
}

#[derive(Serialize)]
struct NoteOutput {
    id: &'static str,
    title: String,
}

async fn handler(input: NoteInput) -> Result<NoteOutput, HandlerError> {
    Ok(NoteOutput {
        id: "n1",
        title: input.title,
    })
}

fn definition(size: usize) -> ApplicationDefinition {
    let mut app = ApplicationDefinition::new("bench", "Bench", "Benchmark catalog.")
        .scope(ScopeDefinition::new("notes", "Notes", "Notes."));
    for i in 0..size {
        app = app.capability(
            CapabilityDefinition::new(format!("notes.read{i}"), Effect::Read)
                .title("Read a note")
                .description("Reads a note.")
                .scope("notes")
                .input_schema(json!({
                    "type": "object",
                    "properties": {
                        "title": {"type": "string", "minLength": 1, "maxLength": 80},
                        "count": {"type": "integer", "minimum": 0, "maximum": 1000},
                        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 10}
                    },
                    "required": ["title"],
                    "additionalProperties": false
                }))
                .output_schema(json!({
                    "type": "object",
                    "properties": {"id": {"type": "string"}, "title": {"type": "string"}},
                    "required": ["id", "title"],
                    "additionalProperties": false
                })),
        );
    }
    app
}

fn bound_runtime(size: usize) -> Runtime {
    let options = RuntimeOptions::default().with_policy(policy_fn(|_| PolicyDecision::Allow));
    let runtime = Runtime::new(definition(size), options).unwrap();
    for i in 0..size {
        runtime
            .host()
            .bind(
                &format!("notes.read{i}"),
                Binding::typed(|input: NoteInput, _ctx| handler(input)),
            )
            .unwrap()
            .keep();
    }
    runtime
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("invoke");
    for size in [10, 10_000] {
        let runtime = bound_runtime(size);
        let client = runtime.client();
        // The capability in the middle of the catalog.
        let id = format!("notes.read{}", size / 2);
        let check =
            rt.block_on(client.invoke(InvocationRequest::new(id.clone(), Input::text(INPUT))));
        assert_eq!(check.status(), OutcomeStatus::Succeeded, "{check:?}");
        group.bench_function(format!("catalog_{size}"), |b| {
            b.to_async(&rt).iter(|| {
                let request = InvocationRequest::new(id.as_str(), Input::text(INPUT));
                let outcome = client.invoke(request);
                async move { black_box(outcome.await) }
            });
        });
    }
    group.bench_function("floor", |b| {
        b.to_async(&rt).iter(|| async {
            let input: NoteInput = serde_json::from_str(black_box(INPUT)).unwrap();
            let output = handler(input).await.unwrap();
            black_box(serde_json::to_value(output).unwrap())
        });
    });
    group.finish();

    let catalog = CompiledCatalog::compile(definition(100)).unwrap();
    c.bench_function("runtime/from_catalog_100", |b| {
        b.iter(|| {
            black_box(Runtime::from_catalog(
                Arc::clone(&catalog),
                RuntimeOptions::default(),
            ))
        });
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
