//! Paths for generated code only: not a public API, may change in any release.

use std::marker::PhantomData;

use rcip_core::{ApplicationDefinition, CapabilityDefinition};

use crate::binding::{HandlerError, InvocationContext};
use crate::capability::{Capability, CapabilitySpec};
use crate::host::{BindingGuard, Host};
use crate::signature::{FromInvocation, NoInput};
pub use crate::support::BoxFuture;
use crate::support::fnv1a;

/// A finished result as a boxed future: what a plain (not `async`) capability function's
/// `call` returns. Its result is a `Result<Value, HandlerError>` for every capability, so
/// the boxing is compiled once and shared by all of them.
pub fn ready<T: Send + 'static>(result: T) -> BoxFuture<T> {
    Box::pin(std::future::ready(result))
}

/// A capability's `call` serializes its output inside the future it returns with this, so
/// that a call is one boxed future, not its own wrapped in a second one that converts it.
pub use crate::binding::output_value;

/// The value every capability's `call` ends with.
pub type Value = serde_json::Value;

/// The probe of `#[capability]` and `catalog!`: a question about a concrete type `T`, asked
/// through an associated constant. The answer `true` is an inherent constant whose impl has
/// the bound in question; the answer `false` is the same-named constant of a fallback trait
/// (`NotExtractor`, `NotResult`, `NotCapability`, imported `as _` by the generated code).
/// Path resolution prefers an inherent item whose impl applies, so `Probe::<T>::X` reads
/// `true` exactly when `T` has the property: decided by the type (aliases resolved), not by
/// how the user spelled it. Only ever used on concrete types.
#[derive(Debug)]
pub struct Probe<T: ?Sized>(PhantomData<T>);

impl<T: FromInvocation> Probe<T> {
    /// `T` is an extractor.
    pub const IS_EXTRACTOR: bool = true;
}

/// The fallback of [`Probe::IS_EXTRACTOR`].
pub trait NotExtractor {
    /// `T` is not an extractor.
    const IS_EXTRACTOR: bool = false;
}
impl<T: ?Sized> NotExtractor for Probe<T> {}

impl<T, E> Probe<Result<T, E>> {
    /// `T` is a `Result`.
    pub const IS_RESULT: bool = true;
}

/// The fallback of [`Probe::IS_RESULT`].
pub trait NotResult {
    /// `T` is not a `Result`.
    const IS_RESULT: bool = false;
}
impl<T: ?Sized> NotResult for Probe<T> {}

impl<T: Capability> Probe<T> {
    /// `T` has a handler (`#[capability]`), not only a contract (`#[derive(Capability)]`).
    pub const IS_CAPABILITY: bool = true;
}

/// The fallback of [`Probe::IS_CAPABILITY`].
pub trait NotCapability {
    /// `T` is a contract without a handler.
    const IS_CAPABILITY: bool = false;
}
impl<T: ?Sized> NotCapability for Probe<T> {}

/// How many of a signature's parameters (their `IS_EXTRACTOR` flags, in order) come before
/// the extractors, at most `max`: those are the state and the input (`max` is 2 for a free
/// function, 1 for a method, whose state is `self`).
pub const fn leading_values(extractors: &[bool], max: usize) -> usize {
    let mut count = 0;
    while count < extractors.len() && count < max && !extractors[count] {
        count += 1;
    }
    count
}

/// A signature's parameter types (a tuple, receiver excluded) split at `VALUES` (from
/// [`leading_values`]): `0` no state and [`NoInput`], `1` the input, `2` the state and the
/// input; every later parameter must be an extractor. One trait with impls per count and
/// arity keeps each capability's expansion to a type projection and one call.
#[diagnostic::on_unimplemented(
    message = "unsupported capability signature",
    note = "a capability takes `[state,] [input,]` and then only extractors (`FromInvocation`); a method's state is `&self`"
)]
pub trait Layout<const VALUES: usize>: Sized {
    /// The state parameter's type (`()` when none).
    type State;
    /// The input parameter's type ([`NoInput`] when none).
    type Input;
    /// The arguments of one call.
    ///
    /// # Errors
    ///
    /// An extractor's failure.
    fn split(
        state: Self::State,
        input: Self::Input,
        context: &InvocationContext,
    ) -> Result<Self, HandlerError>;
}

