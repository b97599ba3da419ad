//! The JSON wire forms (reference sections 2.1, 3.8, 4.2, 4.3 and 5), checked against JSON
//! written by hand from the reference's shapes, then deserialized back.
#![allow(clippy::unwrap_used)]

mod common;

use std::fmt;
use std::sync::Arc;

use common::{EventRecorder, ManualClock};
use rcip_runtime::*;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use serde_json::{Value, json};

const T0: u64 = 1_700_000_000_000;

// ----- fixture ------------------------------------------------------------------------------------

fn list_input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"limit": {"type": "integer", "minimum": 1}},
        "additionalProperties": false
    })
}

fn definition() -> ApplicationDefinition {
    ApplicationDefinition::new("tasks", "Tasks", "A task list.")
        .version("2.1.0")
        .scope(ScopeDefinition::new("tasks", "Tasks", "All tasks."))
        .scope(ScopeDefinition::new("tasks.done", "Done", "Completed tasks.").parent("tasks"))
        .capability(
            CapabilityDefinition::new(
                "tasks.list",
                Effect::Read,
                "List tasks",
                "Lists open tasks.",
            )
            .scope("tasks")
            .input_schema(list_input_schema())
            .output_schema(json!({"type": "array", "items": {"type": "string"}}))
            .tag("query")
            .tag("list")
            .usage(
                UsageGuidance::new("When the user asks what is on the list.")
                    .example("The first ten tasks", json!({"limit": 10})),
            ),
        )
        .capability(
            CapabilityDefinition::new(
                "tasks.archive",
                Effect::Write,
                "Archive done tasks",
                "Moves done tasks to the archive.",
            )
            .scope("tasks.done"),
        )
        .capability(CapabilityDefinition::new(
            "tasks.clear",
            Effect::Destructive,
            "Clear tasks",
            "Removes every task.",
        ))
}

struct Fixture {
    runtime: Runtime,
    clock: Arc<ManualClock>,
    events: EventRecorder,
    _guards: Vec<BindingGuard>,
}

/// `tasks.list` bound and available, `tasks.archive` bound but unavailable, `tasks.clear`
/// unbound; context `[tasks.done]` with primary `tasks.done`. Revision 3.
fn fixture() -> Fixture {
    let clock = ManualClock::at(T0);
    let events = EventRecorder::default();
    let runtime = Runtime::new(
        definition(),
        RuntimeOptions::default()
            .clock(clock.clone())
            .on_event(events.observer()),
    )
    .unwrap();
    let host = runtime.host();
    let guards = vec![
        host.bind(
            "tasks.list",
            Binding::new(|_input: Value, _ctx: InvocationContext| async {
                Ok::<_, HandlerError>(json!(["Buy milk", "Call Ana"]))
            }),
        )
        .unwrap(),
        host.bind(
            "tasks.archive",
            Binding::new(|_input: Value, _ctx: InvocationContext| async {
                Ok::<_, HandlerError>(Value::Null)
            })
            .with_availability(|| {
                Availability::unavailable("READ_ONLY", "The list is read-only right now.")
            }),
        )
        .unwrap(),
    ];
    host.set_context(SemanticContext::active(["tasks.done"]).primary("tasks.done"))
        .unwrap();
    Fixture {
        runtime,
        clock,
        events,
        _guards: guards,
    }
}

fn bind_clear(runtime: &Runtime) -> BindingGuard {
    runtime
        .host()
        .bind(
            "tasks.clear",
            Binding::new(|_input: Value, _ctx: InvocationContext| async {
                Ok::<_, HandlerError>(Value::Null)
            }),
        )
        .unwrap()
}

/// Serializes, compares with the hand-written JSON, deserializes back and compares with the
/// original value.
fn assert_wire<T>(value: &T, expected: &Value)
where
    T: Serialize + DeserializeOwned + PartialEq + fmt::Debug,
{
    let json = serde_json::to_value(value).unwrap();
    assert_eq!(&json, expected);
    let back: T = serde_json::from_value(json).unwrap();
    assert_eq!(&back, value);
    // And through text, as a transport would carry it.
    let text = serde_json::to_string(value).unwrap();
    let back: T = serde_json::from_str(&text).unwrap();
    assert_eq!(&back, value);
}

