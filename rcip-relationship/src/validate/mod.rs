//! The package validator: JSON in, a [`Package`] or every problem out.
//!
//! `checker.rs` holds the walker's helpers (reports, typed access, key checks, names),
//! `package.rs` the package, type, role, lifecycle, command and view rules, `rules.rs` the
//! rule expressions; the schema subset is `super::schema`.
//!
//! It walks the JSON by hand rather than through serde because it must report *all* problems
//! of a file at once, each at its JSON Pointer; serde stops at the first. Each check below
//! names the rule of `docs/relationship-v1.md` it enforces.

use serde_json::Value;

use super::model::Package;
use super::problem::{PackageError, Problem, ProblemCode as Code};
use super::rule::{Expr, Root};

/// The deepest package [`validate_package`] walks: 128 nested arrays and objects, the most
/// serde_json parses from text (`PACKAGE_TOO_DEEP` past it).
pub const MAX_PACKAGE_DEPTH: usize = rcip_core::depth::MAX_VALUE_DEPTH;

/// The most problems [`validate_package`] and [`parse_rule`] list; past it the list ends
/// with one `TOO_MANY_PROBLEMS` problem, and the walk stops where it can.
pub const MAX_PACKAGE_PROBLEMS: usize = 100;

/// The largest package text [`parse_package`] reads (4 MiB).
pub const MAX_PACKAGE_BYTES: usize = 4 * 1024 * 1024;
/// The longest name, in bytes.
pub const MAX_NAME_BYTES: usize = 64;
/// The most states a lifecycle may declare.
pub const MAX_STATES: usize = 32;
/// The most `emit` entries a command may declare.
pub const MAX_EMITS: usize = 10;
/// The largest `max` a role may declare.
pub const MAX_ROLE_PARTICIPANTS: u64 = 100;
/// The deepest an expression may nest.
pub const MAX_RULE_DEPTH: usize = 10;
/// The most operands of `all` and `any`.
pub const MAX_RULE_OPERANDS: usize = 30;
/// The most components of a path, its root included.
pub const MAX_PATH_COMPONENTS: usize = 8;

/// Parses and validates a package from JSON text.
///
/// # Errors
///
/// Every problem of the package (or one `INVALID_JSON` / `PACKAGE_TOO_LARGE` problem).
///
/// ```
/// use rcip_relationship::parse_package;
/// let error = parse_package(r#"{"protocol": "relationship/v1", "namespace": "Polls",
///     "version": 1, "types": {}}"#).unwrap_err();
/// let codes: Vec<_> = error.problems.iter().map(|p| (p.pointer.as_str(), p.code.as_str())).collect();
/// assert_eq!(codes, [("/namespace", "INVALID_NAME"), ("/types", "EMPTY")]);
/// ```
pub fn parse_package(text: &str) -> Result<Package, PackageError> {
    if text.len() > MAX_PACKAGE_BYTES {
        return Err(single(
            Code::PackageTooLarge,
            format!(
                "the package is {} bytes; at most {MAX_PACKAGE_BYTES} are read",
                text.len()
            ),
        ));
    }
    let value: Value = serde_json::from_str(text)
        .map_err(|error| single(Code::InvalidJson, format!("not JSON: {error}")))?;
    validate_package(&value)
}

fn single(code: Code, message: String) -> PackageError {
    PackageError {
        file: None,
        problems: vec![Problem {
            pointer: String::new(),
            code,
            message,
        }],
    }
}

/// Validates a package given as JSON.
///
/// # Errors
///
/// Every problem of the package, in document order, at most [`MAX_PACKAGE_PROBLEMS`] of
/// them, then a `TOO_MANY_PROBLEMS` problem if there were more.
pub fn validate_package(value: &Value) -> Result<Package, PackageError> {
    // Measured first and iteratively: the checks below recurse into schemas, inputs and
    // rules, and a value built in memory has no parser's depth limit.
    if rcip_core::depth::exceeds_depth(value, MAX_PACKAGE_DEPTH) {
        return Err(single(
            Code::PackageTooDeep,
            format!("a package nests at most {MAX_PACKAGE_DEPTH} arrays and objects"),
        ));
    }
    let mut checker = Checker::default();
    let package = checker.package(value);
    match package {
        Some(package) if checker.reported() == 0 => Ok(package),
        _ => Err(PackageError {
            file: None,
            problems: checker.into_problems(),
        }),
    }
}

/// Which path roots a rule may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleRoots {
    /// `data.…`
    pub data: bool,
    /// `input.…`
    pub input: bool,
    /// `state`
    pub state: bool,
}

impl RuleRoots {
    /// A command's guard and `set_data`: `data`, `input` and `state`.
    pub const COMMAND: Self = Self {
        data: true,
        input: true,
        state: true,
    };
    /// A view's `where`: `data` and `state`.
    pub const VIEW: Self = Self {
        data: true,
        input: false,
        state: true,
    };

    const fn allows(self, root: Root) -> bool {
        match root {
            Root::Data => self.data,
            Root::Input => self.input,
            Root::State => self.state,
        }
    }
}

/// Parses one rule expression on its own (no field checks against a schema).
///
/// # Errors
///
/// Every problem of the expression, with pointers relative to it.
pub fn parse_rule(value: &Value, roots: RuleRoots) -> Result<Expr, PackageError> {
    let mut checker = Checker::default();
    let fields = RuleFields {
        roots,
        data: None,
        input: None,
    };
    let expr = checker.rule(value, "", 1, &fields);
    match expr {
        Some(expr) if checker.reported() == 0 => Ok(expr),
        _ => Err(PackageError {
            file: None,
            problems: checker.into_problems(),
        }),
    }
}

/// Whether `name` follows `[a-z][a-z0-9_]*` within 64 bytes.
///
/// ```
/// use rcip_relationship::is_valid_name;
/// assert!(is_valid_name("deal_stage2"));
/// assert!(!is_valid_name("DealStage"));
/// assert!(!is_valid_name("2nd"));
/// ```
#[must_use]
pub fn is_valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= MAX_NAME_BYTES
        && bytes[0].is_ascii_lowercase()
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_')
}

mod checker;
mod package;
mod rules;

pub(super) use checker::{COUNT, Checker, child, json_type};
use rules::RuleFields;
