//! Small shared pieces: the clock, id generation, panic containment and a poison-free lock.

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

/// A boxed, sendable future, as the object-safe surfaces return.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Where the runtime reads wall-clock time (epoch milliseconds) for `expiresAt`,
/// `requestedAt`, event timestamps and `checkedAt`. Timers (confirmation expiry) use tokio's
/// clock; tests inject a manual clock to reach "expired at resolve" deterministically.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> u64;
}

/// The system wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        // Seconds and sub-second millis, without `as_millis`' 128-bit arithmetic: this runs
        // on every invocation.
        SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| {
            d.as_secs()
                .saturating_mul(1000)
                .saturating_add(u64::from(d.subsec_millis()))
        })
    }
}

/// Locks a mutex, ignoring poisoning: no host code ever runs while one of the runtime's
/// locks is held, so a poisoned lock can only come from a panic in the runtime's own
/// bookkeeping, whose state is still consistent.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Runs host code, turning a panic into `None` (its payload is dropped, never shown).
pub fn contain<R>(f: impl FnOnce() -> R) -> Option<R> {
    catch_unwind(AssertUnwindSafe(f)).map_err(drop_payload).ok()
}

/// Awaits a host future, turning a panic into `None`, whether it panics while polled or
/// while dropped (a future dropped early, say when a cancellation wins a `select!`, runs
/// host destructors too).
/// Host futures reach the runtime boxed ([`BoxFuture`]), hence `Unpin`: no pinning needed.
pub fn contain_async<F: Future + Unpin>(future: F) -> Contained<F> {
    Contained(Some(future))
}

/// See [`contain_async`].
#[derive(Debug)]
pub struct Contained<F>(Option<F>);

impl<F: Future + Unpin> Future for Contained<F> {
    type Output = Option<F::Output>;

    fn poll(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let Some(future) = self.0.as_mut() else {
            return std::task::Poll::Ready(None);
        };
        match catch_unwind(AssertUnwindSafe(|| Pin::new(future).poll(cx))) {
            Ok(std::task::Poll::Pending) => std::task::Poll::Pending,
            Ok(std::task::Poll::Ready(output)) => {
                self.drop_inner();
                std::task::Poll::Ready(Some(output))
            }
            Err(payload) => {
                drop_payload(payload);
                self.drop_inner();
                std::task::Poll::Ready(None)
            }
        }
    }
}

impl<F> Contained<F> {
    fn drop_inner(&mut self) {
        if let Some(future) = self.0.take() {
            let _ = contain(move || drop(future));
        }
    }
}

impl<F> Drop for Contained<F> {
    fn drop(&mut self) {
        self.drop_inner();
    }
}

fn drop_payload(payload: Box<dyn Any + Send>) {
    // Dropping a payload can itself panic (a payload type with a panicking Drop); contain it.
    let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
}

/// 64-bit FNV-1a: a fast, stable, non-cryptographic hash (`catalog!`'s duplicate check
/// at compile time, cursor bindings at run time).
pub const fn fnv1a(text: &str) -> u64 {
    let bytes = text.as_bytes();
    let mut hash = 0xcbf2_9ce4_8422_2325_u64;
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(0x0100_0000_01b3);
        i += 1;
    }
    hash
}

/// A tokio timer, or `None` on a runtime built without timers (creating one there panics)
/// or outside a runtime.
pub fn try_sleep(duration: std::time::Duration) -> Option<tokio::time::Sleep> {
    contain(|| tokio::time::sleep(duration))
}

/// Calls host code that returns a future and awaits it until `token` is cancelled. `None`:
/// cancelled (before the call, which is then not made, or while waiting); `Some(None)`: the
/// call or its future panicked.
pub async fn cancellable<T>(
    token: &tokio_util::sync::CancellationToken,
    call: impl FnOnce() -> BoxFuture<T>,
) -> Option<Option<T>> {
    if token.is_cancelled() {
        return None;
    }
    let Some(future) = contain(call) else {
        return Some(None);
    };
    tokio::select! {
        biased;
        () = token.cancelled() => None,
        result = contain_async(future) => Some(result),
    }
}

