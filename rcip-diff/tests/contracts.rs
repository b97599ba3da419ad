//! The other contracts: relationship packages, MCPL manifests and provider exports, one
//! minimal pair per rule.
#![allow(clippy::unwrap_used)]

use rcip_diff::{Contract, Severity, diff_exports, diff_manifests, diff_packages};
use rcip_export::Profile;
use serde_json::{Value, json};

/// Changes as (severity, rule, pointer).
type Found = Vec<(Severity, &'static str, String)>;

/// A change to the base package, and what it should find.
type Case = (fn(&mut Value), Found);

/// Every change as (severity, rule, pointer); each rule must be a listed (documented) one.
fn found(report: &rcip_diff::Report) -> Found {
    for change in &report.changes {
        assert!(
            rcip_diff::RULES.contains(&change.rule),
            "{} is not in RULES",
            change.rule
        );
    }
    report
        .changes
        .iter()
        .map(|c| (c.severity, c.rule, c.pointer.clone()))
        .collect()
}

// ----- packages ----------------------------------------------------------------------------

fn package() -> Value {
    json!({
        "protocol": "relationship/v1",
        "namespace": "polls",
        "version": 1,
        "types": {
            "poll": {
                "kind": "entity",
                "schema": {"type": "object",
                           "properties": {"question": {"type": "string", "maxLength": 200}},
                           "required": ["question"], "additionalProperties": false},
                "lifecycle": {"initial": "open", "states": ["open", "closed", "archived"]},
                "commands": {
                    "close": {
                        "input": {"type": "object", "properties": {"reason": {"type": "string"}},
                                  "required": [], "additionalProperties": false},
                        "from": ["open"], "to": "closed",
                        "set_data": {}
                    }
                }
            },
            "ballot": {
                "kind": "relationship",
                "schema": {"type": "object", "properties": {}, "required": [],
                           "additionalProperties": false},
                "roles": {
                    "poll": {"min": 1, "max": 1, "types": ["polls/poll"]},
                    "voter": {"min": 1, "max": 3, "types": ["people/person"]}
                }
            }
        },
        "views": {"open_polls": {"type": "poll", "fields": ["question"]}}
    })
}

/// The package changed by `change`, at version 2.
fn changed(change: impl FnOnce(&mut Value)) -> Value {
    let mut new = package();
    new["version"] = json!(2);
    change(&mut new);
    new
}

/// The package's own changes (not those of the capabilities it generates, which name their
/// capability), as (severity, rule, pointer).
fn own(report: &rcip_diff::Report) -> Found {
    let _listed = found(report);
    report
        .changes
        .iter()
        .filter(|c| c.capability.is_none())
        .map(|c| (c.severity, c.rule, c.pointer.clone()))
        .collect()
}

/// The package's own changes from the base package to `new`, without the version's info.
fn package_changes(new: &Value) -> Found {
    own(&diff_packages(&package(), new).unwrap())
        .into_iter()
        .filter(|(_, rule, _)| *rule != "package-version-changed")
        .collect()
}

/// The changes between two packages of the same version, without the version's warning.
fn between(old: &Value, new: &Value) -> Found {
    own(&diff_packages(old, new).unwrap())
        .into_iter()
        .filter(|(_, rule, _)| *rule != "package-version-not-raised")
        .collect()
}

fn one(severity: Severity, rule: &'static str, pointer: &str) -> Found {
    vec![(severity, rule, pointer.to_owned())]
}

#[test]
fn package_versions() {
    assert!(
        diff_packages(&package(), &package())
            .unwrap()
            .changes
            .is_empty()
    );
    assert_eq!(
        own(&diff_packages(&package(), &changed(|_| {})).unwrap()),
        one(Severity::Info, "package-version-changed", "/version")
    );
    let mut same_version = package();
    same_version["description"] = json!("Polls.");
    assert_eq!(
        own(&diff_packages(&package(), &same_version).unwrap()),
        vec![
            (
                Severity::Warning,
                "package-version-not-raised",
                "/version".to_owned()
            ),
            (
                Severity::Info,
                "package-text-changed",
                "/description".to_owned()
            ),
        ]
    );
    let mut other = package();
    other["namespace"] = json!("votes");
    assert_eq!(
        diff_packages(&package(), &other).unwrap_err().to_string(),
        "new package: its namespace is votes, the old package's polls"
    );
    // Not a valid package: the validator's problems.
    let error = diff_packages(&json!({"namespace": "x"}), &package()).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("old package: a package needs \"protocol\""),
        "{error}"
    );
}

