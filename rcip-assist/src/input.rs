//! The input pipeline (the reference's section 6.7, without the browser): text or audio goes
//! through the host's processors in order until it is text a turn can start from. Capturing
//! audio is the host's [`VoiceAdapter`]; Assist only drives its start and stop.

use std::future::Future;
use std::sync::Arc;

use rcip_core::ApplicationSnapshot;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::callbacks::BoxError;
use rcip_runtime::__private::shared::{cancellable, contain};
use rcip_runtime::BoxFuture;

/// What the user gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AssistInput {
    /// Typed or transcribed text.
    Text(String),
    /// Recorded audio, for a processor to transcribe.
    Audio {
        /// The bytes.
        data: Vec<u8>,
        /// Their MIME type, such as `audio/webm`.
        mime_type: String,
    },
}

/// Where an input came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InputOrigin {
    /// Typed.
    Composer,
    /// The voice adapter.
    Voice,
}

/// What a processor is told besides the input.
#[derive(Debug, Clone)]
pub struct InputContext {
    /// Where the input came from.
    pub origin: InputOrigin,
    /// Cancelled when the user cancels; the same token then cancels the turn.
    pub cancellation: CancellationToken,
    /// The snapshot `decide` would see: filtered to read capabilities in read-only mode
    /// (the reference hands processors the unfiltered one).
    pub snapshot: Arc<ApplicationSnapshot>,
}

/// One step of the pipeline: transcription, redaction, translation...
///
/// ```
/// use rcip_assist::{AssistInput, BoxError, InputContext, processor};
/// // Lower-cases text; leaves audio for the next processor.
/// let lower = processor("lowercase", |input: AssistInput, _: InputContext| async move {
///     Ok::<_, BoxError>(Some(match input {
///         AssistInput::Text(text) => AssistInput::Text(text.to_lowercase()),
///         audio => audio,
///     }))
/// });
/// # let _ = lower;
/// ```
pub trait InputProcessor: Send + Sync {
    /// Names the processor in failures; must not be blank.
    fn id(&self) -> &str;

    /// The next input, or `None` to consume it (no turn starts).
    fn process(
        &self,
        input: AssistInput,
        context: InputContext,
    ) -> BoxFuture<Result<Option<AssistInput>, BoxError>>;
}

/// A processor from an id and a closure; see [`InputProcessor`].
pub fn processor<F, Fut>(id: impl Into<String>, process: F) -> impl InputProcessor
where
    F: Fn(AssistInput, InputContext) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Option<AssistInput>, BoxError>> + Send + 'static,
{
    FnProcessor {
        id: id.into(),
        process,
    }
}

struct FnProcessor<F> {
    id: String,
    process: F,
}

impl<F, Fut> InputProcessor for FnProcessor<F>
where
    F: Fn(AssistInput, InputContext) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Option<AssistInput>, BoxError>> + Send + 'static,
{
    fn id(&self) -> &str {
        &self.id
    }

    fn process(
        &self,
        input: AssistInput,
        context: InputContext,
    ) -> BoxFuture<Result<Option<AssistInput>, BoxError>> {
        Box::pin((self.process)(input, context))
    }
}

/// Records audio for Assist. Starting and stopping are the host's (a microphone, a file, a
/// push-to-talk button); what `stop` returns goes through the processors with origin
/// [`InputOrigin::Voice`].
pub trait VoiceAdapter: Send + Sync {
    /// Starts recording.
    fn start(&self, cancellation: CancellationToken) -> BoxFuture<Result<(), BoxError>>;
    /// Stops recording and returns what was heard, or `None` for nothing.
    fn stop(
        &self,
        cancellation: CancellationToken,
    ) -> BoxFuture<Result<Option<AssistInput>, BoxError>>;
    /// Abandons a recording. Failures are ignored.
    fn cancel(&self) {}
}

/// The input failure codes of the reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[non_exhaustive]
pub enum InputFailureCode {
    /// The processors did not end with text.
    InputPipelineIncomplete,
    /// A processor failed, or has no id.
    InputProcessorFailed,
    /// The voice adapter could not start.
    VoiceStartFailed,
    /// The voice adapter could not stop.
    VoiceStopFailed,
}

