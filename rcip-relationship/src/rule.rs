//! The rule language: expressions over a record's `data`, a command's `input` and the
//! lifecycle `state`, and their evaluation.
//!
//! Evaluation never fails and never allocates: a missing path is *absent*, comparisons that
//! cannot be made are `false`, and a guard passes only when its result is exactly `true`
//! (fail closed). The exact semantics are in `docs/relationship-v1.md`.

use std::cmp::Ordering;

use rcip_core::depth::{MAX_VALUE_DEPTH, exceeds_depth};
use serde_json::{Map, Number, Value};

/// Text in the model: owned when parsed, borrowed when compiled into a table.
pub type Text = std::borrow::Cow<'static, str>;
/// A list in the model: owned when parsed, borrowed when compiled into a table.
pub type List<T> = std::borrow::Cow<'static, [T]>;

/// A rule expression.
///
/// Built by the package validator (which enforces the arities, depth and path limits) or
/// written out as a `static` table by `rcip-build`.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// `{"path": "data.a.b"}`: the value at a path, or absent.
    Path(Path),
    /// `{"present": "data.a"}`: whether the value exists and is not `null`.
    Present(Path),
    /// `{"all": [...]}`: `true` when every operand is `true`.
    All(List<Expr>),
    /// `{"any": [...]}`: `true` when some operand is `true`.
    Any(List<Expr>),
    /// `{"not": expr}`: `true` when the operand (the list's only element) is `false`.
    Not(List<Expr>),
    /// `{"eq": [a, b]}` and the other comparisons: the list holds the two operands.
    Compare(Comparison, List<Expr>),
    /// A JSON scalar or array.
    Const(Constant),
}

/// The six comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Comparison {
    /// `eq`: equal JSON values (numbers by value).
    Eq,
    /// `ne`: both present and not equal.
    Ne,
    /// `gt`: both numbers, left greater.
    Gt,
    /// `gte`: both numbers, left greater or equal.
    Gte,
    /// `lt`: both numbers, left smaller.
    Lt,
    /// `lte`: both numbers, left smaller or equal.
    Lte,
}

impl Comparison {
    /// Every comparison, in the order of [`Comparison::as_str`]'s spellings.
    pub const ALL: [Self; 6] = [Self::Eq, Self::Ne, Self::Gt, Self::Gte, Self::Lt, Self::Lte];

    /// The operator's key: `"eq"`, `"ne"`, `"gt"`, `"gte"`, `"lt"` or `"lte"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Eq => "eq",
            Self::Ne => "ne",
            Self::Gt => "gt",
            Self::Gte => "gte",
            Self::Lt => "lt",
            Self::Lte => "lte",
        }
    }
}

/// Where a path starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Root {
    /// The record's `data`.
    Data,
    /// The command's input.
    Input,
    /// The record's lifecycle state (a path of this root has no further components).
    State,
}

impl Root {
    /// The root's spelling: `"data"`, `"input"` or `"state"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Data => "data",
            Self::Input => "input",
            Self::State => "state",
        }
    }
}

/// A dotted path: a root and up to seven further components.
///
/// A component addresses an object member by name, or an array element when it is a
/// decimal index.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Path {
    /// Where the path starts.
    pub root: Root,
    /// The components after the root.
    pub segments: List<Text>,
}

/// A constant: a JSON scalar or an array of constants (never an object).
#[derive(Debug, Clone, PartialEq)]
pub enum Constant {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A negative integer (or any integer that fits `i64`).
    Int(i64),
    /// A non-negative integer beyond `i64`.
    UInt(u64),
    /// A number with a fraction or an exponent.
    Float(f64),
    /// A string.
    Str(Text),
    /// An array.
    Array(List<Constant>),
}

/// What a rule is evaluated against.
///
/// ```
/// use rcip_relationship::{Scope, parse_rule, RuleRoots};
/// use serde_json::json;
///
/// let guard = parse_rule(&json!({"all": [
///     {"eq": [{"path": "state"}, "open"]},
///     {"gt": [{"path": "data.votes"}, 0]},
/// ]}), RuleRoots::COMMAND).unwrap();
/// let data = json!({"votes": 3});
/// assert!(guard.passes(&Scope { data: Some(&data), input: None, state: Some("open") }));
/// assert!(!guard.passes(&Scope { data: Some(&data), input: None, state: Some("closed") }));
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Scope<'a> {
    /// The record's data.
    pub data: Option<&'a Value>,
    /// The command's input.
    pub input: Option<&'a Value>,
    /// The lifecycle state.
    pub state: Option<&'a str>,
}