/// The top-level keys of a JSON object text, in their written order.
struct Keys(Vec<String>);

impl<'de> Deserialize<'de> for Keys {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeysVisitor;
        impl<'de> Visitor<'de> for KeysVisitor {
            type Value = Keys;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Keys, A::Error> {
                let mut keys = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    map.next_value::<IgnoredAny>()?;
                    keys.push(key);
                }
                Ok(Keys(keys))
            }
        }
        deserializer.deserialize_map(KeysVisitor)
    }
}

fn key_order(value: &impl Serialize) -> Vec<String> {
    let text = serde_json::to_string(value).unwrap();
    serde_json::from_str::<Keys>(&text).unwrap().0
}

// ----- 2.1 snapshot --------------------------------------------------------------------------------

/// 2.1: the snapshot's JSON, field for field: optional keys (`version`, `parentId`,
/// `primaryScopeId`, `usage`, `availability`, `reasonCode`, `reason`) present when set and
/// absent (not null) when not; `tags` is `[]` when none were declared.
#[test]
fn snapshot_json_matches_the_reference_shape() {
    let fixture = fixture();
    let snapshot = fixture.runtime.client().get_snapshot();
    let expected = json!({
        "protocolVersion": "1.0",
        "revision": 3,
        "application": {
            "id": "tasks",
            "name": "Tasks",
            "description": "A task list.",
            "version": "2.1.0"
        },
        "scopes": [
            {"id": "tasks", "title": "Tasks", "description": "All tasks."},
            {"id": "tasks.done", "title": "Done", "description": "Completed tasks.", "parentId": "tasks"}
        ],
        "context": {"activeScopeIds": ["tasks.done"], "primaryScopeId": "tasks.done"},
        "capabilities": [
            {
                "id": "tasks.list",
                "title": "List tasks",
                "description": "Lists open tasks.",
                "scopeIds": ["tasks"],
                "effect": "read",
                "inputSchema": {
                    "type": "object",
                    "properties": {"limit": {"type": "integer", "minimum": 1}},
                    "additionalProperties": false
                },
                "outputSchema": {"type": "array", "items": {"type": "string"}},
                "tags": ["query", "list"],
                "usage": {
                    "whenToUse": "When the user asks what is on the list.",
                    "examples": [{"description": "The first ten tasks", "input": {"limit": 10}}]
                },
                "bound": true,
                "available": true,
                "availability": {"available": true},
                "relevance": "other"
            },
            {
                "id": "tasks.archive",
                "title": "Archive done tasks",
                "description": "Moves done tasks to the archive.",
                "scopeIds": ["tasks.done"],
                "effect": "write",
                "inputSchema": {"type": "object", "properties": {}, "additionalProperties": false},
                "outputSchema": {"type": "null"},
                "tags": [],
                "bound": true,
                "available": false,
                "availability": {
                    "available": false,
                    "reasonCode": "READ_ONLY",
                    "reason": "The list is read-only right now."
                },
                "relevance": "current"
            },
            {
                "id": "tasks.clear",
                "title": "Clear tasks",
                "description": "Removes every task.",
                "scopeIds": [],
                "effect": "destructive",
                "inputSchema": {"type": "object", "properties": {}, "additionalProperties": false},
                "outputSchema": {"type": "null"},
                "tags": [],
                "bound": false,
                "available": false,
                "relevance": "current"
            }
        ]
    });
    assert_wire(&*snapshot, &expected);

    // Absent means absent, not null.
    let json = serde_json::to_value(&*snapshot).unwrap();
    let clear = json["capabilities"][2].as_object().unwrap();
    assert!(!clear.contains_key("usage"));
    assert!(!clear.contains_key("availability"));
    assert!(
        !json["scopes"][0]
            .as_object()
            .unwrap()
            .contains_key("parentId")
    );
}