/// The next default invocation id, in the reference's format:
/// `invocation_<epoch ms base 36>_<sequence base 36>`. Invocation ids are not secrets.
/// The id is written into a per-thread buffer and handed to `make`, so building an
/// `Arc<str>` costs one allocation.
pub(crate) fn next_invocation_id<T>(now_ms: u64, make: impl Fn(&str) -> T) -> T {
    next_sequenced_id(INVOCATION_ID_PREFIX, now_ms, make)
}

/// The prefix of the invocation ids the runtime generates.
pub(crate) const INVOCATION_ID_PREFIX: &str = "invocation_";

/// `<prefix><epoch ms base 36>_<sequence base 36>`, the reference's shape for invocation,
/// Assist message, turn and action ids. One sequence serves every prefix: ids only need to
/// be distinct.
pub fn next_sequenced_id<T>(prefix: &'static str, now_ms: u64, make: impl Fn(&str) -> T) -> T {
    sequenced_id(prefix, now_ms, next_sequence(), make)
}

/// `<prefix><now_ms base 36>_<seq base 36>`, handed to `make`.
///
/// Most ids of a thread share their prefix and millisecond with the one before, so each
/// thread keeps its last id's text and writes only the sequence number when they match.
pub(crate) fn sequenced_id<T>(
    prefix: &'static str,
    now_ms: u64,
    seq: u64,
    make: impl Fn(&str) -> T,
) -> T {
    /// A thread's last id, and how long its `<prefix><ms>_` head is.
    struct LastId {
        prefix: &'static str,
        ms: u64,
        head: usize,
        text: String,
    }
    thread_local! {
        static LAST: std::cell::RefCell<LastId> = const {
            std::cell::RefCell::new(LastId { prefix: "", ms: 0, head: 0, text: String::new() })
        };
    }
    fn write(last: &mut LastId, prefix: &'static str, now_ms: u64, seq: u64) {
        if last.head == 0 || last.prefix != prefix || last.ms != now_ms {
            last.text.clear();
            last.text.push_str(prefix);
            push_base36(&mut last.text, now_ms);
            last.text.push('_');
            (last.prefix, last.ms, last.head) = (prefix, now_ms, last.text.len());
        } else {
            last.text.truncate(last.head);
        }
        push_base36(&mut last.text, seq);
    }
    let made = LAST.try_with(|last| {
        // Taken already: `make` asked for an id itself (or the thread is ending).
        let mut last = last.try_borrow_mut().ok()?;
        write(&mut last, prefix, now_ms, seq);
        Some(make(&last.text))
    });
    if let Ok(Some(made)) = made {
        return made;
    }
    let mut apart = LastId {
        prefix,
        ms: now_ms,
        head: 0,
        text: String::new(),
    };
    write(&mut apart, prefix, now_ms, seq);
    make(&apart.text)
}

/// The next id sequence number: distinct across the process, increasing per thread. Each
/// thread takes a block of numbers at a time, so an id costs a thread-local increment, not an
/// atomic one on a line every invoking thread shares.
pub(crate) fn next_sequence() -> u64 {
    const BLOCK: u64 = 1 << 10;
    static NEXT_BLOCK: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        /// The thread's next number and the end of its block.
        static RANGE: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, 0)) };
    }
    RANGE
        .try_with(|range| {
            let (mut next, mut end) = range.get();
            if next == end {
                next = NEXT_BLOCK.fetch_add(BLOCK, Ordering::Relaxed);
                end = next + BLOCK;
            }
            range.set((next + 1, end));
            next
        })
        // No thread-local (a thread being torn down): a block of its own, of which it uses
        // one number.
        .unwrap_or_else(|_| NEXT_BLOCK.fetch_add(BLOCK, Ordering::Relaxed))
}

/// 128 random bits: confirmation ids here, record and event ids in `rcip-relationship` (as
/// version-4 UUIDs), so that none can be guessed. getrandom 0.3 is the version jsonschema
/// already brings (through ahash), so taking it costs no second copy.
pub fn random_128() -> [u8; 16] {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // No OS randomness: fall back to a hash of time and a counter with a per-process
        // random seed from std. Still not a plain counter.
        use std::hash::{BuildHasher, RandomState};
        static FALLBACK: AtomicU64 = AtomicU64::new(0);
        let state = RandomState::new();
        let a = state.hash_one((
            SystemClock.now_ms(),
            FALLBACK.fetch_add(1, Ordering::Relaxed),
        ));
        let b = RandomState::new().hash_one(a);
        bytes[..8].copy_from_slice(&a.to_le_bytes());
        bytes[8..].copy_from_slice(&b.to_le_bytes());
    }
    bytes
}

