//! The Assist controller: its state (the conversation, the statuses, the pending
//! confirmation), its configuration (built by `builder.rs`) and the entry points a surface
//! calls. The statuses are in `status.rs`, what a turn reports in `report.rs`,
//! the turn in `turn.rs`, the processors in `input.rs`, voice in `voice.rs`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rcip_core::{ApplicationSnapshot, CapabilityFilter, Effect};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::callbacks::{ConfirmationResolver, Decide, PendingConfirmation};
use super::input::{
    AssistInput, InputContext, InputFailure, InputOrigin, InputProcessor, Processed, VoiceAdapter,
    run_pipeline,
};
use super::options::{AssistMode, DelayPresets};
use super::protocol::{AssistMessage, Role};
use super::report::{CANCELLED_MESSAGE, TurnReport};
use super::status::{AssistStatus, InputStatus};
use super::updates::{AssistUpdate, Listeners};
use rcip_runtime::__private::shared::{contain, lock, next_sequenced_id, try_sleep};
use rcip_runtime::{Clock, SystemClock};
use rcip_runtime::{RcipClient, Subscription};

/// How long `success` shows before it reads `active` again.
pub const SUCCESS_STATUS: Duration = Duration::from_millis(1500);

/// What the builder configured.
pub(super) struct Config {
    pub(super) client: Arc<dyn RcipClient>,
    pub(super) decide: Arc<dyn Decide>,
    pub(super) confirmations: ConfirmationResolver,
    pub(super) mode: AssistMode,
    pub(super) max_batch_size: usize,
    pub(super) delays: DelayPresets,
    pub(super) history_limit: usize,
    pub(super) welcome: Option<String>,
    pub(super) processors: Vec<Arc<dyn InputProcessor>>,
    pub(super) voice: Option<Arc<dyn VoiceAdapter>>,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Assist")
            .field("mode", &self.mode)
            .field("max_batch_size", &self.max_batch_size)
            .field("delays", &self.delays)
            .field("history_limit", &self.history_limit)
            .field("processors", &self.processors.len())
            .field("voice", &self.voice.is_some())
            .finish_non_exhaustive()
    }
}

/// What became of an input.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Submission {
    /// Blank text (as sent, or as the processors left it), or Assist was busy: no turn.
    Ignored,
    /// A processor consumed the input; no turn.
    Consumed,
    /// The input was cancelled before a turn started.
    Cancelled,
    /// The input failed; the failure is also kept as [`Assist::input_error`].
    Failed(InputFailure),
    /// A turn ran.
    Turn(TurnReport),
}

/// Everything that changes, behind one lock that is never held across an await.
pub(super) struct State {
    pub(super) transcript: Vec<AssistMessage>,
    status: AssistStatus,
    success_since: Option<Instant>,
    pub(super) input_status: InputStatus,
    input_error: Option<InputFailure>,
    /// The turn or input operation (a recording included) in progress; Assist is busy
    /// while there is one.
    pub(super) current: Option<Operation>,
    /// Numbers operations, so that a finished one never clears its successor's mark.
    operations: u64,
    /// The voice adapter was started and not yet stopped: ending the operation any other
    /// way calls its `cancel`.
    pub(super) recording: bool,
    pending: Option<PendingConfirmation>,
    /// Changes not yet told to the listeners; [`Inner::with_state`] sends them.
    outbox: Vec<AssistUpdate>,
}

/// One operation in progress: its number and the token that cancels it.
#[derive(Clone)]
pub(super) struct Operation {
    pub(super) id: u64,
    pub(super) token: CancellationToken,
}

impl State {
    pub(super) fn new(welcome: Option<AssistMessage>) -> Self {
        State {
            transcript: welcome.into_iter().collect(),
            status: AssistStatus::Idle,
            success_since: None,
            input_status: InputStatus::Idle,
            input_error: None,
            current: None,
            operations: 0,
            recording: false,
            pending: None,
            outbox: Vec::new(),
        }
    }