#[test]
fn package_types() {
    let new = changed(|p| {
        p["types"].as_object_mut().unwrap().remove("ballot");
    });
    assert_eq!(
        package_changes(&new),
        one(Severity::Breaking, "package-type-removed", "/types/ballot")
    );
    assert_eq!(
        diff_packages(&new, &package()).unwrap().changes[1].rule,
        "package-type-added"
    );
    let new = changed(|p| {
        p["types"]["ballot"]["kind"] = json!("entity");
        p["types"]["ballot"]
            .as_object_mut()
            .unwrap()
            .remove("roles");
    });
    let rules: Vec<_> = package_changes(&new).into_iter().map(|c| c.1).collect();
    assert_eq!(
        rules,
        [
            "package-type-kind-changed",
            "package-role-removed",
            "package-role-removed"
        ]
    );
}

#[test]
fn record_schemas() {
    let schema = "/types/poll/schema/properties/question/maxLength";
    let stricter = changed(|p| {
        p["types"]["poll"]["schema"]["properties"]["question"]["maxLength"] = json!(100);
    });
    assert_eq!(
        package_changes(&stricter),
        one(Severity::Breaking, "record-schema-stricter", schema)
    );
    let looser = changed(|p| {
        p["types"]["poll"]["schema"]["properties"]["question"]["maxLength"] = json!(300);
    });
    assert_eq!(
        package_changes(&looser),
        one(Severity::Warning, "record-schema-looser", schema)
    );
    let rewritten = changed(|p| {
        p["types"]["poll"]["schema"]["properties"]["question"] = json!({"type": "integer"});
    });
    let old = changed(|p| {
        p["types"]["poll"]["schema"]["properties"]["question"] = json!({"type": "boolean"});
    });
    assert_eq!(
        between(&old, &rewritten),
        one(
            Severity::Breaking,
            "record-schema-changed",
            "/types/poll/schema/properties/question/type"
        )
    );
    // A property required: stricter for records that exist.
    let required = changed(|p| {
        p["types"]["ballot"]["schema"]["properties"]["note"] = json!({"type": "string"});
        p["types"]["ballot"]["schema"]["required"] = json!(["note"]);
    });
    let rules: Vec<_> = package_changes(&required)
        .into_iter()
        .map(|c| c.1)
        .collect();
    assert_eq!(rules, ["record-schema-stricter", "record-schema-looser"]);
}

#[test]
fn lifecycles() {
    let at = "/types/poll/lifecycle";
    let removed = changed(|p| {
        p["types"]["poll"]["lifecycle"]["states"] = json!(["open", "closed"]);
    });
    assert_eq!(
        package_changes(&removed),
        one(
            Severity::Breaking,
            "package-state-removed",
            &format!("{at}/states")
        )
    );
    assert_eq!(
        between(&removed, &changed(|_| {})),
        one(
            Severity::Info,
            "package-state-added",
            &format!("{at}/states")
        )
    );
    let initial = changed(|p| p["types"]["poll"]["lifecycle"]["initial"] = json!("closed"));
    assert_eq!(
        package_changes(&initial),
        one(
            Severity::Warning,
            "package-initial-state-changed",
            &format!("{at}/initial")
        )
    );
    // Without a lifecycle the command can name no state either.
    let gone = changed(|p| {
        p["types"]["poll"]
            .as_object_mut()
            .unwrap()
            .remove("lifecycle");
        let close = p["types"]["poll"]["commands"]["close"]
            .as_object_mut()
            .unwrap();
        close.remove("from");
        close.remove("to");
    });
    let rules: Vec<_> = package_changes(&gone).into_iter().map(|c| c.1).collect();
    assert_eq!(
        rules,
        [
            "package-lifecycle-changed",
            "package-command-from-widened",
            "package-command-to-changed"
        ]
    );
}

