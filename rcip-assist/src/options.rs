//! Assist's options and their bounds (the reference's section 6.1).

use std::time::Duration;

/// Actions per batch when not configured.
pub const DEFAULT_MAX_BATCH_SIZE: usize = 8;
/// The largest batch.
pub const MAX_BATCH_SIZE: usize = 32;
/// The longest delay preset, in milliseconds.
pub const MAX_DELAY_MS: f64 = 10_000.0;

/// Whether Assist may change state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AssistMode {
    /// `decide` sees read capabilities only; any other action is refused locally.
    #[default]
    ReadOnly,
    /// Every capability, through schema, availability, policy and confirmation as usual.
    Interactive,
}

/// The symbolic pause after an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DelayAfter {
    /// 250 ms by default.
    Short,
    /// 750 ms by default.
    Medium,
    /// 1500 ms by default.
    Long,
}

/// The three delay presets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DelayPresets {
    /// `short`.
    pub short: Duration,
    /// `medium`.
    pub medium: Duration,
    /// `long`.
    pub long: Duration,
}

impl Default for DelayPresets {
    fn default() -> Self {
        Self {
            short: Duration::from_millis(250),
            medium: Duration::from_millis(750),
            long: Duration::from_millis(1500),
        }
    }
}

impl DelayPresets {
    /// The preset for `delay`.
    #[must_use]
    pub const fn get(&self, delay: DelayAfter) -> Duration {
        match delay {
            DelayAfter::Short => self.short,
            DelayAfter::Medium => self.medium,
            DelayAfter::Long => self.long,
        }
    }

    /// Sets one preset from milliseconds as the reference does: a non-finite value keeps
    /// the default, anything else is clamped to `0..=10000` (not rounded).
    ///
    /// ```
    /// use std::time::Duration;
    /// use rcip_assist::{DelayAfter, DelayPresets};
    /// let presets = DelayPresets::default()
    ///     .with(DelayAfter::Short, 12.5)
    ///     .with(DelayAfter::Medium, f64::NAN)
    ///     .with(DelayAfter::Long, 1e9);
    /// assert_eq!(presets.short, Duration::from_micros(12_500));
    /// assert_eq!(presets.medium, Duration::from_millis(750));
    /// assert_eq!(presets.long, Duration::from_secs(10));
    /// ```
    #[must_use]
    pub fn with(mut self, delay: DelayAfter, milliseconds: f64) -> Self {
        let default = DelayPresets::default().get(delay);
        let value = if milliseconds.is_finite() {
            Duration::from_secs_f64(milliseconds.clamp(0.0, MAX_DELAY_MS) / 1000.0)
        } else {
            default
        };
        match delay {
            DelayAfter::Short => self.short = value,
            DelayAfter::Medium => self.medium = value,
            DelayAfter::Long => self.long = value,
        }
        self
    }
}

/// The batch size as the reference reads it: a non-finite value is the default (8); any
/// other is rounded down and clamped to `1..=32`.
///
/// ```
/// use rcip_assist::clamp_batch_size;
/// assert_eq!(clamp_batch_size(f64::INFINITY), 8);
/// assert_eq!(clamp_batch_size(0.0), 1);
/// assert_eq!(clamp_batch_size(4.9), 4);
/// assert_eq!(clamp_batch_size(1e6), 32);
/// ```
#[must_use]
pub fn clamp_batch_size(size: f64) -> usize {
    if !size.is_finite() {
        return DEFAULT_MAX_BATCH_SIZE;
    }
    // In range after the clamp, so the cast is exact.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let size = size.floor().clamp(1.0, MAX_BATCH_SIZE as f64) as usize;
    size
}
