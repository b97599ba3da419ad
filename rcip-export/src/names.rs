//! Tool names: each profile's name rule, applied deterministically, collision-checked and
//! reversible by table.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use crate::{ExportError, Profile};

/// A name rule: the allowed characters, the allowed first characters, the maximum length.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NameRule {
    /// Characters allowed besides ASCII letters and digits.
    pub(crate) extra: &'static str,
    /// Whether the first character must be a letter or `_`.
    pub(crate) letter_first: bool,
    /// The maximum length in characters.
    pub(crate) max: usize,
}

impl NameRule {
    /// The tool-name rule of `profile`.
    pub(crate) const fn tool(profile: Profile) -> NameRule {
        match profile {
            Profile::Mcp2025_11_25 | Profile::Mcp2026_07_28 => NameRule {
                extra: "_.-",
                letter_first: false,
                max: 128,
            },
            Profile::OpenAi | Profile::Anthropic => NameRule {
                extra: "_-",
                letter_first: false,
                max: 64,
            },
            Profile::Gemini | Profile::GeminiJsonSchema => NameRule {
                extra: "_.:-",
                letter_first: true,
                max: 64,
            },
        }
    }

    /// Gemini's `parameters` property-name rule, `[A-Za-z_][A-Za-z0-9_]{0,63}`.
    pub(crate) const GEMINI_PROPERTY: NameRule = NameRule {
        extra: "_",
        letter_first: true,
        max: 64,
    };

    fn allows(&self, c: char) -> bool {
        c.is_ascii_alphanumeric() || self.extra.contains(c)
    }

    /// `source` under this rule: every character outside the set becomes `_`; a first
    /// character that may not start a name gets a `_` before it; a name longer than the
    /// maximum keeps its first `max - 9` characters, then `_` and the first 8 hex digits of
    /// the SHA-256 of `source`.
    pub(crate) fn apply(&self, source: &str) -> String {
        let mut name: String = source
            .chars()
            .map(|c| if self.allows(c) { c } else { '_' })
            .collect();
        let bad_first = match name.chars().next() {
            None => true,
            Some(c) => self.letter_first && !(c.is_ascii_alphabetic() || c == '_'),
        };
        if bad_first {
            name.insert(0, '_');
        }
        if name.len() > self.max {
            let digest = Sha256::digest(source.as_bytes());
            let hex: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
            name.truncate(self.max - 9);
            name.push('_');
            name.push_str(&hex);
        }
        name
    }
}

/// The tool names of one export: capability id to name and back, both by table.
///
/// ```
/// use rcip_export::{Profile, ToolNames};
/// let names = ToolNames::new(Profile::OpenAi, ["polls.create", "polls.list"]).unwrap();
/// assert_eq!(names.name("polls.create"), Some("polls_create"));
/// assert_eq!(names.capability("polls_list"), Some("polls.list"));
///
/// let error = ToolNames::new(Profile::OpenAi, ["a.b", "a_b"]).unwrap_err();
/// assert_eq!(error.code(), "NAME_COLLISION");
/// ```
#[derive(Debug, Clone, Default)]
pub struct ToolNames {
    forward: BTreeMap<String, String>,
    reverse: BTreeMap<String, String>,
}

impl ToolNames {
    /// The names of `ids` (in catalog order) under `profile`'s name rule.
    ///
    /// # Errors
    ///
    /// [`ExportError::NameCollision`] naming both ids when two ids map to one name.
    pub fn new<'a>(
        profile: Profile,
        ids: impl IntoIterator<Item = &'a str>,
    ) -> Result<ToolNames, ExportError> {
        Self::with_names(profile, ids.into_iter().map(|id| (id, None)))
    }

    /// The names of `ids` (in catalog order), each made of its chosen name when it has one
    /// (a name a consumer expects that no capability id can be), else of the id, under
    /// `profile`'s name rule.
    ///
    /// ```
    /// use rcip_export::{Profile, ToolNames};
    /// let names = ToolNames::with_names(
    ///     Profile::Mcp2026_07_28,
    ///     [("fixtures.jsonSchema", Some("json_schema_2020_12_tool")), ("polls.list", None)],
    /// )
    /// .unwrap();
    /// assert_eq!(names.name("fixtures.jsonSchema"), Some("json_schema_2020_12_tool"));
    /// assert_eq!(names.capability("polls.list"), Some("polls.list"));
    /// ```
    ///
    /// # Errors
    ///
    /// [`ExportError::NameCollision`] naming both ids when two ids map to one name.
    pub fn with_names<'a>(
        profile: Profile,
        ids: impl IntoIterator<Item = (&'a str, Option<&'a str>)>,
    ) -> Result<ToolNames, ExportError> {
        let rule = NameRule::tool(profile);
        let mut names = ToolNames::default();
        for (id, chosen) in ids {
            let name = rule.apply(chosen.unwrap_or(id));
            if let Some(first) = names.reverse.get(&name) {
                return Err(ExportError::NameCollision {
                    profile: profile.name(),
                    first: first.clone(),
                    second: id.to_owned(),
                    name,
                    context: String::new(),
                });
            }
            names.reverse.insert(name.clone(), id.to_owned());
            names.forward.insert(id.to_owned(), name);
        }
        Ok(names)
    }

    /// The tool name of capability `id`.
    #[must_use]
    pub fn name(&self, id: &str) -> Option<&str> {
        self.forward.get(id).map(String::as_str)
    }

    /// The capability id of tool `name`.
    #[must_use]
    pub fn capability(&self, name: &str) -> Option<&str> {
        self.reverse.get(name).map(String::as_str)
    }
}
