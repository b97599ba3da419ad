//! Peak and retained heap for a runtime of 10,000 capabilities with one input and one output
//! schema, per capability above an empty runtime, two ways: the schemas built once and
//! shared (issue 19's memory workload), and built apart for each capability, equal by
//! content (issue 39's: an application that builds its definitions in a loop).
//!
//! Run: `cargo run --release -p rcip-runtime --example memory_10000` (both arms, each in a
//! process of its own), or with `shared` or `apart` for one.
//!
//! A counting global allocator (`cap`) tracks live bytes and their high-water mark. Each
//! measurement starts from the live bytes at its start and covers building the definition,
//! `Runtime::new` (compiling it), binding every capability and reading one snapshot, so a
//! copy made at any of those steps shows. "Peak" is the high-water mark during those steps,
//! "retained" what is still live after them (the definition is consumed by `Runtime::new`).
//!
//! The example fails if either peak per capability exceeds 2 KB (issues 19 and 39).
#![allow(missing_docs, clippy::unwrap_used)]

#[path = "../benches/support/workload.rs"]
mod workload;

use std::alloc::System;

use cap::Cap;
use rcip_runtime::ApplicationDefinition;
use rcip_runtime::Runtime;
use workload::{allow_options, bind_all, definition, definition_built_apart};

// Counts live bytes and their high-water mark (no limit). A counting allocator of our own
// would need `unsafe impl GlobalAlloc`, which the workspace forbids.
#[global_allocator]
static ALLOCATOR: Cap<System> = Cap::new(System, usize::MAX);

/// Peak and retained bytes of building a bound runtime of `size` capabilities.
struct Measured {
    peak: usize,
    retained: usize,
    runtime: Runtime,
}

fn measure(size: usize, build: fn(usize) -> ApplicationDefinition) -> Measured {
    let start = ALLOCATOR.allocated();
    let runtime = Runtime::new(build(size), allow_options()).unwrap();
    bind_all(&runtime, size);
    let snapshot = runtime.client().get_snapshot();
    assert_eq!(snapshot.capabilities.len(), size);
    drop(snapshot);
    Measured {
        // The high-water mark is the process's: for the empty runtime, measured first, it
        // is an upper bound (start-up may have peaked higher); the large runtime's peak
        // is far above anything before it.
        peak: ALLOCATOR.max_allocated().saturating_sub(start),
        retained: ALLOCATOR.allocated().saturating_sub(start),
        runtime,
    }
}

/// A workload: a name for the command line, what it is, how the definition is built.
type Arm = (
    &'static str,
    &'static str,
    fn(usize) -> ApplicationDefinition,
);

/// The two workloads.
const ARMS: [Arm; 2] = [
    ("shared", "one shared input and output schema", definition),
    (
        "apart",
        "each capability's schemas built apart, equal by content",
        definition_built_apart,
    ),
];

/// Without an argument, runs each arm in a process of its own (the allocator's high-water
/// mark is the process's) and fails if one does; with an arm's name, measures that arm.
fn main() {
    let Some(arm) = std::env::args().nth(1) else {
        let mut failed = false;
        for (name, _, _) in ARMS {
            let status = std::process::Command::new(std::env::current_exe().unwrap())
                .arg(name)
                .status()
                .unwrap();
            failed |= !status.success();
        }
        assert!(!failed, "an arm exceeded 2048 bytes a capability");
        return;
    };
    let (_, what, build) = ARMS
        .into_iter()
        .find(|(name, _, _)| *name == arm)
        .unwrap_or_else(|| panic!("no arm {arm}: shared or apart"));
    const SIZE: usize = 10_000;
    // The empty runtime stays alive, so the large one is measured beside it.
    let empty = measure(0, build);
    let large = measure(SIZE, build);
    // The definition alone, for comparison: what the application's own values cost.
    let start = ALLOCATOR.allocated();
    let definition_bytes = {
        let definition = build(SIZE);
        let bytes = ALLOCATOR.allocated().saturating_sub(start);
        drop(definition);
        bytes
    };
    let per = |bytes: usize, base: usize| bytes.saturating_sub(base) as f64 / SIZE as f64;
    println!("{SIZE} capabilities, {what}:");
    println!(
        "  empty runtime: peak {} bytes, retained {} bytes",
        empty.peak, empty.retained
    );
    println!(
        "  peak {:.1} MB, retained {:.1} MB",
        large.peak as f64 / 1e6,
        large.retained as f64 / 1e6
    );
    println!(
        "  per capability above an empty runtime: peak {:.0} bytes, retained {:.0} bytes (target <= 2048)",
        per(large.peak, empty.peak),
        per(large.retained, empty.retained)
    );
    println!(
        "  the definition alone: {:.1} MB, {:.0} bytes per capability",
        definition_bytes as f64 / 1e6,
        definition_bytes as f64 / SIZE as f64
    );
    assert_eq!(large.runtime.catalog().len(), SIZE);
    let peak = per(large.peak, empty.peak);
    assert!(
        peak <= 2048.0,
        "{peak:.0} bytes a capability at the peak (target <= 2048)"
    );
    drop(empty.runtime);
}
