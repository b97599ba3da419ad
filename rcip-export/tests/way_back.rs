//! The way back on hand-written cases: OpenAI nulls (nested, in arrays and anyOf branches),
//! Gemini renames and integer enums, the input wrapper.
#![allow(clippy::unwrap_used)]

use rcip_core::{CapabilityDefinition, Effect};
use rcip_export::{Profile, export};
use serde_json::{Value, json};

fn back(profile: Profile, schema: Value, arguments: Value) -> Value {
    let capability =
        CapabilityDefinition::new("t.x", Effect::Write, "T", "D.").input_schema(schema);
    let e = export(profile, [(&capability).into()]).unwrap();
    let name = e.tools()[0].name().to_owned();
    let (id, input) = e.arguments_to_input(&name, arguments).unwrap();
    assert_eq!(id, "t.x");
    input
}

fn nested() -> Value {
    json!({"type":"object","additionalProperties":false,"required":["items","shape"],"properties":{
        "items":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["a"],
            "properties":{"a":{"type":"integer"},"b":{"type":"integer"}}}},
        "shape":{"oneOf":[
            {"type":"object","additionalProperties":false,"required":["kind"],"properties":{"kind":{"type":"string","const":"c"},"r":{"type":["number","null"]}}},
            {"type":"object","additionalProperties":false,"required":["kind","keep"],"properties":{"kind":{"type":"string","const":"s"},"keep":{"type":["string","null"]}}}]},
        "note":{"type":["string","null"]}}})
}

#[test]
fn openai_removes_nulls_at_synthetic_required_paths_only() {
    let arguments =
        json!({"items":[{"a":1,"b":null},{"a":2,"b":3}],"shape":{"kind":"c","r":null},"note":null});
    assert_eq!(
        back(Profile::OpenAi, nested(), arguments),
        json!({"items":[{"a":1},{"a":2,"b":3}],"shape":{"kind":"c"}})
    );
    // `keep` is required in the base schema: its null is meaningful and stays.
    let arguments = json!({"items":[],"shape":{"kind":"s","keep":null},"note":"n"});
    assert_eq!(
        back(Profile::OpenAi, nested(), arguments.clone()),
        json!({"items":[],"shape":{"kind":"s","keep":null},"note":"n"})
    );
    // The profile schema really made them required.
    let capability =
        CapabilityDefinition::new("t.x", Effect::Write, "T", "D.").input_schema(nested());
    let e = export(Profile::OpenAi, [(&capability).into()]).unwrap();
    let item = &e.tools()[0].input_schema()["properties"]["items"]["items"];
    assert_eq!(item["required"], json!(["a", "b"]));
    assert_eq!(item["properties"]["b"]["type"], json!(["integer", "null"]));
}

#[test]
fn openai_optional_without_null_gets_nullable() {
    let schema = json!({"type":"object","additionalProperties":false,"properties":{
        "n":{"type":"integer","default":3},"e":{"enum":["a","b"]},"c":{"const":"k"}}});
    let capability =
        CapabilityDefinition::new("t.x", Effect::Write, "T", "D.").input_schema(schema.clone());
    let e = export(Profile::OpenAi, [(&capability).into()]).unwrap();
    let props = &e.tools()[0].input_schema()["properties"];
    assert_eq!(
        props["n"],
        json!({"type":["integer","null"],"description":"Constraints: default 3."})
    );
    assert_eq!(props["e"], json!({"enum":["a","b",null]}));
    assert_eq!(props["c"], json!({"anyOf":[{"const":"k"},{"type":"null"}]}));
    assert_eq!(
        back(Profile::OpenAi, schema, json!({"n":null,"e":null,"c":"k"})),
        json!({"c":"k"})
    );
}

#[test]
fn gemini_renames_and_integer_enums_come_back() {
    let schema = json!({"type":"object","additionalProperties":false,"required":["user-name","level"],"properties":{
        "user-name":{"type":"string"},
        "level":{"type":"integer","enum":[1,2,3]},
        "9tags":{"type":"array","items":{"type":"object","additionalProperties":false,"properties":{"x.y":{"type":["integer","null"],"enum":[7,8,null]}}}}}});
    let capability =
        CapabilityDefinition::new("t.x", Effect::Write, "T", "D.").input_schema(schema.clone());
    let e = export(Profile::Gemini, [(&capability).into()]).unwrap();
    let params = e.tools()[0].input_schema();
    assert_eq!(params["required"], json!(["level", "user_name"]));
    assert_eq!(
        params["properties"]["level"],
        json!({"type":"INTEGER","format":"enum","enum":["1","2","3"]})
    );
    assert_eq!(
        params["properties"]["_9tags"]["items"]["properties"]["x_y"],
        json!({"type":"INTEGER","format":"enum","enum":["7","8"],"nullable":true})
    );
    let arguments = json!({"user_name":"ann","level":"2","_9tags":[{"x_y":"8"},{"x_y":null},{}]});
    assert_eq!(
        back(Profile::Gemini, schema, arguments),
        json!({"user-name":"ann","level":2,"9tags":[{"x.y":8},{"x.y":null},{}]})
    );
}

#[test]
fn gemini_property_collision_is_an_error() {
    let schema = json!({"type":"object","additionalProperties":false,"properties":{"a-b":{"type":"string"},"a_b":{"type":"string"}}});
    let capability =
        CapabilityDefinition::new("t.x", Effect::Write, "T", "D.").input_schema(schema);
    let error = export(Profile::Gemini, [(&capability).into()]).unwrap_err();
    assert_eq!(error.code(), "NAME_COLLISION");
    let text = error.to_string();
    assert!(
        text.contains("\"a-b\"") && text.contains("\"a_b\"") && text.contains("t.x"),
        "{text}"
    );
}

#[test]
fn the_input_wrapper_is_unwrapped_for_every_profile() {
    let schema = json!({"type":"array","items":{"type":"string"}});
    for profile in rcip_export::Profile::ALL {
        assert_eq!(
            back(profile, schema.clone(), json!({"input":["a"]})),
            json!(["a"]),
            "{profile}"
        );
    }
}

#[test]
fn maps_come_back_from_entry_lists() {
    let schema = json!({"type":"object","additionalProperties":false,"required":["m"],"properties":{
        "m":{"type":"object","additionalProperties":{"type":"object","additionalProperties":false,"properties":{"n":{"type":"integer"}}}}}});
    for profile in [Profile::OpenAi, Profile::Anthropic, Profile::Gemini] {
        let arguments = if profile == Profile::OpenAi {
            json!({"m":[{"key":"a","value":{"n":null}},{"key":"b","value":{"n":2}}]})
        } else {
            json!({"m":[{"key":"a","value":{}},{"key":"b","value":{"n":2}}]})
        };
        assert_eq!(
            back(profile, schema.clone(), arguments),
            json!({"m":{"a":{},"b":{"n":2}}}),
            "{profile}"
        );
        // A key twice is left as the list: the runtime refuses it instead of losing a value.
        let twice = json!({"m":[{"key":"a","value":{}},{"key":"a","value":{"n":1}}]});
        assert_eq!(
            back(profile, schema.clone(), twice.clone()),
            twice,
            "{profile}"
        );
    }
}
