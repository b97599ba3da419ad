//! The Relationship Protocol platform in front of the record engine (`docs/platform-design.md`):
//! the directory ([`Workspace`], [`Member`], [`Collection`], program drafts and versions,
//! kept by a [`DirectoryStore`]; [`MemoryDirectory`] in memory, `rcip-database`'s stores
//! durably), the operation registry ([`operations`], [`parse_call`]: every operation with its
//! strict input schema, its scope and whether agents may call it, and the RCIP capabilities
//! generated from it), the one authorization decision ([`authorize_call`]: `CONSOLE_ONLY`,
//! `WORKSPACE_NOT_FOUND`, `INSUFFICIENT_SCOPE`, `COLLECTION_NOT_FOUND`, `FORBIDDEN`), programs
//! drafted and activated at run time ([`check_package`], [`activation`],
//! [`example_packages`]), and the one error every platform operation answers with
//! ([`PlatformError`]).
//!
//! [`Platform`] is the one entry of every operation ([`Platform::call`]): it parses the
//! arguments, reads the caller's access once, decides, and runs the operation on the
//! directory or on the engine under the record-level [`WorkspaceAuthority`];
//! [`Platform::bind`] puts the registry on an RCIP host.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use std::sync::Arc;
//! use rcip_platform::{MemoryDirectory, Platform};
//! use rcip_records::{Actor, Caller, Engine};
//! use serde_json::json;
//!
//! let platform = Platform::open(Engine::in_memory(), Arc::new(MemoryDirectory::new()))
//!     .await
//!     .unwrap();
//! let ada = Caller::human(Actor::new("ada"));
//! let created = platform
//!     .call(&ada, "workspace.create", json!({
//!         "workspace_id": "lunch", "name": "Lunch", "idempotency_key": "k1"}))
//!     .await
//!     .unwrap();
//! assert_eq!(created["name"], "Lunch");
//! // A stranger learns nothing about it.
//! let eve = Caller::human(Actor::new("eve"));
//! let refused = platform
//!     .call(&eve, "workspace.get", json!({"workspace_id": "lunch"}))
//!     .await
//!     .unwrap_err();
//! assert_eq!(refused.code, "WORKSPACE_NOT_FOUND");
//! # });
//! ```
#![deny(missing_docs)]

mod args;
mod authority;
mod authorize;
mod bind;
mod directory;
mod directory_programs;
mod error;
mod memory_directory;
mod platform;
mod programs;
mod registry;
pub mod tokens;

pub use args::{
    ActivateProgram, AddMember, CreateCollection, CreateWorkspace, DraftProgram, GetProgram,
    GetWorkspace, GrantCollection, ListCapabilities, ListCollections, ListExamples, ListMembers,
    ListProgramVersions, ListWorkspaces, RemoveMember, RevokeCollection,
};
pub use authority::WorkspaceAuthority;
pub use authorize::{
    Denial, MemberChange, authorize_call, authorize_collection, authorize_member_change,
    authorize_operation, collection_access, effective_scopes, is_membership_of, membership,
    readable_collections,
};
pub use directory::{
    Access, Applied, Collection, DirectoryChange, DirectoryError, DirectoryFuture, DirectoryStore,
    Grant, Member, MemberRole, ProgramDraft, ProgramVersion, Visibility, Workspace,
    WorkspaceAccess,
};
pub use directory_programs::DirectoryPrograms;
pub use error::{MAX_ECHOED_NAME, PlatformError};
pub use memory_directory::MemoryDirectory;
pub use platform::{INSTALLED_BY, Platform};
pub use programs::{
    CheckedPackage, EXAMPLE_PACKAGES, ExamplePackage, activation, check_package, example_packages,
    package_digest,
};
pub use registry::{
    Agents, OperationSpec, PlatformCall, capability_definitions, operation, operations, parse_call,
    platform_definition, rcip_scope_id, read_checked_call, tool_name,
};

pub use rcip_records;
pub use rcip_records::Activation;

/// What rcip's database stores share with the platform's own; not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use crate::directory::refusal;
    pub use crate::memory_directory::by_version;
    pub use crate::programs::check_activation;
}
