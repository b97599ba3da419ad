//! Test helpers shared by the rcip crates' tests: a dev-dependency only, never published.
//!
//! The deep-value tests build values with `rcip_core::depth::nested_arrays` (public API:
//! it documents what the depth limits are about) and run here, on a small stack.
#![deny(missing_docs)]

/// The stack the deep-value tests run on: 2 MiB, a tokio worker thread's, where a value
/// walked by recursion would overflow long before 100,000 levels.
pub const SMALL_STACK: usize = 2 << 20;

/// Runs `check` on a thread with a [`SMALL_STACK`], and fails if it panicked. (A stack
/// overflow aborts the whole test binary instead: that is the failure these tests catch.)
///
/// ```
/// rcip_test_support::on_small_stack(|| assert_eq!(1 + 1, 2));
/// ```
///
/// # Panics
///
/// When the thread cannot be spawned, or `check` panicked.
pub fn on_small_stack(check: impl FnOnce() + Send + 'static) {
    let thread = std::thread::Builder::new()
        .stack_size(SMALL_STACK)
        .spawn(check)
        .expect("a thread");
    assert!(thread.join().is_ok(), "the check panicked");
}
