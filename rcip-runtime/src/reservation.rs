//! Step 2 of an invocation: the invocation ids in use, and the guard that holds one.
//!
//! Two kinds of id are held. A caller's id can be any string, so it goes into a table (a
//! set behind a lock). An id the runtime generates, `invocation_<ms>_<seq>`, differs from
//! every other generated id by its sequence number, so it is held in a slot chosen by that
//! number: no lock, no hashing, one compare-and-swap. The two kinds meet only when a caller
//! sends an id of the generated form (an imitation). Imitations are counted, and a generated
//! id that sees a count looks in the table too, so that of two equal ids one is refused,
//! exactly as if both were in one table (why, on [`Reservation::take`]).
//!
//! An invocation borrows the reservations through the runtime it runs on; only a
//! confirmation ticket, which outlives the call that issued it, takes a share of them.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::invocation_id::InvocationId;
use crate::support::{INVOCATION_ID_PREFIX, lock, next_sequence, sequenced_id};

/// How many generated ids slots hold at once (a power of two). A generated id whose slot is
/// still taken (by an invocation still running, or a confirmation ticket) goes into the
/// table instead.
const SLOTS: usize = 256;

/// A slot's number while its time is written. Sequence numbers start at 1 and never reach
/// it.
const FILLING: u64 = u64::MAX;

/// An id to reserve: a caller's, or one the runtime generated.
pub(crate) enum Claim {
    Caller(Arc<str>),
    Generated(GeneratedId),
}

impl Claim {
    /// The id.
    pub(crate) fn id(&self) -> &str {
        match self {
            Claim::Caller(id) => id,
            Claim::Generated(generated) => &generated.id,
        }
    }
}

/// A generated invocation id and the numbers it was made of.
pub(crate) struct GeneratedId {
    id: String,
    ms: u64,
    seq: u64,
}

impl GeneratedId {
    /// The next generated id, `invocation_<now_ms base 36>_<sequence base 36>`.
    pub(crate) fn next(now_ms: u64) -> Self {
        let seq = next_sequence();
        GeneratedId {
            id: sequenced_id(INVOCATION_ID_PREFIX, now_ms, seq, str::to_owned),
            ms: now_ms,
            seq,
        }
    }
}

/// The ms and sequence numbers of an id the runtime could have generated, exactly as
/// `sequenced_id` writes them (lowercase base 36, no leading zero), or `None`. Sequence
/// numbers start at 1 and never reach [`FILLING`], so 0 and `FILLING` (a slot's free and
/// busy marks) are no generated id's.
fn generated_form(id: &str) -> Option<(u64, u64)> {
    let (ms, seq) = id.strip_prefix(INVOCATION_ID_PREFIX)?.split_once('_')?;
    let seq = base36(seq).filter(|&seq| seq != 0 && seq != FILLING)?;
    Some((base36(ms)?, seq))
}

fn base36(digits: &str) -> Option<u64> {
    if digits.is_empty() || (digits.len() > 1 && digits.starts_with('0')) {
        return None;
    }
    digits.bytes().try_fold(0u64, |n, byte| {
        let digit = match byte {
            b'0'..=b'9' => byte - b'0',
            b'a'..=b'z' => byte - b'a' + 10,
            _ => return None,
        };
        n.checked_mul(36)?.checked_add(u64::from(digit))
    })
}

/// A slot: the sequence number of the generated id it holds (0: free, [`FILLING`]: being
/// taken) and the time that id was generated at.
#[derive(Default)]
struct Slot {
    seq: AtomicU64,
    ms: AtomicU64,
}

#[derive(Default)]
struct Shared {
    /// Callers' ids, and generated ids whose slot was taken.
    table: Mutex<HashSet<Arc<str>, foldhash::fast::RandomState>>,
    slots: Slots,
    /// How many ids of the generated form the table holds (or is about to).
    imitations: AtomicUsize,
}

struct Slots([Slot; SLOTS]);

impl Default for Slots {
    fn default() -> Self {
        Slots(std::array::from_fn(|_| Slot::default()))
    }
}

impl Shared {
    /// The slot of a sequence number. Its top bits after a multiplication by an odd constant
    /// (Fibonacci hashing), not `seq % SLOTS`: each thread's numbers come in blocks starting
    /// at the same remainder, so threads invoking in step would all want the same slots.
    fn slot(&self, seq: u64) -> &Slot {
        const SPREAD: u64 = 0x9e37_79b9_7f4a_7c15;
        const SHIFT: u32 = u64::BITS - SLOTS.trailing_zeros();
        // Lossless: the shift leaves log2(SLOTS) bits.
        &self.slots.0[(seq.wrapping_mul(SPREAD) >> SHIFT) as usize]
    }

