//! `diff_catalogs` on two exports of a 1,000-capability catalog, each capability with an
//! object input of eight properties and an object output, every tenth one changed (a
//! property made required, a bound raised, an effect escalated). The bound is under
//! one second in release; this reports how far under.
#![allow(missing_docs, clippy::unwrap_used)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use rcip_diff::diff_catalogs;
use serde_json::{Value, json};

fn capability(n: usize, changed: bool) -> Value {
    let mut properties = serde_json::Map::new();
    for p in 0..8 {
        properties.insert(
            format!("field{p}"),
            json!({"type": "string", "minLength": if changed && p == 0 { 2 } else { 1 }, "maxLength": 64}),
        );
    }
    json!({
        "id": format!("app.capability{n}"),
        "title": format!("Capability {n}"),
        "description": "Does one thing.",
        "effect": if changed && n.is_multiple_of(20) { "destructive" } else { "write" },
        "scopeIds": ["app"],
        "inputSchema": {
            "type": "object", "properties": properties,
            "required": if changed { json!(["field0", "field1"]) } else { json!(["field0"]) },
            "additionalProperties": false
        },
        "outputSchema": {
            "type": "object",
            "properties": {"id": {"type": "string", "format": "uuid"}, "count": {"type": "integer", "minimum": 0}},
            "required": ["id"], "additionalProperties": false
        }
    })
}

fn catalog(changes: bool) -> Value {
    let capabilities: Vec<Value> = (0..1000)
        .map(|n| capability(n, changes && n.is_multiple_of(10)))
        .collect();
    json!({"application": {"id": "app"}, "scopes": [{"id": "app"}], "capabilities": capabilities})
}

fn diff(c: &mut Criterion) {
    let (old, new) = (catalog(false), catalog(true));
    let report = diff_catalogs(&old, &new).unwrap();
    assert!(report.changes.len() >= 200, "{}", report.changes.len());
    c.bench_function("diff_1000_capabilities", |b| {
        b.iter(|| diff_catalogs(black_box(&old), black_box(&new)).unwrap())
    });
}

criterion_group!(benches, diff);
criterion_main!(benches);
