//! An `OUTPUT_INVALID` outcome carries no detail of the host's invalid output beyond what the
//! reference exposes: its issues are `{instancePath, keyword, message}` with Ajv's wording
//! and no `params` (which name the output's own property names, e.g. an unexpected property),
//! and a message is never the validator's text quoting the output's values. The whole issues
//! stay on the host's side, in the `rcip::handler` debug log (tests/output_log.rs).
#![allow(clippy::unwrap_used)]

mod output_support;

use output_support::{invoke, issues, runtime, triple};
use serde_json::json;

#[tokio::test]
async fn an_unexpected_output_property_is_not_named() {
    let runtime = runtime(json!({
        "type": "object",
        "properties": {"title": {"type": "string"}},
        "required": ["title"],
        "additionalProperties": false
    }));
    let outcome = invoke(&runtime, json!({"title": "ok", "internal_db_row_id": 7})).await;
    assert_eq!(
        issues(&outcome),
        [triple(
            "",
            "additionalProperties",
            "must NOT have additional properties"
        )]
    );
    // The schema's own names may be quoted, as Ajv does: they are the contract's.
    let missing = invoke(&runtime, json!({})).await;
    assert_eq!(
        issues(&missing),
        [triple(
            "",
            "required",
            "must have required property 'title'"
        )]
    );
}

#[tokio::test]
async fn an_invalid_output_property_name_is_not_named() {
    let runtime = runtime(json!({
        "type": "object",
        "propertyNames": {"type": "string", "maxLength": 5}
    }));
    let outcome = invoke(&runtime, json!({"xsecret": 1})).await;
    let found = issues(&outcome);
    assert!(
        found.contains(&triple("", "propertyNames", "property name must be valid")),
        "{found:?}"
    );
}

#[tokio::test]
async fn a_validator_message_quoting_the_output_is_not_passed_on() {
    // jsonschema's own text for `unevaluatedItems` quotes the items; Ajv's never quotes data.
    let runtime = runtime(json!({
        "type": "array",
        "prefixItems": [{"type": "string"}],
        "minItems": 1,
        "maxItems": 1,
        "unevaluatedItems": false
    }));
    let outcome = invoke(&runtime, json!(["a", "hunter2-token"])).await;
    let found = issues(&outcome);
    assert!(
        found.contains(&triple("", "unevaluatedItems", "Schema validation failed.")),
        "{found:?}"
    );
}
