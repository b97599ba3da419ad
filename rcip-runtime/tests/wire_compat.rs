//! Reading what a newer peer wrote, refusing what a typo would change, and issues a model can
//! act on: read-side wire types ignore unknown members, definitions refuse them, and schema
//! issues carry Ajv's params.
#![allow(clippy::unwrap_used)]

use rcip_runtime::*;
use serde_json::{Value, json};

/// A runtime with one bound read capability taking `schema`.
fn runtime_with_input(schema: Value) -> (Runtime, BindingGuard) {
    let definition = ApplicationDefinition::new("forms", "Forms", "Form tests.").capability(
        CapabilityDefinition::new("forms.submit", Effect::Read, "Submit", "Submits a form.")
            .input_schema(schema),
    );
    let runtime = Runtime::new(definition, RuntimeOptions::default()).unwrap();
    let guard = runtime
        .host()
        .bind(
            "forms.submit",
            Binding::new(|_input, _ctx| async { Ok::<_, HandlerError>(Value::Null) }),
        )
        .unwrap();
    (runtime, guard)
}

async fn issues_for(schema: Value, input: Value) -> Value {
    let (runtime, _guard) = runtime_with_input(schema);
    let outcome = runtime
        .client()
        .invoke(InvocationRequest::new("forms.submit", input))
        .await;
    let json = serde_json::to_value(&outcome).unwrap();
    assert_eq!(json["error"]["code"], "INPUT_INVALID", "{json}");
    json["error"]["validationIssues"].clone()
}

// ----- params -----------------------------------------------------------------------------

/// The two issues a model most needs to fix a proposal: which property to drop, which to add.
#[tokio::test]
async fn additional_and_missing_properties_name_the_property() {
    let schema = json!({
        "type": "object",
        "properties": {"title": {"type": "string"}},
        "required": ["title"],
        "additionalProperties": false
    });
    let issues = issues_for(schema, json!({"titel": "Lunch?"})).await;
    let mut issues = issues.as_array().unwrap().clone();
    issues.sort_by_key(|i| i["keyword"].as_str().unwrap_or_default().to_owned());
    assert_eq!(
        Value::from(issues),
        json!([
            {
                "instancePath": "",
                "keyword": "additionalProperties",
                "message": "must NOT have additional properties",
                "params": {"additionalProperty": "titel"}
            },
            {
                "instancePath": "",
                "keyword": "required",
                "message": "must have required property 'title'",
                "params": {"missingProperty": "title"}
            }
        ])
    );
}

/// One issue, and so one param, per unexpected property, as Ajv reports them.
#[tokio::test]
async fn each_unexpected_property_is_its_own_issue() {
    let schema = json!({"type": "object", "properties": {}, "additionalProperties": false});
    let issues = issues_for(schema, json!({"a": 1, "b": 2})).await;
    let mut names: Vec<&str> = issues
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["params"]["additionalProperty"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["a", "b"]);
}

/// The other keywords' params, named as Ajv names them.
#[tokio::test]
async fn keyword_params_match_ajv() {
    let cases = [
        (
            json!({"type": "string"}),
            json!(3),
            json!({"instancePath": "", "keyword": "type", "message": "must be string", "params": {"type": "string"}}),
        ),
        (
            json!({"type": "integer", "minimum": 1}),
            json!(0),
            json!({"instancePath": "", "keyword": "minimum", "message": "must be >= 1", "params": {"comparison": ">=", "limit": 1}}),
        ),
        (
            json!({"type": "integer", "exclusiveMaximum": 10}),
            json!(10),
            json!({"instancePath": "", "keyword": "exclusiveMaximum", "message": "must be < 10", "params": {"comparison": "<", "limit": 10}}),
        ),
        (
            json!({"type": "string", "maxLength": 2}),
            json!("abc"),
            json!({"instancePath": "", "keyword": "maxLength", "message": "must NOT have more than 2 characters", "params": {"limit": 2}}),
        ),
        (
            json!({"type": "array", "minItems": 2}),
            json!([1]),
            json!({"instancePath": "", "keyword": "minItems", "message": "must NOT have fewer than 2 items", "params": {"limit": 2}}),
        ),
        (
            json!({"enum": ["a", "b"]}),
            json!("c"),
            json!({"instancePath": "", "keyword": "enum", "message": "must be equal to one of the allowed values", "params": {"allowedValues": ["a", "b"]}}),
        ),
        (
            json!({"const": "yes"}),
            json!("no"),
            json!({"instancePath": "", "keyword": "const", "message": "must be equal to constant", "params": {"allowedValue": "yes"}}),
        ),
        (
            json!({"type": "string", "pattern": "^a"}),
            json!("b"),
            json!({"instancePath": "", "keyword": "pattern", "message": "must match pattern \"^a\"", "params": {"pattern": "^a"}}),
        ),
        (
            json!({"type": "integer", "multipleOf": 5}),
            json!(7),
            json!({"instancePath": "", "keyword": "multipleOf", "message": "must be multiple of 5", "params": {"multipleOf": 5}}),
        ),
        (
            json!({"oneOf": [{"type": "integer"}, {"type": "number"}]}),
            json!(1),
            json!({"instancePath": "", "keyword": "oneOf", "message": "must match exactly one schema in oneOf", "params": {"passingSchemas": [0, 1]}}),
        ),
        (
            json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
            json!({"n": "x"}),
            json!({"instancePath": "/n", "keyword": "type", "message": "must be integer", "params": {"type": "integer"}}),
        ),
    ];
    for (schema, input, expected) in cases {
        let issues = issues_for(schema.clone(), input).await;
        assert_eq!(issues, json!([expected]), "schema {schema}");
    }
}

