//! The workloads of performance round two (issue 19), each figure one command:
//!
//! - `invoke/catalog_{1,10,1000,10000}/{value,text}`: a full `client.invoke` of the middle
//!   capability of a catalog of that many bound capabilities (allow policy), the input a
//!   JSON value (cloned per call) or JSON text;
//! - `invoke/derived_10/{value,text}`: the same at catalog 10 over the input schema derived
//!   from the type (`strict_schema_for::<NoteInput>()`), as `#[capability]` derives it;
//! - `invoke/macro_10/{value,text}`: the same at catalog 10 over ten `#[capability]`
//!   functions bound by their `catalog!` (`macro_runtime`): what an application declaring
//!   its capabilities with the macros runs;
//! - `invoke/floor/value`: no runtime: clone the input value, convert it into the typed
//!   input, call the handler, serialize its output into a value;
//! - `invoke/floor/text`: the typed floor: parse the text straight into the typed input, call
//!   the handler, serialize its output into a value;
//! - `preflight/16_at_catalog_10`: one preflight batch of 16 proposals (value inputs, each
//!   its own copy, the ids cycling through a catalog of 10);
//! - `preflight/16_at_catalog_10_shared`: the same batch with one input shared by every
//!   proposal (`Input::Shared`);
//! - after the interleaved ratios, preflight of 16 proposals built apart (issue 39's
//!   acceptance ratio), each batch built outside the clock (`apart_ratios`);
//! - `refresh_snapshot/one_changed_{10,1000}`: one capability's binding changes (bound and
//!   unbound in turn, each publishing a revision), then `get_snapshot`;
//! - `refresh_snapshot/unchanged_{10,1000}`: `host.refresh()` (a revision with nothing
//!   changed), then `get_snapshot`;
//! - `bind_all_1000`: binding every capability of a fresh runtime over a catalog of 1,000;
//! - `creation/from_catalog_100`: `Runtime::from_catalog` on a compiled catalog of 100;
//! - `creation/new_100`: `Runtime::new` from a definition of 100 (compiling it included).
//!
//! Peak memory at 10,000 capabilities is `examples/memory_10000.rs` (it needs its own
//! global allocator).
//!
//! Run: `cargo bench -p rcip-runtime --bench round_two`. After the criterion groups it
//! prints the acceptance ratios measured interleaved (see `support`), which are the
//! figures to quote; a criterion filter (`-- invoke/`) narrows the criterion part only.
#![allow(missing_docs, clippy::unwrap_used)]

mod support;

use std::cell::RefCell;
use std::hint::black_box;
use std::sync::Arc;

use criterion::measurement::WallTime;
use criterion::{BatchSize, BenchmarkGroup, Criterion, criterion_group};
use rcip_runtime::*;
use support::Arm;
use support::workload::*;

const CATALOGS: [usize; 4] = [1, 10, 1_000, 10_000];

/// A runtime over a catalog of `size` in which one capability's binding changes on every
/// [`flip`](Self::flip): bound, then unbound, then bound again (each a new revision).
struct OneChanging {
    runtime: Runtime,
    client: Arc<dyn RcipClient>,
    changing: String,
    guard: Option<BindingGuard>,
}

impl OneChanging {
    fn new(size: usize) -> Self {
        let runtime = Runtime::new(definition(size), allow_options()).unwrap();
        let changing = size / 2;
        for i in (0..size).filter(|&i| i != changing) {
            runtime.host().bind(&id(i), binding()).unwrap().keep();
        }
        let client = runtime.client();
        OneChanging {
            runtime,
            client,
            changing: id(changing),
            guard: None,
        }
    }

    /// One capability changes; then the snapshot is read.
    fn flip_and_read(&mut self) -> Arc<ApplicationSnapshot> {
        match self.guard.take() {
            Some(guard) => assert!(guard.unbind()),
            None => self.guard = Some(self.runtime.host().bind(&self.changing, binding()).unwrap()),
        }
        self.client.get_snapshot()
    }