/// The capabilities the package generates are compared by the catalog rules: a state added
/// is harmless to records, but every record read now returns a `state` the old output
/// schema refuses.
#[test]
fn generated_capabilities() {
    let added = changed(|p| {
        p["types"]["poll"]["lifecycle"]["states"] = json!(["open", "closed", "archived", "hidden"]);
    });
    let report = diff_packages(&package(), &added).unwrap();
    let outputs: Vec<_> = report
        .changes
        .iter()
        .filter(|c| c.capability.is_some())
        .map(|c| (c.severity, c.rule, c.capability.clone().unwrap()))
        .collect();
    assert!(
        outputs.contains(&(
            Severity::Breaking,
            "output-enum-changed",
            "polls.poll.get".to_owned()
        )),
        "{outputs:?}"
    );
    // Searches take a state to filter by (info), reads return it (breaking).
    assert!(
        outputs.iter().all(|c| matches!(
            (c.0, c.1),
            (Severity::Breaking, "output-enum-changed")
                | (Severity::Info, "input-enum-changed" | "member-changed")
        )),
        "{outputs:?}"
    );
    // A command removed is also its capability removed.
    let gone = changed(|p| {
        p["types"]["poll"]["commands"]
            .as_object_mut()
            .unwrap()
            .remove("close");
    });
    let report = diff_packages(&package(), &gone).unwrap();
    assert!(
        report.changes.iter().any(|c| c.rule == "capability-removed"
            && c.capability.as_deref() == Some("polls.poll.close")),
        "{report:?}"
    );
}

#[test]
fn roles() {
    let at = "/types/ballot/roles";
    let cases: [Case; 6] = [
        (
            |p| {
                p["types"]["ballot"]["roles"]
                    .as_object_mut()
                    .unwrap()
                    .remove("voter");
            },
            one(
                Severity::Breaking,
                "package-role-removed",
                "/types/ballot/roles/voter",
            ),
        ),
        (
            |p| p["types"]["ballot"]["roles"]["voter"]["max"] = json!(1),
            one(
                Severity::Breaking,
                "package-role-bounds-narrowed",
                "/types/ballot/roles/voter",
            ),
        ),
        (
            |p| p["types"]["ballot"]["roles"]["voter"]["min"] = json!(0),
            one(
                Severity::Info,
                "package-role-bounds-widened",
                "/types/ballot/roles/voter",
            ),
        ),
        (
            |p| {
                p["types"]["ballot"]["roles"]["voter"]["types"] =
                    json!(["people/person", "people/team"])
            },
            one(
                Severity::Info,
                "package-role-types-widened",
                "/types/ballot/roles/voter/types",
            ),
        ),
        (
            |p| {
                p["types"]["ballot"]["roles"]["witness"] =
                    json!({"min": 1, "max": 1, "types": ["people/person"]});
            },
            one(
                Severity::Breaking,
                "package-role-required-added",
                "/types/ballot/roles/witness",
            ),
        ),
        (
            |p| {
                p["types"]["ballot"]["roles"]["witness"] =
                    json!({"min": 0, "max": 1, "types": ["people/person"]});
            },
            one(
                Severity::Info,
                "package-role-added",
                "/types/ballot/roles/witness",
            ),
        ),
    ];
    for (change, expected) in cases {
        assert_eq!(package_changes(&changed(change)), expected, "{expected:?}");
    }
    let wider = changed(|p| {
        p["types"]["ballot"]["roles"]["poll"]["types"] = json!(["polls/poll", "people/team"]);
    });
    assert_eq!(
        between(&wider, &changed(|_| {}))[0],
        (
            Severity::Breaking,
            "package-role-types-narrowed",
            format!("{at}/poll/types")
        )
    );
}