    /// Whether a slot holds the generated id `(ms, seq)`.
    fn slot_holds(&self, ms: u64, seq: u64) -> bool {
        let slot = self.slot(seq);
        // The time is written before the number is published, and numbers are never
        // reused: the time read after seeing the number is that id's.
        slot.seq.load(Ordering::SeqCst) == seq && slot.ms.load(Ordering::Acquire) == ms
    }
}

/// The invocation ids in use in one runtime (ids are reserved per runtime).
#[derive(Default, Clone)]
pub(crate) struct ReservationTable(Arc<Shared>);

/// Where a [`Reservation`]'s id is held, and its text.
enum Held {
    /// A generated id in the slot of its sequence number; the text is the reservation's
    /// own (the outcome's in the end, moved).
    Slot { text: String, seq: u64 },
    /// An entry of the table, `key` being the entry itself; `imitation`: counted as one.
    Table { key: Arc<str>, imitation: bool },
}

/// Holds an invocation id: the attempt's own id, released when the attempt ends (by
/// [`release`](Self::release) or when dropped, however the call ends).
///
/// The table's key is the same allocation as the id held here, so a release removes the
/// entry only while it is this reservation's (`Arc::ptr_eq`): another attempt that took the
/// same id string holds a different allocation, which cannot share an address with this
/// one while this one is alive.
pub(crate) struct Reservation<'a> {
    /// Borrowed for the length of one call, or a share held by a ticket that outlives it.
    table: Cow<'a, ReservationTable>,
    held: Held,
    /// Freed already (or handed to another reservation): the id is only read now.
    released: bool,
}

impl<'a> Reservation<'a> {
    /// Reserves the claimed id, or gives the claim back if the id is in use.
    ///
    /// Why a generated id in a slot and an equal imitation in the table are never both held:
    /// the generated one publishes its number in its slot, then reads the imitation count;
    /// the imitation counts itself, then, under the table's lock, reads the slot (those four
    /// accesses `SeqCst`; the slot's time is written before the number and read after it).
    /// If the count read was 0, it came before the imitation counted itself, so the slot was
    /// taken before the imitation read it: the imitation is refused. If not, the generated
    /// one also looks in the table under its lock: either the imitation's lock came first
    /// and its entry is there (the generated one is refused), or its lock came after, and
    /// then it reads the slot taken before it.
    ///
    /// One interleaving refuses more than one table would: a generated id that finds its
    /// imitation in the table has published its number for a moment, and a second
    /// imitation of the same text reading the slot in that moment is refused too, even if
    /// the first imitation has just released it. It takes a caller replaying a generated id
    /// that is being claimed at that instant.
    pub(crate) fn take(table: &'a ReservationTable, claim: Claim) -> Result<Self, Claim> {
        match claim {
            Claim::Generated(generated) => Self::take_generated(table, generated),
            Claim::Caller(id) => {
                let form = generated_form(&id);
                Self::take_in_table(table, id, form).map_err(Claim::Caller)
            }
        }
    }

    /// Reserves a generated id in its slot, or in the table if the slot is taken.
    fn take_generated(table: &'a ReservationTable, generated: GeneratedId) -> Result<Self, Claim> {
        let shared = &*table.0;
        let slot = shared.slot(generated.seq);
        let taken = slot
            .seq
            .compare_exchange(0, FILLING, Ordering::SeqCst, Ordering::Relaxed)
            .is_ok();
        if !taken {
            // The slot's id is still running: hold this one in the table.
            let form = Some((generated.ms, generated.seq));
            return Self::take_in_table(table, Arc::from(&*generated.id), form)
                .map_err(|_| Claim::Generated(generated));
        }
        slot.ms.store(generated.ms, Ordering::Relaxed);
        slot.seq.store(generated.seq, Ordering::SeqCst);
        if shared.imitations.load(Ordering::SeqCst) > 0
            && lock(&shared.table).contains(&*generated.id)
        {
            slot.seq.store(0, Ordering::Release);
            return Err(Claim::Generated(generated));
        }
        Ok(Reservation {
            table: Cow::Borrowed(table),
            held: Held::Slot {
                text: generated.id,
                seq: generated.seq,
            },
            released: false,
        })
    }

    /// Reserves `id` in the table; `form`: its numbers if it has the generated form.
    fn take_in_table(
        table: &'a ReservationTable,
        id: Arc<str>,
        form: Option<(u64, u64)>,
    ) -> Result<Self, Arc<str>> {
        let shared = &*table.0;
        if form.is_some() {
            shared.imitations.fetch_add(1, Ordering::SeqCst);
        }
        let taken = {
            let mut entries = lock(&shared.table);
            let in_slot = form.is_some_and(|(ms, seq)| shared.slot_holds(ms, seq));
            !in_slot && entries.insert(id.clone())
        };
        if !taken {
            if form.is_some() {
                shared.imitations.fetch_sub(1, Ordering::SeqCst);
            }
            return Err(id);
        }
        Ok(Reservation {
            table: Cow::Borrowed(table),
            held: Held::Table {
                key: id,
                imitation: form.is_some(),
            },
            released: false,
        })
    }

