//! Definition validation at runtime creation (reference sections 1.1-1.10), rcip's additions
//! (protocol version, blank texts, parent cycles, duplicate capability scopes, eager schema
//! checks), JSON loading, and schema/serde agreement.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rcip_runtime::rcip_core::SchemaRole;
use rcip_runtime::*;
use serde::Deserialize;
use serde_json::{Value, json};

// ----- fixtures ---------------------------------------------------------------------------------

fn app() -> ApplicationDefinition {
    ApplicationDefinition::new("notes", "Notes", "A notebook.")
}

fn scope(id: &str) -> ScopeDefinition {
    ScopeDefinition::new(id, format!("Title {id}"), format!("Description {id}."))
}

fn cap(id: &str) -> CapabilityDefinition {
    CapabilityDefinition::new(
        id,
        Effect::Read,
        format!("Title {id}"),
        format!("Description {id}."),
    )
}

/// `{"title": string}` (required), nothing else.
fn title_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"title": {"type": "string", "minLength": 1}},
        "required": ["title"],
        "additionalProperties": false
    })
}

fn create(definition: ApplicationDefinition) -> Result<Runtime, Error> {
    Runtime::new(definition, RuntimeOptions::default())
}

/// The error `Runtime::new` gives, as `(code, message)`.
fn refusal(definition: ApplicationDefinition) -> (&'static str, String) {
    let err = create(definition).unwrap_err();
    assert!(matches!(err, Error::Definition(_)), "{err:?}");
    (err.code(), err.to_string())
}

fn assert_refused(definition: ApplicationDefinition, code: &str, message: &str) {
    assert_eq!(refusal(definition), (code, message.to_owned()));
}

