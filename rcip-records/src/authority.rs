//! Who may do what: a host-supplied check consulted for every operation.

use super::principal::Caller;
use super::record::Record;

/// An operation of the engine, as the authority sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    /// `record.create` (the target is [`Target::New`]).
    RecordCreate,
    /// Reading a record: `record.get`, search results, participants, history, the feed.
    RecordRead,
    /// `record.update`.
    RecordUpdate,
    /// `record.archive`.
    RecordArchive,
    /// `command.list`.
    CommandList,
    /// `command.execute`.
    CommandExecute,
}

impl Operation {
    /// The operation's name, e.g. `record.update`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::RecordCreate => "record.create",
            Self::RecordRead => "record.get",
            Self::RecordUpdate => "record.update",
            Self::RecordArchive => "record.archive",
            Self::CommandList => "command.list",
            Self::CommandExecute => "command.execute",
        }
    }
}

/// The record about to be created, as the authority sees it before anything is stored: where
/// it goes and what it is (its data is not judged here; the type's schema does that).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct NewRecord {
    /// The workspace.
    pub workspace_id: String,
    /// The collection.
    pub collection_id: String,
    /// The program namespace.
    pub namespace: String,
    /// The program version the record will have.
    pub version: u64,
    /// The type.
    pub type_name: String,
}

impl NewRecord {
    /// A record to be created in `workspace_id`/`collection_id`, of `namespace` `version`
    /// type `type_name` (what authorities are tested with).
    #[must_use]
    pub fn new(
        workspace_id: impl Into<String>,
        collection_id: impl Into<String>,
        namespace: impl Into<String>,
        version: u64,
        type_name: impl Into<String>,
    ) -> Self {
        Self {
            workspace_id: workspace_id.into(),
            collection_id: collection_id.into(),
            namespace: namespace.into(),
            version,
            type_name: type_name.into(),
        }
    }
}

/// What an operation acts on: a stored record, or the record a `record.create` would make.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target<'a> {
    /// An existing record.
    Record(&'a Record),
    /// The record about to be created.
    New(&'a NewRecord),
}

impl Target<'_> {
    /// The workspace.
    #[must_use]
    pub fn workspace_id(&self) -> &str {
        match self {
            Target::Record(r) => &r.workspace_id,
            Target::New(n) => &n.workspace_id,
        }
    }

    /// The collection: what access is usually granted on.
    #[must_use]
    pub fn collection_id(&self) -> &str {
        match self {
            Target::Record(r) => &r.collection_id,
            Target::New(n) => &n.collection_id,
        }
    }

    /// The program namespace.
    #[must_use]
    pub fn namespace(&self) -> &str {
        match self {
            Target::Record(r) => &r.namespace,
            Target::New(n) => &n.namespace,
        }
    }

    /// The type.
    #[must_use]
    pub fn type_name(&self) -> &str {
        match self {
            Target::Record(r) => &r.type_name,
            Target::New(n) => &n.type_name,
        }
    }

    /// The stored record, unless it is about to be created.
    #[must_use]
    pub fn record(&self) -> Option<&Record> {
        match self {
            Target::Record(r) => Some(r),
            Target::New(_) => None,
        }
    }
}

/// Decides whether a caller may perform an operation on a record.
///
/// A record the caller may not [read](Operation::RecordRead) is reported as not found (404)
/// and shown as `{"restricted": true}` where it participates; a readable record the caller
/// may not change is refused (403). A `record.create` is asked with [`Target::New`]: the
/// record it would make, never a made-up stored one.
///
/// ```
/// use rcip_records::{Actor, Authority, Caller, NewRecord, Operation, Target};
/// /// Anyone reads; only members of the "editors" client write, and only in "drafts".
/// #[derive(Debug)]
/// struct Drafts;
/// impl Authority for Drafts {
///     fn allows(&self, caller: &Caller, operation: Operation, target: Target<'_>) -> bool {
///         operation == Operation::RecordRead
///             || (caller.actor.client.as_deref() == Some("editors")
///                 && target.collection_id() == "drafts")
///     }
/// }
/// let new = NewRecord::new("w", "drafts", "notes", 1, "note");
/// let editor = Caller::human(Actor::new("ada").via("editors"));
/// assert!(Drafts.allows(&editor, Operation::RecordCreate, Target::New(&new)));
/// assert!(!Drafts.allows(&Caller::human(Actor::new("bob")), Operation::RecordCreate, Target::New(&new)));
/// ```
pub trait Authority: Send + Sync + std::fmt::Debug {
    /// Whether `caller` may perform `operation` on `target`.
    fn allows(&self, caller: &Caller, operation: Operation, target: Target<'_>) -> bool;
}

/// A shared authority (the host keeps a handle to change what it decides).
impl<A: Authority + ?Sized> Authority for std::sync::Arc<A> {
    fn allows(&self, caller: &Caller, operation: Operation, target: Target<'_>) -> bool {
        (**self).allows(caller, operation, target)
    }
}

/// Allows everything: the default.
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

impl Authority for AllowAll {
    fn allows(&self, _: &Caller, _: Operation, _: Target<'_>) -> bool {
        true
    }
}
