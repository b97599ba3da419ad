//! Manifest change tracking (RFC-003 §12, SPEC §17): which domains a change touches, and the
//! `ManifestTracker` a server uses so it never hand-authors an announcement.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::digest::{DigestError, normalize_manifest};
use rcip_core::jcs::digest_of_canonical;
use rcip_core::jcs::{canonical_json, canonical_object};

/// The canonical JSON of a projection. Projections are taken of normalized manifests only,
/// which [`normalize_manifest`] has measured within the writer's depth limit, and never
/// nest deeper than their manifest: the writer cannot fail here, and an empty string
/// (never canonical JSON) would only compare as a change.
fn written(canonical: Result<String, rcip_core::jcs::JcsError>) -> String {
    canonical.unwrap_or_default()
}

/// A part of a manifest a change can touch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ChangeDomain {
    /// Every root member except `version`, `revision` and `featureSets` (vendor extensions
    /// included).
    Capabilities,
    /// `featureSets`, without the tag ontologies inside it.
    FeatureSets,
    /// The `tagOntology` of any feature set.
    TagOntology,
}

impl ChangeDomain {
    /// All three, in order.
    pub const ALL: [Self; 3] = [Self::Capabilities, Self::FeatureSets, Self::TagOntology];
}

/// The domains in which `next` differs from `previous` (all three when there is no
/// previous). Subtrees are compared after normalization (reordering `uses` is no change);
/// a member appearing or disappearing is a change, even when empty or `null`. `version`
/// belongs to no domain.
///
/// ```
/// use rcip_mcpl::{ChangeDomain, changed_domains};
/// use serde_json::json;
/// let before = json!({"version": "0.5"});
/// let after = json!({"version": "0.5", "featureSets": {}});
/// let domains = changed_domains(Some(&before), &after).unwrap();
/// assert_eq!(domains.into_iter().collect::<Vec<_>>(),
///            [ChangeDomain::FeatureSets, ChangeDomain::TagOntology]);
/// ```
///
/// # Errors
///
/// [`DigestError`] for a manifest that has no digest.
pub fn changed_domains(
    previous: Option<&Value>,
    next: &Value,
) -> Result<BTreeSet<ChangeDomain>, DigestError> {
    let next = normalize_manifest(next)?;
    Ok(match previous {
        None => ChangeDomain::ALL.into_iter().collect(),
        Some(previous) => domains_between(&normalize_manifest(previous)?, &next),
    })
}

/// A manifest normalized, with its revision (computed from that same normal form).
fn normalized(manifest: &Value) -> Result<(Map<String, Value>, String), DigestError> {
    let normal = normalize_manifest(manifest)?;
    let revision = digest_of_canonical(&canonical_object(&normal)?);
    Ok((normal, revision))
}

/// The three projections of a normalized manifest, as canonical JSON (`None`: absent).
fn projections(manifest: &Map<String, Value>) -> [Option<String>; 3] {
    let capabilities: Map<String, Value> = manifest
        .iter()
        .filter(|(name, _)| !matches!(name.as_str(), "version" | "revision" | "featureSets"))
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect();
    let (feature_sets, ontologies) = match manifest.get("featureSets") {
        None => (None, None),
        Some(Value::Object(sets)) => {
            let mut without = Map::new();
            let mut ontologies = Map::new();
            for (name, set) in sets {
                let mut set = set.clone();
                if let Value::Object(members) = &mut set
                    && let Some(ontology) = members.remove("tagOntology")
                {
                    ontologies.insert(name.clone(), ontology);
                }
                without.insert(name.clone(), set);
            }
            (
                Some(written(canonical_object(&without))),
                Some(written(canonical_object(&ontologies))),
            )
        }
        // A non-object `featureSets` is one opaque value carrying no ontology.
        Some(other) => (
            Some(written(canonical_json(other))),
            Some("null".to_owned()),
        ),
    };
    [
        Some(written(canonical_object(&capabilities))),
        feature_sets,
        ontologies,
    ]
}

fn domains_between(
    previous: &Map<String, Value>,
    next: &Map<String, Value>,
) -> BTreeSet<ChangeDomain> {
    differing(&projections(previous), &projections(next))
}

/// The domains whose projections differ.
fn differing(before: &[Option<String>; 3], after: &[Option<String>; 3]) -> BTreeSet<ChangeDomain> {
    ChangeDomain::ALL
        .into_iter()
        .zip(before.iter().zip(after.iter()))
        .filter(|(_, (a, b))| a != b)
        .map(|(domain, _)| domain)
        .collect()
}

/// `mcpl/manifestChanged`'s params: the new revision and the domains, never the content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManifestChanged {
    /// The new revision.
    pub revision: String,
    /// What changed (at least one).
    pub domains: Vec<ChangeDomain>,
}