    /// A revision with nothing changed; then the snapshot is read.
    fn refresh_and_read(&self) -> Arc<ApplicationSnapshot> {
        self.runtime.host().refresh();
        self.client.get_snapshot()
    }
}

/// Checks that an invoke of `id` succeeds, so no arm measures a failure path.
fn check_invoke(
    rt: &tokio::runtime::Runtime,
    client: &Arc<dyn RcipClient>,
    id: &str,
    input: Input,
) {
    let outcome = rt.block_on(client.invoke(InvocationRequest::new(id, input)));
    assert_eq!(outcome.status(), OutcomeStatus::Succeeded, "{outcome:?}");
}

/// The value and text arms `{name}/value` and `{name}/text`: an invoke of the middle
/// capability of `runtime`'s catalog of `size`, each checked to succeed first.
fn invoke_pair(
    group: &mut BenchmarkGroup<'_, WallTime>,
    rt: &tokio::runtime::Runtime,
    name: &str,
    runtime: &Runtime,
    size: usize,
) {
    let value = input_value();
    let client = runtime.client();
    let middle = id(size / 2);
    check_invoke(rt, &client, &middle, Input::Value(value.clone()));
    check_invoke(rt, &client, &middle, Input::text(INPUT));
    group.bench_function(format!("{name}/value"), |b| {
        b.to_async(rt).iter(|| {
            let request = InvocationRequest::new(middle.as_str(), Input::Value(value.clone()));
            let outcome = client.invoke(request);
            async move { black_box(outcome.await) }
        });
    });
    group.bench_function(format!("{name}/text"), |b| {
        b.to_async(rt).iter(|| {
            let request = InvocationRequest::new(middle.as_str(), Input::text(INPUT));
            let outcome = client.invoke(request);
            async move { black_box(outcome.await) }
        });
    });
}

fn invoke_arms(c: &mut Criterion, rt: &tokio::runtime::Runtime) {
    let value = input_value();
    let mut group = c.benchmark_group("invoke");
    for size in CATALOGS {
        invoke_pair(
            &mut group,
            rt,
            &format!("catalog_{size}"),
            &bound_runtime(size),
            size,
        );
    }
    // The same at catalog 10, over the input schema derived from the type.
    invoke_pair(&mut group, rt, "derived_10", &derived_runtime(10), 10);
    // The same at catalog 10, over `#[capability]` functions bound by `catalog!`.
    invoke_pair(&mut group, rt, "macro_10", &macro_runtime(), 10);
    group.bench_function("floor/value", |b| {
        b.to_async(rt)
            .iter(|| async { black_box(value_floor(&value).await) });
    });
    group.bench_function("floor/text", |b| {
        b.to_async(rt)
            .iter(|| async { black_box(text_floor().await) });
    });
    group.finish();
}

fn preflight_arm(c: &mut Criterion, rt: &tokio::runtime::Runtime) {
    let value = input_value();
    let runtime = bound_runtime(10);
    let client = runtime.client();
    let report = rt.block_on(client.preflight(batch16(&value))).unwrap();
    assert!(report.consistent);
    assert_eq!(report.outcomes.len(), 16);
    assert!(
        report
            .outcomes
            .iter()
            .all(|o| matches!(o, PreflightOutcome::Ready { .. })),
        "{report:?}"
    );
    c.bench_function("preflight/16_at_catalog_10", |b| {
        b.to_async(rt).iter(|| {
            let report = client.preflight(batch16(&value));
            async move { black_box(report.await.unwrap()) }
        });
    });
    let ids = batch16_ids();
    let shared = Arc::new(value);
    c.bench_function("preflight/16_at_catalog_10_shared", |b| {
        b.to_async(rt).iter(|| {
            let report = client.preflight(batch16_shared(&ids, &shared));
            async move { black_box(report.await.unwrap()) }
        });
    });
}

