//! [`CapabilityList`]: a snapshot's capabilities in shared, immutable chunks.

use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::CapabilitySnapshot;

type Chunk = Arc<[CapabilitySnapshot]>;
type Page = Arc<[Chunk]>;

/// See [`CapabilityList::PAGE_LEN`].
const PAGE_LEN: usize = CapabilityList::PAGE_LEN;

/// Every capability of a snapshot, in catalog order, stored as shared chunks of
/// [`CHUNK_LEN`](Self::CHUNK_LEN) entries (the last may be shorter), themselves grouped in
/// shared pages.
///
/// It reads like a slice (`len`, `get`, `iter`, indexing, `for entry in &list`) and is
/// serialized as a plain JSON array, exactly as a `Vec` of its entries. The sharing is what
/// lets a runtime publish a new revision cheaply: a snapshot that changed nothing in a chunk
/// shares that chunk (one `Arc`) with the snapshot before it, and a page of unchanged chunks
/// is shared whole, so an unchanged revision copies no entry and clones a handful of `Arc`s.
/// Equality is by content, never by sharing.
///
/// ```
/// use std::sync::Arc;
/// use rcip_core::{CapabilityContract, CapabilityDefinition, CapabilityList, CapabilitySnapshot,
///     Effect, Relevance};
/// let contract = Arc::new(CapabilityContract::from(&CapabilityDefinition::new(
///     "notes.count", Effect::Read, "Count notes", "Counts the notes.",
/// )));
/// let entry = CapabilitySnapshot::new(contract, false, None, Relevance::Current);
/// let list: CapabilityList = vec![entry.clone(); 40].into();
/// assert_eq!(list.len(), 40);
/// assert_eq!(list.chunk_count(), 40usize.div_ceil(CapabilityList::CHUNK_LEN));
/// assert_eq!(list[39], entry);
/// assert!(list.iter().all(|e| e.id == "notes.count"));
/// // On the wire it is the array of its entries.
/// let vec = list.to_vec();
/// assert_eq!(serde_json::to_string(&list)?, serde_json::to_string(&vec)?);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Default)]
pub struct CapabilityList {
    /// Every page but the last holds exactly `PAGE_LEN` chunks, the last 1 to `PAGE_LEN`;
    /// every chunk but the very last holds exactly `CHUNK_LEN` entries, the last 1 to
    /// `CHUNK_LEN`. Indexing relies on it.
    pages: Arc<[Page]>,
    len: usize,
}

impl CapabilityList {
    /// How many entries a chunk holds (the last chunk may hold fewer): small, so one
    /// changed capability re-creates few entries.
    pub const CHUNK_LEN: usize = 16;

    /// How many chunks a page holds (the last page may hold fewer): an unchanged page is one
    /// `Arc` clone however many chunks it has, and a builder can take it over whole
    /// ([`CapabilityListBuilder::reuse_page`]).
    pub const PAGE_LEN: usize = 16;

