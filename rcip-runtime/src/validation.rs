//! Compiled JSON Schema validators and the consumer-facing form of their failures.

use std::sync::Arc;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use rcip_core::ValidationIssue;
use serde_json::{Map, Value};

use crate::shape::Shape;

/// The most schema issues one check reports. Past it the list ends with one
/// [`TRUNCATED_KEYWORD`] issue, so an invalid input's outcome stays small (a few KiB) however
/// many of its parts are wrong: without a bound, a 2 MB array of wrong items gave a 73 MB
/// outcome. The reference (Ajv with `allErrors`) reports every issue; a model fixing its input
/// acts on the first ones anyway.
pub const MAX_VALIDATION_ISSUES: usize = 100;

/// The keyword of the last issue of a list cut at [`MAX_VALIDATION_ISSUES`]: instance path
/// `""`, message "more issues not reported (at most 100 are listed)", params `{"limit": 100}`.
/// It is a plain issue, so a reader of the reference's shape reads it as one more issue; the
/// `rcip:` prefix cannot clash with a JSON Schema keyword.
pub const TRUNCATED_KEYWORD: &str = "rcip:truncated";

/// The truncation marker that ends a list cut at [`MAX_VALIDATION_ISSUES`].
pub(crate) fn truncated_issue() -> ValidationIssue {
    ValidationIssue::new(
        "",
        TRUNCATED_KEYWORD,
        format!("more issues not reported (at most {MAX_VALIDATION_ISSUES} are listed)"),
    )
    .with_param("limit", MAX_VALIDATION_ISSUES)
}

/// One compiled draft 2020-12 validator, shared by every capability with the same schema.
pub struct SchemaValidator {
    validator: jsonschema::Validator,
    /// The schema's fast check, if it uses only the keywords [`Shape`] knows.
    shape: Option<Shape>,
}

impl std::fmt::Debug for SchemaValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SchemaValidator")
    }
}

impl SchemaValidator {
    /// The fast check of the schema, if it has one.
    pub(crate) fn shape(&self) -> Option<&Shape> {
        self.shape.as_ref()
    }

    /// Compiles a schema (this also checks it against the 2020-12 meta-schema). Returns
    /// the validator's message on failure.
    ///
    /// `format` is validated: the strict rules admit only the supported formats (`uuid`,
    /// `date-time`, `date`, `email`, `uri`; `rcip_core::schema::SUPPORTED_FORMATS`) in a
    /// capability schema, and a relationship package's one format, `date-time`, is enforced
    /// on records and command input. A value breaking its format fails with keyword
    /// `format`.
    pub fn compile(schema: &Value) -> Result<Arc<Self>, String> {
        jsonschema::draft202012::options()
            .should_validate_formats(true)
            .build(schema)
            .map(|validator| {
                Arc::new(SchemaValidator {
                    validator,
                    shape: Shape::compile(schema),
                })
            })
            .map_err(|e| e.to_string())
    }

    /// Validates an instance: the fast `is_valid` first, the issues only on failure, at most
    /// [`MAX_VALIDATION_ISSUES`] of them, then the [`TRUNCATED_KEYWORD`] marker if there were
    /// more. An instance too large for a full report within [`FULL_REPORT_VALUES`] and
    /// [`FULL_REPORT_WEIGHT`] reports the issues of its first error only, then the marker
    /// (with `maxValues` in its params): the cost stays bounded by the limits, not the input.
    pub fn check(&self, instance: &Value) -> Result<(), Vec<ValidationIssue>> {
        self.check_as(instance, Report::Caller)
    }

    /// [`check`](Self::check) for a host's output, whose issues reach the consumer: no
    /// detail of the output beyond the reference's `{instancePath, keyword, message}` (no
    /// `params`, which would name its own properties; the reference's fallback message where
    /// the validator's own text would quote its values).
    pub(crate) fn check_host_output(&self, instance: &Value) -> Result<(), Vec<ValidationIssue>> {
        self.check_as(instance, Report::HostOutput)
    }