/// `(capability id, role, rule, pointer)` of an `INVALID_SCHEMA` refusal, and its message.
fn schema_refusal(
    definition: ApplicationDefinition,
) -> ((String, SchemaRole, &'static str, String), String) {
    let err = create(definition).unwrap_err();
    let message = err.to_string();
    assert_eq!(err.code(), "INVALID_SCHEMA", "{message}");
    match err {
        Error::Definition(DefinitionError::InvalidSchema {
            id,
            role,
            rule,
            pointer,
            ..
        }) => ((id, role, rule, pointer), message),
        other => panic!("not an InvalidSchema error: {other:?}"),
    }
}

// ----- 1.10 #1: application id ------------------------------------------------------------------

/// 1.10 #1: an application id outside the grammar.
#[test]
fn invalid_application_id() {
    for id in ["Notes", "1notes", "notes.", "todos..create", "a.B", ""] {
        let mut definition = app();
        definition.application.id = id.to_owned();
        assert_refused(
            definition,
            "INVALID_APPLICATION_ID",
            &format!("Invalid RCIP application id: {id}"),
        );
    }
}

// ----- 1.10 #2: scope ids -----------------------------------------------------------------------

/// 1.10 #2: a scope id outside the grammar.
#[test]
fn invalid_scope_id() {
    assert_refused(
        app().scope(scope("notes")).scope(scope("Archive")),
        "INVALID_SCOPE_ID",
        "Invalid or duplicate RCIP scope id: Archive",
    );
}

/// 1.10 #2: a scope id declared twice (same message as an invalid one).
#[test]
fn duplicate_scope_id() {
    assert_refused(
        app()
            .scope(scope("notes"))
            .scope(scope("archive"))
            .scope(scope("notes")),
        "DUPLICATE_SCOPE_ID",
        "Invalid or duplicate RCIP scope id: notes",
    );
}

// ----- 1.10 #3: parents ---------------------------------------------------------------------------

/// 1.10 #3: a parent that is not declared.
#[test]
fn missing_parent_scope() {
    assert_refused(
        app().scope(scope("a").parent("b")),
        "MISSING_PARENT_SCOPE",
        "RCIP scope a references missing parent b",
    );
}

/// 1.2: an empty-string parent is ignored (falsy); a parent may be declared after its child.
#[test]
fn empty_parent_is_ignored_and_parent_order_is_free() {
    let runtime = create(
        app()
            .scope(scope("a").parent(""))
            .scope(scope("child").parent("later"))
            .scope(scope("later")),
    )
    .unwrap();
    let snapshot = runtime.client().get_snapshot();
    assert_eq!(snapshot.scopes[0].parent_id.as_deref(), Some(""));
    assert_eq!(snapshot.scopes[1].parent_id.as_deref(), Some("later"));
}

/// rcip addition (the reference allows cycles): a two-scope parent cycle is refused.
#[test]
fn parent_cycle_is_refused() {
    assert_refused(
        app()
            .scope(scope("a").parent("b"))
            .scope(scope("b").parent("a")),
        "SCOPE_PARENT_CYCLE",
        "RCIP scope a is its own ancestor (parentId cycle)",
    );
}

/// rcip addition: a scope that is its own parent is refused.
#[test]
fn self_parent_is_refused() {
    assert_refused(
        app().scope(scope("root")).scope(scope("a").parent("a")),
        "SCOPE_PARENT_CYCLE",
        "RCIP scope a is its own ancestor (parentId cycle)",
    );
}

/// A long acyclic parent chain is fine.
#[test]
fn acyclic_parent_chain_is_accepted() {
    let mut definition = app().scope(scope("s0"));
    for i in 1..50 {
        definition = definition.scope(scope(&format!("s{i}")).parent(format!("s{}", i - 1)));
    }
    assert!(create(definition).is_ok());
}

// ----- 1.10 #4-#6: capabilities -----------------------------------------------------------------

/// 1.10 #4: a capability id outside the grammar.
#[test]
fn invalid_capability_id() {
    assert_refused(
        app()
            .capability(cap("notes.read"))
            .capability(cap("notes.Read")),
        "INVALID_CAPABILITY_ID",
        "Invalid or duplicate RCIP capability id: notes.Read",
    );
}

/// 1.10 #4: a capability id declared twice.
#[test]
fn duplicate_capability_id() {
    assert_refused(
        app()
            .capability(cap("notes.read"))
            .capability(cap("notes.list"))
            .capability(cap("notes.read")),
        "DUPLICATE_CAPABILITY_ID",
        "Invalid or duplicate RCIP capability id: notes.read",
    );
}

/// 1.3: scope ids and capability ids are separate namespaces.
#[test]
fn scope_and_capability_may_share_an_id() {
    assert!(
        create(
            app()
                .scope(scope("notes"))
                .capability(cap("notes").scope("notes"))
        )
        .is_ok()
    );
}

/// 1.10 #5: blank `usage.whenToUse`.
#[test]
fn blank_usage_guidance() {
    for blank in ["", "   ", "\t\n"] {
        assert_refused(
            app().capability(cap("notes.read").usage(UsageGuidance::new(blank))),
            "EMPTY_USAGE_GUIDANCE",
            "RCIP capability notes.read has empty usage guidance.",
        );
    }
}

/// 1.10 #6: a capability naming an undeclared scope.
#[test]
fn missing_capability_scope() {
    assert_refused(
        app()
            .scope(scope("notes"))
            .capability(cap("notes.read").scope("notes").scope("archive")),
        "MISSING_SCOPE",
        "RCIP capability notes.read references missing scope archive",
    );
}

// ----- rcip additions ---------------------------------------------------------------------------

/// rcip addition: `protocolVersion` must be "1.0".
#[test]
fn unsupported_protocol_version() {
    let mut definition = app();
    definition.protocol_version = "2.0".to_owned();
    assert_refused(
        definition,
        "UNSUPPORTED_PROTOCOL_VERSION",
        "Unsupported RCIP protocol version: 2.0 (expected 1.0)",
    );
}

/// rcip addition: blank application name or description.
#[test]
fn blank_application_texts() {
    let mut definition = app();
    definition.application.name = "  ".into();
    assert_refused(
        definition,
        "EMPTY_APPLICATION_TEXT",
        "RCIP application notes has an empty name.",
    );
    let mut definition = app();
    definition.application.description = String::new();
    assert_refused(
        definition,
        "EMPTY_APPLICATION_TEXT",
        "RCIP application notes has an empty description.",
    );
}

/// rcip addition: blank scope title or description.
#[test]
fn blank_scope_texts() {
    assert_refused(
        app().scope(ScopeDefinition::new("notes", " ", "The list.")),
        "EMPTY_SCOPE_TEXT",
        "RCIP scope notes has an empty title.",
    );
    assert_refused(
        app().scope(ScopeDefinition::new("notes", "Notes", "")),
        "EMPTY_SCOPE_TEXT",
        "RCIP scope notes has an empty description.",
    );
}

/// rcip addition: blank capability title or description.
#[test]
fn blank_capability_texts() {
    assert_refused(
        app().capability(cap("notes.read").title("\n")),
        "EMPTY_CAPABILITY_TEXT",
        "RCIP capability notes.read has an empty title.",
    );
    assert_refused(
        app().capability(cap("notes.read").description("")),
        "EMPTY_CAPABILITY_TEXT",
        "RCIP capability notes.read has an empty description.",
    );
}

/// rcip addition: the same scope listed twice in one capability.
#[test]
fn duplicate_scope_inside_capability() {
    assert_refused(
        app()
            .scope(scope("notes"))
            .capability(cap("notes.read").scope("notes").scope("notes")),
        "DUPLICATE_CAPABILITY_SCOPE",
        "RCIP capability notes.read lists scope notes more than once",
    );
}

// ----- schemas ------------------------------------------------------------------------------------

/// 1.7: strict-mode violations are refused at creation as INVALID_SCHEMA, with the rule code
/// and the pointer of the offending schema object.
#[test]
fn strict_schema_violations() {
    let cases: [(Value, &str, &str, &str); 5] = [
        (
            json!({"type": "object", "properties": {"host": {"type": "string", "format": "hostname"}}}),
            "FORMAT_NOT_SUPPORTED",
            "/properties/host",
            "format \"hostname\" is not supported: rcip validates only \"uuid\", \"date-time\", \"date\", \"email\" and \"uri\" at /properties/host",
        ),
        (
            json!({"type": ["string", "number"]}),
            "UNION_TYPE",
            "",
            "union type [\"string\",\"number\"] is not allowed; only a union with \"null\" is (use anyOf) at the root",
        ),
        (
            json!({"properties": {"a": {"type": "string"}}}),
            "APPLICABLE_TYPE_REQUIRED",
            "",
            "keyword \"properties\" requires \"type\": \"object\" at the same or a parent schema at the root",
        ),
        (
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]}),
            "REQUIRED_NOT_DEFINED",
            "",
            "required property \"b\" is not defined in \"properties\" of the same or a parent schema at the root",
        ),
        (
            json!({"type": "object", "properties": {"a": {"type": "string", "maxLenght": 3}}}),
            "UNKNOWN_KEYWORD",
            "/properties/a",
            "unknown keyword \"maxLenght\" at /properties/a",
        ),
    ];
    for (schema, rule, pointer, reason) in cases {
        let (parts, message) =
            schema_refusal(app().capability(cap("notes.read").input_schema(schema.clone())));
        assert_eq!(
            parts,
            (
                "notes.read".to_owned(),
                SchemaRole::Input,
                rule,
                pointer.to_owned()
            ),
            "{schema}"
        );
        assert_eq!(
            message,
            format!("RCIP capability notes.read has an invalid input schema: {reason}")
        );
    }
}