    /// Back to the welcome message, `idle`, no input error (`clear`; never while busy).
    fn reset(&mut self, welcome: Option<AssistMessage>) {
        self.transcript = welcome.into_iter().collect();
        self.status = AssistStatus::Idle;
        self.success_since = None;
        self.input_status = InputStatus::Idle;
        self.input_error = None;
        self.outbox.push(AssistUpdate::Cleared);
    }

    pub(super) fn set_status(&mut self, status: AssistStatus) {
        self.success_since = (status == AssistStatus::Success).then(Instant::now);
        if self.status != status {
            self.status = status;
            self.outbox.push(AssistUpdate::Status(status));
        }
    }

    pub(super) fn set_input(&mut self, status: InputStatus, error: Option<InputFailure>) {
        self.input_error = error;
        if self.input_status != status {
            self.input_status = status;
            self.outbox.push(AssistUpdate::Input(status));
        }
    }

    pub(super) fn push_message(&mut self, message: AssistMessage) {
        self.outbox.push(AssistUpdate::Message(message.clone()));
        self.transcript.push(message);
    }

    /// Starts or ends the operation in progress.
    pub(super) fn set_current(&mut self, operation: Option<Operation>) {
        if self.current.is_some() != operation.is_some() {
            self.outbox.push(AssistUpdate::Busy(operation.is_some()));
        }
        self.current = operation;
    }

    pub(super) fn set_pending(&mut self, pending: Option<PendingConfirmation>) {
        match &pending {
            Some(p) => self
                .outbox
                .push(AssistUpdate::ConfirmationPending(Box::new(p.clone()))),
            None if self.pending.is_some() => self.outbox.push(AssistUpdate::ConfirmationEnded),
            None => {}
        }
        self.pending = pending;
    }
}

pub(super) struct Inner {
    pub(super) config: Config,
    pub(super) state: Mutex<State>,
    pub(super) listeners: Arc<Listeners>,
}

/// A headless Assist controller over one client: the reference's `useRcipAssist` without
/// React. A surface (a CLI, a chat server, a command palette) feeds it text with
/// [`send`](Self::send), may [`cancel`](Self::cancel) from elsewhere, and reads the
/// conversation and statuses back. Cloning it is cheap and shares the conversation.
///
/// Each turn is bounded: one `decide` call, a message or one batch validated whole, the
/// batch run in order until the first non-success (confirmations through the host's
/// [`ConfirmationResolver`](crate::ConfirmationResolver), symbolic delays between actions), then one summarize call that
/// can only return text.
///
/// ```
/// use rcip_assist::*;
/// use rcip_runtime::*;
/// use serde_json::json;
/// use rcip_runtime::CancellationToken;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Error> {
/// let definition = ApplicationDefinition::new("polls", "Polls", "Create and vote on polls.")
///     .capability(
///         CapabilityDefinition::new("polls.count", Effect::Read, "Count polls", "How many polls there are.")
///             .output_schema(json!({"type": "integer"})),
///     );
/// let runtime = Runtime::new(definition, RuntimeOptions::default())?;
/// let host = runtime.host();
/// host.bind("polls.count", Binding::new(|_, _| async { Ok::<_, HandlerError>(json!(3)) }))?
///     .keep();
///
/// // A scripted assistant: counts polls, then reports the count.
/// let decide = |request: AssistRequest, _: CancellationToken| async move {
///     Ok::<_, BoxError>(match request.phase {
///         Phase::Decide => actions_response(&[AssistAction::new("polls.count", DelayAfter::Short, json!({}))]),
///         Phase::Summarize => {
///             message_response(format!("There are {} polls.", request.steps[0].outcome.output().unwrap()))
///         }
///     })
/// };
/// let decline_all = |_: PendingConfirmation, _| async { Ok::<_, BoxError>(false) };
/// let assist = Assist::builder(runtime.client(), decide, ConfirmationResolver::new(host, decline_all)).build();
///
/// let Submission::Turn(turn) = assist.send("How many polls?").await else { panic!() };
/// assert_eq!(turn.reply.content, "There are 3 polls.");
/// assert_eq!(turn.status, AssistStatus::Success);
/// assert_eq!(assist.transcript().len(), 2);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Assist {
    pub(super) inner: Arc<Inner>,
}