    /// An empty list.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// A builder of a list that shares what it can with `previous` (see
    /// [`CapabilityListBuilder`]).
    #[must_use]
    pub fn builder(previous: Option<&CapabilityList>) -> CapabilityListBuilder<'_> {
        CapabilityListBuilder {
            previous,
            pages: Vec::new(),
            page: Vec::new(),
            reused: 0,
            chunks: 0,
            len: 0,
            short_seen: false,
            canonical: true,
        }
    }

    /// A list made of these chunks, shared as given when each but the last holds exactly
    /// [`CHUNK_LEN`](Self::CHUNK_LEN) entries and the last 1 to `CHUNK_LEN`; any other
    /// chunking is re-cut into that form (copying the entries), so the result is the same
    /// list either way.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use rcip_core::{CapabilityContract, CapabilityDefinition, CapabilityList,
    /// #     CapabilitySnapshot, Effect, Relevance};
    /// # let contract = Arc::new(CapabilityContract::from(&CapabilityDefinition::new(
    /// #     "notes.count", Effect::Read, "Count notes", "Counts the notes.")));
    /// # let entry = CapabilitySnapshot::new(contract, false, None, Relevance::Current);
    /// let first: Arc<[CapabilitySnapshot]> = vec![entry.clone(); CapabilityList::CHUNK_LEN].into();
    /// let list = CapabilityList::from_chunks([first.clone(), vec![entry.clone()].into()]);
    /// assert!(Arc::ptr_eq(list.chunk(0).unwrap(), &first));
    /// assert_eq!(list.len(), CapabilityList::CHUNK_LEN + 1);
    /// // Uneven chunks are re-cut; the content is what counts.
    /// let uneven = CapabilityList::from_chunks([vec![entry.clone()].into(), first]);
    /// assert_eq!(uneven, list);
    /// ```
    #[must_use]
    pub fn from_chunks<I>(chunks: I) -> Self
    where
        I: IntoIterator<Item = Arc<[CapabilitySnapshot]>>,
    {
        let mut builder = Self::builder(None);
        for chunk in chunks {
            builder.push_chunk(chunk);
        }
        builder.finish()
    }

    /// The shared chunk at `index` (entries `index * CHUNK_LEN` on), if any.
    #[must_use]
    pub fn chunk(&self, index: usize) -> Option<&Arc<[CapabilitySnapshot]>> {
        self.pages.get(index / PAGE_LEN)?.get(index % PAGE_LEN)
    }

    /// How many chunks there are: `len()` divided by [`CHUNK_LEN`](Self::CHUNK_LEN),
    /// rounded up.
    #[must_use]
    pub fn chunk_count(&self) -> usize {
        self.len.div_ceil(Self::CHUNK_LEN)
    }

    /// The shared chunks, in order: each but the last holds
    /// [`CHUNK_LEN`](Self::CHUNK_LEN) entries.
    pub fn chunks(&self) -> impl DoubleEndedIterator<Item = &Arc<[CapabilitySnapshot]>> {
        self.pages.iter().flat_map(|page| page.iter())
    }

    /// How many entries there are.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The entry at `index`, if any.
    #[must_use]
    pub fn get(&self, index: usize) -> Option<&CapabilitySnapshot> {
        self.chunk(index / Self::CHUNK_LEN)?
            .get(index % Self::CHUNK_LEN)
    }

    /// The first entry, if any.
    #[must_use]
    pub fn first(&self) -> Option<&CapabilitySnapshot> {
        self.get(0)
    }

    /// The last entry, if any.
    #[must_use]
    pub fn last(&self) -> Option<&CapabilitySnapshot> {
        self.get(self.len.checked_sub(1)?)
    }

    /// The entries in order.
    #[must_use]
    pub fn iter(&self) -> CapabilityIter<'_> {
        let chunks: fn(&Page) -> std::slice::Iter<'_, Chunk> = |page| page.iter();
        let entries: fn(&Chunk) -> std::slice::Iter<'_, CapabilitySnapshot> = |chunk| chunk.iter();
        CapabilityIter {
            entries: self.pages.iter().flat_map(chunks).flat_map(entries),
            remaining: self.len,
        }
    }

    /// The entries copied into a `Vec` (each copy shares its contract).
    #[must_use]
    pub fn to_vec(&self) -> Vec<CapabilitySnapshot> {
        self.iter().cloned().collect()
    }

    /// Whether every entry of `other` is `same` as this list's entry at its position, looking
    /// only where the two lists do not share: a shared page or chunk is taken as equal
    /// without a look at its entries, so comparing a list with its next revision costs a
    /// pointer comparison per page plus `same` on the entries of the chunks that were read
    /// anew. A consumer that derives something from a few fields of the entries (a tool
    /// list, say) uses it to tell whether the revision changed anything it shows.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use rcip_core::{CapabilityContract, CapabilityDefinition, CapabilityList,
    /// #     CapabilitySnapshot, Effect, Relevance};
    /// # let contract = Arc::new(CapabilityContract::from(&CapabilityDefinition::new(
    /// #     "notes.count", Effect::Read, "Count notes", "Counts the notes.")));
    /// # let entry = CapabilitySnapshot::new(contract, false, None, Relevance::Current);
    /// let old: CapabilityList = vec![entry.clone(); 40].into();
    /// let bound = |a: &CapabilitySnapshot, b: &CapabilitySnapshot| a.bound == b.bound;
    /// assert!(old.clone().same_entries_as(&old, bound));
    /// let mut builder = CapabilityList::builder(Some(&old));
    /// builder.reuse_chunk();
    /// let mut changed = entry.clone();
    /// changed.bound = true;
    /// builder.push_chunk(vec![changed; CapabilityList::CHUNK_LEN].into());
    /// builder.reuse_chunk();
    /// let new = builder.finish();
    /// assert!(!new.same_entries_as(&old, bound));
    /// assert!(new.same_entries_as(&old, |a, b| a.id == b.id));
    /// ```
    pub fn same_entries_as(
        &self,
        other: &CapabilityList,
        same: impl Fn(&CapabilitySnapshot, &CapabilitySnapshot) -> bool,
    ) -> bool {
        if self.len != other.len {
            return false;
        }
        if Arc::ptr_eq(&self.pages, &other.pages) {
            return true;
        }
        // Both lists are canonical and equally long, so their pages and chunks line up.
        self.pages.iter().zip(other.pages.iter()).all(|(a, b)| {
            Arc::ptr_eq(a, b)
                || a.iter().zip(b.iter()).all(|(a, b)| {
                    Arc::ptr_eq(a, b) || a.iter().zip(b.iter()).all(|(a, b)| same(a, b))
                })
        })
    }
}

