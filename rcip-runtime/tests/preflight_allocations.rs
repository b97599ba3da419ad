//! Preflight validates a proposal's input where it lies (issue 39): a batch of 16 proposals
//! with inputs of their own, owned by the batch or shared by a caller that keeps them,
//! allocates no more than the same batch sharing one input, and that batch less than 16
//! copies of its input: nothing is copied per proposal.
//!
//! Counted with a counting global allocator (`cap`: bytes allocated in all), so this test
//! binary holds this one test: another running beside it would be counted too.
#![allow(clippy::unwrap_used)]

#[path = "../benches/support/workload.rs"]
mod workload;

use std::alloc::System;
use std::sync::Arc;

use cap::Cap;
use rcip_runtime::PreflightOutcome;
use workload::{batch16, batch16_held, batch16_ids, batch16_shared, bound_runtime, input_value};

#[global_allocator]
static ALLOCATOR: Cap<System> = Cap::new(System, usize::MAX);

/// Bytes allocated while `run` runs.
fn allocated_by(run: impl FnOnce()) -> usize {
    let start = ALLOCATOR.total_allocated();
    run();
    ALLOCATOR.total_allocated() - start
}

#[test]
fn owned_inputs_cost_no_more_than_one_shared_input() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let runtime = bound_runtime(10);
    let client = runtime.client();
    let ids = batch16_ids();
    let shared = Arc::new(input_value());
    let preflight = |batch| {
        let report = rt.block_on(client.preflight(batch)).unwrap();
        assert_eq!(report.outcomes.len(), 16);
        assert!(
            report
                .outcomes
                .iter()
                .all(|o| matches!(o, PreflightOutcome::Ready { .. })),
            "{report:?}"
        );
        drop(report);
    };
    // Warm up once each (first-use allocations: thread locals, lazies).
    preflight(batch16(&input_value()));
    preflight(batch16_shared(&ids, &shared));
    // The least of several runs: the test harness's own threads may allocate meanwhile.
    let least = |make: &dyn Fn() -> rcip_runtime::PreflightBatch| {
        (0..5)
            .map(|_| {
                let batch = make();
                allocated_by(|| preflight(batch))
            })
            .min()
            .unwrap()
    };
    // One copy of an input, the yardstick of a copy per proposal.
    let value = input_value();
    let copy = (0..5)
        .map(|_| allocated_by(|| drop(std::hint::black_box(value.clone()))))
        .min()
        .unwrap();
    let owned = least(&|| batch16(&input_value()));
    let one_shared = least(&|| batch16_shared(&ids, &shared));
    // A copy per proposal would cost 16 copies in every arm, the shared one too: the batch
    // stays far below that (about 1,640 bytes against 16 x 767 on 2026-12-07).
    assert!(
        one_shared < 16 * copy,
        "16 proposals allocated {one_shared} bytes: as much as a copy of each input ({copy})"
    );
    assert!(
        owned <= one_shared,
        "16 owned inputs allocated {owned} bytes, 16 shares of one input {one_shared}"
    );
    // Built apart and kept by the caller: the inputs live on outside the measured run.
    let kept = std::cell::RefCell::new(Vec::new());
    let held = least(&|| {
        let (batch, inputs) = batch16_held(&ids);
        kept.borrow_mut().push(inputs);
        batch
    });
    assert!(
        held <= one_shared,
        "16 held inputs allocated {held} bytes, 16 shares of one input {one_shared}"
    );
}