#[test]
fn commands() {
    let at = "/types/poll/commands/close";
    let gone = changed(|p| {
        p["types"]["poll"]["commands"]
            .as_object_mut()
            .unwrap()
            .remove("close");
    });
    assert_eq!(
        package_changes(&gone),
        one(Severity::Breaking, "package-command-removed", at)
    );
    assert_eq!(
        between(&gone, &changed(|_| {})),
        one(Severity::Info, "package-command-added", at)
    );
    // The input follows the input rules.
    let required = changed(|p| {
        p["types"]["poll"]["commands"]["close"]["input"]["required"] = json!(["reason"]);
    });
    assert_eq!(
        package_changes(&required),
        one(
            Severity::Breaking,
            "input-required-added",
            &format!("{at}/input/required")
        )
    );
    let cases: [Case; 6] = [
        (
            |p| p["types"]["poll"]["commands"]["close"]["from"] = json!(["open", "closed"]),
            one(
                Severity::Info,
                "package-command-from-widened",
                "/types/poll/commands/close/from",
            ),
        ),
        (
            |p| p["types"]["poll"]["commands"]["close"]["from"] = json!(["closed"]),
            vec![
                (
                    Severity::Breaking,
                    "package-command-from-narrowed",
                    "/types/poll/commands/close/from".to_owned(),
                ),
                (
                    Severity::Info,
                    "package-command-from-widened",
                    "/types/poll/commands/close/from".to_owned(),
                ),
            ],
        ),
        (
            |p| p["types"]["poll"]["commands"]["close"]["to"] = json!("open"),
            one(
                Severity::Warning,
                "package-command-to-changed",
                "/types/poll/commands/close/to",
            ),
        ),
        (
            |p| p["types"]["poll"]["commands"]["close"]["guard"] = json!({"eq": [1, 1]}),
            one(
                Severity::Breaking,
                "package-command-guard-added",
                "/types/poll/commands/close/guard",
            ),
        ),
        (
            |p| p["types"]["poll"]["commands"]["close"]["set_data"] = json!({"question": "x"}),
            one(
                Severity::Warning,
                "package-command-effects-changed",
                "/types/poll/commands/close/set_data",
            ),
        ),
        (
            |p| p["types"]["poll"]["commands"]["close"]["description"] = json!("Closes."),
            one(
                Severity::Info,
                "package-text-changed",
                "/types/poll/commands/close/description",
            ),
        ),
    ];
    for (change, expected) in cases {
        assert_eq!(package_changes(&changed(change)), expected, "{expected:?}");
    }
    // From any state to a list is narrower.
    let any = changed(|p| {
        p["types"]["poll"]["commands"]["close"]
            .as_object_mut()
            .unwrap()
            .remove("from");
    });
    assert_eq!(
        between(&any, &changed(|_| {})),
        one(
            Severity::Breaking,
            "package-command-from-narrowed",
            &format!("{at}/from")
        )
    );
    let guarded =
        changed(|p| p["types"]["poll"]["commands"]["close"]["guard"] = json!({"eq": [1, 1]}));
    assert_eq!(
        between(&guarded, &changed(|_| {})),
        one(
            Severity::Info,
            "package-command-guard-removed",
            &format!("{at}/guard")
        )
    );
}

#[test]
fn views() {
    let gone = changed(|p| p["views"] = json!({}));
    assert_eq!(
        package_changes(&gone),
        one(
            Severity::Breaking,
            "package-view-removed",
            "/views/open_polls"
        )
    );
    assert_eq!(
        between(&gone, &changed(|_| {})),
        one(Severity::Info, "package-view-added", "/views/open_polls")
    );
    let other = changed(|p| {
        p["views"]["open_polls"]["where"] = json!({"eq": [{"path": "state"}, "open"]});
    });
    assert_eq!(
        package_changes(&other),
        one(
            Severity::Warning,
            "package-view-changed",
            "/views/open_polls"
        )
    );
}

/// The example packages of the repository: a real package against itself, and against a
/// later version with one state removed.
#[test]
fn the_polls_package() {
    let polls: Value =
        serde_json::from_str(include_str!("../../examples/programs/polls.json")).unwrap();
    assert_eq!(Contract::detect(&polls), Some(Contract::Package));
    assert!(diff_packages(&polls, &polls).unwrap().changes.is_empty());
    // The next version, unchanged otherwise: only the version's own info (every record read
    // names the version, and that is judged once, not as each read's output).
    let mut next = polls.clone();
    next["version"] = json!(2);
    assert_eq!(
        found(&diff_packages(&polls, &next).unwrap()),
        one(Severity::Info, "package-version-changed", "/version")
    );
    // A command that no longer runs from `closed`: the package's rule, and nothing else
    // breaking (its capability's contract is unchanged).
    next["types"]["poll"]["commands"]["reopen"]["from"] = json!(["open"]);
    let report = diff_packages(&polls, &next).unwrap();
    let breaking: Vec<_> = report
        .changes
        .iter()
        .filter(|c| c.severity == Severity::Breaking)
        .map(|c| (c.rule, c.pointer.as_str()))
        .collect();
    assert_eq!(
        breaking,
        [(
            "package-command-from-narrowed",
            "/types/poll/commands/reopen/from"
        )],
        "{report:?}"
    );
}

