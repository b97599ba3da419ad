//! A package's content identity: its normalized JSON parses back to the same package, and
//! its digest changes with its content only.
#![allow(clippy::unwrap_used)]

use rcip_relationship::parse_package;

fn example(name: &str) -> String {
    let path = format!(
        "{}/../examples/programs/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn the_normalized_form_parses_back_to_the_same_package() {
    for name in ["polls", "hiring"] {
        let package = parse_package(&example(name)).unwrap();
        let again = parse_package(&package.to_json().to_string()).unwrap();
        assert_eq!(again, package, "{name}");
        assert_eq!(again.digest(), package.digest(), "{name}");
    }
}

#[test]
fn the_digest_ignores_layout_and_follows_content() {
    let text = example("polls");
    let package = parse_package(&text).unwrap();
    // Another layout and key order of the same content: the same digest.
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let relaid = serde_json::to_string_pretty(&value).unwrap();
    assert_eq!(parse_package(&relaid).unwrap().digest(), package.digest());
    // One guard constant changed: another digest.
    let changed = text.replacen("\"open\"", "\"opened\"", 1);
    if let Ok(other) = parse_package(&changed) {
        assert_ne!(other.digest(), package.digest());
    }
    let mut described = value.clone();
    described["description"] = serde_json::json!("another description");
    let described = parse_package(&described.to_string()).unwrap();
    assert_ne!(described.digest(), package.digest());
    assert_eq!(described.digest().len(), "sha256:".len() + 43);
}
