//! The walker's helpers: problem reports, typed access to JSON values, key and name checks.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::{MAX_NAME_BYTES, MAX_PACKAGE_PROBLEMS, is_valid_name};
use crate::model::{DataSchema, Text};
use crate::naming::lower_camel;
use crate::problem::{Problem, ProblemCode as Code};
use rcip_core::pointer::push_token;

fn list(names: &[&str]) -> String {
    names.join(", ")
}

#[derive(Default)]
pub(crate) struct Checker {
    /// The first [`MAX_PACKAGE_PROBLEMS`] problems reported.
    problems: Vec<Problem>,
    /// Every problem reported, kept or not: whether a part is valid is decided by this
    /// count, which goes on growing once the list is full.
    reported: usize,
}
impl Checker {
    pub(crate) fn report(&mut self, pointer: &str, code: Code, message: impl Into<String>) {
        self.reported += 1;
        if self.problems.len() < MAX_PACKAGE_PROBLEMS {
            self.problems.push(Problem {
                pointer: pointer.to_owned(),
                code,
                message: message.into(),
            });
        }
    }

    /// How many problems were reported so far, kept or not.
    pub(crate) fn reported(&self) -> usize {
        self.reported
    }

    /// Whether a problem was already dropped for want of room: the walks over a package's
    /// maps stop then, since what they would find is not kept. (Not as soon as the list
    /// is full: one problem more is what says that there were more.)
    pub(crate) fn is_full(&self) -> bool {
        self.reported > MAX_PACKAGE_PROBLEMS
    }

    /// The problems kept, then a `TOO_MANY_PROBLEMS` problem when more were found.
    pub(crate) fn into_problems(mut self) -> Vec<Problem> {
        if self.reported > self.problems.len() {
            self.problems.push(Problem {
                pointer: String::new(),
                code: Code::TooManyProblems,
                message: format!(
                    "more problems were found; only the first {MAX_PACKAGE_PROBLEMS} are listed"
                ),
            });
        }
        self.problems
    }

    pub(crate) fn object<'v>(
        &mut self,
        value: &'v Value,
        at: &str,
        what: &str,
    ) -> Option<&'v Map<String, Value>> {
        if let Value::Object(map) = value {
            Some(map)
        } else {
            self.report(
                at,
                Code::WrongType,
                format!("expected {what} (an object), found {}", json_type(value)),
            );
            None
        }
    }

    pub(super) fn array<'v>(
        &mut self,
        value: &'v Value,
        at: &str,
        what: &str,
    ) -> Option<&'v [Value]> {
        if let Value::Array(items) = value {
            Some(items)
        } else {
            self.report(
                at,
                Code::WrongType,
                format!("expected {what} (an array), found {}", json_type(value)),
            );
            None
        }
    }

    pub(super) fn string<'v>(&mut self, value: &'v Value, at: &str, what: &str) -> Option<&'v str> {
        if let Value::String(text) = value {
            Some(text)
        } else {
            self.report(
                at,
                Code::WrongType,
                format!("expected {what} (a string), found {}", json_type(value)),
            );
            None
        }
    }

    /// Reports keys outside `allowed` and missing `required` keys.
    pub(crate) fn keys(
        &mut self,
        map: &Map<String, Value>,
        at: &str,
        what: &str,
        allowed: &[&str],
        required: &[&str],
    ) {
        for key in map.keys() {
            if self.is_full() {
                break;
            }
            if !allowed.contains(&key.as_str()) {
                self.report(
                    &child(at, key),
                    Code::UnknownKey,
                    format!("unknown key {key:?} in {what} (allowed: {})", list(allowed)),
                );
            }
        }
        for key in required {
            if !map.contains_key(*key) {
                self.report(at, Code::MissingKey, format!("{what} needs {key:?}"));
            }
        }
    }

    /// Checks a name; `what` is e.g. "type name".
    pub(super) fn name(&mut self, name: &str, at: &str, what: &str) -> bool {
        if is_valid_name(name) {
            return true;
        }
        self.report(
            at,
            Code::InvalidName,
            format!(
                "invalid {what} {name:?}: expected [a-z][a-z0-9_]*, at most {MAX_NAME_BYTES} bytes"
            ),
        );
        false
    }

    /// Checks that a valid name has a capability-id form.
    pub(super) fn mappable(&mut self, name: &str, at: &str, what: &str) -> bool {
        if lower_camel(name).is_some() {
            return true;
        }
        self.report(
            at,
            Code::UnmappableName,
            format!("{what} {name:?} has no RCIP identifier form (no `__`, no trailing `_`)"),
        );
        false
    }

    /// A numeric bound: `Ok(None)` when `key` is absent, `Ok(Some(_))` when `read` accepts
    /// its value, else a `code` problem saying it should be `expected`.
    pub(crate) fn bound<T>(
        &mut self,
        map: &Map<String, Value>,
        at: &str,
        key: &str,
        (read, expected): (fn(&Value) -> Option<T>, &str),
        code: Code,
    ) -> Result<Option<T>, ()> {
        let Some(value) = map.get(key) else {
            return Ok(None);
        };
        match read(value) {
            Some(bound) => Ok(Some(bound)),
            None => {
                self.report(
                    &child(at, key),
                    code,
                    format!("{key:?} is {expected}, found {value}"),
                );
                Err(())
            }
        }
    }

    pub(super) fn description(&mut self, map: &Map<String, Value>, at: &str) -> Option<Text> {
        let value = map.get("description")?;
        self.string(value, &child(at, "description"), "a description")
            .map(|text| Cow::Owned(text.to_owned()))
    }
}

/// A JSON Pointer to `key` under `parent`, escaped as RFC 6901 says.
pub(crate) fn child(parent: &str, key: &str) -> String {
    let mut pointer = String::with_capacity(parent.len() + key.len() + 1);
    pointer.push_str(parent);
    push_token(&mut pointer, key);
    pointer
}

pub(super) fn index(parent: &str, i: usize) -> String {
    format!("{parent}/{i}")
}

/// The JSON type of a value, for messages: the strict checker's wording.
pub(crate) use rcip_core::schema::json_type;

pub(super) fn unknown_field(field: &str, schema: &DataSchema, what: &str) -> String {
    format!(
        "field {field:?} is not declared by {what} (declared: {})",
        declared_list(schema.properties.iter().map(AsRef::as_ref))
    )
}

/// The most names a message lists: a report stays proportionate to the package even when
/// many references miss a long list of declarations.
const MAX_LISTED_NAMES: usize = 20;

/// `a, b, c`, cut after [`MAX_LISTED_NAMES`] names.
pub(super) fn declared_list<'a>(names: impl ExactSizeIterator<Item = &'a str>) -> String {
    let count = names.len();
    let mut text = names.take(MAX_LISTED_NAMES).collect::<Vec<_>>().join(", ");
    if count > MAX_LISTED_NAMES {
        text.push_str(&format!(", ... ({} more)", count - MAX_LISTED_NAMES));
    }
    text
}

/// Reads a bound that is a non-negative integer.
pub(crate) const COUNT: (fn(&Value) -> Option<u64>, &str) =
    (Value::as_u64, "a non-negative integer");