    fn check_as(&self, instance: &Value, report: Report) -> Result<(), Vec<ValidationIssue>> {
        // The shape only ever says "valid" sooner; on a refusal the validator decides.
        if self
            .shape
            .as_ref()
            .is_some_and(|shape| shape.accepts(instance))
            || self.validator.is_valid(instance)
        {
            return Ok(());
        }
        let mut issues = Vec::new();
        let mut truncated = false;
        if fits_full_report(instance) {
            // jsonschema's `iter_errors` collects every error before it yields the first, and
            // each error copies its instance path: its cost grows with the errors the input
            // holds. `fits_full_report` bounds that product before we ask for it.
            for error in self.validator.iter_errors(instance) {
                // Only the issues we keep are converted: the conversion (paths, messages,
                // params) is the costly part, so it stays bounded by the limit.
                if issues.len() >= MAX_VALIDATION_ISSUES {
                    truncated = true;
                    break;
                }
                push_issues(&mut issues, &error, MAX_VALIDATION_ISSUES + 1, report);
            }
            if issues.len() > MAX_VALIDATION_ISSUES {
                // One error can give many issues (one per unexpected property).
                issues.truncate(MAX_VALIDATION_ISSUES);
                truncated = true;
            }
            if truncated {
                issues.push(truncated_issue());
            }
        } else if let Err(error) = self.validator.validate(instance) {
            // `validate` stops at the first error: the walk costs no more than `is_valid`.
            push_issues(&mut issues, &error, MAX_VALIDATION_ISSUES, report);
            issues.push(partial_report_issue());
        }
        if issues.is_empty() {
            issues.push(ValidationIssue::new("", "false schema", FALLBACK_MESSAGE));
        }
        if report == Report::HostOutput {
            for issue in &mut issues {
                issue.params.clear();
            }
        }
        Err(issues)
    }
}

/// Whose value a check reports on, which decides what its issues may say.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Report {
    /// The caller's own value (an input): every detail helps it mend the value.
    Caller,
    /// A host's output: nothing of it crosses to the consumer beyond the reference's shape.
    HostOutput,
}

/// The reference's message for an issue Ajv gave no message for.
const FALLBACK_MESSAGE: &str = "Schema validation failed.";

/// The most values (arrays, objects and scalars, the root included) an invalid instance may
/// hold and still get a full issue list; a larger one reports its first error's issues, then
/// a [`TRUNCATED_KEYWORD`] marker with `{"maxValues": 16384}` in its params.
pub const FULL_REPORT_VALUES: usize = 16_384;

/// The most path bytes, summed over every value of an invalid instance (each value counts 1
/// plus the length of its JSON Pointer), for a full issue list. Each error the validator
/// collects copies its instance path, so a few values under a megabyte-long key would cost
/// gigabytes; this bounds that product. Past it, as past [`FULL_REPORT_VALUES`].
pub const FULL_REPORT_WEIGHT: usize = 1 << 20;

/// The most bytes of an issue's instance path, message or string param; longer ones are cut
/// at a character boundary and end with `…`, so 101 issues stay well under 64 KiB whatever
/// names the input uses.
pub const MAX_ISSUE_TEXT_BYTES: usize = 200;