/// 1.7: a union with "null" is allowed, and so are boolean schemas.
#[test]
fn null_unions_and_boolean_schemas_are_accepted() {
    assert!(
        create(
            app()
                .capability(
                    cap("a.b")
                        .input_schema(json!({"type": ["object", "null"], "properties": {}}))
                        .output_schema(json!(true))
                )
                .capability(cap("a.c").input_schema(json!(false)))
        )
        .is_ok()
    );
}

/// 1.7: a schema that passes the strict rules but is not valid JSON Schema 2020-12 is refused
/// with rule INVALID_JSON_SCHEMA.
#[test]
fn meta_schema_invalid_schemas() {
    for schema in [
        json!({"type": "string", "minLength": -1}),
        json!({"type": "string", "pattern": "("}),
    ] {
        assert!(
            rcip_runtime::rcip_core::schema::check_strict(&schema).is_ok(),
            "{schema} should be strict-clean"
        );
        let ((id, role, rule, _), message) =
            schema_refusal(app().capability(cap("notes.read").input_schema(schema.clone())));
        assert_eq!(
            (id.as_str(), role, rule),
            ("notes.read", SchemaRole::Input, "INVALID_JSON_SCHEMA"),
            "{schema}"
        );
        assert!(
            message.starts_with("RCIP capability notes.read has an invalid input schema: "),
            "{message}"
        );
    }
}