/// Builds a [`CapabilityList`] chunk by chunk, sharing with a previous list: a chunk taken
/// over with [`reuse_chunk`](Self::reuse_chunk) is the previous list's `Arc`, and a page
/// of chunks all taken over is the previous list's page, so reusing costs nothing per
/// chunk until a page mixes reused and new chunks.
///
/// ```
/// # use std::sync::Arc;
/// # use rcip_core::{CapabilityContract, CapabilityDefinition, CapabilityList,
/// #     CapabilitySnapshot, Effect, Relevance};
/// # let contract = Arc::new(CapabilityContract::from(&CapabilityDefinition::new(
/// #     "notes.count", Effect::Read, "Count notes", "Counts the notes.")));
/// # let entry = CapabilitySnapshot::new(contract, false, None, Relevance::Current);
/// let old: CapabilityList = vec![entry.clone(); 40].into();
/// let mut builder = CapabilityList::builder(Some(&old));
/// assert!(builder.reuse_chunk());
/// let mut changed = entry.clone();
/// changed.bound = true;
/// builder.push_chunk(vec![changed; CapabilityList::CHUNK_LEN].into());
/// assert!(builder.reuse_chunk());
/// assert!(!builder.reuse_chunk(), "the old list has no fourth chunk");
/// let new = builder.finish();
/// assert!(Arc::ptr_eq(new.chunk(0).unwrap(), old.chunk(0).unwrap()));
/// assert!(new[CapabilityList::CHUNK_LEN].bound);
/// assert_eq!(new.len(), 40);
/// ```
#[derive(Debug)]
pub struct CapabilityListBuilder<'a> {
    previous: Option<&'a CapabilityList>,
    /// Closed pages.
    pages: Vec<Page>,
    /// The open page's chunks, once it holds a new one (the reused before it copied in).
    page: Vec<Chunk>,
    /// How many chunks the open page took over from `previous` while it held no new one.
    reused: usize,
    /// Chunks so far.
    chunks: usize,
    len: usize,
    /// A chunk shorter than `CHUNK_LEN` came: it must be the last.
    short_seen: bool,
    canonical: bool,
}