/// Keywords without params (and issues from peers that send none) have no `params` member,
/// and an issue without one reads back with empty params.
#[tokio::test]
async fn issues_without_params_omit_the_member() {
    let issues = issues_for(json!({"not": {"type": "string"}}), json!("x")).await;
    assert_eq!(
        issues,
        json!([{"instancePath": "", "keyword": "not", "message": "must NOT be valid"}])
    );
    let issue: ValidationIssue = serde_json::from_value(
        json!({"instancePath": "/a", "keyword": "type", "message": "must be string"}),
    )
    .unwrap();
    assert!(issue.params.is_empty());
    assert_eq!(issue.param("type"), None);
}

// ----- lenient reports --------------------------------------------------------------------

/// A snapshot a newer peer wrote, with members this version does not know at every level.
fn future_snapshot() -> Value {
    json!({
        "protocolVersion": "1.0",
        "revision": 3,
        "generatedBy": "rcip-ts 9.0",
        "application": {"id": "polls", "name": "Polls", "description": "Polls.", "icon": "p.svg"},
        "scopes": [{"id": "polls", "title": "Polls", "description": "The list.", "color": "red"}],
        "context": {"activeScopeIds": ["polls"], "focus": "polls"},
        "capabilities": [{
            "id": "polls.list",
            "title": "List polls",
            "description": "Lists polls.",
            "scopeIds": ["polls"],
            "effect": "read",
            "inputSchema": {"type": "object"},
            "outputSchema": {"type": "null"},
            "tags": [],
            "usage": {
                "whenToUse": "To see polls.",
                "examples": [{"description": "All.", "input": {}, "weight": 2}],
                "priority": 1
            },
            "bound": true,
            "available": true,
            "availability": {"available": true, "checkedAt": 5},
            "relevance": "current",
            "costHint": "cheap"
        }]
    })
}

#[test]
fn a_snapshot_with_unknown_members_reads_and_writes_back_without_them() {
    let snapshot: ApplicationSnapshot = serde_json::from_value(future_snapshot()).unwrap();
    assert_eq!(snapshot.capabilities[0].id, "polls.list");
    let written = serde_json::to_value(&snapshot).unwrap();
    assert_eq!(
        written,
        json!({
            "protocolVersion": "1.0",
            "revision": 3,
            "application": {"id": "polls", "name": "Polls", "description": "Polls."},
            "scopes": [{"id": "polls", "title": "Polls", "description": "The list."}],
            "context": {"activeScopeIds": ["polls"]},
            "capabilities": [{
                "id": "polls.list",
                "title": "List polls",
                "description": "Lists polls.",
                "scopeIds": ["polls"],
                "effect": "read",
                "inputSchema": {"type": "object"},
                "outputSchema": {"type": "null"},
                "tags": [],
                "usage": {"whenToUse": "To see polls.", "examples": [{"description": "All.", "input": {}}]},
                "bound": true,
                "available": true,
                "availability": {"available": true},
                "relevance": "current"
            }]
        })
    );
}