    /// The invocation id.
    pub(crate) fn id(&self) -> &str {
        match &self.held {
            Held::Slot { text, .. } => text,
            Held::Table { key, .. } => key,
        }
    }

    /// The id for the handler's context: a copy in place, or a share of the table's key.
    pub(crate) fn context_id(&self) -> InvocationId {
        match &self.held {
            Held::Slot { text, .. } => InvocationId::new(text),
            Held::Table { key, .. } => InvocationId::Shared(key.clone()),
        }
    }

    /// The id as the outcome's text, once it is released: moved out, or copied if it is
    /// the table's key (the reservation reads as empty if its own text was moved).
    pub(crate) fn take_id(&mut self) -> String {
        debug_assert!(self.released, "taken before its release");
        match &mut self.held {
            Held::Slot { text, .. } => std::mem::take(text),
            Held::Table { key, .. } => String::from(&**key),
        }
    }

    /// Frees the id now (the reservation keeps it for reading); a second release does
    /// nothing.
    pub(crate) fn release(&mut self) {
        if std::mem::replace(&mut self.released, true) {
            return;
        }
        let shared = &*self.table.0;
        match &self.held {
            Held::Slot { seq, .. } => shared.slot(*seq).seq.store(0, Ordering::Release),
            Held::Table { key, imitation } => {
                {
                    let mut entries = lock(&shared.table);
                    if entries
                        .get(&**key)
                        .is_some_and(|entry| Arc::ptr_eq(entry, key))
                    {
                        entries.remove(&**key);
                    }
                }
                if *imitation {
                    shared.imitations.fetch_sub(1, Ordering::SeqCst);
                }
            }
        }
    }

    /// The same reservation, holding a share of its table so that it can outlive the call
    /// (a confirmation ticket keeps it until it ends).
    pub(crate) fn into_shared(mut self) -> Reservation<'static> {
        Reservation {
            table: Cow::Owned(self.table.clone().into_owned()),
            // This one no longer releases the id (nor reads it): the new one does.
            released: std::mem::replace(&mut self.released, true),
            held: std::mem::replace(
                &mut self.held,
                Held::Slot {
                    text: String::new(),
                    seq: 0,
                },
            ),
        }
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        self.release();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn caller(text: &str) -> Claim {
        Claim::Caller(Arc::from(text))
    }

    fn generated(ms: u64, seq: u64) -> Claim {
        Claim::Generated(GeneratedId {
            id: sequenced_id(INVOCATION_ID_PREFIX, ms, seq, str::to_owned),
            ms,
            seq,
        })
    }

    fn is_empty(table: &ReservationTable) -> bool {
        let shared = &table.0;
        lock(&shared.table).is_empty()
            && shared.imitations.load(Ordering::SeqCst) == 0
            && shared
                .slots
                .0
                .iter()
                .all(|slot| slot.seq.load(Ordering::SeqCst) == 0)
    }

    #[test]
    fn an_id_is_held_until_released_or_dropped() {
        let table = ReservationTable::default();
        let mut first = Reservation::take(&table, caller("a")).ok().unwrap();
        assert!(Reservation::take(&table, caller("a")).is_err());
        let second = Reservation::take(&table, caller("b")).ok().unwrap();
        first.release();
        assert_eq!(first.id(), "a", "a released reservation still reads its id");
        let again = Reservation::take(&table, caller("a")).ok().unwrap();
        // The first's second release (here, its drop) leaves the new holder alone.
        drop(first);
        assert!(Reservation::take(&table, caller("a")).is_err());
        drop((again, second));
        assert!(is_empty(&table));
    }

    #[test]
    fn a_shared_reservation_outlives_the_borrow_and_releases_once() {
        let table = ReservationTable::default();
        for claim in [caller("a"), generated(5, 7)] {
            let id: Arc<str> = Arc::from(claim.id());
            let shared = Reservation::take(&table, claim).ok().unwrap().into_shared();
            assert_eq!(
                shared.id(),
                &*id,
                "the shared reservation reads the same id"
            );
            assert!(
                Reservation::take(&table, Claim::Caller(id.clone())).is_err(),
                "{id} is still held after the move"
            );
            drop(shared);
            assert!(is_empty(&table), "{id}");
        }
    }