/// rcip difference (reference 10.4 compiles output schemas lazily at bind): a broken output
/// schema is found at creation, strict or meta-schema, even without usage examples.
#[test]
fn output_schema_errors_are_found_at_creation() {
    let ((id, role, rule, pointer), message) =
        schema_refusal(app().capability(cap("notes.read")).capability(
            cap("notes.count").output_schema(json!({"type": "integer", "format": "int32"})),
        ));
    assert_eq!(
        (id.as_str(), role, rule, pointer.as_str()),
        (
            "notes.count",
            SchemaRole::Output,
            "FORMAT_NOT_SUPPORTED",
            ""
        )
    );
    assert_eq!(
        message,
        "RCIP capability notes.count has an invalid output schema: format \"int32\" is not supported: rcip validates only \"uuid\", \"date-time\", \"date\", \"email\" and \"uri\" at the root"
    );

    let ((id, role, rule, _), _) =
        schema_refusal(app().capability(
            cap("notes.count").output_schema(json!({"type": "string", "maxLength": -3})),
        ));
    assert_eq!(
        (id.as_str(), role, rule),
        ("notes.count", SchemaRole::Output, "INVALID_JSON_SCHEMA")
    );
}

/// rcip difference: an input schema of a capability without usage examples is also checked at
/// creation.
#[test]
fn input_schema_errors_without_examples_are_found_at_creation() {
    let ((id, role, rule, _), _) = schema_refusal(
        app().capability(cap("notes.read").input_schema(json!({"type": "number", "minimum": "0"}))),
    );
    assert_eq!(
        (id.as_str(), role, rule),
        ("notes.read", SchemaRole::Input, "INVALID_JSON_SCHEMA")
    );
}

// ----- usage examples -----------------------------------------------------------------------------

/// 1.9: an example with a blank description.
#[test]
fn usage_example_with_blank_description() {
    assert_refused(
        app().capability(
            cap("notes.create").input_schema(title_schema()).usage(
                UsageGuidance::new("Create a note.")
                    .example("A note", json!({"title": "Lunch"}))
                    .example("  ", json!({"title": "Dinner"})),
            ),
        ),
        "INVALID_USAGE_EXAMPLE",
        "RCIP capability notes.create has an invalid usage example.",
    );
}

/// 1.9: an example whose input the input schema rejects.
#[test]
fn usage_example_with_invalid_input() {
    for input in [
        json!({}),
        json!({"title": ""}),
        json!({"title": "ok", "extra": true}),
        json!("Lunch"),
    ] {
        assert_refused(
            app().capability(
                cap("notes.create").input_schema(title_schema()).usage(
                    UsageGuidance::new("Create a note.")
                        .example("A note", json!({"title": "Lunch"}))
                        .example("A bad note", input.clone()),
                ),
            ),
            "INVALID_USAGE_EXAMPLE",
            "RCIP capability notes.create has an invalid usage example.",
        );
    }
}

/// 1.9: valid examples are accepted and published in the snapshot verbatim.
#[test]
fn valid_usage_examples_are_accepted() {
    let usage = UsageGuidance::new("When the user wants a new note.")
        .example("A note about lunch", json!({"title": "Lunch"}))
        .example("A note about dinner", json!({"title": "Dinner"}));
    let runtime = create(
        app()
            .capability(
                cap("notes.create")
                    .input_schema(title_schema())
                    .usage(usage.clone()),
            )
            .capability(cap("notes.list").usage(UsageGuidance::new("To list notes."))),
    )
    .unwrap();
    let snapshot = runtime.client().get_snapshot();
    assert_eq!(snapshot.capabilities[0].usage.as_ref(), Some(&usage));
    assert_eq!(
        snapshot.capabilities[1].usage.as_ref(),
        Some(&UsageGuidance::new("To list notes."))
    );
}