/// A fresh confirmation id: 128 random bits, so that a confirmation cannot be guessed.
pub(crate) fn new_confirmation_id() -> String {
    random_id("confirmation_")
}

/// `prefix` and 128 random bits in lowercase hex: an id nobody can guess (confirmations,
/// and the MCP bridge's tasks and event streams).
pub fn random_id(prefix: &str) -> String {
    let mut id = String::with_capacity(prefix.len() + 32);
    id.push_str(prefix);
    for b in random_128() {
        id.push(char::from(HEX[usize::from(b >> 4)]));
        id.push(char::from(HEX[usize::from(b & 15)]));
    }
    id
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends `n` in lowercase base 36.
fn push_base36(out: &mut String, mut n: u64) {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    // u64::MAX has 13 base-36 digits.
    let mut digits = [0u8; 13];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = DIGITS[(n % 36) as usize];
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.extend(digits[start..].iter().map(|&digit| char::from(digit)));
}

/// A caller's id as rcip echoes it: unchanged up to `limit` bytes; longer, cut at a character
/// boundary and marked with `…`, still at most `limit` bytes. The mark is not in the
/// identifier grammar, so a clipped capability id never names a real capability.
pub(crate) fn clip(id: String, limit: usize) -> String {
    if id.len() <= limit {
        id
    } else {
        clip_str(&id, limit)
    }
}

/// `text` as [`clip`] cuts it, copying only the part kept (a name can be megabytes long).
pub(crate) fn clip_str(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    let mut end = limit - '…'.len_utf8();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut clipped = String::with_capacity(limit);
    clipped.push_str(&text[..end]);
    clipped.push('…');
    clipped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invocation_ids_follow_the_reference_format() {
        let a = next_invocation_id(36, str::to_owned);
        let b: std::sync::Arc<str> = next_invocation_id(36, |id| std::sync::Arc::from(id));
        assert!(a.starts_with("invocation_10_"), "{a}");
        assert_ne!(a.as_str(), &*b);
        let mut max = String::new();
        push_base36(&mut max, u64::MAX);
        assert_eq!(max, "3w5e11264sgsf");
        // The same thread, the same millisecond, then another: the head is rewritten.
        let c = sequenced_id("invocation_", 36, 5, str::to_owned);
        let d = sequenced_id("message_", 36, 6, str::to_owned);
        let e = sequenced_id("message_", 37, 7, str::to_owned);
        let f = sequenced_id("message_", 37, 36 * 36, str::to_owned);
        assert_eq!(
            [c, d, e, f],
            [
                "invocation_10_5",
                "message_10_6",
                "message_11_7",
                "message_11_100"
            ]
        );
        // An id asked for while one is being made (from `make`) is made apart.
        let nested = sequenced_id("turn_", 1, 2, |outer| {
            let inner = sequenced_id("action_", 3, 4, str::to_owned);
            format!("{outer} {inner}")
        });
        assert_eq!(nested, "turn_1_2 action_3_4");
    }

    #[test]
    fn sequence_numbers_are_distinct_across_threads() {
        let per_thread: Vec<Vec<u64>> = std::thread::scope(|scope| {
            let threads: Vec<_> = (0..4)
                .map(|_| scope.spawn(|| (0..3_000).map(|_| next_sequence()).collect()))
                .collect();
            threads
                .into_iter()
                .map(|t| t.join().expect("a thread of ids"))
                .collect()
        });
        for numbers in &per_thread {
            assert!(
                numbers.windows(2).all(|w| w[0] < w[1]),
                "increasing per thread"
            );
        }
        let all: std::collections::HashSet<u64> = per_thread.iter().flatten().copied().collect();
        assert_eq!(all.len(), 4 * 3_000);
        assert!(!all.contains(&0));
    }

    #[test]
    fn confirmation_ids_are_128_random_bits() {
        let a = new_confirmation_id();
        let b = new_confirmation_id();
        assert_eq!(a.len(), "confirmation_".len() + 32);
        assert_ne!(a, b);
        assert_ne!(random_128(), random_128());
    }

    #[test]
    fn panics_are_contained() {
        assert_eq!(contain(|| 5), Some(5));
        assert_eq!(contain(|| -> u8 { panic!("boom") }), None);
    }
}