/// 2.1: the initial context is `{"activeScopeIds": []}` (no primary key) and an application
/// without version has no `version` key.
#[test]
fn initial_context_and_metadata_json() {
    let runtime = Runtime::new(
        ApplicationDefinition::new("app", "App", "An app."),
        RuntimeOptions::default(),
    )
    .unwrap();
    let snapshot = runtime.client().get_snapshot();
    assert_wire(
        &*snapshot,
        &json!({
            "protocolVersion": "1.0",
            "revision": 0,
            "application": {"id": "app", "name": "App", "description": "An app."},
            "scopes": [],
            "context": {"activeScopeIds": []},
            "capabilities": []
        }),
    );
}

/// 2.1: the keys of a capability entry are written in the reference's order, and so are the
/// snapshot's own keys.
#[test]
fn snapshot_key_order_matches_the_reference() {
    let fixture = fixture();
    let snapshot = fixture.runtime.client().get_snapshot();
    assert_eq!(
        key_order(&*snapshot),
        [
            "protocolVersion",
            "revision",
            "application",
            "scopes",
            "context",
            "capabilities"
        ]
    );
    assert_eq!(
        key_order(&snapshot.capabilities[0]),
        [
            "id",
            "title",
            "description",
            "scopeIds",
            "effect",
            "inputSchema",
            "outputSchema",
            "tags",
            "usage",
            "bound",
            "available",
            "availability",
            "relevance"
        ]
    );
    // Without the optional keys, the rest keep their order.
    assert_eq!(
        key_order(&snapshot.capabilities[2]),
        [
            "id",
            "title",
            "description",
            "scopeIds",
            "effect",
            "inputSchema",
            "outputSchema",
            "tags",
            "bound",
            "available",
            "relevance"
        ]
    );
    assert_eq!(
        key_order(snapshot.capabilities[1].availability.as_ref().unwrap()),
        ["available", "reasonCode", "reason"]
    );
}

// ----- 4.2 outcomes -----------------------------------------------------------------------------------

/// 4.2: `succeeded` is `{status, invocationId, capabilityId, output}`.
#[tokio::test]
async fn succeeded_outcome_json() {
    let fixture = fixture();
    let outcome = fixture
        .runtime
        .client()
        .invoke(InvocationRequest::new("tasks.list", json!({"limit": 2})).with_id("inv-1"))
        .await;
    assert_wire(
        &outcome,
        &json!({
            "status": "succeeded",
            "invocationId": "inv-1",
            "capabilityId": "tasks.list",
            "output": ["Buy milk", "Call Ana"]
        }),
    );
}

/// 4.2/3.6: `confirmation_required` carries `{id, title, description, effect, expiresAt}`;
/// `expiresAt` is the clock plus the default 120 000 ms TTL.
#[tokio::test]
async fn confirmation_required_outcome_json() {
    let fixture = fixture();
    let _clear = bind_clear(&fixture.runtime);
    let outcome = fixture
        .runtime
        .client()
        .invoke(InvocationRequest::new("tasks.clear", json!({})).with_id("inv-2"))
        .await;
    let id = outcome.confirmation().unwrap().id.clone();
    assert!(id.starts_with("confirmation_"), "{id}");
    assert_wire(
        &outcome,
        &json!({
            "status": "confirmation_required",
            "invocationId": "inv-2",
            "capabilityId": "tasks.clear",
            "confirmation": {
                "id": id,
                "title": "Clear tasks",
                "description": "Removes every task.",
                "effect": "destructive",
                "expiresAt": T0 + 120_000
            }
        }),
    );
}