fn snapshot_arms(c: &mut Criterion) {
    let mut group = c.benchmark_group("refresh_snapshot");
    for size in [10, 1_000] {
        let mut changing = OneChanging::new(size);
        let before = changing.client.get_snapshot().revision;
        let after = changing.flip_and_read().revision;
        assert!(after > before, "a change publishes a revision");
        group.bench_function(format!("one_changed_{size}"), |b| {
            b.iter(|| black_box(changing.flip_and_read()));
        });
        group.bench_function(format!("unchanged_{size}"), |b| {
            b.iter(|| black_box(changing.refresh_and_read()));
        });
    }
    group.finish();
}

fn bind_and_create_arms(c: &mut Criterion) {
    let catalog = CompiledCatalog::compile(definition(1_000)).unwrap();
    c.bench_function("bind_all_1000", |b| {
        b.iter_batched(
            || Runtime::from_catalog(Arc::clone(&catalog), allow_options()),
            |runtime| {
                bind_all(&runtime, 1_000);
                // Returned, so its drop is not timed.
                runtime
            },
            BatchSize::LargeInput,
        );
    });

    let mut group = c.benchmark_group("creation");
    let catalog = CompiledCatalog::compile(definition(100)).unwrap();
    group.bench_function("from_catalog_100", |b| {
        b.iter(|| {
            black_box(Runtime::from_catalog(
                Arc::clone(&catalog),
                RuntimeOptions::default(),
            ))
        });
    });
    let definition = definition(100);
    group.bench_function("new_100", |b| {
        b.iter_batched(
            || definition.clone(),
            |definition| Runtime::new(definition, RuntimeOptions::default()).unwrap(),
            BatchSize::SmallInput,
        );
    });
    group.finish();
}

fn bench(c: &mut Criterion) {
    let rt = support::tokio_runtime();
    invoke_arms(c, &rt);
    preflight_arm(c, &rt);
    snapshot_arms(c);
    bind_and_create_arms(c);
}

/// An arm that invokes `id` on `client` with the input `make_input` builds.
fn invoke_arm(
    client: &Arc<dyn RcipClient>,
    id: String,
    make_input: impl Fn() -> Input + 'static,
) -> impl Fn() -> Arm + 'static {
    let client = client.clone();
    move || -> Arm {
        let outcome = client.invoke(InvocationRequest::new(id.as_str(), make_input()));
        Box::pin(async move {
            black_box(outcome.await);
        })
    }
}

/// The two invoke arms of the middle capability of a catalog of 10 (`id(5)`): `value`
/// cloned per call, and [`INPUT`] as text.
fn value_and_text_arms(
    client: &Arc<dyn RcipClient>,
    value: &Arc<serde_json::Value>,
) -> (impl Fn() -> Arm + 'static, impl Fn() -> Arm + 'static) {
    let value = value.clone();
    (
        invoke_arm(client, id(5), move || Input::Value((*value).clone())),
        invoke_arm(client, id(5), || Input::text(INPUT)),
    )
}