/// Whether `instance` is within [`FULL_REPORT_VALUES`] and [`FULL_REPORT_WEIGHT`]. Iterative,
/// and stops at the first limit crossed, so it costs at most [`FULL_REPORT_VALUES`] steps.
fn fits_full_report(instance: &Value) -> bool {
    /// The children of one container not visited yet, with the container's path length.
    enum Children<'v> {
        Items(std::iter::Enumerate<std::slice::Iter<'v, Value>>, usize),
        Members(serde_json::map::Iter<'v>, usize),
    }
    let mut values = 0;
    let mut weight = 0;
    // Containers are entered lazily (an iterator each, not all their children at once), so a
    // 2-million-item array costs as many steps as the limit, not its length.
    let mut pending: Vec<Children<'_>> = Vec::new();
    let mut next = Some((instance, 0_usize));
    loop {
        if let Some((value, path)) = next.take() {
            values += 1;
            weight += 1 + path;
            if values > FULL_REPORT_VALUES || weight > FULL_REPORT_WEIGHT {
                return false;
            }
            match value {
                Value::Array(items) => {
                    pending.push(Children::Items(items.iter().enumerate(), path))
                }
                Value::Object(members) => pending.push(Children::Members(members.iter(), path)),
                _ => {}
            }
        }
        let Some(top) = pending.last_mut() else {
            return true;
        };
        next = match top {
            Children::Items(items, path) => items
                .next()
                .map(|(index, item)| (item, *path + 1 + decimal_digits(index))),
            Children::Members(members, path) => members
                .next()
                .map(|(name, member)| (member, *path + 1 + name.len())),
        };
        if next.is_none() {
            pending.pop();
        }
    }
}

fn decimal_digits(mut n: usize) -> usize {
    let mut digits = 1;
    while n >= 10 {
        n /= 10;
        digits += 1;
    }
    digits
}

/// The marker after the first error's issues of an instance too large for a full report.
fn partial_report_issue() -> ValidationIssue {
    ValidationIssue::new(
        "",
        TRUNCATED_KEYWORD,
        format!(
            "more issues not looked for (an input of more than {FULL_REPORT_VALUES} values reports its first error only)"
        ),
    )
    .with_param("maxValues", FULL_REPORT_VALUES)
}

/// `text` cut to [`MAX_ISSUE_TEXT_BYTES`] (see there).
fn clip_text(text: &str) -> String {
    crate::support::clip_str(text, MAX_ISSUE_TEXT_BYTES)
}

/// Converts one validator error into the issues Ajv (the reference's validator) would
/// report for it: same `instancePath` and `keyword`, Ajv's wording for the common keywords
/// so consumers that match on messages keep working, and Ajv's `params` so a model can act
/// on the issue (which property to drop or add, which type or bound is wanted). Ajv reports
/// one issue per unexpected property; so do we, until `issues` holds `room` (more than that
/// would be cut anyway, and one error can name 200,000 properties).
fn push_issues(
    issues: &mut Vec<ValidationIssue>,
    error: &jsonschema::ValidationError<'_>,
    room: usize,
    report: Report,
) {
    let path = clip_text(&error.instance_path().to_string());
    let kind = error.kind();
    let issue = |keyword: &str, message: String| {
        ValidationIssue::new(path.clone(), keyword, clip_text(&message))
    };
    let bound = |comparison: &str, limit: &Value| {
        Map::from_iter([
            ("comparison".to_owned(), Value::from(comparison)),
            ("limit".to_owned(), limit.clone()),
        ])
    };
    let one = |name: &str, value: Value| Map::from_iter([(name.to_owned(), value)]);
    let (message, params) = match kind {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            for name in unexpected {
                if issues.len() >= room {
                    return;
                }
                issues.push(
                    issue(
                        "additionalProperties",
                        "must NOT have additional properties".to_owned(),
                    )
                    .with_param("additionalProperty", clip_text(name)),
                );
            }
            return;
        }
        ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            for name in unexpected {
                if issues.len() >= room {
                    return;
                }
                issues.push(
                    issue(
                        "unevaluatedProperties",
                        "must NOT have unevaluated properties".to_owned(),
                    )
                    .with_param("unevaluatedProperty", clip_text(name)),
                );
            }
            return;
        }
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_owned);
            let name = clip_text(&name);
            (
                format!("must have required property '{name}'"),
                one("missingProperty", Value::String(name)),
            )
        }
        ValidationErrorKind::Type { kind } => match kind {
            TypeKind::Single(t) => (format!("must be {t}"), one("type", t.to_string().into())),
            TypeKind::Multiple(set) => {
                let names: Vec<String> = set.iter().map(|t| t.to_string()).collect();
                let message = format!("must be {}", names.join(","));
                // Ajv gives a type list as the list itself.
                (message, one("type", Value::from(names)))
            }
        },
        ValidationErrorKind::MinLength { limit } => (
            format!("must NOT have fewer than {limit} characters"),
            one("limit", (*limit).into()),
        ),
        ValidationErrorKind::MaxLength { limit } => (
            format!("must NOT have more than {limit} characters"),
            one("limit", (*limit).into()),
        ),
        ValidationErrorKind::MinItems { limit } => (
            format!("must NOT have fewer than {limit} items"),
            one("limit", (*limit).into()),
        ),
        ValidationErrorKind::MaxItems { limit } => (
            format!("must NOT have more than {limit} items"),
            one("limit", (*limit).into()),
        ),
        ValidationErrorKind::AdditionalItems { limit } => (
            format!("must NOT have more than {limit} items"),
            one("limit", (*limit).into()),
        ),
        ValidationErrorKind::MinProperties { limit } => (
            format!("must NOT have fewer than {limit} properties"),
            one("limit", (*limit).into()),
        ),
        ValidationErrorKind::MaxProperties { limit } => (
            format!("must NOT have more than {limit} properties"),
            one("limit", (*limit).into()),
        ),
        ValidationErrorKind::Minimum { limit } => {
            (format!("must be >= {limit}"), bound(">=", limit))
        }
        ValidationErrorKind::Maximum { limit } => {
            (format!("must be <= {limit}"), bound("<=", limit))
        }
        ValidationErrorKind::ExclusiveMinimum { limit } => {
            (format!("must be > {limit}"), bound(">", limit))
        }
        ValidationErrorKind::ExclusiveMaximum { limit } => {
            (format!("must be < {limit}"), bound("<", limit))
        }
        ValidationErrorKind::MultipleOf { multiple_of } => (
            format!("must be multiple of {multiple_of}"),
            one("multipleOf", multiple_of_value(*multiple_of)),
        ),
        ValidationErrorKind::Enum { options } => (
            "must be equal to one of the allowed values".to_owned(),
            one("allowedValues", Value::clone(options)),
        ),
        ValidationErrorKind::Constant { expected_value } => (
            "must be equal to constant".to_owned(),
            one("allowedValue", Value::clone(expected_value)),
        ),
        ValidationErrorKind::Pattern { pattern } => (
            format!("must match pattern \"{pattern}\""),
            one("pattern", pattern.as_str().into()),
        ),
        ValidationErrorKind::Format { format } => (
            format!("must match format \"{format}\""),
            one("format", format.as_str().into()),
        ),
        // Ajv names the two equal items; the Rust validator does not say which they are.
        ValidationErrorKind::UniqueItems => {
            ("must NOT have duplicate items".to_owned(), Map::new())
        }
        ValidationErrorKind::AnyOf { .. } => {
            ("must match a schema in anyOf".to_owned(), Map::new())
        }
        ValidationErrorKind::OneOfNotValid { .. } => (
            "must match exactly one schema in oneOf".to_owned(),
            one("passingSchemas", Value::Null),
        ),
        ValidationErrorKind::OneOfMultipleValid { context } => {
            // A branch without errors passed; Ajv reports the first two that did.
            let passing: Vec<Value> = context
                .iter()
                .enumerate()
                .filter(|(_, branch)| branch.is_empty())
                .take(2)
                .map(|(index, _)| Value::from(index))
                .collect();
            (
                "must match exactly one schema in oneOf".to_owned(),
                one("passingSchemas", Value::from(passing)),
            )
        }
        ValidationErrorKind::Not { .. } => ("must NOT be valid".to_owned(), Map::new()),
        ValidationErrorKind::Contains => (
            "must contain at least 1 valid item(s)".to_owned(),
            one("minContains", 1.into()),
        ),
        ValidationErrorKind::PropertyNames { error } => (
            "property name must be valid".to_owned(),
            one("propertyName", clip_value(error.instance().as_ref())),
        ),
        ValidationErrorKind::FalseSchema => {
            issues.push(issue("false schema", "boolean schema is false".to_owned()));
            return;
        }
        // The validator's own text, which may quote the instance (`unevaluatedItems` lists
        // the items): the caller's own value only.
        _ => match report {
            Report::Caller => (error.to_string(), Map::new()),
            Report::HostOutput => (FALLBACK_MESSAGE.to_owned(), Map::new()),
        },
    };
    let mut issue = issue(kind.keyword(), message);
    issue.params = params;
    issues.push(issue);
}

/// A caller's value for a param: a string clipped as [`clip_text`] does; anything else (a
/// property name is always a string) as `null`, never a copy of a large value.
fn clip_value(value: &Value) -> Value {
    value
        .as_str()
        .map_or(Value::Null, |text| Value::String(clip_text(text)))
}

/// `multipleOf` as JSON: an integer when it is one (Ajv passes the schema's own number).
fn multiple_of_value(multiple_of: f64) -> Value {
    // Exact for every integer an f64 can hold below 2^53; others stay floats.
    if multiple_of.fract() == 0.0 && multiple_of.abs() < 9_007_199_254_740_992.0 {
        #[allow(clippy::cast_possible_truncation)]
        Value::from(multiple_of as i64)
    } else {
        serde_json::Number::from_f64(multiple_of).map_or(Value::Null, Value::Number)
    }
}