/// Deeper than the validator allows: an expression tree built by hand beyond this evaluates
/// to absent rather than exhausting the stack.
const MAX_EVAL_DEPTH: usize = 64;

impl Expr {
    /// Whether the expression evaluates to exactly `true` (a guard passes).
    #[must_use]
    pub fn passes(&self, scope: &Scope<'_>) -> bool {
        matches!(self.term(scope, 0), Term::Bool(true))
    }

    /// The expression's value as JSON, or `None` when it is absent (a path to nothing, or
    /// to a value nesting more than 128 arrays and objects, which would not be copied
    /// without recursion).
    #[must_use]
    pub fn evaluate(&self, scope: &Scope<'_>) -> Option<Value> {
        self.term(scope, 0).to_value()
    }

    fn term<'a>(&'a self, scope: &Scope<'a>, depth: usize) -> Term<'a> {
        if depth > MAX_EVAL_DEPTH {
            return Term::Absent;
        }
        let operand = |list: &'a List<Expr>, i: usize| {
            list.get(i)
                .map_or(Term::Absent, |e| e.term(scope, depth + 1))
        };
        match self {
            Self::Path(path) => path.resolve(scope),
            Self::Present(path) => {
                Term::Bool(!matches!(path.resolve(scope), Term::Absent | Term::Null))
            }
            Self::All(list) => Term::Bool(
                !list.is_empty()
                    && list
                        .iter()
                        .all(|e| matches!(e.term(scope, depth + 1), Term::Bool(true))),
            ),
            Self::Any(list) => Term::Bool(
                list.iter()
                    .any(|e| matches!(e.term(scope, depth + 1), Term::Bool(true))),
            ),
            Self::Not(list) => Term::Bool(matches!(operand(list, 0), Term::Bool(false))),
            Self::Compare(op, list) => {
                Term::Bool(compare(*op, &operand(list, 0), &operand(list, 1)))
            }
            Self::Const(constant) => Term::from_constant(constant),
        }
    }
}

impl Path {
    /// The path in its dotted spelling, e.g. `data.a.b`.
    #[must_use]
    pub fn dotted(&self) -> String {
        let mut text = self.root.as_str().to_owned();
        for segment in self.segments.iter() {
            text.push('.');
            text.push_str(segment);
        }
        text
    }

    fn resolve<'a>(&'a self, scope: &Scope<'a>) -> Term<'a> {
        let start = match self.root {
            Root::State => {
                return match (scope.state, self.segments.is_empty()) {
                    (Some(state), true) => Term::Str(state),
                    _ => Term::Absent,
                };
            }
            Root::Data => scope.data,
            Root::Input => scope.input,
        };
        let mut value = match start {
            Some(value) => value,
            None => return Term::Absent,
        };
        for segment in self.segments.iter() {
            let next = match value {
                Value::Object(map) => map.get(segment.as_ref()),
                // Decimal digits only: `usize::from_str` also takes a leading `+`.
                Value::Array(items) if segment.bytes().all(|b| b.is_ascii_digit()) => {
                    segment.parse::<usize>().ok().and_then(|i| items.get(i))
                }
                _ => None,
            };
            match next {
                Some(next) => value = next,
                None => return Term::Absent,
            }
        }
        Term::from_json(value)
    }
}