impl CapabilityListBuilder<'_> {
    /// Takes over the previous list's chunk at this position; `false` (and nothing added)
    /// when there is no previous list or it has no chunk here.
    pub fn reuse_chunk(&mut self) -> bool {
        let Some(chunk) = self.previous.and_then(|p| p.chunk(self.chunks)) else {
            return false;
        };
        let length = chunk.len();
        if self.page.is_empty() {
            self.reused += 1;
        } else {
            self.page.push(chunk.clone());
        }
        self.count(length);
        true
    }

    /// Takes over the previous list's whole page at this position, when the builder stands at
    /// a page's start ([`PAGE_LEN`](CapabilityList::PAGE_LEN) chunks so far, or a multiple)
    /// and the previous list has a page there; otherwise `false`, and nothing is added. It
    /// adds what [`reuse_chunk`](Self::reuse_chunk) called once per chunk of the page would,
    /// for one `Arc` clone, without a step per chunk but for reading their lengths.
    ///
    /// ```
    /// # use rcip_core::{CapabilityContract, CapabilityDefinition, CapabilityList,
    /// #     CapabilitySnapshot, Effect, Relevance};
    /// # let contract = std::sync::Arc::new(CapabilityContract::from(&CapabilityDefinition::new(
    /// #     "notes.count", Effect::Read, "Count notes", "Counts the notes.")));
    /// # let entry = CapabilitySnapshot::new(contract, false, None, Relevance::Current);
    /// let per_page = CapabilityList::PAGE_LEN * CapabilityList::CHUNK_LEN;
    /// let old: CapabilityList = vec![entry.clone(); per_page + 5].into();
    /// let mut builder = CapabilityList::builder(Some(&old));
    /// assert!(builder.reuse_page());
    /// assert!(builder.reuse_page(), "the short last page too");
    /// assert!(!builder.reuse_page(), "no third page");
    /// assert_eq!(builder.finish(), old);
    /// ```
    pub fn reuse_page(&mut self) -> bool {
        if !self.chunks.is_multiple_of(PAGE_LEN) || !self.page.is_empty() || self.reused > 0 {
            return false;
        }
        let Some(page) = self
            .previous
            .and_then(|p| p.pages.get(self.chunks / PAGE_LEN))
        else {
            return false;
        };
        for chunk in page.iter() {
            let length = chunk.len();
            if length == 0 || self.short_seen || length > CapabilityList::CHUNK_LEN {
                self.canonical = false;
            }
            self.short_seen |= length < CapabilityList::CHUNK_LEN;
            self.len += length;
        }
        self.chunks += page.len();
        if page.len() == PAGE_LEN {
            self.pages.push(page.clone());
        } else {
            // A short (last) page stays open, taken over, as `reuse_chunk` would leave it.
            self.reused = page.len();
        }
        true
    }

    /// Adds a new chunk at this position. A chunk of another length than
    /// [`CHUNK_LEN`](CapabilityList::CHUNK_LEN) (but for a shorter last one) makes the
    /// finished list re-cut into canonical chunks.
    pub fn push_chunk(&mut self, chunk: Arc<[CapabilitySnapshot]>) {
        self.materialize();
        let length = chunk.len();
        self.page.push(chunk);
        self.count(length);
    }

    /// The list.
    #[must_use]
    pub fn finish(mut self) -> CapabilityList {
        if !self.chunks.is_multiple_of(PAGE_LEN) {
            self.close_page();
        }
        if self.canonical {
            CapabilityList {
                pages: self.pages.into(),
                len: self.len,
            }
        } else {
            // Not indexable as it stands: walk the chunks as given.
            self.pages
                .iter()
                .flat_map(|page| page.iter())
                .flat_map(|chunk| chunk.iter())
                .cloned()
                .collect()
        }
    }

    fn count(&mut self, length: usize) {
        if length == 0 || self.short_seen || length > CapabilityList::CHUNK_LEN {
            self.canonical = false;
        }
        self.short_seen |= length < CapabilityList::CHUNK_LEN;
        self.len += length;
        self.chunks += 1;
        if self.chunks.is_multiple_of(PAGE_LEN) {
            self.close_page();
        }
    }

    /// The open page's first chunks, reused without a copy so far, copied in.
    fn materialize(&mut self) {
        if self.reused == 0 {
            return;
        }
        let start = self.chunks - self.reused;
        if let Some(previous) = self.previous {
            self.page
                .extend((start..self.chunks).filter_map(|at| previous.chunk(at).cloned()));
        }
        self.reused = 0;
    }

    fn close_page(&mut self) {
        // The open page took over all its chunks: it is the previous list's page if that
        // page holds exactly these chunks.
        if self.reused > 0 {
            let index = (self.chunks - 1) / PAGE_LEN;
            if let Some(page) = self
                .previous
                .and_then(|p| p.pages.get(index))
                .filter(|page| page.len() == self.reused)
            {
                self.pages.push(page.clone());
                self.reused = 0;
                return;
            }
            self.materialize();
        }
        self.pages.push(std::mem::take(&mut self.page).into());
    }
}
impl std::fmt::Debug for CapabilityList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // As a `Vec` would print: the chunking is an implementation detail.
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq for CapabilityList {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len
            && (Arc::ptr_eq(&self.pages, &other.pages) || self.iter().eq(other.iter()))
    }
}