/// What [`ManifestTracker::set_manifest`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ManifestChange {
    /// Whether the revision changed (an identical manifest changes nothing).
    pub changed: bool,
    /// The revision now installed.
    pub revision: String,
    /// The revision before.
    pub previous_revision: String,
    /// The domains changed against the previous manifest.
    pub domains: Vec<ChangeDomain>,
    /// How many connections were sent an announcement.
    pub announced_to: usize,
}

/// A connection's id, for [`ManifestTracker::detach`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConnectionId(u64);

type Notifier = Arc<dyn Fn(&ManifestChanged) + Send + Sync>;

struct Connection {
    id: ConnectionId,
    notifier: Notifier,
    /// The revision this connection was last told.
    announced: String,
    /// The manifest it was last told; `None` when unknown (then all domains are named).
    baseline: Option<Arc<Map<String, Value>>>,
}

struct State {
    manifest: Arc<Map<String, Value>>,
    revision: String,
    connections: Vec<Connection>,
    next_id: u64,
}

/// Holds a server's manifest: canonicalizes and digests each new one, installs manifest and
/// revision together, announces `mcpl/manifestChanged` to each attached connection against
/// what that connection was last told, and answers `mcpl/manifest` from the same snapshot.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use rcip_mcpl::{ChangeDomain, ManifestTracker};
/// use serde_json::json;
///
/// let tracker = ManifestTracker::new(&json!({"version": "0.5", "pushEvents": true})).unwrap();
/// let sent = Arc::new(Mutex::new(Vec::new()));
/// let log = sent.clone();
/// tracker.attach(None, move |changed| log.lock().unwrap().push(changed.clone()));
/// let change = tracker.set_manifest(&json!({"version": "0.5", "pushEvents": false})).unwrap();
/// assert_eq!(change.domains, [ChangeDomain::Capabilities]);
/// assert_eq!(sent.lock().unwrap()[0].revision, tracker.revision());
/// assert_eq!(tracker.handle_manifest_request()["revision"], json!(tracker.revision()));
/// ```
pub struct ManifestTracker {
    state: Mutex<State>,
}

impl std::fmt::Debug for ManifestTracker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("ManifestTracker")
            .field("revision", &state.revision)
            .field("connections", &state.connections.len())
            .finish_non_exhaustive()
    }
}

/// A batch of edits to a draft manifest: [`ManifestTracker::transaction`] installs it once,
/// with one announcement.
#[derive(Debug)]
pub struct Transaction {
    draft: Value,
}

impl Transaction {
    /// The draft (a copy of the installed manifest at the start), to edit in place.
    pub fn draft_mut(&mut self) -> &mut Value {
        &mut self.draft
    }

    /// Replaces the draft.
    pub fn set_manifest(&mut self, manifest: Value) {
        self.draft = manifest;
    }

    /// A nested transaction: it joins this one (its edits land in the same draft; an error
    /// it returns is the caller's to propagate).
    ///
    /// # Errors
    ///
    /// Whatever `edit` returns.
    pub fn transaction<E>(
        &mut self,
        edit: impl FnOnce(&mut Transaction) -> Result<(), E>,
    ) -> Result<(), E> {
        // A failing nested edit leaves the draft as it was, even if the caller goes on.
        let before = self.draft.clone();
        edit(self).inspect_err(|_| self.draft = before)
    }
}

/// Why a transaction installed nothing.
#[derive(Debug, thiserror::Error)]
pub enum TransactionError<E> {
    /// The edit failed; the installed manifest is untouched.
    #[error("the edit failed")]
    Edit(E),
    /// The edited manifest has no digest; the installed manifest is untouched.
    #[error(transparent)]
    Digest(DigestError),
    /// Another install happened while the edit ran: installing a draft of the older manifest
    /// would undo it. Nothing was installed; run the transaction again.
    #[error("the manifest changed during the transaction")]
    Conflict,
}

