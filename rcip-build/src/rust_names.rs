//! Package names as Rust identifiers. The names follow the validator's `[a-z][a-z0-9_]*`, so
//! each is an identifier once keywords and the generated items' own names are avoided.

use proc_macro2::{Ident, Span};
use rcip_relationship::pascal_case;

/// Rust's keywords (strict and reserved, 2024 edition) that a package name could spell.
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
    "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
    "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
    "return", "self", "static", "struct", "super", "trait", "true", "try", "type", "typeof",
    "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// A module name for a package or type name: the name itself, raw when it is a keyword
/// (`r#type`), with a `_` appended for the few keywords that cannot be raw.
pub(crate) fn module(name: &str) -> Ident {
    match name {
        "crate" | "self" | "super" => ident(&format!("{name}_")),
        _ if KEYWORDS.contains(&name) => Ident::new_raw(name, Span::call_site()),
        _ => ident(name),
    }
}

/// A constant name for a command: `mark_won` -> `MARK_WON`.
pub(crate) fn constant(name: &str) -> Ident {
    let upper = name.to_ascii_uppercase();
    // The generated module already holds `TYPE`; `State` is a type, not a constant.
    ident(if upper == "TYPE" { "TYPE_" } else { &upper })
}

/// A variant name for a state: `in_review` -> `InReview`.
pub(crate) fn variant(name: &str) -> Ident {
    let pascal = pascal_case(name);
    // `Self` is a keyword; `ALL` and `INITIAL` would shadow the enum's own constants.
    if matches!(pascal.as_str(), "Self" | "ALL" | "INITIAL") {
        ident(&format!("{pascal}_"))
    } else {
        ident(&pascal)
    }
}

/// An identifier the caller has made valid.
pub(crate) fn ident(name: &str) -> Ident {
    Ident::new(name, Span::call_site())
}

#[cfg(test)]
mod tests {
    use super::{constant, module, variant};

    #[test]
    fn names_never_clash_with_keywords_or_generated_items() {
        assert_eq!(variant("a_l_l"), "ALL_");
        assert_eq!(variant("i_n_i_t_i_a_l"), "INITIAL_");
        assert_eq!(variant("self"), "Self_");
        assert_eq!(variant("in_review"), "InReview");
        assert_eq!(constant("type"), "TYPE_");
        assert_eq!(module("match"), "r#match");
        assert_eq!(module("crate"), "crate_");
    }
}
