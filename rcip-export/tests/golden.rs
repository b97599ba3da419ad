//! Golden cases: the digest's test schemas T1–T7, X1 and X2, what each profile emits and refuses.
#![allow(clippy::unwrap_used)]

use rcip_core::{CapabilityDefinition, Effect};
use rcip_export::{Export, ExportError, Profile, export};
use serde_json::{Value, json};

fn one(profile: Profile, input: Value) -> Result<Export, ExportError> {
    let capability =
        CapabilityDefinition::new("demo.tool", Effect::Read, "Demo", "A demo.").input_schema(input);
    export(profile, [(&capability).into()])
}

fn params(profile: Profile, input: Value) -> Value {
    match one(profile, input) {
        Ok(export) => export.tools()[0].input_schema().clone(),
        Err(error) => panic!("{profile}: {error}"),
    }
}

fn t1() -> Value {
    json!({"type":"object","properties":{"name":{"type":"string"},"nick":{"type":["string","null"]}},"required":["name"],"additionalProperties":false})
}
fn t2() -> Value {
    json!({"type":"object","properties":{"q":{"type":"string","minLength":1,"maxLength":64}},"required":["q"],"additionalProperties":false})
}
fn t3() -> Value {
    json!({"type":"object","properties":{"shape":{"oneOf":[
        {"type":"object","properties":{"kind":{"type":"string","const":"circle"},"r":{"type":"number"}},"required":["kind","r"],"additionalProperties":false},
        {"type":"object","properties":{"kind":{"type":"string","const":"square"},"side":{"type":"number"}},"required":["kind","side"],"additionalProperties":false}]}},
        "required":["shape"],"additionalProperties":false})
}
fn t4() -> Value {
    json!({"type":"object","additionalProperties":false})
}
fn t5() -> Value {
    json!({"type":"object","properties":{"n":{"type":"integer","minimum":0,"maximum":4294967295u64},"big":{"type":"integer","minimum":0,"maximum":18446744073709551615u64}},"required":["n","big"],"additionalProperties":false})
}
fn t6() -> Value {
    json!({"type":"object","properties":{"id":{"type":"string","format":"uuid"},"w":{"type":"string","pattern":"^[a-z]+$"}},"required":["id","w"],"additionalProperties":false})
}
fn t7() -> Value {
    json!({"type":"object","properties":{"a":{"$ref":"#/$defs/A"}},"$defs":{"A":{"type":"string"}},"required":["a"],"additionalProperties":false})
}
fn x1() -> Value {
    json!({"anyOf":[{"type":"object","properties":{},"additionalProperties":false},{"type":"string"}]})
}
fn x2() -> Value {
    json!({"type":"array","items":{"type":"integer","minimum":1,"maximum":3}})
}

#[test]
fn mcp_sends_the_base_form_in_its_portable_spelling() {
    for profile in [Profile::Mcp2025_11_25, Profile::Mcp2026_07_28] {
        for schema in [t2(), t3(), t4(), t6(), t7()] {
            assert_eq!(params(profile, schema.clone()), schema);
        }
        // T1: the type array becomes single-type anyOf branches (the Inspector's `--strict`
        // warns about type arrays); the same instances pass.
        assert_eq!(
            params(profile, t1()),
            json!({"type":"object","properties":{"name":{"type":"string"},
                "nick":{"anyOf":[{"type":"string"},{"type":"null"}]}},
                "required":["name"],"additionalProperties":false})
        );
        // T5: u32's bound stays; u64's maximum only restates the type and is left out.
        assert_eq!(
            params(profile, t5()),
            json!({"type":"object","properties":{"n":{"type":"integer","minimum":0,"maximum":4294967295u64},
                "big":{"type":"integer","minimum":0}},"required":["n","big"],"additionalProperties":false})
        );
        // X1, X2: not object-rooted, wrapped as {"input": ...}.
        assert_eq!(
            params(profile, x2()),
            json!({"type":"object","properties":{"input":x2()},"required":["input"],"additionalProperties":false})
        );
    }
}

