//! Each rule on a minimal pair of catalogs: the rule, its severity and its pointer; and a
//! schema against itself and against stricter and looser versions of itself, in both roles.
#![allow(clippy::unwrap_used)]

use rcip_diff::{Severity, diff_catalogs};
use serde_json::{Value, json};

/// A catalog of one capability `c` with these members (and the usual ones).
fn catalog(capability: Value) -> Value {
    let mut base = json!({
        "id": "c", "title": "C", "description": "Does c.", "effect": "write",
        "scopeIds": ["s"],
        "inputSchema": {"type": "object", "additionalProperties": false},
        "outputSchema": {"type": "object", "additionalProperties": false}
    });
    for (key, value) in capability.as_object().unwrap() {
        base[key] = value.clone();
    }
    json!({"application": {"id": "app"}, "scopes": [{"id": "s"}], "capabilities": [base]})
}

/// The one change between two capabilities: (severity, rule, pointer).
fn only(old: Value, new: Value) -> (Severity, &'static str, String) {
    let report = diff_catalogs(&catalog(old), &catalog(new)).unwrap();
    assert_eq!(report.changes.len(), 1, "{report:#?}");
    let change = &report.changes[0];
    (change.severity, change.rule, change.pointer.clone())
}

fn schema(role: &str, schema: Value) -> Value {
    json!({ role: schema })
}

use Severity::{Breaking, Info, Warning};

#[test]
fn capability_level_rules() {
    let write = json!({"effect": "write"});
    for (to, expected) in [
        ("destructive", (Breaking, "effect-escalated")),
        ("external", (Breaking, "effect-escalated")),
        ("read", (Warning, "effect-de-escalated")),
    ] {
        let (severity, rule, pointer) = only(write.clone(), json!({"effect": to}));
        assert_eq!((severity, rule), expected, "write -> {to}");
        assert_eq!(pointer, "/effect");
    }
    assert_eq!(
        only(json!({"effect": "read"}), json!({"effect": "write"})).1,
        "effect-escalated"
    );
    assert_eq!(
        only(json!({}), json!({"scopeIds": ["s", "t"]})),
        (Breaking, "scope-added", "/scopeIds".to_owned())
    );
    assert_eq!(only(json!({}), json!({"scopeIds": []})).1, "scope-removed");
    assert_eq!(
        only(json!({"idempotent": true}), json!({})),
        (Breaking, "idempotent-dropped", "/idempotent".to_owned())
    );
    assert_eq!(
        only(json!({}), json!({"idempotent": true})),
        (Warning, "idempotent-added", "/idempotent".to_owned())
    );
    assert_eq!(
        only(json!({}), json!({"title": "Another"})),
        (Info, "member-changed", "/title".to_owned())
    );
}

#[test]
fn capabilities_removed_and_added() {
    let old = catalog(json!({}));
    let mut new = old.clone();
    new["capabilities"][0]["id"] = json!("renamed");
    let report = diff_catalogs(&old, &new).unwrap();
    let rules: Vec<_> = report
        .changes
        .iter()
        .map(|c| (c.severity, c.rule))
        .collect();
    assert_eq!(
        rules,
        [(Breaking, "capability-removed"), (Info, "capability-added")],
        "a rename is a removal and an addition"
    );
    assert!(report.reaches(Breaking));
    assert_eq!(
        report.to_json()["summary"],
        json!({"breaking": 1, "warning": 0, "info": 1})
    );
}