// ----- MCPL manifests ----------------------------------------------------------------------

fn manifest() -> Value {
    json!({
        "version": "0.5",
        "pushEvents": true,
        "channels": {"register": true, "publish": true, "incoming": true},
        "demoLimits": {"rate": 10},
        "featureSets": {
            "demo.messaging": {
                "description": "Demo",
                "uses": ["channels.publish", "pushEvents"],
                "tagOntology": {"coreTags": ["chat"], "tags": {"chat": {"implies": []}, "admin": {}}}
            }
        }
    })
}

fn manifest_changes(change: impl FnOnce(&mut Value)) -> Found {
    let mut new = manifest();
    change(&mut new);
    found(&diff_manifests(&manifest(), &new).unwrap())
}

#[test]
fn manifest_capabilities() {
    assert!(manifest_changes(|_| {}).is_empty());
    assert_eq!(
        manifest_changes(|m| m["version"] = json!("0.6")),
        one(Severity::Info, "mcpl-version-changed", "/version")
    );
    assert_eq!(
        manifest_changes(|m| m["pushEvents"] = json!(false)),
        one(
            Severity::Breaking,
            "mcpl-capability-withdrawn",
            "/pushEvents"
        )
    );
    assert_eq!(
        manifest_changes(|m| m["channels"]["typing"] = json!(true)),
        one(
            Severity::Info,
            "mcpl-capability-advertised",
            "/channels/typing"
        )
    );
    assert_eq!(
        manifest_changes(|m| m["demoLimits"]["rate"] = json!(5)),
        one(Severity::Warning, "mcpl-extension-changed", "/demoLimits")
    );
    // `true` is every leaf beneath: spelled out, the same paths.
    let all = json!({"version": "0.5", "channels": true});
    let mut spelled = all.clone();
    spelled["channels"] = json!({"register": true, "lifecycle": true, "publish": true,
        "incoming": true, "streaming": true, "acknowledge": true, "typing": true});
    assert_eq!(
        found(&diff_manifests(&all, &spelled).unwrap()),
        one(Severity::Info, "mcpl-capabilities-rewritten", "/channels")
    );
    let narrowed = json!({"version": "0.5", "channels": {"publish": true}});
    let report = diff_manifests(&all, &narrowed).unwrap();
    assert_eq!(report.count(Severity::Breaking), 6, "{report:?}");
    assert!(
        report
            .changes
            .iter()
            .all(|c| c.rule == "mcpl-capability-withdrawn")
    );
    // A revision is trusted only as the digest of its manifest: a stale one hides nothing.
    let (mut a, mut b) = (manifest(), manifest());
    a["revision"] = json!(rcip_mcpl::manifest_digest(&a).unwrap());
    b["revision"] = a["revision"].clone();
    assert!(diff_manifests(&a, &b).unwrap().changes.is_empty());
    b["pushEvents"] = json!(false);
    assert_eq!(
        found(&diff_manifests(&a, &b).unwrap()),
        one(
            Severity::Breaking,
            "mcpl-capability-withdrawn",
            "/pushEvents"
        )
    );
    assert_eq!(
        diff_manifests(&json!([]), &a).unwrap_err().to_string(),
        "old manifest: not a JSON object"
    );
}

#[test]
fn manifest_feature_sets() {
    let set = "/featureSets/demo.messaging";
    assert_eq!(
        manifest_changes(|m| m["featureSets"] = json!({})),
        one(Severity::Breaking, "mcpl-feature-set-removed", set)
    );
    assert_eq!(
        manifest_changes(|m| m["featureSets"]["other"] = json!({"uses": []})),
        one(
            Severity::Info,
            "mcpl-feature-set-added",
            "/featureSets/other"
        )
    );
    let uses = format!("{set}/uses");
    assert_eq!(
        manifest_changes(|m| {
            m["featureSets"]["demo.messaging"]["uses"] =
                json!(["pushEvents", "channels.publish", "channels.incoming"]);
        }),
        one(Severity::Breaking, "mcpl-feature-set-uses-added", &uses)
    );
    assert_eq!(
        manifest_changes(|m| m["featureSets"]["demo.messaging"]["uses"] = json!(["pushEvents"])),
        one(Severity::Warning, "mcpl-feature-set-uses-removed", &uses)
    );
    // Reordered and repeated: a set, so no change.
    assert!(
        manifest_changes(|m| {
            m["featureSets"]["demo.messaging"]["uses"] =
                json!(["pushEvents", "channels.publish", "pushEvents"]);
        })
        .is_empty()
    );
    assert_eq!(
        manifest_changes(|m| m["featureSets"]["demo.messaging"]["description"] = json!("Chat")),
        one(Severity::Info, "mcpl-feature-set-changed", set)
    );
    assert_eq!(
        manifest_changes(|m| m["featureSets"] = json!([])),
        vec![
            (
                Severity::Info,
                "mcpl-feature-set-changed",
                "/featureSets".to_owned()
            ),
            (
                Severity::Breaking,
                "mcpl-feature-set-removed",
                set.to_owned()
            ),
        ]
    );
}

