//! Helpers shared by rcip-relationship's integration tests (`mod common;`); not every file uses
//! every item.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use rcip_relationship::{PackageError, ProblemCode};

/// The problems of a package or rule error as `(pointer, code)` pairs, in order.
pub fn pairs(error: &PackageError) -> Vec<(String, ProblemCode)> {
    error
        .problems
        .iter()
        .map(|p| (p.pointer.clone(), p.code))
        .collect()
}

/// One expected problem.
pub fn at(pointer: &str, code: ProblemCode) -> (String, ProblemCode) {
    (pointer.to_owned(), code)
}