/// A stricter input is breaking, a looser one info; for output the other way round.
#[test]
fn schema_rules_by_role() {
    let cases: Vec<(Value, Value, &str, &str)> = vec![
        // (looser, stricter, rule family, pointer under the schema)
        (
            json!({"type": ["string", "null"]}),
            json!({"type": "string"}),
            "type-changed",
            "/type",
        ),
        (
            json!({"type": "number"}),
            json!({"type": "integer"}),
            "type-changed",
            "/type",
        ),
        (
            json!({"enum": ["a", "b"]}),
            json!({"enum": ["a"]}),
            "enum-changed",
            "/enum",
        ),
        (
            json!({"type": "string"}),
            json!({"type": "string", "minLength": 1}),
            "bound-changed",
            "/minLength",
        ),
        (
            json!({"maximum": 10}),
            json!({"maximum": 5}),
            "bound-changed",
            "/maximum",
        ),
        (
            json!({"minimum": 0}),
            json!({"minimum": 1}),
            "bound-changed",
            "/minimum",
        ),
        (
            json!({"type": "string"}),
            json!({"type": "string", "format": "uuid"}),
            "format-changed",
            "/format",
        ),
        (
            json!({"type": "string"}),
            json!({"type": "string", "pattern": "^a"}),
            "pattern-changed",
            "/pattern",
        ),
        (
            json!({"type": "array"}),
            json!({"type": "array", "uniqueItems": true}),
            "unique-items-changed",
            "/uniqueItems",
        ),
        (
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}),
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false}),
            "required-",
            "/required",
        ),
        (
            json!({"type": "object", "additionalProperties": true}),
            json!({"type": "object", "additionalProperties": false}),
            "additional-properties-changed",
            "/additionalProperties",
        ),
        (
            json!({"type": "array", "items": {"type": "number"}}),
            json!({"type": "array", "items": {"type": "integer"}}),
            "type-changed",
            "/items/type",
        ),
    ];
    for (looser, stricter, family, under) in cases {
        for (role, key) in [("input", "inputSchema"), ("output", "outputSchema")] {
            // Stricter: breaking for input, info for output; looser: the other way round.
            for (from, to, expected) in [
                (
                    &looser,
                    &stricter,
                    if role == "input" { Breaking } else { Info },
                ),
                (
                    &stricter,
                    &looser,
                    if role == "input" { Info } else { Breaking },
                ),
            ] {
                let (severity, rule, pointer) =
                    only(schema(key, from.clone()), schema(key, to.clone()));
                assert_eq!(severity, expected, "{role} {from} -> {to}: {rule}");
                assert!(
                    rule.starts_with(role) && rule.contains(family),
                    "{rule} for {family}"
                );
                assert_eq!(pointer, format!("/{key}{under}"), "{rule}");
            }
            // Compared with itself: nothing.
            let same = diff_catalogs(
                &catalog(schema(key, stricter.clone())),
                &catalog(schema(key, stricter.clone())),
            );
            assert!(same.unwrap().changes.is_empty());
        }
    }
}

#[test]
fn properties_of_closed_objects() {
    let closed = |properties: Value| json!({"type": "object", "properties": properties, "additionalProperties": false});
    let (one, two) = (
        closed(json!({"a": {"type": "string"}})),
        closed(json!({"a": {"type": "string"}, "b": {"type": "string"}})),
    );
    // Input: a property removed from a closed object refuses what sent it; one added does not.
    assert_eq!(
        only(
            schema("inputSchema", two.clone()),
            schema("inputSchema", one.clone())
        ),
        (
            Breaking,
            "input-property-removed",
            "/inputSchema/properties/b".to_owned()
        )
    );
    assert_eq!(
        only(
            schema("inputSchema", one.clone()),
            schema("inputSchema", two.clone())
        )
        .0,
        Info
    );
    // Output: one added is refused by a reader of the old closed schema.
    assert_eq!(
        only(
            schema("outputSchema", one.clone()),
            schema("outputSchema", two.clone())
        ),
        (
            Breaking,
            "output-property-added",
            "/outputSchema/properties/b".to_owned()
        )
    );
    // A required output property made optional: breaking.
    let required = |names: Value| json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": names, "additionalProperties": false});
    assert_eq!(
        only(
            schema("outputSchema", required(json!(["a"]))),
            schema("outputSchema", required(json!([])))
        ),
        (
            Breaking,
            "output-required-removed",
            "/outputSchema/required".to_owned()
        )
    );
    // A property's own change is reported at its place, with names escaped.
    let odd = |t: &str| closed(json!({"a/b~c": {"type": t}}));
    assert_eq!(
        only(
            schema("inputSchema", odd("number")),
            schema("inputSchema", odd("integer"))
        )
        .2,
        "/inputSchema/properties/a~1b~0c/type"
    );
}

