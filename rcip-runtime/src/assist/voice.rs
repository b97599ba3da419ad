//! Voice input: Assist drives the host's [`VoiceAdapter`](super::VoiceAdapter) from
//! `starting` to `listening` to `processing`, and what it heard goes through the processors
//! with origin `voice`. Recording itself is the adapter's.

use tokio_util::sync::CancellationToken;

use super::engine::{Assist, Busy, InputStatus, Submission};
use super::input::{InputFailure, InputOrigin};
use crate::support::{contain_async, lock};

/// How [`Assist::start_voice`] went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
        let token = CancellationToken::new();
        let Some(busy) = self.begin(Some(token.clone())) else {
            return Ok(VoiceStart::Busy);
        };
        self.set_input(InputStatus::Starting, None);
        let started = tokio::select! {
            biased;
            () = token.cancelled() => None,
            started = contain_async(adapter.start(token.clone())) => Some(started),
        };
        match started {
            None => {
                adapter.cancel();
                self.set_input(InputStatus::Idle, None);
                Ok(VoiceStart::Cancelled)
            }
            Some(Some(Ok(()))) => {
                self.set_input(InputStatus::Listening, None);
                // The operation continues past this call: keep the busy mark.
                busy.keep();
                Ok(VoiceStart::Listening)
            }
            Some(_) => {
                let failure = InputFailure::voice_start();
                self.set_input(InputStatus::Error, Some(failure.clone()));
                Err(failure)
            }
        }
    }

    /// Stops recording and submits what the adapter heard with origin `voice`. Ignored
    /// unless listening.
    pub async fn stop_voice(&self) -> Submission {
        let (adapter, token) = {
            let state = lock(&self.inner.state);
            match (&self.inner.config.voice, &state.current) {
                (Some(adapter), Some(token)) if state.input_status == InputStatus::Listening => {
                    (adapter.clone(), token.clone())
                }
                _ => return Submission::Ignored,
            }
        };
        // The recording's busy mark, taken over from `start_voice`.
        let busy = Busy {
            inner: &self.inner,
            token: token.clone(),
            armed: true,
        };
        self.set_input(InputStatus::Processing, None);
        let stopped = tokio::select! {
            biased;
            () = token.cancelled() => None,
            stopped = contain_async(adapter.stop(token.clone())) => Some(stopped),
        };
        match stopped {
            None => {
                adapter.cancel();
                self.set_input(InputStatus::Idle, None);
                Submission::Cancelled
            }
            Some(Some(Ok(None))) => {
                self.set_input(InputStatus::Idle, None);
                Submission::Consumed
            }
            Some(Some(Ok(Some(input)))) => self.submit_busy(input, InputOrigin::Voice, &busy).await,
            Some(_) => {
                let failure = InputFailure::voice_stop();
                self.set_input(InputStatus::Error, Some(failure.clone()));
                Submission::Failed(failure)
            }
        }
    }
}