#[test]
fn openai_golden() {
    let p = Profile::OpenAi;
    // T1: the optional becomes required (already nullable).
    assert_eq!(
        params(p, t1()),
        json!({"type":"object","properties":{"name":{"type":"string"},"nick":{"type":["string","null"]}},"required":["name","nick"],"additionalProperties":false})
    );
    // T2: lengths moved.
    assert_eq!(
        params(p, t2())["properties"]["q"],
        json!({"type":"string","description":"Constraints: maxLength 64, minLength 1."})
    );
    // T3: oneOf -> anyOf, const kept.
    let shape = &params(p, t3())["properties"]["shape"];
    assert!(shape.get("oneOf").is_none());
    assert_eq!(
        shape["anyOf"][0]["properties"]["kind"],
        json!({"type":"string","const":"circle"})
    );
    // T4: properties {} and required [].
    assert_eq!(
        params(p, t4()),
        json!({"type":"object","properties":{},"required":[],"additionalProperties":false})
    );
    // T5: u32 bounds kept, u64::MAX clamped with the true bound in the description.
    let t5 = params(p, t5());
    assert_eq!(
        t5["properties"]["n"],
        json!({"type":"integer","minimum":0,"maximum":4294967295u64})
    );
    assert_eq!(
        t5["properties"]["big"],
        json!({"type":"integer","minimum":0,"maximum":9007199254740991u64,"description":"Constraints: maximum 18446744073709551615."})
    );
    // T6: uuid and a plain pattern kept.
    assert_eq!(params(p, t6())["properties"], t6()["properties"]);
    // X1, X2: wrapped.
    assert_eq!(params(p, x2())["required"], json!(["input"]));
    assert_eq!(
        params(p, x1())["properties"]["input"]["anyOf"][0],
        json!({"type":"object","properties":{},"required":[],"additionalProperties":false})
    );
}

#[test]
fn anthropic_golden() {
    let p = Profile::Anthropic;
    // T1: type array -> anyOf; the optional stays optional.
    assert_eq!(
        params(p, t1()),
        json!({"type":"object","properties":{"name":{"type":"string"},"nick":{"anyOf":[{"type":"string"},{"type":"null"}]}},"required":["name"],"additionalProperties":false})
    );
    assert_eq!(
        params(p, t2())["properties"]["q"],
        json!({"type":"string","description":"Constraints: maxLength 64, minLength 1."})
    );
    // T3: oneOf -> anyOf and the type beside const dropped.
    let shape = &params(p, t3())["properties"]["shape"];
    assert_eq!(
        shape["anyOf"][1]["properties"]["kind"],
        json!({"const":"square"})
    );
    assert_eq!(
        params(p, t4()),
        json!({"type":"object","properties":{},"additionalProperties":false})
    );
    assert_eq!(
        params(p, t5())["properties"]["n"],
        json!({"type":"integer","description":"Constraints: maximum 4294967295, minimum 0."})
    );
    assert_eq!(
        params(p, t6())["properties"],
        json!({"id":{"type":"string","format":"uuid"},"w":{"type":"string","description":"Constraints: pattern \"^[a-z]+$\"."}})
    );
    assert_eq!(
        params(p, x2())["properties"]["input"]["items"],
        json!({"type":"integer","description":"Constraints: maximum 3, minimum 1."})
    );
}

#[test]
fn gemini_parameters_golden() {
    let p = Profile::Gemini;
    assert_eq!(
        params(p, t1()),
        json!({"type":"OBJECT","properties":{"name":{"type":"STRING"},"nick":{"type":"STRING","nullable":true}},"required":["name"],"description":"Constraints: additionalProperties false."})
    );
    assert_eq!(
        params(p, t2())["properties"]["q"],
        json!({"type":"STRING","minLength":1,"maxLength":64})
    );
    let shape = &params(p, t3())["properties"]["shape"];
    assert_eq!(
        shape["anyOf"][0]["properties"]["kind"],
        json!({"type":"STRING","enum":["circle"]})
    );
    let t5 = params(p, t5());
    assert_eq!(
        t5["properties"]["n"],
        json!({"type":"INTEGER","minimum":0.0,"maximum":4294967295.0})
    );
    assert_eq!(
        t5["properties"]["big"],
        json!({"type":"INTEGER","minimum":0.0,"description":"Constraints: maximum 18446744073709551615."})
    );
    assert_eq!(
        params(p, t6())["properties"],
        json!({"id":{"type":"STRING","description":"Constraints: format \"uuid\"."},"w":{"type":"STRING","pattern":"^[a-z]+$"}})
    );
    assert_eq!(params(p, x2())["properties"]["input"]["type"], "ARRAY");
}

