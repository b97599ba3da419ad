//! Doctests only: the code of the workspace's README, which no published crate can include
//! (cargo packages only a crate's own folder) and this crate is never published, and of the
//! published crates' READMEs, all in one place. `rcip-runtime`'s README is instead that
//! crate's own doctest, so that its package checks it too.
#![deny(missing_docs)]

/// The workspace README's code.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct WorkspaceReadme;

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

/// `rcip-build`'s README.
#[doc = include_str!("../rcip-build/README.md")]
#[cfg(doctest)]
pub struct BuildReadme;
