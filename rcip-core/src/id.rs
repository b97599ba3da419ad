//! The RCIP identifier grammar, shared by application, scope and capability ids.
//!
//! The grammar is the reference's `^[a-z][A-Za-z0-9]*(?:[._-][a-z][A-Za-z0-9]*)*$`: a
//! lowercase ASCII letter first, then ASCII letters and digits; segments are separated by
//! exactly one `.`, `_` or `-`, and every separator is followed by a lowercase letter.
//! Invocation ids, confirmation ids, tags and availability reason codes are free strings and
//! do not follow this grammar.

/// Returns whether `id` is a valid RCIP identifier.
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
/// ```
#[must_use]
pub const fn is_valid_identifier(id: &str) -> bool {
    let bytes = id.as_bytes();
    if bytes.is_empty() || !bytes[0].is_ascii_lowercase() {
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
    fn usable_in_const_context() {
        const { assert!(is_valid_identifier("polls.create")) };
        const { assert!(!is_valid_identifier("Polls")) };
    }
}