// ----- $id ----------------------------------------------------------------------------------------

fn named_schema(max: u64) -> Value {
    json!({
        "$id": "https://example.test/schemas/note",
        "type": "object",
        "properties": {"title": {"type": "string", "maxLength": max}},
        "required": ["title"],
        "additionalProperties": false
    })
}

/// 1.7 #6 (reference check `shared-named-schema`): two capabilities reusing one identical
/// schema with a `$id` are accepted, and both validate.
#[tokio::test]
async fn identical_schemas_may_share_an_id() {
    let runtime = create(
        app()
            .capability(cap("notes.a").input_schema(named_schema(10)))
            .capability(
                cap("notes.b")
                    .input_schema(named_schema(10))
                    .usage(UsageGuidance::new("B.").example("ok", json!({"title": "x"}))),
            ),
    )
    .unwrap();
    let host = runtime.host();
    let null_binding = || {
        Binding::new(|_input: Value, _ctx: InvocationContext| async {
            Ok::<_, HandlerError>(Value::Null)
        })
    };
    let _a = host.bind("notes.a", null_binding()).unwrap();
    let _b = host.bind("notes.b", null_binding()).unwrap();
    let client = runtime.client();
    for id in ["notes.a", "notes.b"] {
        let ok = client
            .invoke(InvocationRequest::new(id, json!({"title": "short"})))
            .await;
        assert_eq!(ok.status(), OutcomeStatus::Succeeded, "{id}");
        let bad = client
            .invoke(InvocationRequest::new(
                id,
                json!({"title": "far too long!"}),
            ))
            .await;
        assert_eq!(bad.error_code(), Some(ErrorCode::InputInvalid), "{id}");
    }
}

/// Ajv's rule: two different schemas with the same `$id` are refused.
#[test]
fn different_schemas_with_one_id_conflict() {
    assert_refused(
        app()
            .capability(cap("notes.a").input_schema(named_schema(10)))
            .capability(cap("notes.b").output_schema(named_schema(20))),
        "CONFLICTING_SCHEMA_ID",
        "RCIP capability notes.b declares schema $id https://example.test/schemas/note that another, different schema already uses",
    );
}

// ----- order ----------------------------------------------------------------------------------------

/// 1.10: the application id is checked before scopes.
#[test]
fn order_application_id_before_scope_id() {
    let mut definition = app().scope(scope("Bad"));
    definition.application.id = "Notes".into();
    assert_refused(
        definition,
        "INVALID_APPLICATION_ID",
        "Invalid RCIP application id: Notes",
    );
}

/// rcip: the protocol version comes first of all.
#[test]
fn order_protocol_version_before_application_id() {
    let mut definition = app();
    definition.protocol_version = "0.9".into();
    definition.application.id = "Notes".into();
    assert_eq!(refusal(definition).0, "UNSUPPORTED_PROTOCOL_VERSION");
}

/// 1.10: every scope id is checked (#2) before any parent (#3).
#[test]
fn order_scope_ids_before_parents() {
    assert_refused(
        app().scope(scope("a").parent("missing")).scope(scope("B")),
        "INVALID_SCOPE_ID",
        "Invalid or duplicate RCIP scope id: B",
    );
}

/// 1.10: scopes (#2, #3) are checked before capabilities (#4).
#[test]
fn order_scopes_before_capabilities() {
    assert_refused(
        app()
            .scope(scope("a").parent("missing"))
            .capability(cap("Bad")),
        "MISSING_PARENT_SCOPE",
        "RCIP scope a references missing parent missing",
    );
}

/// 1.10: capabilities in order: capability 1's missing scope before capability 2's bad id.
#[test]
fn order_capabilities_in_catalog_order() {
    assert_refused(
        app()
            .scope(scope("notes"))
            .capability(cap("notes.read").scope("archive"))
            .capability(cap("Notes.write")),
        "MISSING_SCOPE",
        "RCIP capability notes.read references missing scope archive",
    );
}