impl ManifestTracker {
    /// A tracker holding `initial` (normalized: root `revision` removed, sets sorted).
    ///
    /// # Errors
    ///
    /// [`DigestError`] when `initial` has no digest.
    pub fn new(initial: &Value) -> Result<Self, DigestError> {
        let (manifest, revision) = normalized(initial)?;
        Ok(Self {
            state: Mutex::new(State {
                manifest: Arc::new(manifest),
                revision,
                connections: Vec::new(),
                next_id: 0,
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The current revision.
    #[must_use]
    pub fn revision(&self) -> String {
        self.lock().revision.clone()
    }

    /// The current manifest with its `revision`: complete and flat, never a delta.
    #[must_use]
    pub fn snapshot(&self) -> Value {
        let state = self.lock();
        let mut manifest = (*state.manifest).clone();
        manifest.insert("revision".to_owned(), Value::String(state.revision.clone()));
        Value::Object(manifest)
    }

    /// The answer to `mcpl/manifest`: [`snapshot`](Self::snapshot).
    #[must_use]
    pub fn handle_manifest_request(&self) -> Value {
        self.snapshot()
    }

    /// Attaches a connection. `announced_revision` is the revision it was told at
    /// `initialize` (default: the current one, so no redundant announcement follows). A
    /// revision other than the current one is an unknown baseline: the next announcement to
    /// this connection names every domain.
    pub fn attach(
        &self,
        announced_revision: Option<&str>,
        notifier: impl Fn(&ManifestChanged) + Send + Sync + 'static,
    ) -> ConnectionId {
        let mut state = self.lock();
        let id = ConnectionId(state.next_id);
        state.next_id += 1;
        let announced = announced_revision.map_or_else(|| state.revision.clone(), str::to_owned);
        let baseline = (announced == state.revision).then(|| Arc::clone(&state.manifest));
        state.connections.push(Connection {
            id,
            notifier: Arc::new(notifier),
            announced,
            baseline,
        });
        id
    }

    /// Stops announcements to a connection.
    pub fn detach(&self, id: ConnectionId) {
        self.lock().connections.retain(|c| c.id != id);
    }

    /// Installs `next` (manifest and revision together, before anything is announced) and
    /// announces the change to each connection.
    ///
    /// # Errors
    ///
    /// [`DigestError`]: nothing is installed.
    pub fn set_manifest(&self, next: &Value) -> Result<ManifestChange, DigestError> {
        let (next, revision) = normalized(next)?;
        let change = self.install(next, revision, None);
        Ok(change.unwrap_or_default())
    }

    /// Runs `edit` on a draft (a copy of the installed manifest) and installs the result once,
    /// with one announcement. Nested transactions ([`Transaction::transaction`]) join this
    /// one. If `edit` fails, or the result has no digest, the installed manifest is untouched.
    ///
    /// # Errors
    ///
    /// [`TransactionError`].
    pub fn transaction<E>(
        &self,
        edit: impl FnOnce(&mut Transaction) -> Result<(), E>,
    ) -> Result<ManifestChange, TransactionError<E>> {
        let (base, draft) = {
            let state = self.lock();
            (
                state.revision.clone(),
                Value::Object((*state.manifest).clone()),
            )
        };
        let mut transaction = Transaction { draft };
        edit(&mut transaction).map_err(TransactionError::Edit)?;
        let (next, revision) = normalized(&transaction.draft).map_err(TransactionError::Digest)?;
        // Installing a draft of an older manifest would silently undo a concurrent change.
        self.install(next, revision, Some(&base))
            .ok_or(TransactionError::Conflict)
    }

    /// Installs `next`, unless `base` is given and is no longer the installed revision
    /// (`None` then; without a base it always installs).
    fn install(
        &self,
        next: Map<String, Value>,
        revision: String,
        base: Option<&str>,
    ) -> Option<ManifestChange> {
        let mut state = self.lock();
        if base.is_some_and(|base| base != state.revision) {
            return None;
        }
        let previous_revision = state.revision.clone();
        if revision == previous_revision {
            return Some(ManifestChange {
                changed: false,
                revision,
                previous_revision,
                domains: Vec::new(),
                announced_to: 0,
            });
        }
        let previous = Arc::clone(&state.manifest);
        let next = Arc::new(next);
        state.manifest = Arc::clone(&next);
        state.revision = revision.clone();
        // The new manifest's projections, computed once for every comparison.
        let after = projections(&next);
        let domains: Vec<ChangeDomain> = differing(&projections(&previous), &after)
            .into_iter()
            .collect();
        // Each connection hears what changed since what it was last told (most were told
        // the previous manifest: its answer is `domains`).
        let mut sends: Vec<(Notifier, ManifestChanged)> = Vec::new();
        for connection in &mut state.connections {
            if connection.announced == revision {
                continue;
            }
            let domains: Vec<ChangeDomain> = match &connection.baseline {
                Some(baseline) if Arc::ptr_eq(baseline, &previous) => domains.clone(),
                Some(baseline) => differing(&projections(baseline), &after)
                    .into_iter()
                    .collect(),
                None => ChangeDomain::ALL.to_vec(),
            };
            connection.announced = revision.clone();
            connection.baseline = Some(Arc::clone(&next));
            // A version-only change names no domain: nothing is sent (`domains` has
            // `minItems: 1`).
            if !domains.is_empty() {
                sends.push((
                    Arc::clone(&connection.notifier),
                    ManifestChanged {
                        revision: revision.clone(),
                        domains,
                    },
                ));
            }
        }
        drop(state);
        // Notifiers run without the lock: they may read the tracker.
        for (notifier, message) in &sends {
            notifier(message);
        }
        Some(ManifestChange {
            changed: true,
            revision,
            previous_revision,
            domains,
            announced_to: sends.len(),
        })
    }
}