#[test]
fn outcomes_with_unknown_members_deserialize() {
    let failed: InvocationOutcome = serde_json::from_value(json!({
        "status": "failed",
        "invocationId": "i",
        "capabilityId": "c.d",
        "traceId": "t-1",
        "error": {
            "code": "INPUT_INVALID",
            "message": "The capability input does not match its declared schema.",
            "retryable": false,
            "validationIssues": [{"instancePath": "", "keyword": "type", "message": "must be object", "schemaPath": "#/type"}]
        }
    }))
    .unwrap();
    assert_eq!(failed.error_code(), Some(ErrorCode::InputInvalid));
    let confirm: InvocationOutcome = serde_json::from_value(json!({
        "status": "confirmation_required",
        "invocationId": "i",
        "capabilityId": "c.d",
        "confirmation": {"id": "x", "title": "T", "description": "D", "effect": "write", "expiresAt": 9, "risk": "low"}
    }))
    .unwrap();
    assert_eq!(confirm.confirmation().map(|c| c.expires_at), Some(9));
    let event: RuntimeEvent = serde_json::from_value(json!({
        "timestamp": 1, "invocationId": "i", "capabilityId": "c.d", "phase": "started", "durationMs": 3
    }))
    .unwrap();
    assert_eq!(event.phase, EventPhase::Started);
}

#[test]
fn a_preflight_report_with_unknown_members_deserializes() {
    let report: PreflightReport = serde_json::from_value(json!({
        "revision": 2,
        "checkedAt": 10,
        "consistent": true,
        "durationMs": 4,
        "outcomes": [
            {"status": "ready", "capabilityId": "a.b", "effect": "read", "estimate": "fast"},
            {"status": "confirmation_required", "capabilityId": "a.c", "effect": "write", "reason": "R", "x": 1},
            {"status": "blocked", "capabilityId": "a.d", "error": {"code": "CAPABILITY_UNBOUND", "message": "M", "hint": "h"}}
        ]
    }))
    .unwrap();
    assert_eq!(report.outcomes.len(), 3);
    assert_eq!(
        serde_json::to_value(&report).unwrap()["outcomes"][0],
        json!({"status": "ready", "capabilityId": "a.b", "effect": "read"})
    );
}

// ----- strict definitions -----------------------------------------------------------------

#[test]
fn a_misspelt_definition_key_is_still_refused() {
    let capability = json!({
        "id": "polls.list",
        "title": "List polls",
        "descripton": "Lists polls.",
        "effect": "read",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "null"}
    });
    let error = serde_json::from_value::<CapabilityDefinition>(capability)
        .unwrap_err()
        .to_string();
    assert!(error.contains("unknown field `descripton`"), "{error}");
    let application = json!({
        "protocolVersion": "1.0",
        "application": {"id": "polls", "name": "Polls", "description": "Polls.", "verison": "1"}
    });
    let error = serde_json::from_value::<ApplicationDefinition>(application)
        .unwrap_err()
        .to_string();
    assert!(error.contains("unknown field `verison`"), "{error}");
    let usage = json!({"whenToUse": "Always.", "exampels": []});
    let error = serde_json::from_value::<UsageGuidance>(usage)
        .unwrap_err()
        .to_string();
    assert!(error.contains("unknown field `exampels`"), "{error}");
}

/// A filter is an instruction, not a report: a criterion this version does not know would be
/// silently dropped and widen the answer, so it is refused.
#[test]
fn a_filter_with_an_unknown_criterion_is_refused() {
    assert!(serde_json::from_value::<CapabilityFilter>(json!({"availableOnly": true})).is_ok());
    let error = serde_json::from_value::<CapabilityFilter>(json!({"availabelOnly": true}))
        .unwrap_err()
        .to_string();
    assert!(error.contains("unknown field `availabelOnly`"), "{error}");
}

// ----- requests from the reference's JSON --------------------------------------------------

fn read_schema() -> Value {
    json!({"type": "object", "properties": {"name": {"type": "string"}}, "additionalProperties": false})
}

#[tokio::test]
async fn an_invocation_request_parses_from_the_reference_json() {
    let (runtime, _guard) = runtime_with_input(read_schema());
    let request: InvocationRequest = serde_json::from_value(json!({
        "capabilityId": "forms.submit",
        "input": {"name": "Ada"},
        "invocationId": "inv-7",
        "signal": {}
    }))
    .unwrap();
    let outcome = runtime.client().invoke(request).await;
    assert_eq!(
        serde_json::to_value(&outcome).unwrap(),
        json!({"status": "succeeded", "invocationId": "inv-7", "capabilityId": "forms.submit", "output": null})
    );
    // `null` is the reference's `??`: an id is generated.
    let request: InvocationRequest = serde_json::from_value(
        json!({"capabilityId": "forms.submit", "input": {}, "invocationId": null}),
    )
    .unwrap();
    assert_eq!(request.invocation_id, None);
}