impl std::fmt::Debug for Assist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.config.fmt(f)
    }
}

/// Marks Assist busy for one operation. Dropping it ends the operation however the call
/// ended (returned, or its future dropped): the token is cancelled (so a pending
/// confirmation does not outlive it), a recording is abandoned, and statuses left mid-way
/// are settled (a turn cut short reads as cancelled).
pub(super) struct Busy<'a> {
    pub(super) inner: &'a Inner,
    pub(super) operation: Operation,
    /// Cleared when the operation outlives the call that began it (a recording).
    pub(super) armed: bool,
}

impl Busy<'_> {
    /// Leaves the busy mark in place for a later call to take over.
    pub(super) fn keep(mut self) {
        self.armed = false;
    }
}

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        self.operation.token.cancel();
        let recording = self.inner.with_state(|state| {
            // `cancel` may have ended this operation already, and another begun.
            if state.current.as_ref().map(|o| o.id) != Some(self.operation.id) {
                return false;
            }
            state.set_current(None);
            state.set_pending(None);
            if matches!(
                state.input_status,
                InputStatus::Processing | InputStatus::Starting | InputStatus::Listening
            ) {
                state.set_input(InputStatus::Idle, None);
            }
            if matches!(
                state.status,
                AssistStatus::Working | AssistStatus::Attention
            ) {
                // The turn's future was dropped before it could answer.
                state.push_message(new_message(Role::Assistant, CANCELLED_MESSAGE.to_owned()));
                state.set_status(AssistStatus::Active);
            }
            std::mem::take(&mut state.recording)
        });
        if recording {
            self.inner.cancel_adapter();
        }
    }
}

impl Assist {
    /// Sends typed text: through the processors, then a turn. Blank text, or text sent
    /// while a turn or another input is in progress, is ignored.
    pub async fn send(&self, text: &str) -> Submission {
        if rcip_core::is_blank(text) {
            return Submission::Ignored;
        }
        self.submit(AssistInput::Text(text.to_owned()), InputOrigin::Composer)
            .await
    }

    /// Submits any input (text or audio) from `origin`: the processors run in order, then,
    /// if they produced non-blank text, a turn. One cancellation token covers both.
    pub async fn submit(&self, input: AssistInput, origin: InputOrigin) -> Submission {
        let Some(busy) = self.begin() else {
            return Submission::Ignored;
        };
        self.submit_busy(input, origin, &busy).await
    }

    pub(super) async fn submit_busy(
        &self,
        input: AssistInput,
        origin: InputOrigin,
        busy: &Busy<'_>,
    ) -> Submission {
        let token = busy.operation.token.clone();
        self.set_input(InputStatus::Processing, None);
        // The processors and `decide` see the same snapshot.
        let snapshot = self.inner.decide_snapshot();
        let context = InputContext {
            origin,
            cancellation: token.clone(),
            snapshot: snapshot.clone(),
        };
        let processed = run_pipeline(&self.inner.config.processors, input, context).await;
        match &processed {
            Processed::Failed(failure) => self.set_input(InputStatus::Error, Some(failure.clone())),
            _ => self.set_input(InputStatus::Idle, None),
        }
        match processed {
            Processed::Consumed => Submission::Consumed,
            Processed::Failed(failure) => Submission::Failed(failure),
            // Cancelled, possibly as the last processor finished: no turn.
            Processed::Cancelled => Submission::Cancelled,
            Processed::Text(_) if token.is_cancelled() => Submission::Cancelled,
            Processed::Text(text) if text.is_empty() => Submission::Ignored,
            Processed::Text(text) => {
                let report = self.inner.run_turn(text, snapshot, &token).await;
                if report.status == AssistStatus::Success {
                    self.settle_success_later();
                }
                Submission::Turn(report)
            }
        }
    }