impl InputFailureCode {
    /// The wire spelling, such as `INPUT_PROCESSOR_FAILED`.
    ///
    /// ```
    /// use rcip_assist::InputFailureCode;
    /// assert_eq!(InputFailureCode::VoiceStartFailed.as_str(), "VOICE_START_FAILED");
    /// ```
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            InputFailureCode::InputPipelineIncomplete => "INPUT_PIPELINE_INCOMPLETE",
            InputFailureCode::InputProcessorFailed => "INPUT_PROCESSOR_FAILED",
            InputFailureCode::VoiceStartFailed => "VOICE_START_FAILED",
            InputFailureCode::VoiceStopFailed => "VOICE_STOP_FAILED",
        }
    }
}

/// Why an input did not become a turn (`RcipAssistInputFailure`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{}: {message}", code.as_str())]
pub struct InputFailure {
    /// The code.
    pub code: InputFailureCode,
    /// The reference's message.
    pub message: String,
}

impl InputFailure {
    fn new(code: InputFailureCode, message: impl Into<String>) -> Self {
        InputFailure {
            code,
            message: message.into(),
        }
    }

    pub(super) fn voice_start() -> Self {
        Self::new(
            InputFailureCode::VoiceStartFailed,
            "Voice input could not start.",
        )
    }

    pub(super) fn voice_stop() -> Self {
        Self::new(
            InputFailureCode::VoiceStopFailed,
            "Voice input could not be processed.",
        )
    }
}

/// How the pipeline ended.
#[derive(Debug)]
pub(super) enum Processed {
    /// Text for a turn (trimmed, possibly empty).
    Text(String),
    /// A processor returned `None`.
    Consumed,
    /// The token was cancelled.
    Cancelled,
    /// A failure to report.
    Failed(InputFailure),
}

/// Runs `processors` in order over `input`. A processor that panics fails the pipeline
/// with the reference's "could not complete" message for unknown failures; one that returns
/// an error is named in the message.
pub(super) async fn run_pipeline(
    processors: &[Arc<dyn InputProcessor>],
    mut input: AssistInput,
    context: InputContext,
) -> Processed {
    for processor in processors {
        if context.cancellation.is_cancelled() {
            return Processed::Cancelled;
        }
        // The id is read once, contained like every call into host code.
        let Some(id) = contain(|| processor.id().to_owned()) else {
            return Processed::Failed(unknown_failure());
        };
        if rcip_core::is_blank(&id) {
            return Processed::Failed(InputFailure::new(
                InputFailureCode::InputProcessorFailed,
                "An Assist input processor is missing its identifier.",
            ));
        }
        let step = cancellable(&context.cancellation, || {
            processor.process(input, context.clone())
        });
        let Some(result) = step.await else {
            return Processed::Cancelled;
        };
        input = match result {
            Some(Ok(Some(next))) => next,
            Some(Ok(None)) => return Processed::Consumed,
            // An error caused by the cancellation is the cancellation.
            _ if context.cancellation.is_cancelled() => return Processed::Cancelled,
            Some(Err(_)) => {
                return Processed::Failed(InputFailure::new(
                    InputFailureCode::InputProcessorFailed,
                    format!("The input processor \"{id}\" could not complete."),
                ));
            }
            None => return Processed::Failed(unknown_failure()),
        };
    }
    match input {
        AssistInput::Text(text) => Processed::Text(text.trim().to_owned()),
        AssistInput::Audio { .. } => Processed::Failed(InputFailure::new(
            InputFailureCode::InputPipelineIncomplete,
            "The input pipeline must produce text before Assist can continue.",
        )),
    }
}

/// A failure the pipeline cannot attribute to a processor's report (a panic).
fn unknown_failure() -> InputFailure {
    InputFailure::new(
        InputFailureCode::InputProcessorFailed,
        "The Assist input pipeline could not complete.",
    )
}