macro_rules! layouts {
    ($($e:ident),*) => {
        impl<$($e: FromInvocation,)*> Layout<0> for ($($e,)*) {
            type State = ();
            type Input = NoInput;
            #[allow(unused_variables)]
            fn split(_: (), _: NoInput, context: &InvocationContext) -> Result<Self, HandlerError> {
                Ok(($($e::from_invocation(context)?,)*))
            }
        }
        impl<I, $($e: FromInvocation,)*> Layout<1> for (I, $($e,)*) {
            type State = ();
            type Input = I;
            #[allow(unused_variables)]
            fn split(_: (), input: I, context: &InvocationContext) -> Result<Self, HandlerError> {
                Ok((input, $($e::from_invocation(context)?,)*))
            }
        }
        impl<S, I, $($e: FromInvocation,)*> Layout<2> for (S, I, $($e,)*) {
            type State = S;
            type Input = I;
            #[allow(unused_variables)]
            fn split(state: S, input: I, context: &InvocationContext) -> Result<Self, HandlerError> {
                Ok((state, input, $($e::from_invocation(context)?,)*))
            }
        }
    };
}
layouts!();
layouts!(E0);
layouts!(E0, E1);
layouts!(E0, E1, E2);
layouts!(E0, E1, E2, E3);
layouts!(E0, E1, E2, E3, E4);
layouts!(E0, E1, E2, E3, E4, E5);

/// A catalog capability as `bind_all` sees it (`HAS_HANDLER` from
/// [`Probe::IS_CAPABILITY`]): a `#[capability]` is bound over its state, a contract without
/// a handler (`#[derive(Capability)]`) needs no state and is left for the host to bind.
pub trait Bindable<const HAS_HANDLER: bool> {
    /// The state `bind_all` must be given (`()` for a contract).
    type State;
    /// Binds it, adding its guard to `guards`.
    ///
    /// # Errors
    ///
    /// As [`Host::bind`].
    fn bind_into(
        host: &Host,
        state: &Self::State,
        guards: &mut Vec<BindingGuard>,
    ) -> Result<(), crate::Error>;
}

impl<C: Capability> Bindable<true> for C {
    type State = C::State;
    fn bind_into(
        host: &Host,
        state: &C::State,
        guards: &mut Vec<BindingGuard>,
    ) -> Result<(), crate::Error> {
        keep_guard(host.bind(C::ID, C::binding(state.clone())), guards)
    }
}

/// The guard of a binding `bind_all` made, kept in `guards`: apart from
/// [`Bindable::bind_into`] so that each capability compiles only its own binding.
fn keep_guard(
    bound: Result<BindingGuard, crate::Error>,
    guards: &mut Vec<BindingGuard>,
) -> Result<(), crate::Error> {
    guards.push(bound?);
    Ok(())
}

impl<C: CapabilitySpec> Bindable<false> for C {
    type State = ();
    fn bind_into(_: &Host, _: &(), _: &mut Vec<BindingGuard>) -> Result<(), crate::Error> {
        Ok(())
    }
}

/// `bind_all`'s states argument: `()` or a tuple with one value per distinct state type.
/// `Pick<S, At<N>>` finds the `S` at position `N`; the position is inferred at the call site,
/// so a missing state type is a compile error there (and a state type given twice is an
/// ambiguity). `()` is always available, from any argument.
#[diagnostic::on_unimplemented(
    message = "the states given to `bind_all` have no value of type `{S}`",
    label = "add a `{S}` to this tuple",
    note = "pass one value per distinct state type, e.g. `(store.clone(), Arc::new(service))`"
)]
pub trait Pick<S, Index> {
    /// The state of type `S`.
    fn pick(&self) -> &S;
}

/// [`Pick`]'s index of the `()` state.
#[derive(Debug)]
pub struct Unit;
/// [`Pick`]'s index of the state at position `N`.
#[derive(Debug)]
pub struct At<const N: usize>;

impl<T> Pick<(), Unit> for T {
    fn pick(&self) -> &() {
        &()
    }
}

