//! A package's capabilities (commands and record operations): ids, and strict schemas the
//! definition validator accepts.
#![allow(clippy::unwrap_used)]

use rcip_core::{ApplicationDefinition, Effect, ScopeDefinition, validate_definition};
use rcip_relationship::{Package, command_capabilities, package_capabilities, parse_package};

fn program(name: &str) -> Package {
    let path = format!(
        "{}/../examples/programs/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    parse_package(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn every_capability_of_the_example_packages_is_a_valid_strict_definition() {
    for name in ["polls", "hiring"] {
        let package = program(name);
        let mut app = ApplicationDefinition::new("app", "App", "Everything.")
            .scope(ScopeDefinition::new(name, "Scope", "The package."));
        app.capabilities = package_capabilities(&package);
        validate_definition(&app).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn ids_effects_and_order() {
    let package = program("polls");
    let ids: Vec<(String, Effect)> = package_capabilities(&package)
        .into_iter()
        .map(|c| (c.id, c.effect))
        .collect();
    let expected = [
        ("polls.poll.close", Effect::Write),
        ("polls.poll.reopen", Effect::Write),
        ("polls.poll.vote", Effect::Write),
        ("polls.ballot.get", Effect::Read),
        ("polls.ballot.search", Effect::Read),
        ("polls.ballot.commands", Effect::Read),
        ("polls.ballot.create", Effect::Write),
        ("polls.ballot.update", Effect::Write),
        ("polls.ballot.archive", Effect::Write),
        ("polls.poll.get", Effect::Read),
        ("polls.poll.search", Effect::Read),
        ("polls.poll.commands", Effect::Read),
        ("polls.poll.create", Effect::Write),
        ("polls.poll.update", Effect::Write),
        ("polls.poll.archive", Effect::Write),
        ("polls.openPolls", Effect::Read),
        ("polls.changes", Effect::Read),
    ];
    assert_eq!(
        ids,
        expected
            .map(|(id, effect)| (id.to_owned(), effect))
            .to_vec()
    );
    assert_eq!(command_capabilities(&package).len(), 3);
}

#[test]
fn create_takes_the_type_schema_and_bounded_roles() {
    let package = program("polls");
    let all = package_capabilities(&package);
    let create = all.iter().find(|c| c.id == "polls.ballot.create").unwrap();
    let input = &create.input_schema;
    assert_eq!(
        input["properties"]["data"]["required"],
        serde_json::json!(["choice"])
    );
    assert_eq!(
        input["properties"]["roles"]["properties"]["voter"]["minItems"],
        1
    );
    assert_eq!(
        input["properties"]["roles"]["required"],
        serde_json::json!(["poll", "voter"])
    );
    let update = all.iter().find(|c| c.id == "polls.poll.update").unwrap();
    let patch = &update.input_schema["properties"]["patch"]["properties"];
    assert_eq!(patch["set"]["required"], serde_json::json!([]));
    assert_eq!(
        patch["remove"]["items"]["enum"],
        serde_json::json!(["closed_reason", "closes_at", "last_choice", "last_voter"])
    );
    // date-time became a pattern, so that the reference (it refuses every format) loads it.
    assert!(
        patch["set"]["properties"]["closes_at"]
            .get("format")
            .is_none()
    );
    assert!(patch["set"]["properties"]["closes_at"]["pattern"].is_string());
    let view = all.iter().find(|c| c.id == "polls.openPolls").unwrap();
    let data = &view.output_schema["properties"]["items"]["items"]["properties"]["data"];
    let fields: Vec<&String> = data["properties"].as_object().unwrap().keys().collect();
    assert_eq!(fields, ["options", "question"]);
}
