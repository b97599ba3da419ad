//! Assist: bounded, provider-neutral agent orchestration over the client (the reference's
//! section 6), headless, for any surface to drive.
//!
//! The host builds an [`Assist`] from a client, a [`Decide`] implementation (a model behind
//! any transport, or a script) and a [`ConfirmationResolver`] holding the [`Host`](rcip_runtime::Host)
//! and a way to ask the user. Each [`send`](Assist::send) runs the text through the input
//! processors, then one bounded turn: one `decide` call, a message or one batch of actions
//! validated whole, the batch run in order until the first non-success, one summarize call
//! that can only return text. In read-only mode (the default) `decide` sees read
//! capabilities only and anything else it proposes is refused without reaching the runtime.
//!
//! The request and response JSON is the TypeScript SDK's, so a `decide` service written for
//! it works unchanged. `docs/assist.md` shows how to plug in a real model.
#![deny(missing_docs)]

mod builder;
mod callbacks;
mod engine;
mod input;
mod options;
mod protocol;
mod report;
mod status;
mod turn;
mod updates;
mod voice;

pub use builder::{AssistBuilder, DEFAULT_HISTORY_LIMIT};
pub use callbacks::{AskUser, BoxError, ConfirmationResolver, Decide, PendingConfirmation};
pub use engine::{Assist, SUCCESS_STATUS, Submission};
pub use input::{
    AssistInput, InputContext, InputFailure, InputFailureCode, InputOrigin, InputProcessor,
    VoiceAdapter, processor,
};
pub use options::{
    AssistMode, DEFAULT_MAX_BATCH_SIZE, DelayAfter, DelayPresets, MAX_BATCH_SIZE, MAX_DELAY_MS,
    clamp_batch_size,
};
pub use protocol::{
    AssistAction, AssistMessage, AssistRequest, AssistResponse, AssistStep, BatchError, Decision,
    Phase, Role, actions_response, fallback_summary, message_response, validate_decision,
};
pub use report::{
    CANCELLED_MESSAGE, FAILED_MESSAGE, READ_ONLY_DENIED_MESSAGE, TurnEnding, TurnFailure,
    TurnReport,
};
pub use status::{AssistStatus, InputStatus};
pub use updates::AssistUpdate;
pub use voice::VoiceStart;