/// An evaluated value, borrowed from the scope or the expression.
#[derive(Debug, Clone, Copy)]
enum Term<'a> {
    Absent,
    Null,
    Bool(bool),
    Num(Num),
    Str(&'a str),
    JsonArray(&'a [Value]),
    ConstArray(&'a [Constant]),
    Object(&'a Map<String, Value>),
}

impl<'a> Term<'a> {
    fn from_json(value: &'a Value) -> Self {
        match value {
            Value::Null => Self::Null,
            Value::Bool(b) => Self::Bool(*b),
            Value::Number(n) => Self::Num(Num::from_json(n)),
            Value::String(s) => Self::Str(s),
            Value::Array(items) => Self::JsonArray(items),
            Value::Object(map) => Self::Object(map),
        }
    }

    fn from_constant(constant: &'a Constant) -> Self {
        match constant {
            Constant::Null => Self::Null,
            Constant::Bool(b) => Self::Bool(*b),
            Constant::Int(i) => Self::Num(Num::Int(i128::from(*i))),
            Constant::UInt(u) => Self::Num(Num::Int(i128::from(*u))),
            Constant::Float(f) => Self::Num(Num::Float(*f)),
            Constant::Str(s) => Self::Str(s),
            Constant::Array(items) => Self::ConstArray(items),
        }
    }

    fn len(&self) -> usize {
        match self {
            Self::JsonArray(items) => items.len(),
            Self::ConstArray(items) => items.len(),
            _ => 0,
        }
    }

    fn element(&self, i: usize) -> Term<'a> {
        match self {
            Self::JsonArray(items) => items.get(i).map_or(Term::Absent, Term::from_json),
            Self::ConstArray(items) => items.get(i).map_or(Term::Absent, Term::from_constant),
            _ => Term::Absent,
        }
    }

    fn to_value(self) -> Option<Value> {
        Some(match self {
            Self::Absent => return None,
            Self::Null => Value::Null,
            Self::Bool(b) => Value::Bool(b),
            Self::Num(n) => Value::Number(n.to_json()?),
            Self::Str(s) => Value::String(s.to_owned()),
            // A copy recurses: a value built in memory past the parser's depth is absent,
            // as an expression nested too deep is.
            Self::JsonArray(items) => {
                let shallow = items
                    .iter()
                    .all(|item| !exceeds_depth(item, MAX_VALUE_DEPTH - 1));
                Value::Array(shallow.then(|| items.to_vec())?)
            }
            Self::ConstArray(items) => Value::Array(
                items
                    .iter()
                    .map(|c| Term::from_constant(c).to_value().unwrap_or(Value::Null))
                    .collect(),
            ),
            Self::Object(map) => {
                let shallow = map
                    .values()
                    .all(|value| !exceeds_depth(value, MAX_VALUE_DEPTH - 1));
                Value::Object(shallow.then(|| map.clone())?)
            }
        })
    }
}

/// A number, compared by value: integers exactly, anything with a fraction as `f64`.
#[derive(Debug, Clone, Copy)]
enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    fn from_json(n: &Number) -> Self {
        if let Some(i) = n.as_i64() {
            Self::Int(i128::from(i))
        } else if let Some(u) = n.as_u64() {
            Self::Int(i128::from(u))
        } else {
            Self::Float(n.as_f64().unwrap_or(f64::NAN))
        }
    }

    fn to_json(self) -> Option<Number> {
        match self {
            Self::Int(i) => i64::try_from(i)
                .map(Number::from)
                .ok()
                .or_else(|| u64::try_from(i).ok().map(Number::from)),
            Self::Float(f) => Number::from_f64(f),
        }
    }

    fn cmp(self, other: Self) -> Option<Ordering> {
        match (self, other) {
            (Self::Int(a), Self::Int(b)) => Some(a.cmp(&b)),
            (a, b) => a.as_f64().partial_cmp(&b.as_f64()),
        }
    }

    #[allow(clippy::cast_precision_loss)] // comparing with a fraction: f64 is the common ground
    fn as_f64(self) -> f64 {
        match self {
            Self::Int(i) => i as f64,
            Self::Float(f) => f,
        }
    }
}

fn compare(op: Comparison, left: &Term<'_>, right: &Term<'_>) -> bool {
    match op {
        Comparison::Eq | Comparison::Ne => {
            if matches!(left, Term::Absent) || matches!(right, Term::Absent) {
                return false; // absent is neither equal nor unequal to anything
            }
            equal(left, right, 0) == (op == Comparison::Eq)
        }
        Comparison::Gt | Comparison::Gte | Comparison::Lt | Comparison::Lte => {
            let (Term::Num(a), Term::Num(b)) = (left, right) else {
                return false; // fail closed
            };
            matches!(
                (a.cmp(*b), op),
                (Some(Ordering::Greater), Comparison::Gt | Comparison::Gte)
                    | (Some(Ordering::Less), Comparison::Lt | Comparison::Lte)
                    | (Some(Ordering::Equal), Comparison::Gte | Comparison::Lte)
            )
        }
    }
}

fn equal(left: &Term<'_>, right: &Term<'_>, depth: usize) -> bool {
    if depth > MAX_EVAL_DEPTH {
        return false;
    }
    match (left, right) {
        (Term::Null, Term::Null) => true,
        (Term::Bool(a), Term::Bool(b)) => a == b,
        (Term::Num(a), Term::Num(b)) => a.cmp(*b) == Some(Ordering::Equal),
        (Term::Str(a), Term::Str(b)) => a == b,
        (Term::JsonArray(_) | Term::ConstArray(_), Term::JsonArray(_) | Term::ConstArray(_)) => {
            left.len() == right.len()
                && (0..left.len()).all(|i| equal(&left.element(i), &right.element(i), depth + 1))
        }
        (Term::Object(a), Term::Object(b)) => {
            a.len() == b.len()
                && a.iter().all(|(key, value)| {
                    b.get(key).is_some_and(|other| {
                        equal(&Term::from_json(value), &Term::from_json(other), depth + 1)
                    })
                })
        }
        _ => false,
    }
}