/// 1.10: within one capability, usage guidance (#5) before its scopes (#6).
#[test]
fn order_usage_before_scopes_within_a_capability() {
    assert_refused(
        app().capability(
            cap("notes.read")
                .scope("archive")
                .usage(UsageGuidance::new(" ")),
        ),
        "EMPTY_USAGE_GUIDANCE",
        "RCIP capability notes.read has empty usage guidance.",
    );
}

/// 1.10: the structural checks (#4-#6) of every capability come before any schema (#8).
#[test]
fn order_structure_before_schemas() {
    assert_refused(
        app()
            .capability(
                cap("notes.a")
                    .input_schema(json!({"type": "string", "format": "hostname"}))
                    .usage(UsageGuidance::new("A.").example("x", json!("a@b.c"))),
            )
            .capability(cap("notes.b").scope("missing")),
        "MISSING_SCOPE",
        "RCIP capability notes.b references missing scope missing",
    );
}

/// 1.10 #8: schemas and examples are checked capability by capability: capability 1's
/// invalid example is reported before capability 2's broken (example-carrying) schema.
#[test]
fn order_examples_and_schemas_per_capability() {
    assert_refused(
        app()
            .capability(
                cap("notes.a")
                    .input_schema(title_schema())
                    .usage(UsageGuidance::new("A.").example("bad", json!({}))),
            )
            .capability(
                cap("notes.b")
                    .input_schema(json!({"type": "string", "format": "hostname"}))
                    .usage(UsageGuidance::new("B.").example("x", json!("a@b.c"))),
            ),
        "INVALID_USAGE_EXAMPLE",
        "RCIP capability notes.a has an invalid usage example.",
    );
}

/// 1.10 #8: capability 1's meta-schema-invalid schema is reported before capability 2's
/// strict violation (the reference compiles capability by capability).
#[test]
fn order_schema_errors_in_catalog_order() {
    let ((id, _, rule, _), _) = schema_refusal(
        app()
            .capability(
                cap("notes.a")
                    .input_schema(json!({"type": "string", "minLength": -1}))
                    .usage(UsageGuidance::new("A.").example("x", json!("a"))),
            )
            .capability(
                cap("notes.b")
                    .input_schema(json!({"type": "string", "format": "hostname"}))
                    .usage(UsageGuidance::new("B.").example("x", json!("a@b.c"))),
            ),
    );
    assert_eq!((id.as_str(), rule), ("notes.a", "INVALID_JSON_SCHEMA"));
}

// ----- JSON definitions --------------------------------------------------------------------------

const POLLS_JSON: &str = r#"{
  "protocolVersion": "1.0",
  "application": {"id": "polls", "name": "Polls", "description": "Create and vote.", "version": "3.1"},
  "scopes": [
    {"id": "polls", "title": "Polls", "description": "The poll list."},
    {"id": "polls.detail", "title": "Poll", "description": "One poll.", "parentId": "polls"}
  ],
  "capabilities": [
    {
      "id": "polls.vote",
      "title": "Vote",
      "description": "Votes in a poll.",
      "scopeIds": ["polls.detail"],
      "effect": "write",
      "inputSchema": {
        "type": "object",
        "properties": {"option": {"type": "integer", "minimum": 0}},
        "required": ["option"],
        "additionalProperties": false
      },
      "outputSchema": {"type": "null"},
      "tags": ["vote"],
      "usage": {"whenToUse": "To vote.", "examples": [{"description": "First option", "input": {"option": 0}}]}
    },
    {
      "id": "polls.list",
      "title": "List",
      "description": "Lists polls.",
      "effect": "read",
      "inputSchema": true,
      "outputSchema": {"type": "array", "items": {"type": "string"}}
    }
  ]
}"#;

