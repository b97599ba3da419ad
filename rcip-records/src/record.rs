//! Records: the stored envelope, its read projection, actors.

use std::collections::BTreeMap;

use rcip_relationship::Kind;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use uuid::Uuid;

/// A stored entity or relationship.
///
/// Participants are stored as ids; readers see [`RecordView`], where each participant is a
/// [`ParticipantRef`] (`{"id": ...}`, or `{"restricted": true}` when the reader may not see
/// it).
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// The record id.
    pub id: Uuid,
    /// The workspace it belongs to.
    pub workspace_id: String,
    /// Its collection.
    pub collection_id: String,
    /// The namespace of its program.
    pub namespace: String,
    /// The version of its program.
    pub version: u64,
    /// Its type.
    pub type_name: String,
    /// Entity or relationship.
    pub kind: Kind,
    /// Starts at 1; every change adds 1.
    pub revision: u64,
    /// The data, valid under the type's schema.
    pub data: Map<String, Value>,
    /// Role -> participant ids (relationships only).
    pub participants: BTreeMap<String, Vec<Uuid>>,
    /// The lifecycle state (types with a lifecycle).
    pub state: Option<String>,
    /// Archived records stay readable but take no changes.
    pub archived: bool,
    /// Creation time, milliseconds since the Unix epoch.
    pub created_at: u64,
    /// Last change, milliseconds since the Unix epoch.
    pub updated_at: u64,
}

/// A participant as a reader sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ParticipantRef {
    /// A participant the reader may see.
    Visible {
        /// Its id.
        id: Uuid,
    },
    /// A participant the reader may not see.
    Restricted {
        /// Always `true`.
        restricted: bool,
    },
}

/// A record as a reader sees it: the wire form of `record.get` and friends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordView {
    /// The record id.
    pub id: Uuid,
    /// The workspace.
    pub workspace_id: String,
    /// The collection.
    pub collection_id: String,
    /// The program namespace.
    pub namespace: String,
    /// The program version.
    pub version: u64,
    /// The type.
    #[serde(rename = "type")]
    pub type_name: String,
    /// `entity` or `relationship`.
    pub kind: String,
    /// The revision.
    pub revision: u64,
    /// The data (a view's projection shows only its fields).
    pub data: Map<String, Value>,
    /// Role -> participants (empty for entities).
    pub participants: BTreeMap<String, Vec<ParticipantRef>>,
    /// The lifecycle state.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub state: Option<String>,
    /// Whether the record is archived.
    pub archived: bool,
    /// RFC 3339 creation time.
    pub created_at: String,
    /// RFC 3339 time of the last change.
    pub updated_at: String,
}

/// Who performs an operation: recorded on every change event and handed to the authority.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Actor {
    /// A stable id of the person or agent.
    pub id: String,
    /// The client it acts through, if any (e.g. an agent's tool).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub client: Option<String>,
}

impl Actor {
    /// An actor with no client.
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            client: None,
        }
    }

    /// The same actor acting through `client`.
    #[must_use]
    pub fn via(mut self, client: impl Into<String>) -> Self {
        self.client = Some(client.into());
        self
    }
}

/// RFC 3339 with milliseconds, UTC.
pub fn timestamp(ms: u64) -> String {
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms);
    humantime::format_rfc3339_millis(time).to_string()
}
