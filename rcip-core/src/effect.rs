//! Capability effects: policy signals, not authorization.

use serde::{Deserialize, Serialize};

/// What invoking a capability does to the world. Effects inform host policy; they do not
/// replace authentication, authorization or domain validation.
///
/// Exhaustive on purpose: a new effect is a protocol change, and every policy must decide
/// it explicitly. A wildcard arm (which `#[non_exhaustive]` would force on every policy)
/// would silently allow or deny an effect its author never saw.
///
/// ```
/// use rcip_core::Effect;
/// assert_eq!("destructive".parse::<Effect>(), Ok(Effect::Destructive));
/// assert_eq!(Effect::Write.as_str(), "write");
/// assert_eq!(serde_json::to_string(&Effect::Read).unwrap(), "\"read\"");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    /// Reads application state without changing it.
    Read,
    /// Changes application state.
    Write,
    /// Acts outside the application (sends a message, calls a provider).
    External,
    /// Removes or irreversibly changes state.
    Destructive,
}

impl Effect {
    /// Every effect, in protocol order.
    pub const ALL: [Effect; 4] = [
        Effect::Read,
        Effect::Write,
        Effect::External,
        Effect::Destructive,
    ];

    /// The wire string of this effect.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Effect::Read => "read",
            Effect::Write => "write",
            Effect::External => "external",
            Effect::Destructive => "destructive",
        }
    }

    /// Parses a wire string in a `const` context; `None` for anything else.
    #[must_use]
    pub const fn from_wire(s: &str) -> Option<Effect> {
        let b = s.as_bytes();
        match b {
            b"read" => Some(Effect::Read),
            b"write" => Some(Effect::Write),
            b"external" => Some(Effect::External),
            b"destructive" => Some(Effect::Destructive),
            _ => None,
        }
    }
}

impl std::fmt::Display for Effect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of parsing an unknown effect string.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown RCIP effect {0:?}: expected read, write, external or destructive")]
pub struct UnknownEffect(pub String);

impl std::str::FromStr for Effect {
    type Err = UnknownEffect;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Effect::from_wire(s).ok_or_else(|| UnknownEffect(s.to_owned()))
    }
}
