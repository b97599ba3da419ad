//! Invoke cost, measured side by side in one run:
//!
//! - `invoke/catalog_10`: a full `client.invoke` of a small read capability (title string,
//!   count integer, up to 10 tags -> id and title; allow policy; trivial typed handler) in
//!   a catalog of 10 bound capabilities, from raw JSON text;
//! - `invoke/catalog_10000`: the same in a catalog of 10,000 bound capabilities;
//! - `invoke/floor`: no runtime: deserialize the same JSON text into the typed input, call
//!   the same handler, serialize its output;
//! - `invoke/validating_floor`: no runtime either, but what any schema-checking runtime must
//!   do at the least: parse the text into a JSON value, validate it against the input schema,
//!   convert it to the typed input, call the handler, serialize the output into a value and
//!   validate that against the output schema;
//! - `runtime/from_catalog_100`: creating a runtime from an already compiled catalog of 100
//!   capabilities.
//!
//! Run: `cargo bench -p rcip-runtime --bench invoke`. The ratios to report are
//! catalog_10000 / catalog_10 (target < 1.2) and catalog_10 / floor (target < 3).
//!
//! Criterion measures the arms one after another, and on a shared 2-core machine the speed
//! drifts between them; so after the criterion groups this bench also measures the three
//! arms interleaved (round after round, the order rotating) and prints the median of the
//! per-round ratios, which is what the closing notes quote.
#![allow(missing_docs, clippy::unwrap_used)]

mod support;

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group};
use rcip_runtime::*;
use serde::Deserialize;
use support::Arm;
use support::workload::*;

fn validators() -> (jsonschema::Validator, jsonschema::Validator) {
    let capability = &definition(1).capabilities[0];
    (
        jsonschema::draft202012::new(&capability.input_schema).unwrap(),
        jsonschema::draft202012::new(&capability.output_schema).unwrap(),
    )
}

async fn validating_floor(
    input_validator: &jsonschema::Validator,
    output_validator: &jsonschema::Validator,
) {
    let value: serde_json::Value = serde_json::from_str(black_box(INPUT)).unwrap();
    assert!(input_validator.is_valid(&value));
    let input = NoteInput::deserialize(value).unwrap();
    let output = serde_json::to_value(handler(input).await.unwrap()).unwrap();
    assert!(output_validator.is_valid(&output));
    black_box(output);
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
    let (input_validator, output_validator) = validators();
    group.bench_function("validating_floor", |b| {
        b.to_async(&rt)
            .iter(|| validating_floor(&input_validator, &output_validator));
    });
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

/// The arms interleaved, round after round; prints the median per-round ratios.
fn interleaved_ratios() {
    const ROUNDS: usize = 41;
    const ITERATIONS: u32 = 2_000;
    let rt = support::tokio_runtime();
    let small = bound_runtime(10).client();
    let large = bound_runtime(10_000).client();
    let invoke = |client: &Arc<dyn RcipClient>, id: &'static str| {
        let client = client.clone();
        move || -> Arm {
            let outcome = client.invoke(InvocationRequest::new(id, Input::text(INPUT)));
            Box::pin(async move {
                black_box(outcome.await);
            })
        }
    };
    let small_arm = invoke(&small, "notes.read5");
    let large_arm = invoke(&large, "notes.read5000");
    let floor_arm = || -> Arm {
        Box::pin(async {
            let input: NoteInput = serde_json::from_str(black_box(INPUT)).unwrap();
            let output = handler(input).await.unwrap();
            black_box(serde_json::to_value(output).unwrap());
        })
    };
    let (input_validator, output_validator) = validators();
    let validators = Arc::new((input_validator, output_validator));
    let validating_arm = move || -> Arm {
        let validators = validators.clone();
        Box::pin(async move { validating_floor(&validators.0, &validators.1).await })
    };
    let arms: [&dyn Fn() -> Arm; 4] = [&small_arm, &large_arm, &validating_arm, &floor_arm];
    let (ratios, _) =
        support::interleaved(&rt, ROUNDS, ITERATIONS, &arms, &[(1, 0), (0, 3), (0, 2)]);
    let [large_over_small, small_over_floor, small_over_validating] = ratios[..] else {
        unreachable!("one ratio per pair")
    };
    println!(
        "interleaved medians over {ROUNDS} rounds of {ITERATIONS}: \
         catalog_10000 / catalog_10 = {:.2}, catalog_10 / floor = {:.2}, \
         catalog_10 / validating_floor = {:.2}",
        large_over_small, small_over_floor, small_over_validating
    );
}

criterion_group!(benches, bench);

fn main() {
    support::run(benches, interleaved_ratios);
}