/// 4.2: a schema failure is `failed` with `error.validationIssues`
/// (`{instancePath, keyword, message}` each).
#[tokio::test]
async fn failed_outcome_with_validation_issues_json() {
    let fixture = fixture();
    let outcome = fixture
        .runtime
        .client()
        .invoke(InvocationRequest::new("tasks.list", json!({"limit": 0})).with_id("inv-3"))
        .await;
    assert_wire(
        &outcome,
        &json!({
            "status": "failed",
            "invocationId": "inv-3",
            "capabilityId": "tasks.list",
            "error": {
                "code": "INPUT_INVALID",
                "message": "The capability input does not match its declared schema.",
                "validationIssues": [
                    {
                        "instancePath": "/limit",
                        "keyword": "minimum",
                        "message": "must be >= 1",
                        "params": {"comparison": ">=", "limit": 1}
                    }
                ]
            }
        }),
    );
}

/// 4.2: other failures have no `validationIssues` key at all (not null); the host's
/// availability reason is the message.
#[tokio::test]
async fn failed_outcome_without_validation_issues_json() {
    let fixture = fixture();
    let outcome = fixture
        .runtime
        .client()
        .invoke(InvocationRequest::new("tasks.archive", json!({})).with_id("inv-4"))
        .await;
    assert_wire(
        &outcome,
        &json!({
            "status": "failed",
            "invocationId": "inv-4",
            "capabilityId": "tasks.archive",
            "error": {
                "code": "CAPABILITY_UNAVAILABLE",
                "message": "The list is read-only right now."
            }
        }),
    );
    let json = serde_json::to_value(&outcome).unwrap();
    assert!(
        !json["error"]
            .as_object()
            .unwrap()
            .contains_key("validationIssues")
    );
}

/// 4.2/3.6: `denied` (a declined confirmation) without `validationIssues`.
#[tokio::test]
async fn denied_outcome_json() {
    let fixture = fixture();
    let _clear = bind_clear(&fixture.runtime);
    let pending = fixture
        .runtime
        .client()
        .invoke(InvocationRequest::new("tasks.clear", json!({})).with_id("inv-5"))
        .await;
    let id = pending.confirmation().unwrap().id.clone();
    let outcome = fixture
        .runtime
        .host()
        .resolve_confirmation(&id, false)
        .await;
    assert_wire(
        &outcome,
        &json!({
            "status": "denied",
            "invocationId": "inv-5",
            "capabilityId": "tasks.clear",
            "error": {
                "code": "CONFIRMATION_DECLINED",
                "message": "The user declined the requested operation."
            }
        }),
    );
    let json = serde_json::to_value(&outcome).unwrap();
    assert!(
        !json["error"]
            .as_object()
            .unwrap()
            .contains_key("validationIssues")
    );
}

/// 4.2: constructed outcomes of every form round-trip (a policy denial with a custom reason,
/// an OUTPUT_INVALID with issues).
#[test]
fn constructed_outcomes_round_trip() {
    let denied = InvocationOutcome::from_error(
        "i".into(),
        "c.d".into(),
        RcipError::new(ErrorCode::PolicyDenied, "Not on weekends."),
    );
    assert_wire(
        &denied,
        &json!({
            "status": "denied",
            "invocationId": "i",
            "capabilityId": "c.d",
            "error": {"code": "POLICY_DENIED", "message": "Not on weekends."}
        }),
    );
    let output_invalid = InvocationOutcome::from_error(
        String::new(),
        "c.d".into(),
        RcipError::with_issues(
            ErrorCode::OutputInvalid,
            "The capability output does not match its declared schema.",
            vec![ValidationIssue::new("", "type", "must be string")],
        ),
    );
    assert_wire(
        &output_invalid,
        &json!({
            "status": "failed",
            "invocationId": "",
            "capabilityId": "c.d",
            "error": {
                "code": "OUTPUT_INVALID",
                "message": "The capability output does not match its declared schema.",
                "validationIssues": [{"instancePath": "", "keyword": "type", "message": "must be string"}]
            }
        }),
    );
}

// ----- 5 preflight -------------------------------------------------------------------------------