impl PartialEq<[CapabilitySnapshot]> for CapabilityList {
    fn eq(&self, other: &[CapabilitySnapshot]) -> bool {
        self.len == other.len() && self.iter().eq(other.iter())
    }
}

impl PartialEq<Vec<CapabilitySnapshot>> for CapabilityList {
    fn eq(&self, other: &Vec<CapabilitySnapshot>) -> bool {
        *self == **other
    }
}

impl PartialEq<CapabilityList> for Vec<CapabilitySnapshot> {
    fn eq(&self, other: &CapabilityList) -> bool {
        other == self
    }
}

impl PartialEq<CapabilityList> for [CapabilitySnapshot] {
    fn eq(&self, other: &CapabilityList) -> bool {
        other == self
    }
}

impl std::ops::Index<usize> for CapabilityList {
    type Output = CapabilitySnapshot;

    /// # Panics
    ///
    /// When `index` is out of bounds, as a slice does.
    fn index(&self, index: usize) -> &CapabilitySnapshot {
        match self.get(index) {
            Some(entry) => entry,
            None => panic!(
                "capability index {index} out of bounds for a list of {}",
                self.len
            ),
        }
    }
}

impl FromIterator<CapabilitySnapshot> for CapabilityList {
    fn from_iter<I: IntoIterator<Item = CapabilitySnapshot>>(entries: I) -> Self {
        let mut entries = entries.into_iter();
        let mut builder = CapabilityList::builder(None);
        loop {
            let chunk: Chunk = entries.by_ref().take(Self::CHUNK_LEN).collect();
            if chunk.is_empty() {
                break;
            }
            let full = chunk.len() == Self::CHUNK_LEN;
            builder.push_chunk(chunk);
            if !full {
                break;
            }
        }
        builder.finish()
    }
}

impl From<Vec<CapabilitySnapshot>> for CapabilityList {
    fn from(entries: Vec<CapabilitySnapshot>) -> Self {
        entries.into_iter().collect()
    }
}

impl From<CapabilityList> for Vec<CapabilitySnapshot> {
    fn from(list: CapabilityList) -> Self {
        list.to_vec()
    }
}

impl<'a> IntoIterator for &'a CapabilityList {
    type Item = &'a CapabilitySnapshot;
    type IntoIter = CapabilityIter<'a>;

    fn into_iter(self) -> CapabilityIter<'a> {
        self.iter()
    }
}

impl IntoIterator for CapabilityList {
    type Item = CapabilitySnapshot;
    type IntoIter = std::vec::IntoIter<CapabilitySnapshot>;

    /// The entries by value: copies of the shared ones (each shares its contract).
    fn into_iter(self) -> Self::IntoIter {
        self.to_vec().into_iter()
    }
}

impl Serialize for CapabilityList {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for CapabilityList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<CapabilitySnapshot>::deserialize(deserializer).map(Self::from)
    }
}

/// The entries of a [`CapabilityList`] by reference, in order.
#[derive(Debug, Clone)]
pub struct CapabilityIter<'a> {
    entries: Entries<'a>,
    /// Entries left: `Flatten` cannot know it, the list does.
    remaining: usize,
}

