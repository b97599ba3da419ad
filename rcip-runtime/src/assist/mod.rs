//! Assist: bounded, provider-neutral agent orchestration over the client (the reference's
//! section 6).
//!
//! This first part holds the protocol and its rules as plain functions: the options and
//! their bounds, the `decide` request and response shapes (field for field the TypeScript
//! SDK's), whole-batch validation, and the fallback summaries. The turn engine (one decide
//! call, one validated batch run in order until the first non-success, confirmations through
//! the host, cancellable delays, one summarize call), the input pipeline and the example come
//! next; `docs/architecture.md` says where they go.

mod options;
mod protocol;

pub use options::{
    AssistMode, DEFAULT_MAX_BATCH_SIZE, DelayAfter, DelayPresets, MAX_BATCH_SIZE, MAX_DELAY_MS,
    clamp_batch_size,
};
pub use protocol::{
    AssistAction, AssistMessage, AssistRequest, AssistResponse, AssistStep, BatchError, Decision,
    Phase, Role, fallback_summary, validate_decision,
};
