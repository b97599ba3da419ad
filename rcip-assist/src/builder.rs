//! Configuring an [`Assist`]: the builder and the configuration it produces.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::callbacks::{ConfirmationResolver, Decide};
use super::engine::{Assist, Config, Inner, State, new_assistant_message};
use super::input::{InputProcessor, VoiceAdapter};
use super::options::{
    AssistMode, DEFAULT_MAX_BATCH_SIZE, DelayAfter, DelayPresets, MAX_DELAY_MS, clamp_batch_size,
};
use rcip_runtime::RcipClient;

/// Messages of the conversation passed to `decide` when not configured: the newest 50. The
/// reference passes the whole conversation, which grows without bound; the full transcript
/// stays available through [`Assist::transcript`].
pub const DEFAULT_HISTORY_LIMIT: usize = 50;

/// Builds an [`Assist`]; see [`Assist::builder`].
#[must_use = "a builder does nothing until built"]
pub struct AssistBuilder {
    config: Config,
}

impl std::fmt::Debug for AssistBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.config.fmt(f)
    }
}

impl AssistBuilder {
    /// The mode (read-only by default).
    pub fn mode(mut self, mode: AssistMode) -> Self {
        self.config.mode = mode;
        self
    }

    /// Actions per batch, read as [`clamp_batch_size`] does (default 8, `1..=32`).
    pub fn max_batch_size(mut self, size: f64) -> Self {
        self.config.max_batch_size = clamp_batch_size(size);
        self
    }

    /// One delay preset in milliseconds, read as [`DelayPresets::with`] does.
    pub fn delay(mut self, delay: DelayAfter, milliseconds: f64) -> Self {
        self.config.delays = self.config.delays.with(delay, milliseconds);
        self
    }

    /// All three delay presets at once, each clamped to at most 10 s.
    ///
    /// ```
    /// use std::time::Duration;
    /// use rcip_assist::DelayPresets;
    /// let quick = DelayPresets {
    ///     short: Duration::ZERO,
    ///     medium: Duration::from_millis(100),
    ///     long: Duration::from_secs(60), // read as 10 s
    /// };
    /// # let _ = quick;
    /// ```
    pub fn delays(mut self, presets: DelayPresets) -> Self {
        let max = Duration::from_secs_f64(MAX_DELAY_MS / 1000.0);
        self.config.delays = DelayPresets {
            short: presets.short.min(max),
            medium: presets.medium.min(max),
            long: presets.long.min(max),
        };
        self
    }

    /// How many of the newest messages `decide` is given (at least 1, so that it always
    /// sees the new user message); [`DEFAULT_HISTORY_LIMIT`] by default.
    pub fn history_limit(mut self, messages: usize) -> Self {
        self.config.history_limit = messages.max(1);
        self
    }

    /// An assistant message the conversation starts with (and [`Assist::clear`] restores).
    pub fn welcome_message(mut self, text: impl Into<String>) -> Self {
        self.config.welcome = Some(text.into());
        self
    }

    /// Appends an input processor; they run in the order added.
    pub fn processor(mut self, processor: impl InputProcessor + 'static) -> Self {
        self.config.processors.push(Arc::new(processor));
        self
    }

    /// The voice adapter (none by default: [`Assist::start_voice`] reports it unavailable).
    pub fn voice(mut self, adapter: impl VoiceAdapter + 'static) -> Self {
        self.config.voice = Some(Arc::new(adapter));
        self
    }

    /// The controller.
    #[must_use]
    pub fn build(self) -> Assist {
        let welcome = self.config.welcome.as_deref().map(new_assistant_message);
        Assist {
            inner: Arc::new(Inner {
                config: self.config,
                state: Mutex::new(State::new(welcome)),
                listeners: Arc::default(),
            }),
        }
    }
}

impl Assist {
    /// A builder over `client`, with `decide` as the assistant and `confirmations` as the
    /// trusted approval path.
    pub fn builder(
        client: Arc<dyn RcipClient>,
        decide: impl Decide + 'static,
        confirmations: ConfirmationResolver,
    ) -> AssistBuilder {
        AssistBuilder {
            config: Config {
                client,
                decide: Arc::new(decide),
                confirmations,
                mode: AssistMode::default(),
                max_batch_size: DEFAULT_MAX_BATCH_SIZE,
                delays: DelayPresets::default(),
                history_limit: DEFAULT_HISTORY_LIMIT,
                welcome: None,
                processors: Vec::new(),
                voice: None,
            },
        }
    }
}
