//! The one shape of generated enum whose variants stand for fixed strings (a type's lifecycle
//! states, a vocabulary's capability paths): `ALL`, `as_str`, `parse`, `FromStr`, `Display`.

use std::fmt::Write as _;

/// One generated string enum.
pub(crate) struct StringEnum<'a> {
    /// The enum's name (`State`, `CapabilityPath`).
    pub(crate) name: &'a str,
    /// Its doc line.
    pub(crate) doc: String,
    /// `(variant, text, doc)` in order.
    pub(crate) variants: Vec<(String, &'a str, String)>,
    /// What `ALL`, `as_str` and `parse` are documented as, in order.
    pub(crate) item_docs: [&'a str; 3],
    /// More associated items, written as given (`pub const INITIAL: Self = ...;`).
    pub(crate) extra: Vec<String>,
    /// `FromStr`'s error type and the expression building it from `text`.
    pub(crate) error: (&'a str, String),
}

impl StringEnum<'_> {
    /// Writes the enum and its impls, each line prefixed with `indent`.
    pub(crate) fn write(&self, out: &mut String, indent: &str) {
        let name = self.name;
        let [all_doc, as_str_doc, parse_doc] = self.item_docs;
        let mut code = String::new();
        let _ = writeln!(code, "#[doc = {:?}]", self.doc);
        let _ = writeln!(
            code,
            "#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]"
        );
        let _ = writeln!(code, "pub enum {name} {{");
        for (variant, _, doc) in &self.variants {
            let _ = writeln!(code, "    #[doc = {doc:?}]\n    {variant},");
        }
        let _ = writeln!(code, "}}\n\nimpl {name} {{");
        let all: Vec<String> = self
            .variants
            .iter()
            .map(|(v, _, _)| format!("Self::{v}"))
            .collect();
        let _ = writeln!(
            code,
            "    /// {all_doc}\n    pub const ALL: [Self; {}] = [{}];\n",
            all.len(),
            all.join(", ")
        );
        for item in &self.extra {
            let _ = writeln!(code, "    {item}\n");
        }
        let _ = writeln!(
            code,
            "    /// {as_str_doc}\n    #[must_use]\n    pub const fn as_str(self) -> &'static str {{\n        match self {{"
        );
        for (variant, text, _) in &self.variants {
            let _ = writeln!(code, "            Self::{variant} => {text:?},");
        }
        let _ = writeln!(code, "        }}\n    }}\n");
        let _ = writeln!(
            code,
            "    /// {parse_doc}\n    #[must_use]\n    pub fn parse(text: &str) -> ::core::option::Option<Self> {{\n        match text {{"
        );
        for (variant, text, _) in &self.variants {
            let _ = writeln!(
                code,
                "            {text:?} => ::core::option::Option::Some(Self::{variant}),"
            );
        }
        let _ = writeln!(
            code,
            "            _ => ::core::option::Option::None,\n        }}\n    }}\n}}\n"
        );
        let (error_type, error) = &self.error;
        let _ = writeln!(
            code,
            "impl ::core::str::FromStr for {name} {{\n    type Err = {error_type};\n\n    fn from_str(text: &str) -> ::core::result::Result<Self, Self::Err> {{\n        Self::parse(text).ok_or_else(|| {error})\n    }}\n}}\n"
        );
        let _ = writeln!(
            code,
            "impl ::core::fmt::Display for {name} {{\n    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {{\n        f.write_str(self.as_str())\n    }}\n}}"
        );
        for line in code.lines() {
            if line.is_empty() {
                out.push('\n');
            } else {
                let _ = writeln!(out, "{indent}{line}");
            }
        }
        out.push('\n');
    }
}
