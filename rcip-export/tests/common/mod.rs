//! Shared by this crate's tests (`mod common;`).

pub mod round_trip;
