//! Doctests only: the code of the workspace's README and of the published crates' READMEs
//! (except `rcip-runtime`'s, which that crate tests itself), compiled and run here because
//! this crate is never published. A published crate cannot include a file outside its own
//! folder, and these READMEs use several crates at once.

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
