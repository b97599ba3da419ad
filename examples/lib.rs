//! The examples' shared code, never published: [`agent_corpus`], the corpus of Rust input
//! types that agent exports are tested on; [`mcp_conformance`], the application the MCP
//! conformance suite is run against; and, as doctests, the code of the workspace's
//! README, which no published crate can include (cargo packages only a crate's own folder),
//! and of the published crates' READMEs, all in one place. `rcip-runtime`'s README is instead
//! that crate's own doctest, so that its package checks it too.
#![deny(missing_docs)]

#[path = "src/agent_corpus.rs"]
pub mod agent_corpus;

#[path = "src/mcp_conformance.rs"]
pub mod mcp_conformance;

#[path = "src/mcp_conformance_resources.rs"]
pub mod mcp_conformance_resources;

#[path = "src/mcp_conformance_schemas.rs"]
pub mod mcp_conformance_schemas;

#[path = "src/mcp_conformance_tasks.rs"]
pub mod mcp_conformance_tasks;

/// The workspace README's code.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct WorkspaceReadme;

/// The "Add rcip to your app" page.
#[doc = include_str!("../docs/add-rcip.md")]
#[cfg(doctest)]
pub struct AddRcipPage;

/// `rcip-core`'s README.
#[doc = include_str!("../rcip-core/README.md")]
#[cfg(doctest)]
pub struct CoreReadme;

/// `rcip-rcp`'s README.
#[doc = include_str!("../rcip-rcp/README.md")]
#[cfg(doctest)]
pub struct RcpReadme;

/// `rcip-mcpl`'s README.
#[doc = include_str!("../rcip-mcpl/README.md")]
#[cfg(doctest)]
pub struct McplReadme;

/// `rcip-relationship`'s README.
#[doc = include_str!("../rcip-relationship/README.md")]
#[cfg(doctest)]
pub struct RelationshipReadme;

/// `rcip-records`' README.
#[doc = include_str!("../rcip-records/README.md")]
#[cfg(doctest)]
pub struct RecordsReadme;

/// `rcip-platform`'s README.
#[doc = include_str!("../rcip-platform/README.md")]
#[cfg(doctest)]
pub struct PlatformReadme;

/// `rcip-mcp`'s README.
#[doc = include_str!("../rcip-mcp/README.md")]
#[cfg(doctest)]
pub struct McpReadme;

/// `rcip-build`'s README.
#[doc = include_str!("../rcip-build/README.md")]
#[cfg(doctest)]
pub struct BuildReadme;
