use rcip_diff::*;
use serde_json::{json, Value};

fn show(r: &Report) { for c in &r.changes { println!("  {:?} {} {:?} {} | {}", c.severity, c.rule, c.capability, c.pointer, c.message); } }

fn pkg(schema: Value, input: Value) -> Value {
    json!({"protocol":"relationship/v1","namespace":"n","version":1,
      "types":{"t":{"kind":"entity","schema":schema,
        "commands":{"c":{"input":input}}}}})
}

#[test]
fn scratch() {
    let obj = |p: Value| json!({"type":"object","properties":p,"required":[],"additionalProperties":false});
    println!("A: maxLength 5000 -> absent (effective 4000)");
    let a = pkg(obj(json!({"s":{"type":"string","maxLength":5000}})), obj(json!({"s":{"type":"string","maxLength":5000}})));
    let mut b = pkg(obj(json!({"s":{"type":"string"}})), obj(json!({"s":{"type":"string"}})));
    b["version"] = json!(2);
    show(&diff_packages(&a, &b).unwrap());
    println!("B: absent -> maxLength 4000 (identical normalized)");
    let a = pkg(obj(json!({"s":{"type":"string"}})), obj(json!({})));
    let b = pkg(obj(json!({"s":{"type":"string","maxLength":4000}})), obj(json!({})));
    show(&diff_packages(&a, &b).unwrap());

    println!("C: manifest nested vendor member under known capability");
    let a = json!({"version":"0.5","channels":{"publish":{"maxBytes":1000}}});
    let b = json!({"version":"0.5","channels":{"publish":{"maxBytes":10}}});
    show(&diff_manifests(&a, &b).unwrap());
    let a = json!({"version":"0.5","demo":{"maxBytes":1000}});
    let b = json!({"version":"0.5","demo":{"maxBytes":10}});
    show(&diff_manifests(&a, &b).unwrap());

    println!("D: stale revision");
    let a = json!({"version":"0.5","revision":"sha256:x","featureSets":{"chat":{"uses":["channels.publish"]}}});
    let b = json!({"version":"0.5","revision":"sha256:x","featureSets":{"chat":{"uses":["channels.publish","pushEvents"]}}});
    show(&diff_manifests(&a, &b).unwrap());

    println!("E: view type changed / field added");
    let base = json!({"protocol":"relationship/v1","namespace":"n","version":1,
      "types":{"t":{"kind":"entity","schema":obj(json!({"a":{"type":"string"},"b":{"type":"string"}}))}},
      "views":{"v":{"type":"t","fields":["a"]}}});
    let mut nb = base.clone(); nb["version"]=json!(2); nb["views"]["v"]["fields"]=json!(["a","b"]);
    show(&diff_packages(&base, &nb).unwrap());

    println!("F: roles min up & max up");
    let r = |min:u64,max:u64| json!({"protocol":"relationship/v1","namespace":"n","version":1,
      "types":{"r":{"kind":"relationship","schema":obj(json!({})),"roles":{"x":{"min":min,"max":max,"types":["p/q"]}}}}});
    show(&diff_packages(&r(0,1), &r(1,5)).unwrap());

    println!("G: both export-refused");
    let cap = |id: &str| json!({"id": id, "title": "L", "description": "L.", "effect": "read", "scopeIds": [],
        "inputSchema": {"type": "object", "properties": {}, "additionalProperties": false}, "outputSchema": {"type": "null"}});
    let a = json!({"capabilities":[cap("a.b"), cap("a_b")]});
    let b = json!({"capabilities":[cap("a.b"), cap("a_b")], "application": {"id":"x"}});
    show(&diff_exports(rcip_export::Profile::OpenAi, &a, &b).unwrap());

    println!("H: enum 1 vs 1.0, type widened with enum");
    let i = |s: Value| json!({"type":"object","properties":{"x":s},"additionalProperties":false});
    let c = |s: Value| json!({"capabilities":[{"id":"a","effect":"read","scopeIds":[],"inputSchema":{"type":"object"},"outputSchema":i(s)}]});
    show(&diff_catalogs(&c(json!({"type":"number","enum":[1]})), &c(json!({"type":"number","enum":[1.0]}))).unwrap());
}

#[test]
fn quadratic() {
    let n = 60_000;
    let a: Vec<Value> = (0..n).map(|i| json!(format!("v{i}"))).collect();
    let mut b = a.clone(); b[n-1] = json!("zz");
    let c = |e: Vec<Value>| json!({"capabilities":[{"id":"a","effect":"read","scopeIds":[],"inputSchema":{"type":"string","enum":e},"outputSchema":{}}]});
    let t = std::time::Instant::now();
    let r = diff_catalogs(&c(a.clone()), &c(b.clone())).unwrap();
    println!("enum {n}: {:?} {}", t.elapsed(), r.changes.len());
    let req = |e: Vec<Value>| json!({"capabilities":[{"id":"a","effect":"read","scopeIds":[],"inputSchema":{"type":"object","required":e},"outputSchema":{}}]});
    let t = std::time::Instant::now();
    let r = diff_catalogs(&req(a.clone()), &req(b.clone())).unwrap();
    println!("required {n}: {:?} {}", t.elapsed(), r.changes.len());
    let tags: serde_json::Map<String, Value> = (0..n).map(|i| (format!("t{i}"), json!({}))).collect();
    let m = |core: Vec<Value>, desc: &str| json!({"version":"0.5","featureSets":{"f":{"uses":[],"tagOntology":{"tags":tags.clone(),"coreTags":core,"desc":desc}}}});
    let t = std::time::Instant::now();
    let core: Vec<Value> = (0..n).map(|i| json!(format!("t{i}"))).collect();
    let r = diff_manifests(&m(core.clone(),"a"), &m(core,"b")).unwrap();
    println!("coreTags {n}: {:?} {}", t.elapsed(), r.changes.len());
}