/// A request without `input` reaches the reference's "not a JSON value" answer; `null` is a
/// JSON value and goes on to the schema.
#[tokio::test]
async fn a_request_without_input_is_input_invalid_not_a_parse_error() {
    let (runtime, _guard) = runtime_with_input(read_schema());
    let request: InvocationRequest =
        serde_json::from_value(json!({"capabilityId": "forms.submit", "invocationId": "i"}))
            .unwrap();
    assert_eq!(request.input, Input::Missing);
    let outcome = runtime.client().invoke(request).await;
    assert_eq!(
        serde_json::to_value(&outcome).unwrap(),
        json!({
            "status": "failed",
            "invocationId": "i",
            "capabilityId": "forms.submit",
            "error": {"code": "INPUT_INVALID", "message": "The capability input must be a JSON value."}
        })
    );
    let request: InvocationRequest =
        serde_json::from_value(json!({"capabilityId": "forms.submit", "input": null})).unwrap();
    let outcome = runtime.client().invoke(request).await;
    let error = outcome.error().unwrap();
    assert_eq!(error.code, ErrorCode::InputInvalid);
    assert_eq!(
        error.message,
        "The capability input does not match its declared schema."
    );
}

/// Without a string capability id there is nothing to answer for: the parse fails, with the
/// field named.
#[test]
fn an_invocation_request_needs_a_string_capability_id() {
    for (json, expected) in [
        (json!({"input": {}}), "missing field `capabilityId`"),
        (
            json!({"capabilityId": 3, "input": {}}),
            "invalid type: integer `3`, expected a string",
        ),
    ] {
        let error = serde_json::from_value::<InvocationRequest>(json)
            .unwrap_err()
            .to_string();
        assert!(error.contains(expected), "{error}");
    }
}

#[tokio::test]
async fn a_preflight_batch_parses_and_malformed_proposals_are_blocked() {
    let (runtime, _guard) = runtime_with_input(read_schema());
    let batch: PreflightBatch = serde_json::from_value(json!({
        "requests": [
            {"capabilityId": "forms.submit", "input": {"name": "Ada"}},
            {"capabilityId": 7, "input": {}},
            null,
            {"capabilityId": "forms.submit"},
            {"capabilityId": "forms.submit", "input": {"nmae": "Ada"}}
        ],
        "signal": null
    }))
    .unwrap();
    let report = runtime.client().preflight(batch).await.unwrap();
    let not_json = json!({"code": "INPUT_INVALID", "message": "The proposed capability input must be a JSON value."});
    assert_eq!(
        serde_json::to_value(&report.outcomes).unwrap(),
        json!([
            {"status": "ready", "capabilityId": "forms.submit", "effect": "read"},
            {"status": "blocked", "capabilityId": "unknown", "error": not_json},
            {"status": "blocked", "capabilityId": "unknown", "error": not_json},
            {"status": "blocked", "capabilityId": "forms.submit", "error": not_json},
            {"status": "blocked", "capabilityId": "forms.submit", "error": {
                "code": "INPUT_INVALID",
                "message": "The capability input does not match its declared schema.",
                "validationIssues": [{
                    "instancePath": "",
                    "keyword": "additionalProperties",
                    "message": "must NOT have additional properties",
                    "params": {"additionalProperty": "nmae"}
                }]
            }}
        ])
    );
}

/// `requests` that is not an array is the reference's `RangeError`, not a parse failure.
#[tokio::test]
async fn a_batch_without_a_request_array_is_the_batch_size_error() {
    let (runtime, _guard) = runtime_with_input(read_schema());
    for json in [
        json!({}),
        json!({"requests": {"capabilityId": "forms.submit"}}),
    ] {
        let batch: PreflightBatch = serde_json::from_value(json).unwrap();
        let error = runtime.client().preflight(batch).await.unwrap_err();
        assert!(matches!(error, Error::PreflightBatchSize(0)), "{error:?}");
        assert_eq!(
            error.to_string(),
            "RCIP preflight requires between 1 and 16 independent proposals."
        );
    }
}

// ----- constructors of the non-exhaustive reports ----------------------------------------------

/// Outside rcip-core a snapshot entry is made with `new`, which keeps the reference's rule
/// `available = bound && availability.available`.
#[test]
fn a_capability_snapshot_derives_available() {
    let definition = CapabilityDefinition::new("a.b", Effect::Read, "A", "B.");
    let contract = std::sync::Arc::new(rcip_runtime::rcip_core::CapabilityContract::from(
        &definition,
    ));
    let entry = |bound, availability| {
        CapabilitySnapshot::new(contract.clone(), bound, availability, Relevance::Current)
    };
    assert!(entry(true, Some(Availability::available())).available);
    assert!(!entry(false, Some(Availability::available())).available);
    assert!(!entry(true, None).available);
    let unavailable: Availability =
        serde_json::from_value(json!({"available": false, "reason": "Offline."})).unwrap();
    assert!(!entry(true, Some(unavailable)).available);
}