    /// Cancels what is in progress: the input pipeline, a recording (the voice adapter's
    /// `cancel` is called), or the turn (its `decide` call, delay or invocation; a pending
    /// confirmation is declined). Does nothing when idle.
    pub fn cancel(&self) {
        let recording_ended = self.inner.with_state(|state| {
            // Cancelled inside the critical section, so that a step that checks the token
            // under the lock (`start_voice` becoming `listening`) cannot miss it.
            if let Some(operation) = &state.current {
                operation.token.cancel();
            }
            // A recording between `start_voice` and `stop_voice` has no future awaiting
            // the token: it ends here, in the same critical section that saw it.
            // (`listening` is only ever set while recording.)
            let listening = state.input_status == InputStatus::Listening;
            if listening {
                state.set_current(None);
                state.recording = false;
                state.set_input(InputStatus::Idle, None);
            }
            listening
        });
        if recording_ended {
            self.inner.cancel_adapter();
        }
    }

    /// Resets the conversation to the welcome message and the statuses to idle. Ignored
    /// (returns `false`) while busy.
    pub fn clear(&self) -> bool {
        let welcome = self.inner.config.welcome.as_deref();
        self.inner.with_state(|state| {
            if state.current.is_some() {
                return false;
            }
            state.reset(welcome.map(new_assistant_message));
            true
        })
    }

    /// Calls `listener` with every change from now on: messages appended, status and input
    /// status changes, confirmations pending and ended, clears. It runs on the task that made
    /// the change, without Assist's lock held; dropping the subscription removes it.
    ///
    /// ```
    /// # use rcip_assist::*;
    /// # fn demo(assist: &Assist) {
    /// let subscription = assist.subscribe(|update| match update {
    ///     AssistUpdate::Message(message) => println!("{:?}: {}", message.role, message.content),
    ///     AssistUpdate::ConfirmationPending(pending) => println!("waiting for {}", pending.action.capability_id),
    ///     _ => {}
    /// });
    /// # drop(subscription);
    /// # }
    /// ```
    pub fn subscribe(
        &self,
        listener: impl Fn(&AssistUpdate) + Send + Sync + 'static,
    ) -> Subscription {
        Listeners::subscribe(&self.inner.listeners, listener)
    }

    /// The whole conversation, however long (`decide` sees only the newest messages).
    #[must_use]
    pub fn transcript(&self) -> Vec<AssistMessage> {
        lock(&self.inner.state).transcript.clone()
    }

    /// The conversation's status; `success` reads `active` once 1.5 s have passed.
    #[must_use]
    pub fn status(&self) -> AssistStatus {
        let state = lock(&self.inner.state);
        match state.success_since {
            Some(since) if since.elapsed() >= SUCCESS_STATUS => AssistStatus::Active,
            _ => state.status,
        }
    }

    /// The input side's status.
    #[must_use]
    pub fn input_status(&self) -> InputStatus {
        lock(&self.inner.state).input_status
    }

    /// The last input failure, until the next input.
    #[must_use]
    pub fn input_error(&self) -> Option<InputFailure> {
        lock(&self.inner.state).input_error.clone()
    }

    /// A turn or an input operation is in progress.
    #[must_use]
    pub fn is_busy(&self) -> bool {
        lock(&self.inner.state).current.is_some()
    }

    /// The confirmation the turn waits for, if any.
    #[must_use]
    pub fn pending_confirmation(&self) -> Option<PendingConfirmation> {
        lock(&self.inner.state).pending.clone()
    }

    /// The mode.
    #[must_use]
    pub fn mode(&self) -> AssistMode {
        self.inner.config.mode
    }

