//! Paths for generated code only: not a public API, may change in any release.

use crate::support::fnv1a;
use std::error::Error as StdError;

use rcip_core::{ApplicationDefinition, CapabilityDefinition};

use crate::binding::HandlerError;
pub use crate::support::BoxFuture;

/// `-> Output`.
pub fn plain_output<O>(output: O) -> Result<O, HandlerError> {
    Ok(output)
}

/// `-> Result<Output, E>`: a `HandlerError` keeps its kind, anything else is a failure.
pub fn result_output<O, E>(result: Result<O, E>) -> Result<O, HandlerError>
where
    E: Into<Box<dyn StdError + Send + Sync>>,
{
    result.map_err(|error| match error.into().downcast::<HandlerError>() {
        Ok(handler_error) => *handler_error,
        Err(other) => HandlerError::failed(other),
    })
}

/// The catalog's capabilities added to its application, in order.
///
/// The catalog macro passes a table of each capability's `definition` function rather than
/// one long builder chain: a single loop compiles much faster than hundreds of chained calls.
///
/// # Errors
///
/// The first capability whose types have no strict schema.
pub fn with_capabilities(
    mut application: ApplicationDefinition,
    capabilities: &[fn() -> Result<CapabilityDefinition, crate::Error>],
    sets: &[fn() -> Vec<CapabilityDefinition>],
) -> Result<ApplicationDefinition, crate::Error> {
    application.capabilities.reserve(capabilities.len());
    for definition in capabilities {
        application = application.capability(definition()?);
    }
    for set in sets {
        application.capabilities.extend(set());
    }
    Ok(application)
}

/// The ids of a catalog's capabilities and sets, as one array (`N` is their total count).
pub const fn concat_ids<const N: usize>(parts: &[&[&'static str]]) -> [&'static str; N] {
    let mut ids = [""; N];
    let mut filled = 0;
    let mut part = 0;
    while part < parts.len() {
        let mut i = 0;
        while i < parts[part].len() {
            ids[filled] = parts[part][i];
            filled += 1;
            i += 1;
        }
        part += 1;
    }
    ids
}

/// Constant string equality, for the catalog's compile-time checks.
const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The smallest index whose id equals an id listed before it (`N` when all ids differ).
///
/// This runs in the const evaluator, which interprets every step, so comparing each id with
/// every earlier one (n² string comparisons) cost seconds of `cargo build` for a catalog of
/// 200 capabilities. Instead the ids are hashed, sorted by hash (heap sort: O(n log n)), and
/// only ids with equal hashes are compared byte by byte.
pub const fn first_duplicate<const N: usize>(ids: &[&str; N]) -> usize {
    let mut keys = [(0u64, 0usize); N];
    let mut i = 0;
    while i < N {
        keys[i] = (fnv1a(ids[i]), i);
        i += 1;
    }
    heap_sort(&mut keys);
    let mut first = N;
    let mut start = 0;
    while start < N {
        let mut end = start + 1;
        while end < N && keys[end].0 == keys[start].0 {
            end += 1;
        }
        // Runs of equal hashes hold the duplicates (and, rarely, a collision).
        let mut a = start;
        while a < end {
            let mut b = a + 1;
            while b < end {
                let later = if keys[a].1 > keys[b].1 {
                    keys[a].1
                } else {
                    keys[b].1
                };
                if later < first && str_eq(ids[keys[a].1], ids[keys[b].1]) {
                    first = later;
                }
                b += 1;
            }
            a += 1;
        }
        start = end;
    }
    first
}

/// In-place heap sort by hash, for [`first_duplicate`] (no const sort in `core`).
const fn heap_sort(keys: &mut [(u64, usize)]) {
    let n = keys.len();
    let mut start = n / 2;
    while start > 0 {
        start -= 1;
        sift_down(keys, start, n);
    }
    let mut end = n;
    while end > 1 {
        end -= 1;
        keys.swap(0, end);
        sift_down(keys, 0, end);
    }
}

const fn sift_down(keys: &mut [(u64, usize)], mut root: usize, end: usize) {
    loop {
        let mut child = 2 * root + 1;
        if child >= end {
            return;
        }
        if child + 1 < end && keys[child + 1].0 > keys[child].0 {
            child += 1;
        }
        if keys[root].0 >= keys[child].0 {
            return;
        }
        keys.swap(root, child);
        root = child;
    }
}

/// Whether `needle` is one of `haystack`.
const fn contains(haystack: &[&str], needle: &str) -> bool {
    let mut i = 0;
    while i < haystack.len() {
        if str_eq(needle, haystack[i]) {
            return true;
        }
        i += 1;
    }
    false
}

/// Whether every one of `scopes` is in `declared`.
pub const fn all_declared(scopes: &[&str], declared: &[&str]) -> bool {
    let mut i = 0;
    while i < scopes.len() {
        if !contains(declared, scopes[i]) {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::{all_declared, first_duplicate};

    #[test]
    fn first_duplicate_is_the_smallest_index_repeating_an_earlier_id() {
        assert_eq!(first_duplicate(&["a", "b", "c"]), 3);
        assert_eq!(first_duplicate::<0>(&[]), 0);
        assert_eq!(first_duplicate(&["a", "b", "a", "b"]), 2);
        assert_eq!(first_duplicate(&["x", "b", "c", "b", "x"]), 3);
        let many: Vec<String> = (0..300).map(|i| format!("ops.operation{i}")).collect();
        let mut ids: Vec<&str> = many.iter().map(String::as_str).collect();
        let all: [&str; 300] = ids.clone().try_into().expect("300 ids");
        assert_eq!(first_duplicate(&all), 300);
        ids[250] = "ops.operation17";
        ids[280] = "ops.operation3";
        let repeated: [&str; 300] = ids.try_into().expect("300 ids");
        assert_eq!(first_duplicate(&repeated), 250);
    }

    #[test]
    fn all_declared_needs_every_scope() {
        assert!(all_declared(&["a", "b"], &["b", "a", "c"]));
        assert!(all_declared(&[], &[]));
        assert!(!all_declared(&["a", "d"], &["a", "b"]));
    }
}

/// What rcip's sibling crates (`rcip-assist`, `rcip-relationship`) share with the runtime, so
/// each piece exists once: panic containment, cancellable host calls, timers that never panic,
/// sequenced ids, the schema validator with its Ajv-style issues, and the consumer-facing
/// messages.
pub mod shared {
    pub use crate::invoke::messages;
    pub use crate::support::{
        cancellable, contain, contain_async, fnv1a, lock, next_sequenced_id, random_128, try_sleep,
    };
    pub use crate::validation::SchemaValidator;
}