#[test]
fn manifest_tag_ontology() {
    let at = "/featureSets/demo.messaging/tagOntology";
    assert_eq!(
        manifest_changes(|m| {
            m["featureSets"]["demo.messaging"]["tagOntology"]["tags"]
                .as_object_mut()
                .unwrap()
                .remove("admin");
        }),
        one(Severity::Warning, "mcpl-tag-removed", at)
    );
    assert_eq!(
        manifest_changes(|m| {
            m["featureSets"]["demo.messaging"]["tagOntology"]["tags"]["billing"] = json!({});
        }),
        one(Severity::Info, "mcpl-tag-added", at)
    );
    assert_eq!(
        manifest_changes(|m| {
            m["featureSets"]["demo.messaging"]["tagOntology"]["tags"]["chat"]["implies"] =
                json!(["admin"]);
        }),
        one(Severity::Info, "mcpl-tag-ontology-changed", at)
    );
    // A tag removed and another's implies changed: both said.
    let both = manifest_changes(|m| {
        let ontology = &mut m["featureSets"]["demo.messaging"]["tagOntology"];
        ontology["tags"].as_object_mut().unwrap().remove("admin");
        ontology["tags"]["chat"]["implies"] = json!(["x"]);
    });
    let rules: Vec<_> = both.into_iter().map(|c| c.1).collect();
    assert_eq!(rules, ["mcpl-tag-removed", "mcpl-tag-ontology-changed"]);
}

// ----- provider exports --------------------------------------------------------------------

fn tool(id: &str) -> Value {
    json!({"id": id, "title": "T", "description": "D.", "effect": "read", "scopeIds": [],
           "inputSchema": {"type": "object", "properties": {}, "additionalProperties": false},
           "outputSchema": {"type": "null"}})
}

#[test]
fn provider_exports() {
    let old = json!({"capabilities": [tool("notes.list")]});
    // The same catalog: nothing.
    assert!(
        diff_exports(Profile::OpenAi, &old, &old)
            .unwrap()
            .changes
            .is_empty()
    );
    // Another id, the same OpenAI tool: retargeted. For MCP, whose names keep the dot, two tools.
    let new = json!({"capabilities": [tool("notes_list")]});
    let openai: Vec<_> = found(&diff_exports(Profile::OpenAi, &old, &new).unwrap())
        .into_iter()
        .map(|c| c.1)
        .collect();
    assert_eq!(
        openai,
        ["capability-removed", "capability-added", "tool-retargeted"]
    );
    let mcp: Vec<_> = found(&diff_exports(Profile::Mcp2025_11_25, &old, &new).unwrap())
        .into_iter()
        .map(|c| c.1)
        .collect();
    assert_eq!(mcp, ["capability-removed", "capability-added"]);
    // Two ids on one name: the profile refuses the new catalog.
    let both = json!({"capabilities": [tool("notes.list"), tool("notes_list")]});
    let report = diff_exports(Profile::Anthropic, &old, &both).unwrap();
    let refused = report.changes.last().unwrap();
    assert_eq!(refused.rule, "tool-export-refused");
    assert_eq!(refused.severity, Severity::Breaking);
    assert!(
        refused.message.contains("NAME_COLLISION"),
        "{}",
        refused.message
    );
}

// ----- review findings, each a minimal pair --------------------------------------------------