#[test]
fn gemini_json_schema_golden() {
    let p = Profile::GeminiJsonSchema;
    assert_eq!(params(p, t1()), t1());
    assert_eq!(
        params(p, t2())["properties"]["q"],
        json!({"type":"string","description":"Constraints: maxLength 64, minLength 1."})
    );
    let shape = &params(p, t3())["properties"]["shape"];
    assert_eq!(
        shape["anyOf"][0]["properties"]["kind"],
        json!({"type":"string","enum":["circle"]})
    );
    assert_eq!(params(p, t4()), t4());
    assert_eq!(
        params(p, t6())["properties"],
        json!({"id":{"type":"string","description":"Constraints: format \"uuid\"."},"w":{"type":"string","description":"Constraints: pattern \"^[a-z]+$\"."}})
    );
}

#[test]
fn t7_refs_are_refused_outside_mcp_with_capability_and_pointer() {
    for p in [
        Profile::OpenAi,
        Profile::Anthropic,
        Profile::Gemini,
        Profile::GeminiJsonSchema,
    ] {
        let Err(error) = one(p, t7()) else {
            panic!("{p} accepted $defs");
        };
        assert_eq!(error.code(), "UNSUPPORTED_SCHEMA");
        let text = error.to_string();
        assert!(
            text.contains("\"demo.tool\"") && text.contains("/$defs"),
            "{text}"
        );
    }
}

