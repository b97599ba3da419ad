//! The Relationship Protocol's `relationship/v1` programs: the package model, its validator
//! and rule evaluator.
//!
//! ## Packages
//!
//! A package declares record types (entities and relationships), their lifecycles and the
//! commands that change them. [`parse_package`] checks a package against every rule of the
//! form and reports all problems at once, each at its JSON Pointer with a stable
//! [`ProblemCode`]; a valid package becomes a [`Package`]. Rule expressions ([`Expr`]) are
//! evaluated against a record's data, a command's input and the lifecycle state.
//!
//! The normative JSON form and the evaluation semantics are in the project's
//! `docs/relationship-v1.md`.
//!
//! ```
//! use rcip_relationship::parse_package;
//! let package = parse_package(r#"{
//!   "protocol": "relationship/v1", "namespace": "polls", "version": 1,
//!   "types": {"poll": {
//!     "kind": "entity",
//!     "schema": {"type": "object", "properties": {"question": {"type": "string"}},
//!                "required": ["question"], "additionalProperties": false},
//!     "lifecycle": {"initial": "open", "states": ["open", "closed"]},
//!     "commands": {"close": {
//!       "input": {"type": "object", "properties": {}, "required": [], "additionalProperties": false},
//!       "from": ["open"], "to": "closed"}}
//!   }}
//! }"#).unwrap();
//! let poll = package.type_def("poll").unwrap();
//! assert_eq!(poll.command("close").unwrap().to.as_deref(), Some("closed"));
//! // The subset's default bound is written out.
//! assert!(poll.schema.json.contains(r#""maxLength":4000"#));
//! ```
//!
//! ## Where the rest lives
//!
//! This crate is the model only: synchronous, small, and what `rcip-build` and `rcip check`
//! need. The engine that executes programs over a record store is `rcip-records`; the
//! platform in front of it (directory, registry, authorization) is `rcip-platform`; the
//! SQLite and PostgreSQL stores are `rcip-database`.
#![deny(missing_docs)]

mod capabilities;
mod digest;
mod model;
mod naming;
mod operations;
mod problem;
mod rule;
mod schema;
mod validate;

pub use capabilities::{
    DATE_TIME_PATTERN, MAX_KEY_LENGTH, command_capabilities, duplicate_namespaces, package_scope_id,
};
pub use model::{
    Command, DataSchema, Emit, Kind, Lifecycle, List, Package, RELATIONSHIP_PROTOCOL, Role, Text,
    TypeDef, TypeRef, UnknownState, View, WORK_REQUESTED,
};
pub use naming::{command_capability_id, lower_camel, pascal_case};
pub use operations::{
    DEFAULT_PAGE_LIMIT, EVENT_SUMMARY_FIELDS, FEED_OPERATION, MAX_PAGE_LIMIT, TYPE_OPERATIONS,
    TypeOperation, operation_capabilities, operation_capability_id, package_capabilities,
    view_capability_id,
};
pub use problem::{PackageError, Problem, ProblemCode};
pub use rule::{Comparison, Constant, Expr, Path, Root, Scope};
pub use schema::{DEFAULT_MAX_ITEMS, DEFAULT_MAX_LENGTH, MAX_SCHEMA_DEPTH};
pub use validate::{
    MAX_EMITS, MAX_NAME_BYTES, MAX_PACKAGE_BYTES, MAX_PACKAGE_DEPTH, MAX_PACKAGE_PROBLEMS,
    MAX_PATH_COMPONENTS, MAX_ROLE_PARTICIPANTS, MAX_RULE_DEPTH, MAX_RULE_OPERANDS, MAX_STATES,
    RuleRoots, is_valid_name, parse_package, parse_rule, validate_package,
};

pub use rcip_core;

/// Includes the Rust that `rcip-build` generated from relationship program packages
/// (`$OUT_DIR/rcip_programs.rs`): one module per package namespace (its highest version, with
/// a `v1`, `v2`, ... submodule per version when the folder holds several).
///
/// ```ignore
/// // build.rs: rcip_build::Programs::new("programs").compile_or_fail();
/// mod programs {
///     rcip_relationship::include_programs!();
/// }
/// ```
#[macro_export]
macro_rules! include_programs {
    () => {
        ::core::include!(::core::concat!(
            ::core::env!("OUT_DIR"),
            "/rcip_programs.rs"
        ));
    };
}