#[test]
fn defaults_texts_and_unknown_keywords() {
    let with = |extra: Value| {
        let mut s = json!({"type": "string"});
        for (k, v) in extra.as_object().unwrap() {
            s[k] = v.clone();
        }
        schema("inputSchema", s)
    };
    assert_eq!(
        only(with(json!({"default": "a"})), with(json!({"default": "b"}))),
        (
            Warning,
            "default-changed",
            "/inputSchema/default".to_owned()
        )
    );
    assert_eq!(
        only(
            with(json!({"description": "a"})),
            with(json!({"description": "b"}))
        )
        .0,
        Info
    );
    // A composition rewritten is judged breaking either way.
    assert_eq!(
        only(
            with(json!({"anyOf": [{"minLength": 1}]})),
            with(json!({"anyOf": [{"minLength": 2}]}))
        )
        .0,
        Breaking
    );
}

#[test]
fn equal_revisions_and_bad_input() {
    let mut a = catalog(json!({}));
    a["revision"] = json!("sha256:x");
    let mut b = catalog(json!({"title": "Other"}));
    b["revision"] = json!("sha256:x");
    assert!(
        diff_catalogs(&a, &b).unwrap().changes.is_empty(),
        "same revision, same catalog"
    );
    let error = diff_catalogs(&json!({"capabilities": 3}), &a).unwrap_err();
    assert_eq!(error.to_string(), "old catalog: no \"capabilities\" list");
    let error = diff_catalogs(&a, &json!({"capabilities": [{}]})).unwrap_err();
    assert_eq!(error.to_string(), "new catalog: capability 0 has no \"id\"");
}

/// Each rule id has its section, with an example pair, in `docs/diff-rules.md`.
#[test]
fn every_rule_is_documented() {
    let docs = include_str!("../../docs/diff-rules.md");
    for id in rcip_diff::RULES {
        let heading = format!("### `{id}`");
        let at = docs
            .find(&heading)
            .unwrap_or_else(|| panic!("{id} has no section"));
        let section = &docs[at..];
        let section = &section[..section[heading.len()..]
            .find("### ")
            .map_or(section.len(), |end| end + heading.len())];
        assert!(
            section.contains("Before:") && section.contains("After:"),
            "{id} has no example pair"
        );
    }
    let mut ids = rcip_diff::RULES.to_vec();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), rcip_diff::RULES.len(), "each rule once");
}

/// Every change between two schemas in the role `key`: (severity, rule, pointer).
fn all(key: &str, old: Value, new: Value) -> Vec<(Severity, &'static str, String)> {
    diff_catalogs(&catalog(schema(key, old)), &catalog(schema(key, new)))
        .unwrap()
        .changes
        .into_iter()
        .map(|c| (c.severity, c.rule, c.pointer))
        .collect()
}

/// Found by the property tests: 64-bit bounds compared exactly. rcip writes them as exact
/// JSON integers, and past 2^53 neighbouring integers are one f64, so a bound moved by one
/// went unreported.
#[test]
fn bounds_compare_exactly_past_2_to_the_53() {
    for (looser, stricter, key) in [
        (json!(i64::MAX), json!(i64::MAX - 1), "maximum"),
        (json!(u64::MAX - 1), json!(u64::MAX), "minimum"),
        (
            json!(1u64 << 53),
            json!((1u64 << 53) + 1),
            "exclusiveMinimum",
        ),
        // An integer against a float (2^64, just past u64::MAX).
        (
            json!(u64::MAX),
            json!(18_446_744_073_709_551_616.0),
            "exclusiveMinimum",
        ),
    ] {
        let (looser, stricter) = (
            json!({"type": "number", key: looser}),
            json!({"type": "number", key: stricter}),
        );
        let pointer = format!("/inputSchema/{key}");
        assert_eq!(
            only(
                schema("inputSchema", looser.clone()),
                schema("inputSchema", stricter.clone())
            ),
            (Breaking, "input-bound-changed", pointer.clone()),
            "{looser} -> {stricter}"
        );
        assert_eq!(
            only(
                schema("inputSchema", stricter),
                schema("inputSchema", looser)
            ),
            (Info, "input-bound-changed", pointer)
        );
    }
}