#[test]
fn refusals_name_the_pointer() {
    let not = json!({"type":"object","properties":{"a":{"type":"string","not":{"const":"x"}}},"required":["a"],"additionalProperties":false});
    let map = json!({"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"integer"}}},"required":["m"],"additionalProperties":false});
    // A schema with both properties and additional properties has no entry-list form.
    let open_object = json!({"type":"object","properties":{"m":{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"integer"}}},"required":["m"],"additionalProperties":false});
    let int_const = json!({"type":"object","properties":{"v":{"type":"integer","const":3}},"required":["v"],"additionalProperties":false});
    let cases = [
        (Profile::OpenAi, not.clone(), "/properties/a/not"),
        (Profile::Anthropic, not, "/properties/a/not"),
        (
            Profile::OpenAi,
            open_object.clone(),
            "/properties/m/additionalProperties",
        ),
        (
            Profile::Gemini,
            open_object,
            "/properties/m/additionalProperties",
        ),
        (Profile::Gemini, int_const, "/properties/v/const"),
        // X2 wrapped: the pointer is into the capability's own schema.
        (
            Profile::Anthropic,
            json!({"type":"array","items":{"type":"string","if":{}}}),
            "/items/if",
        ),
    ];
    for (p, schema, pointer) in cases {
        match one(p, schema) {
            Err(ExportError::UnsupportedSchema(issue)) => {
                assert_eq!(
                    (issue.pointer.as_str(), issue.capability.as_str()),
                    (pointer, "demo.tool"),
                    "{p}"
                );
            }
            other => panic!("{p}: expected a refusal at {pointer}, got {other:?}"),
        }
    }
    // The map is kept where the form has maps, and a list of entries elsewhere.
    assert_eq!(params(Profile::GeminiJsonSchema, map.clone()), map);
    assert_eq!(params(Profile::Mcp2026_07_28, map.clone()), map);
    let entries = json!({"type":"object","properties":{"key":{"type":"string"},"value":{"type":"integer"}},"required":["key","value"],"additionalProperties":false});
    assert_eq!(
        params(Profile::OpenAi, map.clone())["properties"]["m"],
        json!({"type":"array","items":entries,"description":"A map, as a list of {\"key\", \"value\"} entries with distinct keys."})
    );
    assert_eq!(
        params(Profile::Gemini, map)["properties"]["m"]["items"]["properties"]["value"],
        json!({"type":"INTEGER"})
    );
}

#[test]
fn openai_limits_are_checked_at_export() {
    let mut schema = json!({"type":"string"});
    for _ in 0..11 {
        schema = json!({"type":"array","items":schema});
    }
    let deep = json!({"type":"object","properties":{"d":schema},"required":["d"],"additionalProperties":false});
    let error = one(Profile::OpenAi, deep.clone()).unwrap_err();
    assert_eq!(error.code(), "LIMIT_EXCEEDED");
    assert!(one(Profile::Mcp2025_11_25, deep).is_ok());

    let values: Vec<String> = (0..1001).map(|i| format!("v{i}")).collect();
    let many = json!({"type":"object","properties":{"e":{"type":"string","enum":values}},"required":["e"],"additionalProperties":false});
    assert_eq!(
        one(Profile::OpenAi, many).unwrap_err().code(),
        "LIMIT_EXCEEDED"
    );
}

#[test]
fn wire_forms() {
    let capability = CapabilityDefinition::new(
        "polls.close",
        Effect::Destructive,
        "Close",
        "Closes a poll.",
    )
    .usage(rcip_core::UsageGuidance::new("The poll is finished."));
    let description = "Closes a poll.\n\nWhen to use: The poll is finished.";
    let mcp = export(Profile::Mcp2025_11_25, [(&capability).into()])
        .unwrap()
        .to_json();
    assert_eq!(
        mcp,
        json!([{
            "name": "polls.close", "title": "Close", "description": description,
            "inputSchema": capability.input_schema,
            "outputSchema": {"type":"object","properties":{"result":{"type":"null"}},"required":["result"],"additionalProperties":false},
            "annotations": {"title":"Close","readOnlyHint":false,"destructiveHint":true,"idempotentHint":false,"openWorldHint":false}
        }])
    );
    let openai = export(Profile::OpenAi, [(&capability).into()]).unwrap();
    assert_eq!(
        openai.to_json(),
        json!([{"type":"function","name":"polls_close","description":description,
            "parameters":{"type":"object","properties":{},"required":[],"additionalProperties":false},"strict":true}])
    );
    let anthropic = export(Profile::Anthropic, [(&capability).into()])
        .unwrap()
        .to_json();
    assert_eq!(
        anthropic[0]["input_schema"],
        json!({"type":"object","properties":{},"additionalProperties":false})
    );
    assert_eq!(anthropic[0]["strict"], true);
    let gemini = export(Profile::Gemini, [(&capability).into()])
        .unwrap()
        .to_json();
    assert_eq!(gemini[0]["functionDeclarations"][0]["name"], "polls.close");
    assert_eq!(
        gemini[0]["functionDeclarations"][0]["response"],
        json!({"type":"NULL"})
    );
    let gj = export(Profile::GeminiJsonSchema, [(&capability).into()])
        .unwrap()
        .to_json();
    assert_eq!(
        gj[0]["functionDeclarations"][0]["responseJsonSchema"],
        json!({"type":"null"})
    );
    assert_eq!(
        gj[0]["functionDeclarations"][0]["parametersJsonSchema"],
        capability.input_schema
    );
}

#[test]
fn mcp_annotations_follow_the_effect() {
    // idempotentHint comes from the declaration only, never from the effect.
    let expected = [
        (Effect::Read, [true, false, false]),
        (Effect::Write, [false, false, false]),
        (Effect::External, [false, false, true]),
        (Effect::Destructive, [false, true, false]),
    ];
    for (effect, [read_only, destructive, open_world]) in expected {
        for declared in [false, true] {
            let capability =
                CapabilityDefinition::new("a.b", effect, "T", "D.").idempotent(declared);
            for profile in [Profile::Mcp2025_11_25, Profile::Mcp2026_07_28] {
                let tools = export(profile, [(&capability).into()]).unwrap().to_json();
                let a = &tools[0]["annotations"];
                let got = [
                    a["readOnlyHint"].clone(),
                    a["destructiveHint"].clone(),
                    a["idempotentHint"].clone(),
                    a["openWorldHint"].clone(),
                ];
                let want = [read_only, destructive, declared, open_world].map(Value::Bool);
                assert_eq!(got, want, "{effect:?} idempotent={declared} {profile:?}");
            }
        }
    }
}

#[test]
fn the_declaration_reaches_the_export_from_every_source() {
    let declared = CapabilityDefinition::new("a.close", Effect::Write, "T", "D.").idempotent(true);
    let plain = CapabilityDefinition::new("a.count", Effect::Read, "T", "D.");
    // A definition.
    let e = export(
        Profile::Mcp2026_07_28,
        [(&declared).into(), (&plain).into()],
    )
    .unwrap();
    assert!(e.tools()[0].idempotent() && !e.tools()[1].idempotent());
    // A snapshot's contract.
    let contract = rcip_core::CapabilityContract::from(&declared);
    assert!(rcip_export::ToolSource::from(&contract).idempotent);
    // The catalog JSON: `"idempotent": true` where declared, absent elsewhere.
    let catalog = json!({"capabilities": [
        serde_json::to_value(&declared).unwrap(),
        serde_json::to_value(&plain).unwrap(),
    ]});
    assert_eq!(catalog["capabilities"][0]["idempotent"], true);
    assert!(catalog["capabilities"][1].get("idempotent").is_none());
    let tools = rcip_export::export_catalog(Profile::Mcp2025_11_25, &catalog)
        .unwrap()
        .to_json();
    assert_eq!(tools[0]["annotations"]["idempotentHint"], true);
    assert_eq!(tools[1]["annotations"]["idempotentHint"], false);
}

#[test]
fn mcp_structured_output_is_wrapped_when_the_schema_was() {
    let wrapped = CapabilityDefinition::new("a.count", Effect::Read, "T", "D.")
        .output_schema(json!({"type":"integer"}));
    let plain = CapabilityDefinition::new("a.get", Effect::Read, "T", "D.")
        .output_schema(json!({"type":"object","properties":{},"additionalProperties":false}));
    let e = export(Profile::Mcp2025_11_25, [(&wrapped).into(), (&plain).into()]).unwrap();
    assert_eq!(
        e.structured_output("a.count", json!(3)),
        json!({"result":3})
    );
    assert_eq!(e.structured_output("a.get", json!({})), json!({}));
    assert!(e.tools()[0].output_wrapped() && !e.tools()[1].output_wrapped());
    // 2026-07-28 takes any output schema and any structuredContent: nothing is wrapped.
    let modern = export(Profile::Mcp2026_07_28, [(&wrapped).into()]).unwrap();
    assert_eq!(
        modern.tools()[0].output_schema(),
        Some(&json!({"type":"integer"}))
    );
    assert_eq!(modern.structured_output("a.count", json!(3)), json!(3));
}

#[test]
fn anthropic_strict_budgets_fill_in_catalog_order() {
    // Each tool: 5 optional parameters; 24 allows four tools (20), the fifth would make 25.
    let props: serde_json::Map<String, Value> = (0..5)
        .map(|i| (format!("o{i}"), json!({"type":"string"})))
        .collect();
    let schema = json!({"type":"object","properties":props,"additionalProperties":false});
    let caps: Vec<CapabilityDefinition> = (0..6)
        .map(|i| {
            CapabilityDefinition::new(format!("a.t{i}"), Effect::Read, "T", "D.")
                .input_schema(schema.clone())
        })
        .collect();
    let e = export(Profile::Anthropic, caps.iter().map(Into::into)).unwrap();
    let strict: Vec<Option<bool>> = e.tools().iter().map(|t| t.strict()).collect();
    assert_eq!(strict, [true, true, true, true, false, false].map(Some));

    let many: Vec<CapabilityDefinition> = (0..22)
        .map(|i| CapabilityDefinition::new(format!("a.n{i}"), Effect::Read, "T", "D."))
        .collect();
    let e = export(Profile::Anthropic, many.iter().map(Into::into)).unwrap();
    let strict_count = e
        .tools()
        .iter()
        .filter(|t| t.strict() == Some(true))
        .count();
    assert_eq!(strict_count, 20);
    assert_eq!(e.to_json()[21]["strict"], false);
}

#[test]
fn catalog_json_reads_capabilities_and_ignores_the_revision() {
    let app = rcip_core::ApplicationDefinition::new("polls", "Polls", "Polls.").capability(
        CapabilityDefinition::new("polls.list", Effect::Read, "List", "Lists polls."),
    );
    let catalog = rcip_core::catalog_export(&app).unwrap();
    assert!(catalog.get("revision").is_some());
    let e = rcip_export::export_catalog(Profile::OpenAi, &catalog).unwrap();
    assert_eq!(e.tools()[0].name(), "polls_list");
    let bad = rcip_export::export_catalog(Profile::OpenAi, &json!({"capabilities":[{"id":"x"}]}))
        .unwrap_err();
    assert_eq!(bad.code(), "INVALID_CATALOG");
    assert!(bad.to_string().contains("capabilities[0]"), "{bad}");
}

#[test]
fn gemini_response_schemas_describe_the_output_as_it_is() {
    let output = json!({"type":"object","additionalProperties":false,"required":["by_name","level"],"properties":{
        "by_name":{"type":"object","additionalProperties":{"type":"integer"}},
        "level":{"type":"integer","enum":[1,2]}}});
    let capability =
        CapabilityDefinition::new("a.b", Effect::Read, "T", "D.").output_schema(output);
    let e = export(Profile::Gemini, [(&capability).into()]).unwrap();
    let response = e.tools()[0].output_schema().unwrap();
    // Names kept, the map an object, the integer enum in the description.
    assert_eq!(
        response["properties"]["by_name"],
        json!({"type":"OBJECT","description":"Constraints: additionalProperties {\"type\":\"integer\"}."})
    );
    assert_eq!(
        response["properties"]["level"],
        json!({"type":"INTEGER","description":"Constraints: enum [1,2]."})
    );
}

/// A closed tuple becomes an object of its items; an open one (more items allowed) is refused
/// with the pointer of the keyword that opens it.
#[test]
fn tuples_become_objects_or_are_refused() {
    let closed = json!({"type": "object", "additionalProperties": false, "required": ["p"],
        "properties": {"p": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}],
                             "minItems": 2, "maxItems": 2}}});
    let p = &params(Profile::OpenAi, closed.clone())["properties"]["p"];
    assert_eq!(p["type"], "object");
    assert_eq!(p["required"], json!(["item_0", "item_1"]));
    assert_eq!(p["properties"]["item_1"]["type"], "string");
    assert_eq!(p["additionalProperties"], false);
    // gemini-json-schema too (google-genai's JSONSchema model has no prefixItems).
    let object = &params(Profile::GeminiJsonSchema, closed)["properties"]["p"];
    assert_eq!(object["required"], json!(["item_0", "item_1"]));

    let open = json!({"type": "object", "additionalProperties": false, "required": ["p"],
        "properties": {"p": {"type": "array", "prefixItems": [{"type": "integer"}],
                             "minItems": 1, "items": {"type": "string"}}}});
    for profile in [Profile::OpenAi, Profile::Anthropic, Profile::Gemini] {
        let Err(ExportError::UnsupportedSchema(issue)) = one(profile, open.clone()) else {
            panic!("{profile} exported an open tuple");
        };
        assert_eq!(issue.pointer, "/properties/p/items", "{profile}");
    }
}