/// 5: `{revision, checkedAt, consistent, outcomes}` with `ready {capabilityId, effect}`,
/// `confirmation_required {capabilityId, effect, reason}` and `blocked {capabilityId, error}`,
/// in input order.
#[tokio::test]
async fn preflight_report_json() {
    let fixture = fixture();
    let _clear = bind_clear(&fixture.runtime);
    fixture.clock.advance(250);
    let report = fixture
        .runtime
        .client()
        .preflight(PreflightBatch::new(vec![
            PreflightProposal::new("tasks.list", json!({})),
            PreflightProposal::new("tasks.clear", json!({})),
            PreflightProposal::new("tasks.archive", json!({})),
            PreflightProposal::new("tasks.list", json!({"limit": 0})),
            PreflightProposal::new("tasks.nope", json!({})),
            PreflightProposal::new("tasks.list", Input::text("{nope")),
        ]))
        .await
        .unwrap();
    assert_wire(
        &report,
        &json!({
            "revision": 4,
            "checkedAt": T0 + 250,
            "consistent": true,
            "outcomes": [
                {"status": "ready", "capabilityId": "tasks.list", "effect": "read"},
                {
                    "status": "confirmation_required",
                    "capabilityId": "tasks.clear",
                    "effect": "destructive",
                    "reason": "Removes every task."
                },
                {
                    "status": "blocked",
                    "capabilityId": "tasks.archive",
                    "error": {"code": "CAPABILITY_UNAVAILABLE", "message": "The list is read-only right now."}
                },
                {
                    "status": "blocked",
                    "capabilityId": "tasks.list",
                    "error": {
                        "code": "INPUT_INVALID",
                        "message": "The capability input does not match its declared schema.",
                        "validationIssues": [
                            {
                        "instancePath": "/limit",
                        "keyword": "minimum",
                        "message": "must be >= 1",
                        "params": {"comparison": ">=", "limit": 1}
                    }
                        ]
                    }
                },
                {
                    "status": "blocked",
                    "capabilityId": "tasks.nope",
                    "error": {
                        "code": "CAPABILITY_NOT_FOUND",
                        "message": "The requested capability is not part of this application."
                    }
                },
                {
                    "status": "blocked",
                    "capabilityId": "tasks.list",
                    "error": {
                        "code": "INPUT_INVALID",
                        "message": "The proposed capability input must be a JSON value."
                    }
                }
            ]
        }),
    );
}

/// 5: a stale report: `consistent: false` and a `PREFLIGHT_STALE` blocked outcome.
#[test]
fn stale_preflight_report_round_trips() {
    let report = PreflightReport::new(
        7,
        T0,
        false,
        vec![PreflightOutcome::Blocked {
            capability_id: "tasks.list".into(),
            error: RcipError::new(
                ErrorCode::PreflightStale,
                "Application discovery changed during preflight. Check the current state again.",
            ),
        }],
    );
    assert_wire(
        &report,
        &json!({
            "revision": 7,
            "checkedAt": T0,
            "consistent": false,
            "outcomes": [{
                "status": "blocked",
                "capabilityId": "tasks.list",
                "error": {
                    "code": "PREFLIGHT_STALE",
                    "message": "Application discovery changed during preflight. Check the current state again."
                }
            }]
        }),
    );
}

// ----- 3.8 events ----------------------------------------------------------------------------------