/// The acceptance ratios, interleaved.
fn interleaved_ratios() {
    const ROUNDS: usize = 41;
    let rt = support::tokio_runtime();
    let value = Arc::new(input_value());

    let runtime = bound_runtime(10);
    let client = runtime.client();
    let (invoke_value, invoke_text) = value_and_text_arms(&client, &value);
    let derived = derived_runtime(10);
    let (derived_value, derived_text) = value_and_text_arms(&derived.client(), &value);
    let macros = macro_runtime();
    let (macro_value, macro_text) = value_and_text_arms(&macros.client(), &value);
    let shared = value.clone();
    let floor_value = move || -> Arm {
        let value = shared.clone();
        Box::pin(async move {
            black_box(value_floor(&value).await);
        })
    };
    let floor_text = || -> Arm {
        Box::pin(async {
            black_box(text_floor().await);
        })
    };
    let shared = value.clone();
    let preflight_client = client.clone();
    let preflight = move || -> Arm {
        let report = client.preflight(batch16(&shared));
        Box::pin(async move {
            black_box(report.await.unwrap());
        })
    };
    let ids = batch16_ids();
    let shared_preflight = move || -> Arm {
        let report = preflight_client.preflight(batch16_shared(&ids, &value));
        Box::pin(async move {
            black_box(report.await.unwrap());
        })
    };
    const INVOKE_ITERATIONS: u32 = 1_000;
    let arms: [&dyn Fn() -> Arm; 10] = [
        &invoke_value,
        &floor_value,
        &invoke_text,
        &floor_text,
        &preflight,
        &derived_value,
        &derived_text,
        &shared_preflight,
        &macro_value,
        &macro_text,
    ];
    let (ratios, times) = support::interleaved(
        &rt,
        ROUNDS,
        INVOKE_ITERATIONS,
        &arms,
        &[
            (0, 1),
            (2, 3),
            (7, 0),
            (4, 0),
            (5, 1),
            (6, 3),
            (8, 1),
            (9, 3),
        ],
    );
    println!(
        "interleaved medians over {ROUNDS} rounds of {INVOKE_ITERATIONS}: \
         invoke catalog_10 / floor (value input) = {:.2}, \
         invoke catalog_10 / typed floor (text input) = {:.2}, \
         preflight of 16 / one invoke (value input; the proposals share their input) = {:.2} \
         (target <= 4), the same with a copy of the input per proposal = {:.2}; \
         over the input schema derived from the type: \
         invoke / floor (value input) = {:.2}, \
         invoke / typed floor (text input) = {:.2}; \
         over `#[capability]` functions bound by `catalog!`: \
         invoke / floor (value input) = {:.2}, \
         invoke / typed floor (text input) = {:.2}",
        ratios[0], ratios[1], ratios[2], ratios[3], ratios[4], ratios[5], ratios[6], ratios[7]
    );
    println!(
        "median ns per operation: invoke value {:.0}, value floor {:.0}, invoke text {:.0}, \
         typed floor {:.0}, preflight of 16 (copies) {:.0}, derived value {:.0}, \
         derived text {:.0}, preflight of 16 (shared) {:.0}, macro value {:.0}, \
         macro text {:.0}",
        times[0],
        times[1],
        times[2],
        times[3],
        times[4],
        times[5],
        times[6],
        times[7],
        times[8],
        times[9]
    );

    apart_ratios(&rt, &runtime, ROUNDS, INVOKE_ITERATIONS);

    // The synchronous snapshot arms, wrapped as arms of the same helper.
    let small = RefCell::new(OneChanging::new(10));
    let large = RefCell::new(OneChanging::new(1_000));
    let changed = |changing: &'static RefCell<OneChanging>| {
        move || -> Arm {
            black_box(changing.borrow_mut().flip_and_read());
            Box::pin(async {})
        }
    };
    let unchanged = |changing: &'static RefCell<OneChanging>| {
        move || -> Arm {
            black_box(changing.borrow().refresh_and_read());
            Box::pin(async {})
        }
    };
    // Leaked: the arms must be 'static closures, and the bench process ends right after.
    let small: &'static RefCell<OneChanging> = Box::leak(Box::new(small));
    let large: &'static RefCell<OneChanging> = Box::leak(Box::new(large));
    let (changed_small, changed_large) = (changed(small), changed(large));
    let (unchanged_small, unchanged_large) = (unchanged(small), unchanged(large));
    const SNAPSHOT_ITERATIONS: u32 = 200;
    let arms: [&dyn Fn() -> Arm; 4] = [
        &changed_small,
        &changed_large,
        &unchanged_small,
        &unchanged_large,
    ];
    let (ratios, snapshot_times) =
        support::interleaved(&rt, ROUNDS, SNAPSHOT_ITERATIONS, &arms, &[(1, 0), (3, 2)]);
    println!(
        "interleaved medians over {ROUNDS} rounds of {SNAPSHOT_ITERATIONS}: \
         refresh + get_snapshot, one capability changed, catalog_1000 / catalog_10 = {:.2} \
         (target <= 3); nothing changed, catalog_1000 / catalog_10 = {:.2}",
        ratios[0], ratios[1]
    );
    println!(
        "against the TypeScript reference's figures for this machine kind \
         (docs/performance.md): invoke at catalog 10 {:.0} ns, the reference {:.0} ns: \
         {:.0}x faster; refresh + snapshot at catalog 1,000 {:.0} ns, the reference {:.0} ns: \
         {:.0}x faster",
        times[0],
        support::REFERENCE_INVOKE_NS,
        support::REFERENCE_INVOKE_NS / times[0],
        snapshot_times[1],
        support::REFERENCE_SNAPSHOT_1000_NS,
        support::REFERENCE_SNAPSHOT_1000_NS / snapshot_times[1]
    );
}