/// A Gemini `response` keeps the output's own property names, so one outside the
/// `parameters` name rule leaves the optional response out; gemini-json-schema keeps it.
#[test]
fn gemini_leaves_out_a_response_it_cannot_name() {
    let output = json!({"type":"object","additionalProperties":false,"required":["by-name"],
        "properties":{"by-name":{"type":"integer"}}});
    let capability =
        CapabilityDefinition::new("a.b", Effect::Read, "T", "D.").output_schema(output);
    let gemini = export(Profile::Gemini, [(&capability).into()]).unwrap();
    assert!(gemini.tools()[0].output_schema().is_none());
    assert!(
        gemini.to_json()[0]["functionDeclarations"][0]
            .get("response")
            .is_none()
    );
    let json_schema = export(Profile::GeminiJsonSchema, [(&capability).into()]).unwrap();
    assert!(json_schema.tools()[0].output_schema().is_some());
}

/// Deep in any position, with each type keeping only its own keywords; i64 bounds dropped
/// on both sides; a one-element type array is a plain type; a type array beside an `anyOf`
/// is left alone rather than rewritten wrongly.
#[test]
fn mcp_portable_spelling_reaches_every_subschema() {
    let input = json!({"type":"object","properties":{
        "list":{"type":"array","items":{"type":["integer","null"],"minimum":1,"maximum":9223372036854775807i64,"description":"n"}},
        "wide":{"type":"integer","minimum":-9223372036854775808i64,"maximum":9223372036854775807i64},
        "one":{"type":["string"],"maxLength":3},
        "both":{"type":["string","null"],"anyOf":[{"maxLength":2},{"type":"null"}]},
        "map":{"type":"object","additionalProperties":{"type":["boolean","null"]}}
    },"required":["list","wide","one","both","map"],"additionalProperties":false});
    let out = params(Profile::Mcp2026_07_28, input);
    let properties = &out["properties"];
    assert_eq!(
        properties["list"]["items"],
        json!({"description":"n","anyOf":[{"type":"integer","minimum":1},{"type":"null"}]})
    );
    assert_eq!(properties["wide"], json!({"type":"integer"}));
    assert_eq!(properties["one"], json!({"type":"string","maxLength":3}));
    assert_eq!(
        properties["both"],
        json!({"type":["string","null"],"anyOf":[{"maxLength":2},{"type":"null"}]})
    );
    assert_eq!(
        properties["map"]["additionalProperties"],
        json!({"anyOf":[{"type":"boolean"},{"type":"null"}]})
    );
}