/// 3.8: `{timestamp, invocationId, capabilityId, phase, errorCode?}`: `errorCode` only on
/// failed/denied/declined phases, absent otherwise.
#[tokio::test]
async fn runtime_event_json() {
    let fixture = fixture();
    let client = fixture.runtime.client();
    let ok = client
        .invoke(InvocationRequest::new("tasks.list", json!({})).with_id("inv-1"))
        .await;
    assert_eq!(ok.status(), OutcomeStatus::Succeeded);
    fixture.clock.advance(5);
    let failed = client
        .invoke(InvocationRequest::new("tasks.archive", json!({})).with_id("inv-2"))
        .await;
    assert_eq!(failed.error_code(), Some(ErrorCode::CapabilityUnavailable));

    let events = fixture.events.events();
    let expected = json!([
        {"timestamp": T0, "invocationId": "inv-1", "capabilityId": "tasks.list", "phase": "requested"},
        {"timestamp": T0, "invocationId": "inv-1", "capabilityId": "tasks.list", "phase": "started"},
        {"timestamp": T0, "invocationId": "inv-1", "capabilityId": "tasks.list", "phase": "succeeded"},
        {"timestamp": T0 + 5, "invocationId": "inv-2", "capabilityId": "tasks.archive", "phase": "requested"},
        {
            "timestamp": T0 + 5,
            "invocationId": "inv-2",
            "capabilityId": "tasks.archive",
            "phase": "failed",
            "errorCode": "CAPABILITY_UNAVAILABLE"
        }
    ]);
    assert_wire(&events, &expected);
    assert_eq!(
        key_order(&events[4]),
        [
            "timestamp",
            "invocationId",
            "capabilityId",
            "phase",
            "errorCode"
        ]
    );
}

/// 3.8: every phase's wire string.
#[test]
fn event_phase_wire_strings() {
    let phases = [
        (EventPhase::Requested, "requested"),
        (EventPhase::ConfirmationRequested, "confirmation_requested"),
        (EventPhase::ConfirmationDeclined, "confirmation_declined"),
        (EventPhase::Started, "started"),
        (EventPhase::Succeeded, "succeeded"),
        (EventPhase::Failed, "failed"),
        (EventPhase::Denied, "denied"),
    ];
    for (phase, wire) in phases {
        assert_wire(&phase, &json!(wire));
        assert_eq!(phase.as_str(), wire);
    }
}

// ----- 4.3 codes and enums ----------------------------------------------------------------------------

/// 4.3: every code serializes to its `as_str()` string (the reference's table, written out
/// here) and round-trips; only the two denial codes have status `denied`.
#[test]
fn error_codes_serialize_to_their_wire_strings() {
    let reference = [
        "CAPABILITY_NOT_FOUND",
        "CAPABILITY_UNBOUND",
        "CAPABILITY_UNAVAILABLE",
        "INPUT_INVALID",
        "POLICY_DENIED",
        "POLICY_EVALUATION_FAILED",
        "CONFIRMATION_DECLINED",
        "CONFIRMATION_EXPIRED",
        "CONFIRMATION_NOT_FOUND",
        "EXECUTION_ABORTED",
        "EXECUTION_FAILED",
        "OUTPUT_INVALID",
        "INVOCATION_ALREADY_ACTIVE",
        "PREFLIGHT_STALE",
    ];
    assert_eq!(ErrorCode::ALL.len(), reference.len());
    for (code, wire) in ErrorCode::ALL.into_iter().zip(reference) {
        assert_eq!(code.as_str(), wire);
        assert_eq!(code.to_string(), wire);
        assert_wire(&code, &json!(wire));
        let expected_status = if matches!(wire, "POLICY_DENIED" | "CONFIRMATION_DECLINED") {
            OutcomeStatus::Denied
        } else {
            OutcomeStatus::Failed
        };
        assert_eq!(code.status(), expected_status, "{wire}");
    }
    assert!(serde_json::from_value::<ErrorCode>(json!("NOT_A_CODE")).is_err());
}

/// 1.5, 2.1, 4.2: the other enums' wire strings.
#[test]
fn effect_relevance_and_status_wire_strings() {
    for (effect, wire) in [
        (Effect::Read, "read"),
        (Effect::Write, "write"),
        (Effect::External, "external"),
        (Effect::Destructive, "destructive"),
    ] {
        assert_wire(&effect, &json!(wire));
    }
    assert_wire(&Relevance::Current, &json!("current"));
    assert_wire(&Relevance::Other, &json!("other"));
    for (status, wire) in [
        (OutcomeStatus::Succeeded, "succeeded"),
        (OutcomeStatus::ConfirmationRequired, "confirmation_required"),
        (OutcomeStatus::Failed, "failed"),
        (OutcomeStatus::Denied, "denied"),
    ] {
        assert_wire(&status, &json!(wire));
    }
}