    #[test]
    fn a_generated_id_and_its_imitation_exclude_each_other() {
        let table = ReservationTable::default();
        // Generated first: the imitation (same text, from a caller) is refused; an id that
        // differs only in its time is not the same id.
        let held = Reservation::take(&table, generated(100, 300)).ok().unwrap();
        assert_eq!(held.id(), "invocation_2s_8c");
        assert!(Reservation::take(&table, caller("invocation_2s_8c")).is_err());
        let other_time = Reservation::take(&table, caller("invocation_2t_8c"))
            .ok()
            .unwrap();
        drop((held, other_time));
        assert!(is_empty(&table));
        // The imitation first: the generated id is refused, and can be taken once it is free.
        let imitation = Reservation::take(&table, caller("invocation_2s_8c"))
            .ok()
            .unwrap();
        let refused = Reservation::take(&table, generated(100, 300))
            .err()
            .unwrap();
        drop(imitation);
        let held = Reservation::take(&table, refused).ok().unwrap();
        drop(held);
        assert!(is_empty(&table));
    }

    #[test]
    fn ids_that_look_like_a_free_or_busy_slot_are_plain_caller_ids() {
        let table = ReservationTable::default();
        // A fresh table's slots are all free (number 0, time 0).
        let zero = Reservation::take(&table, caller("invocation_0_0"))
            .ok()
            .unwrap();
        assert!(matches!(
            zero.held,
            Held::Table {
                imitation: false,
                ..
            }
        ));
        drop(zero);
        assert!(is_empty(&table));
    }

    /// Another sequence number with the same slot as `seq`.
    fn same_slot_as(table: &ReservationTable, seq: u64) -> u64 {
        let slot: *const Slot = table.0.slot(seq);
        (seq + 1..)
            .find(|&other| std::ptr::eq(table.0.slot(other), slot))
            .unwrap()
    }

    #[test]
    fn blocks_of_numbers_spread_over_the_slots() {
        // Each thread's numbers start a block of 1,024: the first number of every block must
        // not all land in one slot.
        let table = ReservationTable::default();
        let firsts: std::collections::HashSet<*const Slot> = (0..64u64)
            .map(|block| std::ptr::from_ref(table.0.slot(block * 1_024 + 1)))
            .collect();
        assert!(firsts.len() > 32, "{} slots for 64 blocks", firsts.len());
    }

    #[test]
    fn a_generated_id_whose_slot_is_taken_is_held_in_the_table() {
        let table = ReservationTable::default();
        let first = Reservation::take(&table, generated(1, 3)).ok().unwrap();
        // The same slot, a different id: held in the table, as an imitation.
        let other = same_slot_as(&table, 3);
        let second = Reservation::take(&table, generated(1, other)).ok().unwrap();
        assert!(matches!(
            second.held,
            Held::Table {
                imitation: true,
                ..
            }
        ));
        let text = Arc::from(second.id());
        assert!(Reservation::take(&table, Claim::Caller(text)).is_err());
        drop((first, second));
        assert!(is_empty(&table));
    }

    #[test]
    fn only_the_exact_generated_text_is_of_the_generated_form() {
        assert_eq!(generated_form("invocation_2s_8c"), Some((100, 300)));
        assert_eq!(generated_form("invocation_0_1"), Some((0, 1)));
        for other in [
            "invocation_02s_8c",
            "invocation_2S_8c",
            "invocation_+2s_8c",
            "invocation_2s",
            "invocation__8c",
            "invocation_2s_8c_",
            "Invocation_2s_8c",
            "invocation_zzzzzzzzzzzzzz_1",
            // A slot's free and busy marks are no sequence number.
            "invocation_2s_0",
            "invocation_2s_3w5e11264sgsf",
        ] {
            assert_eq!(generated_form(other), None, "{other}");
        }
    }

    #[test]
    fn generated_ids_and_imitations_race_without_both_holding_one_id() {
        // Many rounds of one generated id against its imitation on another thread: at most
        // one holds it at any time, and every count and slot is back to empty at the end.
        let table = ReservationTable::default();
        for round in 1..=2_000u64 {
            let claim = generated(round, round);
            let text: Arc<str> = Arc::from(claim.id());
            let both = std::thread::scope(|scope| {
                let other = scope.spawn(|| {
                    Reservation::take(&table, Claim::Caller(text.clone()))
                        .ok()
                        .map(Reservation::into_shared)
                });
                let mine = Reservation::take(&table, claim)
                    .ok()
                    .map(Reservation::into_shared);
                let theirs = other.join().unwrap();
                mine.is_some() && theirs.is_some()
            });
            assert!(!both, "round {round}: both held {text}");
        }
        assert!(is_empty(&table));
    }
}
