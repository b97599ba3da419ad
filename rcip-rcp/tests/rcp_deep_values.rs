//! Regression: a capability object holding values nested 100,000 deep (built in memory; no
//! parser makes one) is decoded without recursing into them.
//!
//! `decode` reads each known member only as deep as its shape: a value that does not fit
//! is moved into its problem as it came; members it does not know are kept, moved, for the
//! round trip. The problem list is bounded by the shapes: at most one problem per known
//! member of each of the 17 capabilities, however large the input.
#![allow(clippy::unwrap_used)]

use rcip_core::depth::{dismantle, nested_arrays};
use rcip_rcp::{Capabilities, Capability};
use rcip_test_support::on_small_stack;
use serde_json::{Map, Value};

/// Every member name the 17 capabilities know (each capability knows some of them).
const MEMBERS: &[&str] = &[
    "batchLimit",
    "chunking",
    "clues",
    "confidence",
    "contextual",
    "dedup",
    "defaultMode",
    "deterministic",
    "dimension",
    "encodings",
    "engines",
    "fields",
    "fusion",
    "identity",
    "levels",
    "maxCandidates",
    "maxK",
    "methods",
    "mmr",
    "modalities",
    "models",
    "modes",
    "normalized",
    "operators",
    "ops",
    "rerankBuiltin",
    "scopes",
    "scoreFloor",
    "scoreScale",
    "similarity",
    "snapshots",
    "tokenBudget",
    "ttlSeconds",
    "units",
    "vocabulary",
    "writable",
];

fn object(key: &str, value: Value) -> Value {
    let mut map = Map::new();
    map.insert(key.to_owned(), value);
    Value::Object(map)
}

/// Decodes `value`: the pointers of its problems, and the value of the last one back (to
/// use again). The rest is leaked: a member a capability does not know stays in its
/// `extra`, which would drop recursively.
fn decode(value: Value) -> (Vec<String>, Option<Value>) {
    let (caps, mut problems) = Capabilities::decode(value).unwrap();
    let pointers = problems.iter().map(|p| p.pointer.clone()).collect();
    let last = problems.pop().map(|p| p.value);
    for problem in problems {
        dismantle(problem.value);
    }
    std::mem::forget(caps);
    (pointers, last)
}

#[test]
fn every_known_member_100_000_deep_is_a_problem_not_a_crash() {
    on_small_stack(|| {
        // Built once and handed back by each problem: building is the slow part.
        let mut deep = nested_arrays(100_000);
        for capability in Capability::ALL {
            let key = capability.wire_key();
            // The capability itself: not an object, so present with no metadata.
            let (pointers, back) = decode(object(key, deep));
            assert_eq!(pointers, [format!("/{key}")]);
            deep = back.unwrap();
            for member in MEMBERS {
                // `[[0]]` fits no member's shape: a problem says the capability knows it.
                // (One it does not know is kept in `extra`, unread.)
                let (pointers, _) = decode(object(key, object(member, nested_arrays(2))));
                if pointers.is_empty() {
                    continue;
                }
                let (pointers, back) = decode(object(key, object(member, deep)));
                assert_eq!(pointers, [format!("/{key}/{member}")]);
                deep = back.unwrap();
            }
        }
        dismantle(deep);
    });
}

#[test]
fn filter_fields_100_000_deep_is_a_problem() {
    // `fields` is names or typed pairs: read by hand, as serde's untagged enums buffer the
    // whole value (recursively) before trying each form.
    on_small_stack(|| {
        let value = object("filter", object("fields", nested_arrays(100_000)));
        let (pointers, back) = decode(value);
        assert_eq!(pointers, ["/filter/fields"]);
        dismantle(back.unwrap());
        let value = object(
            "filter",
            object("fields", object("lang", nested_arrays(100_000))),
        );
        let (pointers, back) = decode(value);
        assert_eq!(pointers, ["/filter/fields"]);
        dismantle(back.unwrap());
    });
}