/// Issue 39's copy-built workload: 16 proposals whose inputs a consumer built apart (as it
/// deserialized them), against one invoke (value input, as above). Each batch is built
/// outside the clock just before its preflight, so its inputs are as warm as a consumer's
/// fresh proposals (a pool built ahead would measure cache misses instead): the preflights
/// are timed one by one, interleaved by round with the invoke arm. Two ways: the batch owns
/// the inputs (`Input::Value`: preflight frees them), or the consumer holds them to invoke
/// the ready ones next (`Input::Shared`, an `Arc` each, dropped after the clock).
fn apart_ratios(rt: &tokio::runtime::Runtime, runtime: &Runtime, rounds: usize, iterations: u32) {
    let client = runtime.client();
    let value = input_value();
    let invoke = invoke_arm(&client, id(5), move || Input::Value(value.clone()));
    let ids = batch16_ids();
    let timed = |make: &dyn Fn() -> (PreflightBatch, Vec<Arc<serde_json::Value>>)| {
        rt.block_on(async {
            let mut spent = std::time::Duration::ZERO;
            for _ in 0..iterations {
                let (batch, inputs) = make();
                let start = std::time::Instant::now();
                black_box(client.preflight(batch).await.unwrap());
                spent += start.elapsed();
                drop(inputs);
            }
            spent.as_secs_f64()
        })
    };
    let owned = || (batch16(&input_value()), Vec::new());
    let held = || batch16_held(&ids);
    let (mut owned_ratios, mut held_ratios) = (Vec::new(), Vec::new());
    let (mut owned_ns, mut held_ns) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        // Rotating the order: each arm takes each position in turn, so neither preflight
        // arm always runs right after the other.
        let mut times = [0.0; 3];
        for position in 0..3 {
            let arm = (round + position) % 3;
            times[arm] = match arm {
                0 => support::time_arm(rt, iterations, &invoke).as_secs_f64(),
                1 => timed(&owned),
                _ => timed(&held),
            };
        }
        let [invoke_time, owned_time, held_time] = times;
        owned_ratios.push(owned_time / invoke_time);
        held_ratios.push(held_time / invoke_time);
        owned_ns.push(owned_time * 1e9 / f64::from(iterations));
        held_ns.push(held_time * 1e9 / f64::from(iterations));
    }
    println!(
        "interleaved medians over {rounds} rounds of {iterations}: preflight of 16 proposals \
         built apart / one invoke (value input): the consumer holds the inputs = {:.2} \
         (target <= 4), the batch owns them = {:.2}; median ns per preflight: held {:.0}, \
         owned {:.0}",
        support::median(held_ratios),
        support::median(owned_ratios),
        support::median(held_ns),
        support::median(owned_ns)
    );
}

criterion_group!(benches, bench);

fn main() {
    support::run(benches, interleaved_ratios);
}