macro_rules! pick_one {
    ([$($t:ident),+], $index:tt, $picked:ident) => {
        impl<$($t),+> Pick<$picked, At<$index>> for ($($t,)+) {
            fn pick(&self) -> &$picked {
                &self.$index
            }
        }
    };
}
macro_rules! picks {
    ($types:tt; $($index:tt $picked:ident),+) => {
        $(pick_one!($types, $index, $picked);)+
    };
}
picks!([T0]; 0 T0);
picks!([T0, T1]; 0 T0, 1 T1);
picks!([T0, T1, T2]; 0 T0, 1 T1, 2 T2);
picks!([T0, T1, T2, T3]; 0 T0, 1 T1, 2 T2, 3 T3);
picks!([T0, T1, T2, T3, T4]; 0 T0, 1 T1, 2 T2, 3 T3, 4 T4);
picks!([T0, T1, T2, T3, T4, T5]; 0 T0, 1 T1, 2 T2, 3 T3, 4 T4, 5 T5);
picks!([T0, T1, T2, T3, T4, T5, T6]; 0 T0, 1 T1, 2 T2, 3 T3, 4 T4, 5 T5, 6 T6);
picks!([T0, T1, T2, T3, T4, T5, T6, T7]; 0 T0, 1 T1, 2 T2, 3 T3, 4 T4, 5 T5, 6 T6, 7 T7);

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
/// 200 capabilities, and a heap sort by hash still took 75 ms of every `cargo check` at 200.
/// Instead the ids are hashed into `N` buckets (a counting sort by bucket: linear), and only
/// ids in the same bucket with equal hashes are compared byte by byte.
pub const fn first_duplicate<const N: usize>(ids: &[&str; N]) -> usize {
    if N == 0 {
        return 0;
    }
    let mut hashes = [0u64; N];
    // `starts[b]` ends as the first slot of bucket `b` in `order`, `ends[b]` as one past
    // its last.
    let mut starts = [0usize; N];
    let mut ends = [0usize; N];
    let mut i = 0;
    while i < N {
        hashes[i] = fnv1a(ids[i]);
        ends[(hashes[i] % N as u64) as usize] += 1;
        i += 1;
    }
    let mut bucket = 0;
    let mut filled = 0;
    while bucket < N {
        starts[bucket] = filled;
        filled += ends[bucket];
        ends[bucket] = starts[bucket];
        bucket += 1;
    }
    // Within a bucket the indices stay in list order.
    let mut order = [0usize; N];
    i = 0;
    while i < N {
        let bucket = (hashes[i] % N as u64) as usize;
        order[ends[bucket]] = i;
        ends[bucket] += 1;
        i += 1;
    }
    let mut first = N;
    bucket = 0;
    while bucket < N {
        let mut b = starts[bucket] + 1;
        while b < ends[bucket] {
            let later = order[b];
            let mut a = starts[bucket];
            while later < first && a < b {
                let earlier = order[a];
                if hashes[earlier] == hashes[later] && str_eq(ids[earlier], ids[later]) {
                    first = later;
                }
                a += 1;
            }
            b += 1;
        }
        bucket += 1;
    }
    first
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

/// A compile-time error message: constant evaluation can panic with one `&str` only, so the
/// parts of a message naming the catalog and the capability are copied into a buffer first.
#[derive(Debug)]
struct ConstMessage {
    bytes: [u8; 512],
    len: usize,
}

impl ConstMessage {
    /// No message: nothing to report.
    const EMPTY: ConstMessage = ConstMessage {
        bytes: [0; 512],
        len: 0,
    };

    /// The parts, concatenated (cut at the buffer's end).
    const fn of(parts: &[&str]) -> ConstMessage {
        let mut message = ConstMessage::EMPTY;
        let mut p = 0;
        while p < parts.len() {
            let part = parts[p].as_bytes();
            let mut i = 0;
            while i < part.len() && message.len < message.bytes.len() {
                message.bytes[message.len] = part[i];
                message.len += 1;
                i += 1;
            }
            p += 1;
        }
        message
    }

    /// The text (a message cut inside a character reads as a shorter generic one).
    const fn as_str(&self) -> &str {
        match core::str::from_utf8(self.bytes.split_at(self.len).0) {
            Ok(text) => text,
            Err(_) => "a capability of a `#[capabilities]` block is missing from this catalog",
        }
    }
}

/// The first gap in a catalog's `#[capabilities]` blocks: the position (in `listed`) of the
/// capability that reports it, and the message; `at` is `usize::MAX` when there is none.
#[derive(Debug)]
pub struct BlockGap {
    /// The catalog position whose path the error is spanned at.
    pub at: usize,
    message: ConstMessage,
}

impl BlockGap {
    /// The message naming the catalog, the listed path and the capability left out.
    #[must_use]
    pub const fn message(&self) -> &str {
        self.message.as_str()
    }
}

/// The capabilities of one `#[capabilities]` block go into a catalog together. `listed` are
/// the catalog's paths as written, `ids` its ids (the paths' first), `blocks` each path's
/// `CapabilitySpec::BLOCK` (id and path of every method of its block; empty for anything
/// else). A block reports at its first listed method, so a gap is one error.
#[must_use]
pub const fn first_block_gap(
    catalog: &str,
    listed: &[&str],
    ids: &[&str],
    blocks: &[&[(&str, &str)]],
) -> BlockGap {
    let mut own = 0;
    while own < blocks.len() {
        let block = blocks[own];
        let mut b = 0;
        // Not the block's first listed method: the first one reports.
        let mut first = true;
        while b < block.len() {
            if contains(ids.split_at(own).0, block[b].0) {
                first = false;
            }
            b += 1;
        }
        let mut b = 0;
        while first && b < block.len() {
            let (id, path) = block[b];
            if !contains(ids, id) {
                return BlockGap {
                    at: own,
                    message: ConstMessage::of(&[
                        "catalog `",
                        catalog,
                        "` lists `",
                        listed[own],
                        "` but not `",
                        path,
                        "` (capability `",
                        id,
                        "`), declared in the same `#[capabilities]` block: add `",
                        path,
                        "` to the catalog's `capabilities = [...]` (a method meant for \
                         another catalog goes in its own `#[capabilities(module = ...)]` block)",
                    ]),
                };
            }
            b += 1;
        }
        own += 1;
    }
    BlockGap {
        at: usize::MAX,
        message: ConstMessage::EMPTY,
    }
}

#[cfg(test)]
mod tests {
    use super::{all_declared, first_block_gap, first_duplicate};

    #[test]
    fn a_block_gap_is_reported_once_by_the_first_listed_sibling() {
        let block: &[(&str, &str)] = &[
            ("t.list", "tasks::list"),
            ("t.add", "tasks::add"),
            ("t.del", "tasks::del"),
        ];
        let listed = ["tasks::list", "x", "tasks::add"];
        let ids = ["t.list", "other.x", "t.add"];
        let gap = first_block_gap("App", &listed, &ids, &[block, &[], block]);
        assert_eq!(gap.at, 0);
        assert_eq!(
            gap.message(),
            "catalog `App` lists `tasks::list` but not `tasks::del` (capability `t.del`), \
             declared in the same `#[capabilities]` block: add `tasks::del` to the catalog's \
             `capabilities = [...]` (a method meant for another catalog goes in its own \
             `#[capabilities(module = ...)]` block)"
        );
        // Listed after a free function: the block's first listed method still reports.
        let gap = first_block_gap(
            "App",
            &["x", "tasks::add"],
            &["other.x", "t.add"],
            &[&[], block],
        );
        assert_eq!(gap.at, 1);
        // Every method listed, or no block at all: nothing.
        let all = ["t.del", "t.list", "t.add"];
        let none = first_block_gap("App", &listed, &all, &[block, block, block]);
        assert_eq!((none.at, none.message()), (usize::MAX, ""));
        assert_eq!(
            first_block_gap("App", &["x"], &["other.x"], &[&[]]).at,
            usize::MAX
        );
        // A message longer than the buffer is cut, at a character boundary or generically.
        let long = "é".repeat(400);
        let cut = first_block_gap(&long, &listed, &ids, &[block, &[], block]);
        assert!(!cut.message().is_empty());
    }

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
    fn first_duplicate_agrees_with_comparing_every_pair() {
        fn of<const N: usize>(ids: &[&str]) -> usize {
            first_duplicate::<N>(&ids.try_into().expect("N ids"))
        }
        // Lists of 1 to 40 ids drawn from a small pool, so most have duplicates and many
        // share a bucket.
        let pool: Vec<String> = (0..24).map(|i| format!("app.id{i}")).collect();
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        for length in 1..=40usize {
            for _ in 0..25 {
                let ids: Vec<&str> = (0..length)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        pool[(seed % pool.len() as u64) as usize].as_str()
                    })
                    .collect();
                let expected = (0..length)
                    .find(|&later| ids[..later].contains(&ids[later]))
                    .unwrap_or(length);
                let got = match length {
                    1 => of::<1>(&ids),
                    2 => of::<2>(&ids),
                    3 => of::<3>(&ids),
                    5 => of::<5>(&ids),
                    8 => of::<8>(&ids),
                    13 => of::<13>(&ids),
                    24 => of::<24>(&ids),
                    40 => of::<40>(&ids),
                    _ => continue,
                };
                assert_eq!(got, expected, "{ids:?}");
            }
        }
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
        cancellable, contain, contain_async, fnv1a, lock, next_sequenced_id, random_128, random_id,
        try_sleep,
    };
    pub use crate::validation::SchemaValidator;
}
