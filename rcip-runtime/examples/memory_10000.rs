//! Peak and retained heap for a runtime of 10,000 capabilities that all share one input and
//! one output schema, per capability above an empty runtime (issue 19's memory workload).
//!
//! Run: `cargo run --release -p rcip-runtime --example memory_10000`.
//!
//! A counting global allocator (`cap`) tracks live bytes and their high-water mark. Each
//! measurement starts from the live bytes at its start and covers building the definition,
//! `Runtime::new` (compiling it), binding every capability and reading one snapshot, so a
//! copy made at any of those steps shows. "Peak" is the high-water mark during those steps,
//! "retained" what is still live after them (the definition is consumed by `Runtime::new`).
//!
//! The definition shares one [`Schema`](rcip_runtime::Schema) value of each kind between its
//! capabilities, as an application that declares many capabilities over one schema does; the
//! example fails if the peak per capability exceeds issue 19's 2 KB.
#![allow(missing_docs, clippy::unwrap_used)]

#[path = "../benches/support/workload.rs"]
mod workload;

use std::alloc::System;

use cap::Cap;
use rcip_runtime::Runtime;
use workload::{allow_options, bind_all, definition};

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

fn measure(size: usize) -> Measured {
    let start = ALLOCATOR.allocated();
    let runtime = Runtime::new(definition(size), allow_options()).unwrap();
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

fn main() {
    const SIZE: usize = 10_000;
    // The empty runtime stays alive, so the large one is measured beside it.
    let empty = measure(0);
    let large = measure(SIZE);
    // The definition alone, for comparison: what the application's own copies cost.
    let start = ALLOCATOR.allocated();
    let definition_bytes = {
        let definition = definition(SIZE);
        let bytes = ALLOCATOR.allocated().saturating_sub(start);
        drop(definition);
        bytes
    };
    let per = |bytes: usize, base: usize| bytes.saturating_sub(base) as f64 / SIZE as f64;
    println!(
        "empty runtime: peak {} bytes, retained {} bytes",
        empty.peak, empty.retained
    );
    println!(
        "{SIZE} capabilities (one shared input and output schema): peak {:.1} MB, retained {:.1} MB",
        large.peak as f64 / 1e6,
        large.retained as f64 / 1e6
    );
    println!(
        "per capability above an empty runtime: peak {:.0} bytes, retained {:.0} bytes (target <= 2048)",
        per(large.peak, empty.peak),
        per(large.retained, empty.retained)
    );
    println!(
        "the definition alone: {:.1} MB, {:.0} bytes per capability",
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
