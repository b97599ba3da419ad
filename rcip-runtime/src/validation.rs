//! Compiled JSON Schema validators and the consumer-facing form of their failures.

use std::sync::Arc;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use rcip_core::ValidationIssue;
use serde_json::Value;

/// One compiled draft 2020-12 validator, shared by every capability with the same schema.
pub struct SchemaValidator {
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for SchemaValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SchemaValidator")
    }
}

impl SchemaValidator {
    /// Compiles a schema (this also checks it against the 2020-12 meta-schema). Returns
    /// the validator's message on failure.
    pub fn compile(schema: &Value) -> Result<Arc<Self>, String> {
        Self::build(schema, false)
    }

    /// Compiles a schema of a relationship package: the same, plus `format` validation (the
    /// package subset's one format, `date-time`, is enforced on records and command input).
    pub fn compile_with_formats(schema: &Value) -> Result<Arc<Self>, String> {
        Self::build(schema, true)
    }

    fn build(schema: &Value, formats: bool) -> Result<Arc<Self>, String> {
        jsonschema::draft202012::options()
            .should_validate_formats(formats)
            .build(schema)
            .map(|validator| Arc::new(SchemaValidator { validator }))
            .map_err(|e| e.to_string())
    }

    /// Validates an instance: the fast `is_valid` first, every issue only on failure.
    pub fn check(&self, instance: &Value) -> Result<(), Vec<ValidationIssue>> {
        if self.validator.is_valid(instance) {
            return Ok(());
        }
        let mut issues = Vec::new();
        for error in self.validator.iter_errors(instance) {
            push_issues(&mut issues, &error);
        }
        if issues.is_empty() {
            issues.push(ValidationIssue {
                instance_path: String::new(),
                keyword: "false schema".to_owned(),
                message: "Schema validation failed.".to_owned(),
            });
        }
        Err(issues)
    }
}

/// Converts one validator error into the issues Ajv (the reference's validator) would
/// report for it: same `instancePath` and `keyword`, and Ajv's wording for the common
/// keywords so consumers that match on messages keep working. Ajv reports one issue per
/// unexpected property; so do we.
fn push_issues(issues: &mut Vec<ValidationIssue>, error: &jsonschema::ValidationError<'_>) {
    let path = error.instance_path().to_string();
    let kind = error.kind();
    let issue = |keyword: &str, message: String| ValidationIssue {
        instance_path: path.clone(),
        keyword: keyword.to_owned(),
        message,
    };
    let message = match kind {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            for _ in unexpected {
                issues.push(issue(
                    "additionalProperties",
                    "must NOT have additional properties".to_owned(),
                ));
            }
            return;
        }
        ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            for _ in unexpected {
                issues.push(issue(
                    "unevaluatedProperties",
                    "must NOT have unevaluated properties".to_owned(),
                ));
            }
            return;
        }
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_owned);
            format!("must have required property '{name}'")
        }
        ValidationErrorKind::Type { kind } => match kind {
            TypeKind::Single(t) => format!("must be {t}"),
            TypeKind::Multiple(set) => {
                let names: Vec<String> = set.iter().map(|t| t.to_string()).collect();
                format!("must be {}", names.join(","))
            }
        },
        ValidationErrorKind::MinLength { limit } => {
            format!("must NOT have fewer than {limit} characters")
        }
        ValidationErrorKind::MaxLength { limit } => {
            format!("must NOT have more than {limit} characters")
        }
        ValidationErrorKind::MinItems { limit } => {
            format!("must NOT have fewer than {limit} items")
        }
        ValidationErrorKind::MaxItems { limit } => format!("must NOT have more than {limit} items"),
        ValidationErrorKind::MinProperties { limit } => {
            format!("must NOT have fewer than {limit} properties")
        }
        ValidationErrorKind::MaxProperties { limit } => {
            format!("must NOT have more than {limit} properties")
        }
        ValidationErrorKind::Minimum { limit } => format!("must be >= {limit}"),
        ValidationErrorKind::Maximum { limit } => format!("must be <= {limit}"),
        ValidationErrorKind::ExclusiveMinimum { limit } => format!("must be > {limit}"),
        ValidationErrorKind::ExclusiveMaximum { limit } => format!("must be < {limit}"),
        ValidationErrorKind::MultipleOf { multiple_of } => {
            format!("must be multiple of {multiple_of}")
        }
        ValidationErrorKind::Enum { .. } => "must be equal to one of the allowed values".to_owned(),
        ValidationErrorKind::Constant { .. } => "must be equal to constant".to_owned(),
        ValidationErrorKind::Pattern { pattern } => format!("must match pattern \"{pattern}\""),
        ValidationErrorKind::UniqueItems => "must NOT have duplicate items".to_owned(),
        ValidationErrorKind::AnyOf { .. } => "must match a schema in anyOf".to_owned(),
        ValidationErrorKind::OneOfNotValid { .. }
        | ValidationErrorKind::OneOfMultipleValid { .. } => {
            "must match exactly one schema in oneOf".to_owned()
        }
        ValidationErrorKind::Not { .. } => "must NOT be valid".to_owned(),
        ValidationErrorKind::Contains => "must contain at least 1 valid item(s)".to_owned(),
        ValidationErrorKind::PropertyNames { .. } => "property name must be valid".to_owned(),
        ValidationErrorKind::FalseSchema => {
            issues.push(issue("false schema", "boolean schema is false".to_owned()));
            return;
        }
        _ => error.to_string(),
    };
    issues.push(issue(kind.keyword(), message));
}