/// 1.1-1.3: a definition loads from camelCase JSON, equals the builder form, round-trips, and
/// creates a runtime.
#[test]
fn definition_loads_from_json_and_round_trips() {
    let text: Value = serde_json::from_str(POLLS_JSON).unwrap();
    let definition: ApplicationDefinition = serde_json::from_str(POLLS_JSON).unwrap();

    let built = ApplicationDefinition::new("polls", "Polls", "Create and vote.")
        .version("3.1")
        .scope(ScopeDefinition::new("polls", "Polls", "The poll list."))
        .scope(ScopeDefinition::new("polls.detail", "Poll", "One poll.").parent("polls"))
        .capability(
            CapabilityDefinition::new("polls.vote", Effect::Write, "Vote", "Votes in a poll.")
                .scope("polls.detail")
                .input_schema(json!({
                    "type": "object",
                    "properties": {"option": {"type": "integer", "minimum": 0}},
                    "required": ["option"],
                    "additionalProperties": false
                }))
                .output_schema(json!({"type": "null"}))
                .tag("vote")
                .usage(
                    UsageGuidance::new("To vote.").example("First option", json!({"option": 0})),
                ),
        )
        .capability(
            CapabilityDefinition::new("polls.list", Effect::Read, "List", "Lists polls.")
                .input_schema(json!(true))
                .output_schema(json!({"type": "array", "items": {"type": "string"}})),
        );
    assert_eq!(definition, built);

    // Round trip: the same JSON; absent optional keys (version, parentId, tags, usage,
    // examples) stay absent, and the defaulted `scopeIds` is written as `[]`.
    let back = serde_json::to_value(&definition).unwrap();
    let mut expected = text.clone();
    expected["capabilities"][1]["scopeIds"] = json!([]);
    assert_eq!(back, expected);
    assert!(back["capabilities"][1].get("tags").is_none());
    assert!(back["capabilities"][1].get("usage").is_none());
    assert!(back["scopes"][0].get("parentId").is_none());
    assert_eq!(
        serde_json::from_value::<ApplicationDefinition>(back).unwrap(),
        definition
    );

    let runtime = create(definition).unwrap();
    let snapshot = runtime.client().get_snapshot();
    assert_eq!(snapshot.application.version.as_deref(), Some("3.1"));
    assert_eq!(
        snapshot.capabilities[0].tags.to_vec(),
        vec!["vote".to_owned()]
    );
    assert!(snapshot.capabilities[1].tags.is_empty());
}

/// Definitions reject unknown fields (no silent typos), at every level.
#[test]
fn json_definition_rejects_unknown_fields() {
    let mut value: Value = serde_json::from_str(POLLS_JSON).unwrap();
    value["handlers"] = json!({});
    let err = serde_json::from_value::<ApplicationDefinition>(value).unwrap_err();
    assert!(
        err.to_string().contains("unknown field `handlers`"),
        "{err}"
    );

    let mut value: Value = serde_json::from_str(POLLS_JSON).unwrap();
    value["capabilities"][0]["scopeID"] = json!(["polls"]);
    let err = serde_json::from_value::<ApplicationDefinition>(value).unwrap_err();
    assert!(err.to_string().contains("unknown field `scopeID`"), "{err}");

    let mut value: Value = serde_json::from_str(POLLS_JSON).unwrap();
    value["scopes"][0]["parent"] = json!("polls");
    let err = serde_json::from_value::<ApplicationDefinition>(value).unwrap_err();
    assert!(err.to_string().contains("unknown field `parent`"), "{err}");
}

/// 1.5: an unknown effect string is rejected when loading (the reference accepts it and
/// denies it by default policy; rcip refuses it up front).
#[test]
fn json_definition_rejects_unknown_effect() {
    let mut value: Value = serde_json::from_str(POLLS_JSON).unwrap();
    value["capabilities"][0]["effect"] = json!("delete");
    let err = serde_json::from_value::<ApplicationDefinition>(value).unwrap_err();
    assert!(
        err.to_string().contains("unknown variant `delete`"),
        "{err}"
    );
}

/// A definition loaded from JSON is validated like a built one.
#[test]
fn json_definition_is_validated() {
    let mut value: Value = serde_json::from_str(POLLS_JSON).unwrap();
    value["capabilities"][1]["scopeIds"] = json!(["polls.missing"]);
    let definition: ApplicationDefinition = serde_json::from_value(value).unwrap();
    assert_refused(
        definition,
        "MISSING_SCOPE",
        "RCIP capability polls.list references missing scope polls.missing",
    );
}