/// Found by the property tests: `enum` and `const` are one set of allowed values. schemars
/// writes an `Option<T>` of a const as `enum: [c, null]`; made required again it is
/// `const: c`, which is stricter, not an enum removed (looser) beside a const added.
#[test]
fn enum_and_const_are_one_set_of_values() {
    let (nullable, plain) = (json!({"enum": ["a", null]}), json!({"const": "a"}));
    let stricter = all("inputSchema", nullable.clone(), plain.clone());
    assert_eq!(
        stricter,
        [
            (
                Breaking,
                "input-enum-changed",
                "/inputSchema/enum".to_owned()
            ),
            (
                Breaking,
                "input-enum-changed",
                "/inputSchema/const".to_owned()
            ),
        ]
    );
    let stricter = all("outputSchema", nullable.clone(), plain.clone());
    assert!(stricter.iter().all(|c| c.0 == Info), "{stricter:?}");
    let looser = all("outputSchema", plain, nullable);
    assert!(
        !looser.is_empty() && looser.iter().all(|c| c.0 == Breaking),
        "{looser:?}"
    );
}

/// Found by the property tests: a rewrite that allows the same values is no change, where
/// it was judged stricter, looser or both (an output reordered its enum: breaking).
#[test]
fn the_same_values_rewritten_are_no_change() {
    for (before, after) in [
        (json!({"enum": ["a", "b"]}), json!({"enum": ["b", "a"]})),
        (json!({"enum": ["a"]}), json!({"const": "a"})),
        (
            json!({"type": ["string", "null"]}),
            json!({"type": ["null", "string"]}),
        ),
        (
            json!({"type": "array"}),
            json!({"type": "array", "uniqueItems": false}),
        ),
        // Equal by value at any depth, as JSON Schema compares `enum` and `const`.
        (
            json!({"enum": [[1, {"a": 2, "b": [3.0]}], null]}),
            json!({"enum": [null, [1.0, {"b": [3], "a": 2.0}]]}),
        ),
        (json!({"const": {"n": 10}}), json!({"const": {"n": 10.0}})),
    ] {
        for key in ["inputSchema", "outputSchema"] {
            for (from, to) in [(&before, &after), (&after, &before)] {
                let found = all(key, from.clone(), to.clone());
                assert!(found.is_empty(), "{key}: {from} -> {to}: {found:?}");
            }
        }
    }
}

/// A value inside an enum value that really changed is still a change (replaced: breaking
/// both ways), and a key that differs only in how a name is written is not mistaken for
/// punctuation.
#[test]
fn nested_enum_values_that_differ_are_a_change() {
    for (before, after) in [
        (json!({"enum": [[1, 2]]}), json!({"enum": [[1, 3]]})),
        (json!({"enum": [{"a": 1}]}), json!({"enum": [{"b": 1}]})),
        (
            json!({"const": {"a,b": 1}}),
            json!({"const": {"a": {"b": 1}}}),
        ),
        (json!({"const": [1.5]}), json!({"const": [1]})),
    ] {
        for key in ["inputSchema", "outputSchema"] {
            let found = all(key, before.clone(), after.clone());
            assert!(
                !found.is_empty() && found.iter().all(|c| c.0 == Breaking),
                "{key}: {before} -> {after}: {found:?}"
            );
        }
    }
}

/// `readOnly` and `writeOnly` are annotations, as rcip-core lists them: a change is info in
/// either role, never an unjudged keyword (breaking).
#[test]
fn read_only_and_write_only_are_annotations() {
    for keyword in ["readOnly", "writeOnly"] {
        let (before, after) = (
            json!({"type": "string"}),
            json!({"type": "string", keyword: true}),
        );
        for key in ["inputSchema", "outputSchema"] {
            assert_eq!(
                all(key, before.clone(), after.clone()),
                [(Info, "schema-text-changed", format!("/{key}/{keyword}"))],
                "{keyword} in {key}"
            );
        }
    }
}

/// The application's own members: metadata and declared scopes, all info.
#[test]
fn application_rules() {
    let base = catalog(json!({}));
    let changes = |change: &dyn Fn(&mut Value)| {
        let mut new = base.clone();
        change(&mut new);
        diff_catalogs(&base, &new)
            .unwrap()
            .changes
            .into_iter()
            .map(|c| (c.severity, c.rule, c.pointer, c.capability))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        changes(&|c| c["application"]["name"] = json!("App")),
        [(Info, "application-changed", "/application".to_owned(), None)]
    );
    assert_eq!(
        changes(&|c| c["scopes"] = json!([{"id": "s"}, {"id": "t"}])),
        [(Info, "scope-declared", "/scopes".to_owned(), None)]
    );
    assert_eq!(
        changes(&|c| c["scopes"] = json!([])),
        [(Info, "scope-withdrawn", "/scopes".to_owned(), None)]
    );
}

