//! Voice input: Assist drives the host's [`VoiceAdapter`](super::VoiceAdapter) from
//! `starting` to `listening` to `processing`, and what it heard goes through the processors
//! with origin `voice`. Recording itself is the adapter's.

use super::engine::{Assist, Busy, Submission};
use super::input::{InputFailure, InputOrigin};
use super::status::InputStatus;
use rcip_runtime::__private::shared::{cancellable, lock};

/// How [`Assist::start_voice`] went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum VoiceStart {
    /// Recording.
    Listening,
    /// Assist was busy; nothing happened.
    Busy,
    /// No voice adapter is configured.
    Unavailable,
    /// [`Assist::cancel`] was called while the adapter was starting.
    Cancelled,
}

impl Assist {
    /// Starts the voice adapter. Assist stays busy until [`stop_voice`](Self::stop_voice)
    /// or [`cancel`](Self::cancel).
    ///
    /// # Errors
    ///
    /// `VOICE_START_FAILED` when the adapter fails (or panics).
    pub async fn start_voice(&self) -> Result<VoiceStart, InputFailure> {
        let Some(adapter) = self.inner.config.voice.clone() else {
            return Ok(VoiceStart::Unavailable);
        };
        let Some(busy) = self.begin() else {
            return Ok(VoiceStart::Busy);
        };
        let token = busy.operation.token.clone();
        self.inner.with_state(|state| {
            state.recording = true;
            state.set_input(InputStatus::Starting, None);
        });
        let Some(started) = cancellable(&token, || adapter.start(token.clone())).await else {
            // The busy mark's drop abandons the recording.
            return Ok(VoiceStart::Cancelled);
        };
        if let Some(Ok(())) = started {
            // Listening only if not cancelled meanwhile, decided under the lock that
            // `cancel` cancels under.
            let listening = self.inner.with_state(|state| {
                let listening = !token.is_cancelled();
                if listening {
                    state.set_input(InputStatus::Listening, None);
                }
                listening
            });
            if !listening {
                // The busy mark's drop abandons the recording.
                return Ok(VoiceStart::Cancelled);
            }
            // The operation continues past this call: keep the busy mark.
            busy.keep();
            return Ok(VoiceStart::Listening);
        }
        let failure = InputFailure::voice_start();
        self.inner.with_state(|state| {
            state.recording = false;
            state.set_input(InputStatus::Error, Some(failure.clone()));
        });
        Err(failure)
    }

    /// Stops recording and submits what the adapter heard with origin `voice`. Ignored
    /// unless listening.
    pub async fn stop_voice(&self) -> Submission {
        // Seeing `listening` and leaving it is one step, so two calls cannot both stop.
        let taken =
            self.inner
                .with_state(|state| match (&self.inner.config.voice, &state.current) {
                    (Some(adapter), Some(operation))
                        if state.input_status == InputStatus::Listening =>
                    {
                        let taken = (adapter.clone(), operation.clone());
                        state.set_input(InputStatus::Processing, None);
                        Some(taken)
                    }
                    _ => None,
                });
        let Some((adapter, operation)) = taken else {
            return Submission::Ignored;
        };
        let token = operation.token.clone();
        // The recording's busy mark, taken over from `start_voice`.
        let busy = Busy {
            inner: &self.inner,
            operation,
            armed: true,
        };
        let Some(stopped) = cancellable(&token, || adapter.stop(token.clone())).await else {
            return Submission::Cancelled;
        };
        lock(&self.inner.state).recording = false;
        match stopped {
            Some(Ok(None)) => {
                self.set_input(InputStatus::Idle, None);
                Submission::Consumed
            }
            Some(Ok(Some(input))) => self.submit_busy(input, InputOrigin::Voice, &busy).await,
            _ => {
                let failure = InputFailure::voice_stop();
                self.set_input(InputStatus::Error, Some(failure.clone()));
                Submission::Failed(failure)
            }
        }
    }
}
