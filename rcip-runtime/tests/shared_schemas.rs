//! Shared schemas (issue 19): identical schemas, by content, are stored once and shared by
//! every capability and snapshot that holds them, and the definition's own copy is the one
//! kept, not copied.
#![allow(clippy::unwrap_used)]

mod common;

use rcip_runtime::*;
use serde_json::json;

fn runtime_of(definition: ApplicationDefinition) -> Runtime {
    Runtime::new(definition, RuntimeOptions::default()).unwrap()
}

/// The four note capabilities of [`common::definition`] each build their schemas apart (four
/// equal values of each); the definition already holds one of each (schemas are shared by
/// content as they are made, issue 39), and so does the compiled catalog.
#[test]
fn equal_schemas_built_apart_are_stored_once() {
    let definition = common::definition();
    let notes: Vec<_> = definition.capabilities[..4].iter().collect();
    assert!(Schema::ptr_eq(
        &notes[0].input_schema,
        &notes[1].input_schema
    ));
    let snapshot = runtime_of(definition).client().get_snapshot();
    let entries = snapshot.capabilities.to_vec();
    let (first, rest) = entries[..4].split_first().unwrap();
    for entry in rest {
        assert!(
            Schema::ptr_eq(&entry.input_schema, &first.input_schema),
            "{}",
            entry.id
        );
        assert!(
            Schema::ptr_eq(&entry.output_schema, &first.output_schema),
            "{}",
            entry.id
        );
    }
    // Still each capability's own content.
    assert_eq!(first.input_schema, common::note_input_schema());
    assert_eq!(first.output_schema, common::note_output_schema());
    let ping = &snapshot.capabilities[4];
    assert_eq!(ping.output_schema, json!({"type": "string"}));
    assert!(!Schema::ptr_eq(&ping.output_schema, &first.output_schema));
}

/// A definition read from JSON holds a value per schema; compiling shares them all the same.
#[test]
fn a_definition_read_from_json_shares_its_equal_schemas() {
    let text = serde_json::to_string(&common::definition()).unwrap();
    let definition: ApplicationDefinition = serde_json::from_str(&text).unwrap();
    let snapshot = runtime_of(definition).client().get_snapshot();
    let read = &snapshot.capabilities[0];
    let purge = &snapshot.capabilities[3];
    assert!(Schema::ptr_eq(&read.input_schema, &purge.input_schema));
    assert!(Schema::ptr_eq(&read.output_schema, &purge.output_schema));
}

/// An application that shares one schema between its capabilities finds that very value in
/// every snapshot entry: the runtime keeps the definition's copy rather than making its own.
#[test]
fn a_shared_schema_is_kept_not_copied() {
    let input = Schema::from(common::note_input_schema());
    let output = Schema::from(common::note_output_schema());
    let mut definition = ApplicationDefinition::new("notes", "Notes", "Notes.");
    for i in 0..3 {
        definition = definition.capability(
            CapabilityDefinition::new(format!("notes.read{i}"), Effect::Read, "Read", "Reads.")
                .input_schema(input.clone())
                .output_schema(output.clone()),
        );
    }
    let catalog = CompiledCatalog::compile(definition).unwrap();
    // Every runtime over the catalog, and every snapshot of each, holds the same values.
    for runtime in [
        Runtime::from_catalog(catalog.clone(), RuntimeOptions::default()),
        Runtime::from_catalog(catalog, RuntimeOptions::default()),
    ] {
        for entry in &runtime.client().get_snapshot().capabilities {
            assert!(Schema::ptr_eq(&entry.input_schema, &input), "{}", entry.id);
            assert!(
                Schema::ptr_eq(&entry.output_schema, &output),
                "{}",
                entry.id
            );
        }
    }
}

/// Sharing is by content, whatever the role: an input schema equal to another capability's
/// output schema is the same value too.
#[test]
fn equal_input_and_output_schemas_are_one_value() {
    let schema = || json!({"type": "object", "properties": {}, "additionalProperties": false});
    let definition = ApplicationDefinition::new("notes", "Notes", "Notes.")
        .capability(
            CapabilityDefinition::new("notes.echo", Effect::Read, "Echo", "Echoes.")
                .input_schema(schema())
                .output_schema(schema()),
        )
        .capability(
            CapabilityDefinition::new("notes.count", Effect::Read, "Count", "Counts.")
                .output_schema(json!({"type": "integer"})),
        );
    let snapshot = runtime_of(definition).client().get_snapshot();
    let entries = snapshot.capabilities.to_vec();
    let [echo, count] = &entries[..] else {
        panic!("two capabilities")
    };
    assert!(Schema::ptr_eq(&echo.input_schema, &echo.output_schema));
    // `notes.count` keeps the default input schema, which is that same content.
    assert!(Schema::ptr_eq(&count.input_schema, &echo.input_schema));
    assert_eq!(count.output_schema, json!({"type": "integer"}));
}

/// A capability sharing another's schema value still has its own usage examples checked
/// against it: sharing skips the schema's checks, not the capability's.
#[test]
fn a_shared_schema_still_checks_each_capabilitys_examples() {
    let input = Schema::from(common::note_input_schema());
    let read = |id: &str, example: serde_json::Value| {
        CapabilityDefinition::new(id, Effect::Read, "Read", "Reads.")
            .input_schema(input.clone())
            .usage(UsageGuidance::new("To read.").example("An example.", example))
    };
    let definition = ApplicationDefinition::new("notes", "Notes", "Notes.")
        .capability(read("notes.a", json!({"title": "ok"})))
        .capability(read("notes.b", json!({"title": 7})));
    let error = Runtime::new(definition, RuntimeOptions::default()).unwrap_err();
    let Error::Definition(error) = error else {
        panic!("{error:?}")
    };
    assert_eq!(
        error,
        DefinitionError::InvalidUsageExample("notes.b".to_owned())
    );
}