/// The rules each role names apart, on one minimal pair per role: compositions, texts,
/// the schema as a whole, formats, patterns, uniqueItems, required and properties.
#[test]
fn every_schema_rule_in_both_roles() {
    let string = |extra: Value| {
        let mut schema = json!({"type": "object", "properties": {"p": {"type": "string"}},
                                "required": ["p"], "additionalProperties": false});
        for (key, value) in extra.as_object().unwrap() {
            schema["properties"]["p"][key] = value.clone();
        }
        schema
    };
    let object = |required: Value, properties: Value, closed: bool| {
        json!({"type": "object", "properties": properties, "required": required,
               "additionalProperties": !closed})
    };
    let p = json!({"p": {"type": "string"}});
    let pq = json!({"p": {"type": "string"}, "q": {"type": "string"}});
    // (old, new, family, input severity, output severity, pointer under the schema)
    let cases: Vec<(Value, Value, &str, Severity, Severity, &str)> = vec![
        (
            string(json!({})),
            string(json!({"format": "uuid"})),
            "format-changed",
            Breaking,
            Info,
            "/properties/p/format",
        ),
        (
            string(json!({})),
            string(json!({"pattern": "^a"})),
            "pattern-changed",
            Breaking,
            Info,
            "/properties/p/pattern",
        ),
        (
            string(json!({"anyOf": [{"minLength": 1}]})),
            string(json!({"anyOf": [{"minLength": 2}]})),
            "composition-changed",
            Breaking,
            Breaking,
            "/properties/p/anyOf",
        ),
        (
            string(json!({"title": "P"})),
            string(json!({"title": "Q"})),
            "schema-text-changed",
            Info,
            Info,
            "/properties/p/title",
        ),
        (
            json!({"type": "array", "items": {"type": "string"}}),
            json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true}),
            "unique-items-changed",
            Breaking,
            Info,
            "/uniqueItems",
        ),
        (
            json!(true),
            json!({"type": "string"}),
            "schema-changed",
            Breaking,
            Info,
            "",
        ),
        (
            json!({"type": "string"}),
            json!({"type": ["string", "null"]}),
            "type-changed",
            Info,
            Breaking,
            "/type",
        ),
        (
            object(json!(["p"]), p.clone(), true),
            object(json!([]), p.clone(), true),
            "required-removed",
            Info,
            Breaking,
            "/required",
        ),
        (
            object(json!([]), p.clone(), true),
            object(json!(["p"]), p.clone(), true),
            "required-added",
            Breaking,
            Info,
            "/required",
        ),
        (
            object(json!([]), p.clone(), true),
            object(json!([]), pq.clone(), true),
            "property-added",
            Info,
            Breaking,
            "/properties/q",
        ),
        (
            object(json!([]), pq.clone(), true),
            object(json!([]), p.clone(), true),
            "property-removed",
            Breaking,
            Info,
            "/properties/q",
        ),
        (
            object(json!([]), p.clone(), false),
            object(json!([]), p.clone(), true),
            "additional-properties-changed",
            Breaking,
            Info,
            "/additionalProperties",
        ),
        (
            json!({"type": "integer", "maximum": 9}),
            json!({"type": "integer", "maximum": 10}),
            "bound-changed",
            Info,
            Breaking,
            "/maximum",
        ),
    ];
    for (old, new, family, input, output, under) in cases {
        for (role, key, severity) in [
            ("input", "inputSchema", input),
            ("output", "outputSchema", output),
        ] {
            let rule = if family == "schema-text-changed" {
                family.to_owned()
            } else {
                format!("{role}-{family}")
            };
            let (found_severity, found_rule, pointer) =
                only(schema(key, old.clone()), schema(key, new.clone()));
            assert_eq!(
                (found_severity, found_rule, pointer.as_str()),
                (severity, rule.as_str(), format!("/{key}{under}").as_str()),
                "{role} {family}"
            );
        }
    }
}
