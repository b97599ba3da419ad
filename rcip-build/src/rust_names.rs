//! Package names as Rust identifiers.

use rcip_core::relationship::pascal_case;

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
pub(crate) fn module(name: &str) -> String {
    match name {
        "crate" | "self" | "super" => format!("{name}_"),
        _ if KEYWORDS.contains(&name) => format!("r#{name}"),
        _ => name.to_owned(),
    }
}

/// A constant name for a command: `mark_won` -> `MARK_WON`.
pub(crate) fn constant(name: &str) -> String {
    let upper = name.to_ascii_uppercase();
    // The generated module already holds `TYPE`; `State` is a type, not a constant.
    if upper == "TYPE" {
        "TYPE_".to_owned()
    } else {
        upper
    }
}

/// A variant name for a state: `in_review` -> `InReview`.
pub(crate) fn variant(name: &str) -> String {
    let pascal = pascal_case(name);
    if pascal == "Self" {
        "Self_".to_owned()
    } else {
        pascal
    }
}