// ----- schema vs serde ------------------------------------------------------------------------

/// A typed input and its hand-written strict schema; they must accept the same inputs.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Task {
    title: String,
    priority: u8,
    done: Option<bool>,
    tags: Option<Vec<String>>,
    note: Option<String>,
}

fn task_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "priority": {"type": "integer", "minimum": 0, "maximum": 255},
            "done": {"type": ["boolean", "null"]},
            "tags": {"type": ["array", "null"], "items": {"type": "string"}},
            "note": {"type": ["string", "null"]}
        },
        "required": ["title", "priority"],
        "additionalProperties": false
    })
}

/// The runtime's schema validation accepts exactly what `serde_json::from_value::<Task>`
/// accepts; accepted inputs reach a typed handler that deserializes them.
#[tokio::test]
async fn schema_and_serde_agree_on_a_typed_input() {
    let runtime = create(
        app().capability(
            cap("tasks.add")
                .input_schema(task_schema())
                .output_schema(json!({"type": "string"})),
        ),
    )
    .unwrap();
    let calls = Arc::new(AtomicU64::new(0));
    let counter = calls.clone();
    let _guard = runtime
        .host()
        .bind(
            "tasks.add",
            Binding::typed(move |task: Task, _ctx: InvocationContext| {
                counter.fetch_add(1, Ordering::SeqCst);
                async move { Ok::<_, HandlerError>(task.title) }
            }),
        )
        .unwrap();
    let client = runtime.client();

    let table: Vec<(Value, bool)> = vec![
        (json!({"title": "a", "priority": 1}), true),
        (
            json!({"title": "a", "priority": 2, "done": true, "tags": ["x", "y"], "note": "n"}),
            true,
        ),
        (json!({"title": "", "priority": 0}), true),
        (json!({"title": "a", "priority": 255}), true),
        (json!({"title": "a", "priority": 1, "done": null}), true),
        (json!({"title": "a", "priority": 1, "tags": null}), true),
        (json!({"title": "a", "priority": 1, "note": null}), true),
        (json!({"title": "a", "priority": 1, "tags": []}), true),
        (json!({"priority": 1}), false),
        (json!({"title": "a"}), false),
        (json!({"title": "a", "priority": 1, "extra": 1}), false),
        (json!({"title": 5, "priority": 1}), false),
        (json!({"title": null, "priority": 1}), false),
        (json!({"title": "a", "priority": "1"}), false),
        (json!({"title": "a", "priority": -1}), false),
        (json!({"title": "a", "priority": 256}), false),
        (json!({"title": "a", "priority": 1.5}), false),
        (json!({"title": "a", "priority": null}), false),
        (json!({"title": "a", "priority": 1, "done": "yes"}), false),
        (json!({"title": "a", "priority": 1, "tags": [1]}), false),
        (json!({"title": "a", "priority": 1, "tags": "x"}), false),
        (json!([]), false),
        (json!(null), false),
        (json!("a"), false),
    ];
    let mut accepted = 0;
    for (input, expected) in &table {
        let serde_ok = serde_json::from_value::<Task>(input.clone()).is_ok();
        assert_eq!(serde_ok, *expected, "serde on {input}");
        let outcome = client
            .invoke(InvocationRequest::new("tasks.add", input.clone()))
            .await;
        let schema_ok = outcome.error_code() != Some(ErrorCode::InputInvalid);
        assert_eq!(
            schema_ok, serde_ok,
            "schema vs serde on {input}: {outcome:?}"
        );
        if serde_ok {
            accepted += 1;
            assert_eq!(
                outcome.output(),
                Some(&input["title"]),
                "the typed handler ran on {input}"
            );
        } else {
            let issues = outcome.error().unwrap().validation_issues.as_ref();
            assert!(issues.is_some_and(|i| !i.is_empty()), "{input}");
        }
    }
    assert_eq!(calls.load(Ordering::SeqCst), accepted);
    assert_eq!(accepted, 8);
}
