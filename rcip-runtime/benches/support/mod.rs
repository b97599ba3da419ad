//! What the benches share: the interleaved-ratio method.
//!
//! Criterion measures arms one after another, and on a shared 2-core machine the speed
//! drifts between them by tens of percent within a minute; so the ratios that matter are
//! measured with the arms interleaved: round after round, each arm timed over a fixed number
//! of runs, the order rotating each round, and the median of the per-round ratios quoted.

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

pub(crate) mod workload;

/// One run of an arm, as a future.
pub(crate) type Arm = Pin<Box<dyn Future<Output = ()>>>;

/// The TypeScript reference's in-process invoke at catalog 10 on this machine kind, in ns:
/// 134 µs (issue 39's figures; `docs/performance.md` gives the source).
#[allow(dead_code)] // round_two only.
pub(crate) const REFERENCE_INVOKE_NS: f64 = 134_000.0;

/// The TypeScript reference's refresh + snapshot at catalog 1,000 on this machine kind, in
/// ns: 12.2 ms (as [`REFERENCE_INVOKE_NS`]).
#[allow(dead_code)] // round_two only.
pub(crate) const REFERENCE_SNAPSHOT_1000_NS: f64 = 12_200_000.0;

/// Whether the bench was asked to measure (`cargo bench` passes `--bench`) rather than only
/// to check that every arm runs (`cargo test --benches`, criterion's test mode): the
/// interleaved rounds take seconds and are skipped in test mode.
fn measuring() -> bool {
    std::env::args().any(|arg| arg == "--bench")
}

/// A bench's `main`: the criterion groups, then (only when measuring: `cargo test --benches`
/// checks that the arms run, quickly) the interleaved ratios, then criterion's summary.
pub(crate) fn run(groups: fn(), interleaved_ratios: fn()) {
    groups();
    if measuring() {
        interleaved_ratios();
    }
    criterion::Criterion::default()
        .configure_from_args()
        .final_summary();
}

/// A current-thread Tokio runtime, as the benches drive every arm on one.
pub(crate) fn tokio_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

/// Times `iterations` runs of one arm.
pub(crate) fn time_arm(
    rt: &tokio::runtime::Runtime,
    iterations: u32,
    arm: &dyn Fn() -> Arm,
) -> Duration {
    let start = Instant::now();
    rt.block_on(async {
        for _ in 0..iterations {
            arm().await;
        }
    });
    start.elapsed()
}

/// The median (the upper one for an even count).
pub(crate) fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Runs `arms` interleaved for `rounds` rounds of `iterations` runs each (the starting arm
/// rotating each round) and returns, for each `(numerator, denominator)` pair of arm
/// indices, the median over the rounds of that round's time ratio.
///
/// Beside the ratios: each arm's median time per iteration, in nanoseconds (to read the
/// ratios by: which side moved).
pub(crate) fn interleaved(
    rt: &tokio::runtime::Runtime,
    rounds: usize,
    iterations: u32,
    arms: &[&dyn Fn() -> Arm],
    pairs: &[(usize, usize)],
) -> (Vec<f64>, Vec<f64>) {
    let mut ratios: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); pairs.len()];
    let mut per_arm: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); arms.len()];
    let mut times = vec![0.0f64; arms.len()];
    for round in 0..rounds {
        for k in 0..arms.len() {
            let arm = (round + k) % arms.len();
            times[arm] = time_arm(rt, iterations, arms[arm]).as_secs_f64();
            per_arm[arm].push(times[arm] * 1e9 / f64::from(iterations));
        }
        for (ratio, &(numerator, denominator)) in ratios.iter_mut().zip(pairs) {
            ratio.push(times[numerator] / times[denominator]);
        }
    }
    (
        ratios.into_iter().map(median).collect(),
        per_arm.into_iter().map(median).collect(),
    )
}
