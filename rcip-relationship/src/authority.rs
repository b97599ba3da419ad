//! Who may do what: a host-supplied check consulted for every operation.

use super::record::{Actor, Record};

/// An operation of the engine, as the authority sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    /// `record.create` (the record is the one to be created).
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

/// Decides whether an actor may perform an operation on a record.
///
/// A record the actor may not [read](Operation::RecordRead) is reported as not found (404)
/// and shown as `{"restricted": true}` where it participates; a readable record the actor
/// may not change is refused (403).
pub trait Authority: Send + Sync + std::fmt::Debug {
    /// Whether `actor` may perform `operation` on `record`.
    fn allows(&self, actor: &Actor, operation: Operation, record: &Record) -> bool;
}

/// Allows everything: the default.
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

impl Authority for AllowAll {
    fn allows(&self, _: &Actor, _: Operation, _: &Record) -> bool {
        true
    }
}
