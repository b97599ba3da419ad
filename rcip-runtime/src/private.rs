//! Paths for generated code only: not a public API, may change in any release.

use std::error::Error as StdError;

use crate::binding::HandlerError;
pub use crate::capability::TypedHandlerFn;

/// `-> Output`.
pub fn plain_output<O>(output: O) -> Result<O, HandlerError> {
    Ok(output)
}

/// `-> Result<Output, E>`: a `HandlerError` keeps its kind, anything else is a failure.
pub fn result_output<O, E>(result: Result<O, E>) -> Result<O, HandlerError>
where
    E: Into<Box<dyn StdError + Send + Sync>>,
{
    result.map_err(|error| match error.into().downcast::<HandlerError>() {
        Ok(handler_error) => *handler_error,
        Err(other) => HandlerError::failed(other),
    })
}

/// Constant string equality, for the catalog's compile-time checks.
pub const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The first position of `needle` in `haystack` (`haystack.len()` when absent).
pub const fn position_of(needle: &str, haystack: &[&str]) -> usize {
    let mut i = 0;
    while i < haystack.len() {
        if str_eq(needle, haystack[i]) {
            return i;
        }
        i += 1;
    }
    haystack.len()
}

/// Whether every one of `scopes` is in `declared`.
pub const fn all_declared(scopes: &[&str], declared: &[&str]) -> bool {
    let mut i = 0;
    while i < scopes.len() {
        if position_of(scopes[i], declared) == declared.len() {
            return false;
        }
        i += 1;
    }
    true
}
