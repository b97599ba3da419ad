//! The consumers a catalog is exported for.

use std::fmt;
use std::str::FromStr;

/// One consumer's accepted form of a tool list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Profile {
    /// MCP revision 2025-11-25: `tools/list` entries.
    Mcp2025_11_25,
    /// MCP revision 2026-07-28: `tools/list` entries.
    Mcp2026_07_28,
    /// OpenAI strict function calling (Responses API function tools, `strict: true`).
    OpenAi,
    /// Anthropic tool use with `strict: true`.
    Anthropic,
    /// Gemini function declarations with `parameters` (the OpenAPI 3.0 subset).
    Gemini,
    /// Gemini function declarations with `parametersJsonSchema`.
    GeminiJsonSchema,
}

impl Profile {
    /// Every profile, in the order of their names' documentation.
    pub const ALL: [Profile; 6] = [
        Profile::Mcp2025_11_25,
        Profile::Mcp2026_07_28,
        Profile::OpenAi,
        Profile::Anthropic,
        Profile::Gemini,
        Profile::GeminiJsonSchema,
    ];

    /// The profile's name, as `rcip export --profile` takes it.
    ///
    /// ```
    /// use rcip_export::Profile;
    /// assert_eq!(Profile::OpenAi.name(), "openai");
    /// assert_eq!("gemini-json-schema".parse(), Ok(Profile::GeminiJsonSchema));
    /// ```
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Profile::Mcp2025_11_25 => "mcp-2025-11-25",
            Profile::Mcp2026_07_28 => "mcp-2026-07-28",
            Profile::OpenAi => "openai",
            Profile::Anthropic => "anthropic",
            Profile::Gemini => "gemini",
            Profile::GeminiJsonSchema => "gemini-json-schema",
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A profile name that names no [`Profile`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown profile {0:?}: expected one of mcp-2025-11-25, mcp-2026-07-28, openai, anthropic, gemini, gemini-json-schema"
)]
pub struct UnknownProfile(pub String);

impl FromStr for Profile {
    type Err = UnknownProfile;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Profile::ALL
            .into_iter()
            .find(|profile| profile.name() == name)
            .ok_or_else(|| UnknownProfile(name.to_owned()))
    }
}