/// Pages, then their chunks, then the chunks' entries: std's double-ended flattening over
/// named (function pointer) steps.
type Entries<'a> = std::iter::FlatMap<
    std::iter::FlatMap<
        std::slice::Iter<'a, Page>,
        std::slice::Iter<'a, Chunk>,
        fn(&'a Page) -> std::slice::Iter<'a, Chunk>,
    >,
    std::slice::Iter<'a, CapabilitySnapshot>,
    fn(&'a Chunk) -> std::slice::Iter<'a, CapabilitySnapshot>,
>;

impl<'a> Iterator for CapabilityIter<'a> {
    type Item = &'a CapabilitySnapshot;

    fn next(&mut self) -> Option<&'a CapabilitySnapshot> {
        let entry = self.entries.next()?;
        self.remaining -= 1;
        Some(entry)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<'a> DoubleEndedIterator for CapabilityIter<'a> {
    fn next_back(&mut self) -> Option<&'a CapabilitySnapshot> {
        let entry = self.entries.next_back()?;
        self.remaining -= 1;
        Some(entry)
    }
}

impl ExactSizeIterator for CapabilityIter<'_> {}

impl std::iter::FusedIterator for CapabilityIter<'_> {}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::{CapabilityContract, CapabilityDefinition, Effect, Relevance};

    fn entries(n: usize) -> Vec<CapabilitySnapshot> {
        (0..n)
            .map(|i| {
                let definition = CapabilityDefinition::new(
                    format!("notes.c{i}"),
                    Effect::Read,
                    "Title",
                    "Description.",
                );
                CapabilitySnapshot::new(
                    Arc::new(CapabilityContract::from(&definition)),
                    i % 2 == 0,
                    None,
                    Relevance::Current,
                )
            })
            .collect()
    }

    #[test]
    fn reads_like_the_vec_it_was_made_from() {
        for n in [0, 1, 15, 16, 17, 32, 33, 100] {
            let vec = entries(n);
            let list = CapabilityList::from(vec.clone());
            assert_eq!(list.len(), n);
            assert_eq!(list.is_empty(), n == 0);
            assert_eq!(list.to_vec(), vec);
            assert_eq!(list, vec);
            assert_eq!(vec, list);
            assert_eq!(vec[..], list);
            assert_eq!(list.iter().len(), n);
            assert!(list.iter().eq(vec.iter()));
            assert!(list.iter().rev().eq(vec.iter().rev()));
            assert_eq!(list.first(), vec.first());
            assert_eq!(list.last(), vec.last());
            for i in 0..=n {
                assert_eq!(list.get(i), vec.get(i), "n={n} i={i}");
            }
            assert_eq!(list.get(usize::MAX), None);
            assert_eq!(format!("{list:?}"), format!("{vec:?}"));
            assert_eq!(list.chunk_count(), n.div_ceil(CapabilityList::CHUNK_LEN));
            assert_eq!(list.chunks().count(), list.chunk_count());
            assert!(list.chunks().all(|c| !c.is_empty()));
            assert_eq!(list.chunk(list.chunk_count()), None);
        }
    }

    #[test]
    fn iterates_from_both_ends_at_once() {
        let vec = entries(40);
        let list = CapabilityList::from(vec.clone());
        let mut iter = list.iter();
        let mut expected = vec.iter();
        for step in 0..40 {
            let (got, want) = if step % 3 == 0 {
                (iter.next_back(), expected.next_back())
            } else {
                (iter.next(), expected.next())
            };
            assert_eq!(got, want);
            assert_eq!(iter.len(), expected.len());
        }
        assert_eq!(iter.next(), None);
        assert_eq!(iter.next_back(), None);
    }

    #[test]
    fn serializes_byte_for_byte_as_the_vec_and_reads_back() {
        for n in [0, 1, 16, 33] {
            let vec = entries(n);
            let list = CapabilityList::from(vec.clone());
            let text = serde_json::to_string(&list).unwrap();
            assert_eq!(text, serde_json::to_string(&vec).unwrap());
            let back: CapabilityList = serde_json::from_str(&text).unwrap();
            assert_eq!(back, list);
            assert_eq!(serde_json::to_string(&back).unwrap(), text);
        }
    }

    #[test]
    fn canonical_chunks_are_shared_and_others_recut() {
        let vec = entries(20);
        let list = CapabilityList::from(vec.clone());
        let again = CapabilityList::from_chunks(list.chunks().cloned());
        assert!(Arc::ptr_eq(again.chunk(0).unwrap(), list.chunk(0).unwrap()));
        assert!(Arc::ptr_eq(again.chunk(1).unwrap(), list.chunk(1).unwrap()));
        assert_eq!(again, list);

        let uneven = CapabilityList::from_chunks([
            Arc::from(&vec[..3]),
            Arc::from(&[][..]),
            Arc::from(&vec[3..]),
        ]);
        assert_eq!(uneven, vec);
        assert_eq!(uneven.get(17), Some(&vec[17]));
        assert_eq!(uneven.chunk_count(), 2);
        assert_eq!(uneven.chunks().count(), 2);
        assert_eq!(CapabilityList::from_chunks([Arc::from(&[][..])]).len(), 0);
        assert_eq!(
            CapabilityList::from_chunks([Arc::from(&[][..])])
                .chunks()
                .count(),
            0
        );
    }

    #[test]
    fn equality_is_by_content() {
        let list = CapabilityList::from(entries(20));
        let copy = CapabilityList::from(entries(20));
        assert!(!Arc::ptr_eq(list.chunk(0).unwrap(), copy.chunk(0).unwrap()));
        assert_eq!(list, copy);
        let mut other = entries(20);
        other[19].bound = !other[19].bound;
        assert_ne!(list, CapabilityList::from(other));
        assert_ne!(list, CapabilityList::from(entries(19)));
    }

    /// Two full pages and a short third one (its last chunk short too), as entries and as a
    /// list.
    fn three_pages() -> (Vec<CapabilitySnapshot>, CapabilityList) {
        let chunk = CapabilityList::CHUNK_LEN;
        let vec = entries(2 * chunk * PAGE_LEN + 3 * chunk + 5);
        let list = CapabilityList::from(vec.clone());
        (vec, list)
    }

    /// Whole pages taken over: the same `Arc`s, mixed with chunk-by-chunk work, and refused
    /// anywhere but at a page's start.
    #[test]
    fn the_builder_takes_over_whole_pages() {
        let chunk = CapabilityList::CHUNK_LEN;
        let (vec, old) = three_pages();
        let chunks = old.chunk_count();

        // Page 0 whole, page 1 chunk by chunk with one new chunk, the short page 2 whole.
        let changed_at = PAGE_LEN + 1;
        let mut changed = vec.clone();
        for entry in &mut changed[changed_at * chunk..(changed_at + 1) * chunk] {
            entry.bound = !entry.bound;
        }
        let mut builder = CapabilityList::builder(Some(&old));
        assert!(builder.reuse_page());
        assert!(builder.reuse_chunk());
        assert!(!builder.reuse_page(), "not at a page's start");
        builder.push_chunk(Arc::from(
            &changed[changed_at * chunk..(changed_at + 1) * chunk],
        ));
        for _ in changed_at + 1..2 * PAGE_LEN {
            assert!(builder.reuse_chunk());
        }
        assert!(builder.reuse_page());
        assert!(!builder.reuse_page(), "no fourth page");
        assert!(!builder.reuse_chunk());
        let new = builder.finish();
        assert_eq!(new, changed);
        assert_eq!(new.len(), vec.len());
        assert_eq!(new.chunk_count(), chunks);
        assert!(Arc::ptr_eq(&new.pages[0], &old.pages[0]));
        assert!(!Arc::ptr_eq(&new.pages[1], &old.pages[1]));
        assert!(Arc::ptr_eq(&new.pages[2], &old.pages[2]));
        assert_eq!(new[vec.len() - 1], vec[vec.len() - 1]);

        // No previous list: nothing to take over.
        let mut builder = CapabilityList::builder(None);
        assert!(!builder.reuse_page());
        assert!(builder.finish().is_empty());

        // A page taken over after a new page: still the same page.
        let mut builder = CapabilityList::builder(Some(&old));
        for at in 0..PAGE_LEN {
            builder.push_chunk(old.chunk(at).unwrap().iter().cloned().collect());
        }
        assert!(builder.reuse_page());
        assert!(builder.reuse_page());
        let again = builder.finish();
        assert_eq!(again, old);
        assert!(!Arc::ptr_eq(&again.pages[0], &old.pages[0]));
        assert!(Arc::ptr_eq(&again.pages[1], &old.pages[1]));
    }

    /// Pages of chunks all taken over are the previous list's pages; a page mixing new and
    /// reused chunks shares each reused chunk.
    #[test]
    fn the_builder_shares_pages_and_chunks() {
        let chunk = CapabilityList::CHUNK_LEN;
        let (vec, old) = three_pages();
        let chunks = old.chunk_count();
        assert_eq!(chunks, 2 * PAGE_LEN + 4);
        assert_eq!(old.pages.len(), 3);

        // Everything reused: the same pages.
        let mut builder = CapabilityList::builder(Some(&old));
        for _ in 0..chunks {
            assert!(builder.reuse_chunk());
        }
        assert!(!builder.reuse_chunk());
        let same = builder.finish();
        assert_eq!(same, old);
        for (a, b) in same.pages.iter().zip(old.pages.iter()) {
            assert!(Arc::ptr_eq(a, b));
        }

        // One new chunk in the middle page: pages 0 and 2 shared, page 1 new, its other
        // chunks shared.
        let changed_at = PAGE_LEN + 3;
        let mut changed = vec.clone();
        for entry in &mut changed[changed_at * chunk..(changed_at + 1) * chunk] {
            entry.bound = !entry.bound;
        }
        let mut builder = CapabilityList::builder(Some(&old));
        for at in 0..chunks {
            if at == changed_at {
                builder.push_chunk(Arc::from(&changed[at * chunk..(at + 1) * chunk]));
            } else {
                assert!(builder.reuse_chunk());
            }
        }
        let new = builder.finish();
        assert_eq!(new, changed);
        assert!(Arc::ptr_eq(&new.pages[0], &old.pages[0]));
        assert!(!Arc::ptr_eq(&new.pages[1], &old.pages[1]));
        assert!(Arc::ptr_eq(&new.pages[2], &old.pages[2]));
        for at in (0..chunks).filter(|&at| at != changed_at) {
            assert!(
                Arc::ptr_eq(new.chunk(at).unwrap(), old.chunk(at).unwrap()),
                "{at}"
            );
        }
        assert!(!Arc::ptr_eq(
            new.chunk(changed_at).unwrap(),
            old.chunk(changed_at).unwrap()
        ));

        // A shorter list over the same chunks: its partial last page is a new page.
        let mut builder = CapabilityList::builder(Some(&old));
        for _ in 0..PAGE_LEN + 2 {
            assert!(builder.reuse_chunk());
        }
        let shorter = builder.finish();
        assert_eq!(shorter, vec[..(PAGE_LEN + 2) * chunk]);
        assert_eq!(shorter.pages[1].len(), 2);

        // A short chunk that is not the last: re-cut, same content.
        let tail = old.chunk(chunks - 1).unwrap().clone();
        let mut builder = CapabilityList::builder(None);
        builder.push_chunk(tail.clone());
        builder.push_chunk(tail.clone());
        let recut = builder.finish();
        let expected: Vec<_> = tail.iter().chain(tail.iter()).cloned().collect();
        assert_eq!(recut, expected);
        assert_eq!(recut.chunk_count(), 1);
        assert_eq!(recut.chunk(0).unwrap().len(), 2 * tail.len());
        assert_eq!(recut.get(tail.len()), tail.first());
    }

    #[test]
    #[should_panic(expected = "out of bounds")]
    fn indexing_out_of_bounds_panics_like_a_slice() {
        let list = CapabilityList::from(entries(3));
        let _ = &list[3];
    }
}
