//! Examples crate.