    /// Takes the busy mark for a new operation with a fresh token, unless already busy.
    pub(super) fn begin(&self) -> Option<Busy<'_>> {
        let operation = self.inner.with_state(|state| {
            if state.current.is_some() {
                return None;
            }
            state.operations += 1;
            let operation = Operation {
                id: state.operations,
                token: CancellationToken::new(),
            };
            state.set_current(Some(operation.clone()));
            Some(operation)
        })?;
        Some(Busy {
            inner: &self.inner,
            operation,
            armed: true,
        })
    }

    pub(super) fn set_input(&self, status: InputStatus, error: Option<InputFailure>) {
        self.inner
            .with_state(|state| state.set_input(status, error));
    }

    /// `success` turns `active` after [`SUCCESS_STATUS`]: [`status`](Self::status) reads it so
    /// at once, and a timer task stores it and tells the listeners. Without a tokio runtime
    /// with timers there is no task, and only the read changes.
    fn settle_success_later(&self) {
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let Some(sleep) = try_sleep(SUCCESS_STATUS) else {
            return;
        };
        let inner = Arc::downgrade(&self.inner);
        handle.spawn(async move {
            sleep.await;
            if let Some(inner) = inner.upgrade() {
                inner.with_state(|state| {
                    if state
                        .success_since
                        .is_some_and(|since| since.elapsed() >= SUCCESS_STATUS)
                    {
                        state.set_status(AssistStatus::Active);
                    }
                });
            }
        });
    }
}

impl Inner {
    /// The snapshot `decide` and the processors see: in read-only mode, read capabilities
    /// only, every other field unchanged.
    pub(super) fn decide_snapshot(&self) -> Arc<ApplicationSnapshot> {
        let snapshot = self.config.client.get_snapshot();
        match self.config.mode {
            AssistMode::Interactive => snapshot,
            AssistMode::ReadOnly => {
                let reads = CapabilityFilter {
                    effect: Some(Effect::Read),
                    ..CapabilityFilter::default()
                };
                let mut filtered = (*snapshot).clone();
                filtered.capabilities = filtered
                    .capabilities
                    .iter()
                    .filter(|c| reads.matches(c))
                    .cloned()
                    .collect();
                Arc::new(filtered)
            }
        }
    }

    /// Abandons a recording: the adapter's `cancel`, whose failures (panics) are ignored.
    pub(super) fn cancel_adapter(&self) {
        if let Some(adapter) = &self.config.voice {
            let _ = contain(|| adapter.cancel());
        }
    }

    /// Changes the state, queues what changed in that order, and tells the listeners once
    /// the lock is released.
    pub(super) fn with_state<R>(&self, change: impl FnOnce(&mut State) -> R) -> R {
        let result = {
            let mut state = lock(&self.state);
            let result = change(&mut state);
            self.listeners.enqueue(std::mem::take(&mut state.outbox));
            result
        };
        self.listeners.deliver();
        result
    }

    /// Appends a message to the transcript.
    pub(super) fn append(&self, role: Role, content: String) -> AssistMessage {
        let message = new_message(role, content);
        self.with_state(|state| state.push_message(message.clone()));
        message
    }

    /// The newest `history_limit` messages.
    pub(super) fn history(&self) -> Vec<AssistMessage> {
        let state = lock(&self.state);
        let skip = state
            .transcript
            .len()
            .saturating_sub(self.config.history_limit);
        state.transcript[skip..].to_vec()
    }
}

pub(super) fn new_assistant_message(text: &str) -> AssistMessage {
    new_message(Role::Assistant, text.to_owned())
}

pub(super) fn new_message(role: Role, content: String) -> AssistMessage {
    let now = SystemClock.now_ms();
    AssistMessage {
        content,
        created_at: now,
        id: next_sequenced_id("message_", now, str::to_owned),
        role,
    }
}

impl Drop for Inner {
    /// The last handle going away abandons a recording, as the reference's unmount does.
    fn drop(&mut self) {
        let recording = self
            .state
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .recording;
        if recording {
            self.cancel_adapter();
        }
    }
}
