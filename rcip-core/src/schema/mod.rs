//! Strict JSON Schema rules.
//!
//! RCIP 1.0 schemas are JSON Schema draft 2020-12. The TypeScript reference
//! implementation compiles them with Ajv 8 (`ajv/dist/2020`) using
//! `{ strict: true, allErrors: true }` and no formats installed, so a schema
//! that Ajv's strict mode refuses is refused by the reference implementation.
//! [`check_strict`] reproduces that refusal without a JSON Schema engine: it is
//! a pure, synchronous walk over a [`serde_json::Value`] that reports the first
//! [`SchemaViolation`] it finds. One difference: the [`SUPPORTED_FORMATS`]
//! (`uuid`, `date-time`, `date`, `email`, `uri`) are accepted, and the runtime
//! validates them; every other `format` is refused, as the reference refuses all.
//!
//! Validity against the draft 2020-12 meta-schema is checked elsewhere; this
//! module only adds the strict-mode rules on top of it, but it never panics on
//! a schema that is not meta-schema valid: what it cannot make sense of is
//! reported as [`StrictRule::Malformed`].

mod generate;
mod keywords;
mod shared;
mod strict;
mod violation;

pub use generate::{ANNOTATIONS, SchemaGenerationError, strict_schema_for};
pub use shared::Schema;
pub use strict::describe as json_type;
pub use strict::{MAX_SCHEMA_DEPTH, SUPPORTED_FORMATS, check_strict};
pub use violation::{SchemaViolation, StrictRule};
