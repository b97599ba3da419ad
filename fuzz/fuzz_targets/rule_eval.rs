//! `parse_rule` on structured JSON, then evaluation against a random record, input and
//! state: no panic, and `passes` agrees with `evaluate`.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use rcip_fuzz::ArbJson;
use rcip_relationship::{RuleRoots, Scope, parse_rule};
use serde_json::Value;

#[derive(Debug, Arbitrary)]
struct Case {
    rule: ArbJson,
    data: Option<ArbJson>,
    input: Option<ArbJson>,
    state: Option<String>,
    command: bool,
}

fuzz_target!(|case: Case| {
    let roots = if case.command {
        RuleRoots::COMMAND
    } else {
        RuleRoots::VIEW
    };
    let Ok(expr) = parse_rule(&case.rule.0, roots) else {
        return;
    };
    let scope = Scope {
        data: case.data.as_ref().map(|d| &d.0),
        input: case.input.as_ref().map(|i| &i.0),
        state: case.state.as_deref(),
    };
    let passes = expr.passes(&scope);
    assert_eq!(passes, expr.evaluate(&scope) == Some(Value::Bool(true)));
});