/// Packages are compared in the validator's normalized form: a string's default
/// `maxLength` (4000) written out is no change, and dropping a larger one is stricter.
#[test]
fn packages_are_compared_normalized() {
    let with_bound = |bound: Option<u64>| {
        changed(|p| {
            let question = &mut p["types"]["poll"]["schema"]["properties"]["question"];
            match bound {
                Some(bound) => question["maxLength"] = json!(bound),
                None => {
                    question.as_object_mut().unwrap().remove("maxLength");
                }
            }
        })
    };
    assert!(between(&with_bound(None), &with_bound(Some(4000))).is_empty());
    assert_eq!(
        between(&with_bound(Some(5000)), &with_bound(None)),
        one(
            Severity::Breaking,
            "record-schema-stricter",
            "/types/poll/schema/properties/question/maxLength"
        )
    );
    // A lower version for the same content is a warning too.
    let mut lower = changed(|_| {});
    lower["version"] = json!(1);
    assert_eq!(
        own(&diff_packages(&changed(|_| {}), &lower).unwrap()),
        one(Severity::Warning, "package-version-not-raised", "/version")
    );
}

#[test]
fn a_feature_set_disabled_is_breaking() {
    for uses in [json!([]), json!("channels.publish"), json!(["nowhere"])] {
        assert_eq!(
            manifest_changes(|m| m["featureSets"]["demo.messaging"]["uses"] = uses.clone()),
            one(
                Severity::Breaking,
                "mcpl-feature-set-disabled",
                "/featureSets/demo.messaging/uses"
            ),
            "{uses}"
        );
    }
    let disabled = manifest_changes(|m| {
        m["featureSets"]["demo.messaging"]
            .as_object_mut()
            .unwrap()
            .remove("uses");
    });
    assert_eq!(disabled[0].1, "mcpl-feature-set-disabled");
}

#[test]
fn vendor_members_inside_a_known_capability() {
    let old = json!({"version": "0.5", "channels": {"publish": {"maxBytes": 1000}}});
    let new = json!({"version": "0.5", "channels": {"publish": {"maxBytes": 10}}});
    assert_eq!(
        found(&diff_manifests(&old, &new).unwrap()),
        one(Severity::Warning, "mcpl-extension-changed", "/channels")
    );
    // A withdrawn path points at the deepest member that advertised it.
    let all = json!({"version": "0.5", "channels": true});
    let report = diff_manifests(&all, &json!({"version": "0.5"})).unwrap();
    assert_eq!(report.changes.len(), 7, "{report:?}");
    assert!(
        report.changes.iter().all(|c| c.pointer == "/channels"),
        "{report:?}"
    );
}

#[test]
fn a_catalog_refused_before_and_after_is_no_new_refusal() {
    let both = json!({"capabilities": [tool("notes.list"), tool("notes_list")]});
    assert!(
        diff_exports(Profile::OpenAi, &both, &both)
            .unwrap()
            .changes
            .is_empty()
    );
}

#[test]
fn numbers_in_enums_compare_by_value() {
    let schema = |values: Value| {
        json!({"capabilities": [{"id": "c", "effect": "read", "scopeIds": [],
            "inputSchema": {"type": "number", "enum": values}, "outputSchema": {"type": "null"}}]})
    };
    let report =
        rcip_diff::diff_catalogs(&schema(json!([1, 2.5])), &schema(json!([1.0, 2.5]))).unwrap();
    assert!(report.changes.is_empty(), "{report:?}");
}

/// Past `MAX_SCHEMA_DEPTH` a changed subschema is judged whole: a change, breaking both ways.
#[test]
fn deep_schemas_are_bounded() {
    let nested = |leaf: Value| {
        let mut schema = leaf;
        for _ in 0..(rcip_diff::MAX_SCHEMA_DEPTH + 10) {
            schema = json!({"type": "object", "properties": {"a": schema},
                            "required": ["a"], "additionalProperties": false});
        }
        json!({"capabilities": [{"id": "c", "effect": "read", "scopeIds": [],
            "inputSchema": schema, "outputSchema": {"type": "null"}}]})
    };
    let report = rcip_diff::diff_catalogs(
        &nested(json!({"type": "string"})),
        &nested(json!({"type": "string", "maxLength": 3})),
    )
    .unwrap();
    assert_eq!(report.changes.len(), 1);
    assert_eq!(report.changes[0].rule, "input-schema-changed");
    assert_eq!(report.changes[0].severity, Severity::Breaking);
}
