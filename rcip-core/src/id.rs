//! The RCIP identifier grammar, shared by application, scope and capability ids.
//!
//! The grammar is the reference's `^[a-z][A-Za-z0-9]*(?:[._-][a-z][A-Za-z0-9]*)*$`: a
//! lowercase ASCII letter first, then ASCII letters and digits; segments are separated by
//! exactly one `.`, `_` or `-`, and every separator is followed by a lowercase letter.
//! Invocation ids, confirmation ids, tags and availability reason codes are free strings and
//! do not follow this grammar.

/// The longest identifier, in bytes (identifiers are ASCII): 256. The reference sets no
/// limit; rcip bounds ids so that a caller's id is never echoed back at any length.
pub const MAX_IDENTIFIER_LENGTH: usize = 256;

/// Returns whether `id` is a valid RCIP identifier (the grammar, and at most
/// [`MAX_IDENTIFIER_LENGTH`] bytes).
///
/// This is a `const fn` so that generated code can check identifiers at compile time; the
/// macros, the build script and the runtime all call this one function.
///
/// ```
/// use rcip_core::is_valid_identifier;
/// assert!(is_valid_identifier("polls.prepareCreate"));
/// assert!(is_valid_identifier("rcip.contract-diagnostics"));
/// assert!(!is_valid_identifier("polls.Create"));
/// assert!(!is_valid_identifier("todos..create"));
/// assert!(is_valid_identifier(&"a".repeat(256)));
/// assert!(!is_valid_identifier(&"a".repeat(257)));
/// ```
#[must_use]
pub const fn is_valid_identifier(id: &str) -> bool {
    let bytes = id.as_bytes();
    if bytes.is_empty() || bytes.len() > MAX_IDENTIFIER_LENGTH || !bytes[0].is_ascii_lowercase() {
        return false;
    }
    let mut i = 1;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'.' || b == b'_' || b == b'-' {
            // A separator must be followed by a lowercase letter (which also forbids a
            // trailing separator and two separators in a row).
            if i + 1 >= bytes.len() || !bytes[i + 1].is_ascii_lowercase() {
                return false;
            }
            i += 2;
            continue;
        }
        if !b.is_ascii_alphanumeric() {
            return false;
        }
        i += 1;
    }
    true
}

/// Derives a capability id from its first scope and a Rust function name, the rule the
/// `#[capability]` macro applies when no `id` is given: the function name in lower camel case
/// (`prepare_create` -> `prepareCreate`, a leading `r#` dropped), prefixed by the scope and a
/// dot when there is one. Returns `None` when the result is not a valid identifier (for
/// example a name starting with `_`), so the caller can report it.
///
/// ```
/// use rcip_core::derive_capability_id;
/// assert_eq!(derive_capability_id(Some("polls"), "prepare_create").as_deref(), Some("polls.prepareCreate"));
/// assert_eq!(derive_capability_id(None, "list").as_deref(), Some("list"));
/// assert_eq!(derive_capability_id(Some("polls"), "_hidden"), None);
/// ```
#[must_use]
pub fn derive_capability_id(scope: Option<&str>, function_name: &str) -> Option<String> {
    let name = function_name.strip_prefix("r#").unwrap_or(function_name);
    let mut id = String::with_capacity(scope.map_or(0, |s| s.len() + 1) + name.len());
    if let Some(scope) = scope {
        id.push_str(scope);
        id.push('.');
    }
    let mut upper_next = false;
    for (i, c) in name.chars().enumerate() {
        if c == '_' && i > 0 {
            if upper_next {
                return None; // `__`: no clean camel-case form
            }
            upper_next = true;
        } else if upper_next {
            id.extend(c.to_uppercase());
            upper_next = false;
        } else {
            id.push(c);
        }
    }
    // A trailing underscore leaves `upper_next` set; the grammar check refuses the rest
    // (a leading `_`, an invalid scope id).
    (!upper_next && is_valid_identifier(&id)).then_some(id)
}

#[cfg(test)]
mod tests {
    use super::is_valid_identifier;

    /// The reference digest's valid examples (section 1.4).
    const VALID: &[&str] = &[
        "todos",
        "a",
        "x9Y",
        "todos.create",
        "polls.prepareCreate",
        "example.todos",
        "rcip.contract-diagnostics",
        "aB.c_d-e",
        "todos.v2Create",
        "v2.api_list-all",
    ];

    /// The reference digest's invalid examples (section 1.4).
    const INVALID: &[&str] = &[
        "Todos",
        "1todos",
        "_todos",
        ".todos",
        "todos.",
        "todos-",
        "todos..create",
        "todo__x",
        "a.-b",
        "todos.Create",
        "a.B",
        "todos.1",
        "todos create",
        "todos/create",
        "tódos",
        "todos.create!",
        "",
        "todos\n",
    ];

    #[test]
    fn reference_valid_examples_are_accepted() {
        for id in VALID {
            assert!(is_valid_identifier(id), "{id:?} should be valid");
        }
    }

    #[test]
    fn reference_invalid_examples_are_rejected() {
        for id in INVALID {
            assert!(!is_valid_identifier(id), "{id:?} should be invalid");
        }
    }

    #[test]
    fn derived_ids_follow_lower_camel_case() {
        let cases = [
            (Some("polls"), "prepare_create", Some("polls.prepareCreate")),
            (Some("polls"), "list", Some("polls.list")),
            (Some("polls"), "create_v2", Some("polls.createV2")),
            (Some("polls"), "v2_create", Some("polls.v2Create")),
            (Some("polls"), "r#type", Some("polls.type")),
            (
                Some("rcip.contract-diagnostics"),
                "run_all",
                Some("rcip.contract-diagnostics.runAll"),
            ),
            (None, "ping", Some("ping")),
            (None, "close_all_polls", Some("closeAllPolls")),
            (Some("polls"), "_hidden", None),
            (Some("polls"), "trailing_", None),
            (Some("polls"), "two__underscores", None),
            (Some("polls"), "close_1", Some("polls.close1")),
            (Some("Polls"), "list", None),
        ];
        for (scope, name, expected) in cases {
            assert_eq!(
                super::derive_capability_id(scope, name).as_deref(),
                expected,
                "{scope:?} {name}"
            );
        }
    }

    #[test]
    fn usable_in_const_context() {
        const { assert!(is_valid_identifier("polls.create")) };
        const { assert!(!is_valid_identifier("Polls")) };
    }
}
