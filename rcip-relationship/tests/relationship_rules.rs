//! Tests of the `relationship/v1` rule evaluator: every operator, presence, numbers by value,
//! fail-closed comparisons, paths into arrays, and which roots a rule may use.

#![allow(clippy::unwrap_used)]

mod common;

use common::{at, pairs};
use rcip_relationship::{
    Comparison, Constant, Expr, ProblemCode as Code, RuleRoots, Scope, parse_rule,
};
use serde_json::{Value, json};

// ---------------------------------------------------------------- helpers

#[track_caller]
fn rule(value: Value) -> Expr {
    match parse_rule(&value, RuleRoots::COMMAND) {
        Ok(expr) => expr,
        Err(error) => panic!("rule {value} was refused:\n{error}"),
    }
}

#[track_caller]
fn refused(value: Value, roots: RuleRoots) -> Vec<(String, Code)> {
    match parse_rule(&value, roots) {
        Ok(expr) => panic!("rule {value} was accepted as {expr:?}"),
        Err(error) => pairs(&error),
    }
}

/// The record, input and state most tests evaluate against.
struct Fixture {
    data: Value,
    input: Value,
}

impl Fixture {
    fn new() -> Self {
        Self {
            data: json!({
                "votes": 3,
                "ratio": 1.0,
                "score": 7.5,
                "debt": -5,
                "big": u64::MAX,
                "name": "Ada",
                "open": true,
                "closed": false,
                "nothing": null,
                "zero": 0,
                "empty": "",
                "tags": ["a", "b", "c"],
                "numbers": [1, 2],
                "matrix": [[1, 2], [3, 4]],
                "owner": {"name": "Ada", "age": 36},
                "by_index": {"0": "zero"},
                "people": [{"name": "Ada"}, {"name": "Bob"}]
            }),
            input: json!({
                "votes": 3.0,
                "numbers": [1.0, 2],
                "owner": {"age": 36.0, "name": "Ada"},
                "other": {"name": "Ada", "age": 37},
                "more": {"name": "Ada", "age": 36, "x": 1},
                "name": "Ada",
                "nothing": null
            }),
        }
    }

    fn scope(&self) -> Scope<'_> {
        Scope {
            data: Some(&self.data),
            input: Some(&self.input),
            state: Some("open"),
        }
    }
}

/// Whether `value` passes against the fixture.
#[track_caller]
fn passes(value: Value) -> bool {
    let fixture = Fixture::new();
    rule(value).passes(&fixture.scope())
}

/// What `value` evaluates to against the fixture.
#[track_caller]
fn evaluate(value: Value) -> Option<Value> {
    let fixture = Fixture::new();
    rule(value).evaluate(&fixture.scope())
}

fn path(text: &str) -> Value {
    json!({ "path": text })
}

// ---------------------------------------------------------------- path and evaluate

#[test]
fn path_evaluates_to_the_value_at_the_path() {
    assert_eq!(evaluate(path("data.votes")), Some(json!(3)));
    assert_eq!(evaluate(path("data.name")), Some(json!("Ada")));
    assert_eq!(evaluate(path("data.owner.name")), Some(json!("Ada")));
    assert_eq!(
        evaluate(path("data.owner")),
        Some(json!({"name": "Ada", "age": 36}))
    );
    assert_eq!(evaluate(path("data.nothing")), Some(Value::Null));
    assert_eq!(evaluate(path("input.name")), Some(json!("Ada")));
}

#[test]
fn missing_path_is_absent() {
    assert_eq!(evaluate(path("data.missing")), None);
    assert_eq!(evaluate(path("data.owner.missing")), None);
    assert_eq!(evaluate(path("input.missing")), None);
    // Through a scalar: absent, not an error.
    assert_eq!(evaluate(path("data.name.length")), None);
    assert_eq!(evaluate(path("data.nothing.x")), None);
}

#[test]
fn root_alone_is_the_whole_value() {
    let fixture = Fixture::new();
    assert_eq!(
        rule(path("data")).evaluate(&fixture.scope()),
        Some(fixture.data.clone())
    );
    assert_eq!(
        rule(path("input")).evaluate(&fixture.scope()),
        Some(fixture.input.clone())
    );
}

#[test]
fn roots_missing_from_the_scope_are_absent() {
    let empty = Scope::default();
    assert_eq!(rule(path("data")).evaluate(&empty), None);
    assert_eq!(rule(path("data.votes")).evaluate(&empty), None);
    assert_eq!(rule(path("input.votes")).evaluate(&empty), None);
    assert_eq!(rule(path("state")).evaluate(&empty), None);
    assert!(!rule(json!({"present": "data"})).passes(&empty));
}

#[test]
fn evaluate_returns_constants_as_json() {
    assert_eq!(evaluate(json!(true)), Some(json!(true)));
    assert_eq!(evaluate(json!(null)), Some(Value::Null));
    assert_eq!(evaluate(json!(-7)), Some(json!(-7)));
    assert_eq!(evaluate(json!(u64::MAX)), Some(json!(u64::MAX)));
    assert_eq!(evaluate(json!(i64::MIN)), Some(json!(i64::MIN)));
    assert_eq!(evaluate(json!(2.5)), Some(json!(2.5)));
    assert_eq!(evaluate(json!("text")), Some(json!("text")));
    assert_eq!(
        evaluate(json!([1, "a", [null, false]])),
        Some(json!([1, "a", [null, false]]))
    );
    assert_eq!(evaluate(json!([])), Some(json!([])));
}

#[test]
fn evaluate_returns_booleans_for_operators() {
    assert_eq!(
        evaluate(json!({"eq": [path("data.votes"), 3]})),
        Some(json!(true))
    );
    assert_eq!(
        evaluate(json!({"eq": [path("data.missing"), 3]})),
        Some(json!(false))
    );
    assert_eq!(
        evaluate(json!({"present": "data.missing"})),
        Some(json!(false))
    );
    assert_eq!(evaluate(json!({"all": [true]})), Some(json!(true)));
    assert_eq!(evaluate(json!({"any": [false]})), Some(json!(false)));
    assert_eq!(evaluate(json!({"not": true})), Some(json!(false)));
}

#[test]
fn parsed_constants_keep_their_number_kind() {
    assert_eq!(rule(json!(-1)), Expr::Const(Constant::Int(-1)));
    assert_eq!(rule(json!(u64::MAX)), Expr::Const(Constant::UInt(u64::MAX)));
    assert_eq!(rule(json!(1.0)), Expr::Const(Constant::Float(1.0)));
    let Expr::Compare(op, operands) = rule(json!({"lte": [1, 2]})) else {
        panic!("not a comparison");
    };
    assert_eq!(op, Comparison::Lte);
    assert_eq!(operands.len(), 2);
}

// ---------------------------------------------------------------- state

#[test]
fn state_path_is_the_lifecycle_state() {
    assert_eq!(evaluate(path("state")), Some(json!("open")));
    assert!(passes(json!({"eq": [path("state"), "open"]})));
    assert!(!passes(json!({"eq": [path("state"), "closed"]})));
    assert!(passes(json!({"ne": [path("state"), "closed"]})));
    assert!(passes(json!({"present": "state"})));
}

#[test]
fn state_path_without_a_state_is_absent() {
    let fixture = Fixture::new();
    let stateless = Scope {
        state: None,
        ..fixture.scope()
    };
    assert_eq!(rule(path("state")).evaluate(&stateless), None);
    assert!(!rule(json!({"present": "state"})).passes(&stateless));
    assert!(!rule(json!({"eq": [path("state"), "open"]})).passes(&stateless));
    // Absent is not unequal either.
    assert!(!rule(json!({"ne": [path("state"), "open"]})).passes(&stateless));
}

// ---------------------------------------------------------------- present

#[test]
fn present_is_true_for_any_non_null_value() {
    for field in ["votes", "zero", "closed", "empty", "tags", "owner", "name"] {
        assert!(
            passes(json!({"present": format!("data.{field}")})),
            "{field}"
        );
    }
}

#[test]
fn present_is_false_for_null() {
    assert!(!passes(json!({"present": "data.nothing"})));
    assert!(!passes(json!({"present": "input.nothing"})));
}

#[test]
fn present_is_false_for_absent() {
    assert!(!passes(json!({"present": "data.missing"})));
    assert!(!passes(json!({"present": "data.owner.missing"})));
    assert!(!passes(json!({"present": "data.tags.7"})));
}

#[test]
fn null_and_absent_differ_for_eq() {
    assert!(passes(json!({"eq": [path("data.nothing"), null]})));
    assert!(!passes(json!({"eq": [path("data.missing"), null]})));
    assert!(!passes(json!({"ne": [path("data.missing"), null]})));
    assert!(passes(json!({"ne": [path("data.nothing"), 0]})));
    assert!(passes(
        json!({"eq": [path("data.nothing"), path("input.nothing")]})
    ));
}

// ---------------------------------------------------------------- eq and ne

#[test]
fn eq_and_ne_compare_scalars() {
    assert!(passes(json!({"eq": [path("data.name"), "Ada"]})));
    assert!(!passes(json!({"eq": [path("data.name"), "ada"]})));
    assert!(passes(json!({"ne": [path("data.name"), "ada"]})));
    assert!(passes(json!({"eq": [path("data.open"), true]})));
    assert!(passes(json!({"ne": [path("data.open"), false]})));
    assert!(passes(json!({"eq": [null, null]})));
}

#[test]
fn eq_never_converts_between_types() {
    assert!(!passes(json!({"eq": [path("data.votes"), "3"]})));
    assert!(passes(json!({"ne": [path("data.votes"), "3"]})));
    assert!(!passes(json!({"eq": [path("data.zero"), false]})));
    assert!(!passes(json!({"eq": [path("data.empty"), null]})));
    assert!(!passes(json!({"eq": [path("data.zero"), null]})));
    assert!(!passes(json!({"eq": [path("data.tags"), "a"]})));
    assert!(!passes(
        json!({"eq": [path("data.owner"), path("data.tags")]})
    ));
}

#[test]
fn eq_and_ne_are_both_false_when_a_side_is_absent() {
    for (left, right) in [
        (path("data.missing"), json!(1)),
        (json!(1), path("data.missing")),
        (path("data.missing"), path("input.missing")),
        (path("data.missing"), json!(null)),
    ] {
        assert!(!passes(json!({"eq": [left, right]})), "eq {left} {right}");
        assert!(!passes(json!({"ne": [left, right]})), "ne {left} {right}");
    }
}

#[test]
fn numbers_compare_by_value() {
    assert!(passes(json!({"eq": [1, 1.0]})));
    assert!(passes(
        json!({"eq": [path("data.votes"), path("input.votes")]})
    )); // 3 and 3.0
    assert!(passes(json!({"eq": [path("data.ratio"), 1]})));
    assert!(!passes(json!({"ne": [path("data.votes"), 3.0]})));
    assert!(passes(json!({"eq": [0, -0.0]})));
    assert!(passes(json!({"eq": [1.5, 1.5]})));
    assert!(passes(json!({"eq": [100, 1e2]})));
    assert!(passes(json!({"gte": [1, 1.0]})));
    assert!(passes(json!({"lte": [1.0, 1]})));
}

#[test]
fn big_unsigned_integers_compare_exactly() {
    assert!(passes(json!({"eq": [path("data.big"), u64::MAX]})));
    assert!(passes(json!({"gt": [path("data.big"), u64::MAX - 1]})));
    assert!(passes(json!({"gt": [path("data.big"), i64::MAX]})));
    assert!(passes(json!({"lt": [i64::MIN, path("data.big")]})));
    // 2^53 + 1 and 2^53 are the same f64, but different integers.
    assert!(!passes(
        json!({"eq": [9_007_199_254_740_993_u64, 9_007_199_254_740_992_u64]})
    ));
    assert!(passes(
        json!({"gt": [9_007_199_254_740_993_u64, 9_007_199_254_740_992_u64]})
    ));
}

#[test]
fn negative_numbers_compare_by_value() {
    assert!(passes(json!({"lt": [path("data.debt"), 0]})));
    assert!(passes(json!({"lt": [path("data.debt"), -4.5]})));
    assert!(passes(json!({"gt": [path("data.debt"), -5.5]})));
    assert!(passes(json!({"eq": [path("data.debt"), -5.0]})));
    assert!(passes(json!({"lt": [i64::MIN, -1]})));
    assert!(!passes(json!({"gt": [-1, 0]})));
}

#[test]
fn eq_and_ne_compare_arrays_element_by_element() {
    assert!(passes(json!({"eq": [path("data.numbers"), [1, 2]]})));
    assert!(passes(json!({"eq": [path("data.numbers"), [1.0, 2.0]]})));
    assert!(passes(
        json!({"eq": [path("data.numbers"), path("input.numbers")]})
    ));
    assert!(passes(json!({"ne": [path("data.numbers"), [2, 1]]})));
    assert!(passes(json!({"ne": [path("data.numbers"), [1, 2, 3]]})));
    assert!(passes(json!({"ne": [path("data.numbers"), [1]]})));
    assert!(passes(
        json!({"eq": [path("data.matrix"), [[1, 2], [3, 4]]]})
    ));
    assert!(!passes(
        json!({"eq": [path("data.matrix"), [[1, 2], [3, 5]]]})
    ));
    assert!(passes(json!({"eq": [[], []]})));
    assert!(passes(json!({"eq": [["a", [null]], ["a", [null]]]})));
    assert!(!passes(json!({"eq": [[1], 1]})));
}

#[test]
fn eq_and_ne_compare_objects_by_members() {
    // Same members in another order, numbers by value.
    assert!(passes(
        json!({"eq": [path("data.owner"), path("input.owner")]})
    ));
    assert!(!passes(
        json!({"ne": [path("data.owner"), path("input.owner")]})
    ));
    assert!(passes(
        json!({"ne": [path("data.owner"), path("input.other")]})
    ));
    assert!(passes(
        json!({"ne": [path("data.owner"), path("input.more")]})
    ));
    assert!(passes(
        json!({"ne": [path("input.more"), path("data.owner")]})
    ));
    assert!(passes(
        json!({"eq": [path("data.people"), path("data.people")]})
    ));
}

// ---------------------------------------------------------------- ordering comparisons

#[test]
fn ordering_comparisons_on_numbers() {
    assert!(passes(json!({"gt": [path("data.votes"), 2]})));
    assert!(!passes(json!({"gt": [path("data.votes"), 3]})));
    assert!(passes(json!({"gte": [path("data.votes"), 3]})));
    assert!(!passes(json!({"gte": [path("data.votes"), 3.5]})));
    assert!(passes(json!({"lt": [path("data.votes"), 3.5]})));
    assert!(!passes(json!({"lt": [path("data.votes"), 3]})));
    assert!(passes(json!({"lte": [path("data.votes"), 3]})));
    assert!(!passes(json!({"lte": [path("data.score"), 7]})));
    assert!(passes(
        json!({"gt": [path("data.score"), path("data.votes")]})
    ));
}

#[test]
fn ordering_comparisons_fail_closed_on_anything_but_numbers() {
    let fixture = Fixture::new();
    let scope = fixture.scope();
    let pairs = [
        (json!("b"), json!("a")),
        (json!("a"), json!("b")),
        (json!("a"), json!("a")),
        (json!(true), json!(false)),
        (json!(true), json!(true)),
        (path("data.missing"), json!(1)),
        (json!(1), path("data.missing")),
        (json!(null), json!(1)),
        (json!(1), json!(null)),
        (json!(null), json!(null)),
        (json!([2]), json!([1])),
        (json!([1]), json!([1])),
        (path("data.owner"), json!(1)),
        (json!("2"), json!(1)),
        (json!(2), json!("1")),
    ];
    for (left, right) in pairs {
        for op in ["gt", "gte", "lt", "lte"] {
            let expr = rule(json!({op: [left, right]}));
            assert!(!expr.passes(&scope), "{op} {left} {right}");
            assert_eq!(
                expr.evaluate(&scope),
                Some(json!(false)),
                "{op} {left} {right}"
            );
        }
    }
}

#[test]
fn negating_a_failed_comparison_is_true() {
    // Fail closed applies to the comparison itself; `not` of its false is true.
    assert!(passes(json!({"not": {"gt": ["b", "a"]}})));
    assert!(passes(json!({"not": {"lte": [path("data.missing"), 1]}})));
}

// ---------------------------------------------------------------- all, any, not

#[test]
fn all_is_true_when_every_operand_is_true() {
    assert!(passes(
        json!({"all": [true, {"present": "data.votes"}, {"eq": [path("state"), "open"]}]})
    ));
    assert!(!passes(json!({"all": [true, false]})));
    assert!(!passes(json!({"all": [true, {"present": "data.missing"}]})));
}

#[test]
fn all_counts_only_exactly_true() {
    assert!(!passes(json!({"all": [true, 1]})));
    assert!(!passes(json!({"all": [true, "true"]})));
    assert!(!passes(json!({"all": [true, path("data.missing")]})));
    assert!(!passes(json!({"all": [true, path("data.nothing")]})));
    assert!(passes(json!({"all": [true, path("data.open")]})));
}

#[test]
fn all_of_nothing_is_false() {
    // The validator refuses `{"all": []}`; a hand-built empty `all` still fails closed.
    let fixture = Fixture::new();
    assert!(!Expr::All(Vec::new().into()).passes(&fixture.scope()));
    assert!(!Expr::Any(Vec::new().into()).passes(&fixture.scope()));
}

#[test]
fn any_is_true_when_some_operand_is_true() {
    assert!(passes(json!({"any": [false, {"present": "data.votes"}]})));
    assert!(passes(json!({"any": [path("data.missing"), true]})));
    assert!(!passes(
        json!({"any": [false, {"present": "data.missing"}]})
    ));
    assert!(!passes(
        json!({"any": [1, "true", null, path("data.missing"), [true]]})
    ));
}

#[test]
fn not_is_true_only_for_exactly_false() {
    assert!(passes(json!({"not": false})));
    assert!(passes(json!({"not": path("data.closed")})));
    assert!(!passes(json!({"not": true})));
    assert!(!passes(json!({"not": path("data.open")})));
    assert!(!passes(json!({"not": path("data.missing")})));
    assert!(!passes(json!({"not": path("data.nothing")})));
    assert!(!passes(json!({"not": 0})));
    assert!(!passes(json!({"not": ""})));
    assert!(!passes(json!({"not": [false]})));
    assert!(passes(json!({"not": {"not": true}})));
}

#[test]
fn a_guard_passes_only_on_exactly_true() {
    assert!(passes(json!(true)));
    assert!(passes(path("data.open")));
    for value in [
        json!(false),
        json!(1),
        json!("true"),
        json!(null),
        json!([true]),
        path("data.votes"),
        path("data.name"),
        path("data.owner"),
        path("data.tags"),
        path("data.missing"),
        path("state"),
    ] {
        assert!(!passes(value.clone()), "{value}");
    }
}

#[test]
fn a_guard_of_the_example_shape_passes_and_fails() {
    let guard = rule(json!({"all": [
        {"eq": [path("state"), "interviewing"]},
        {"gte": [path("data.score"), 7]},
        {"lte": [path("input.salary"), path("input.budget")]},
        {"present": "input.decided_at"}
    ]}));
    let data = json!({"score": 7});
    let good = json!({"salary": 90, "budget": 100, "decided_at": "2024-01-01T00:00:00Z"});
    let scope = |input, state| Scope {
        data: Some(&data),
        input: Some(input),
        state: Some(state),
    };
    assert!(guard.passes(&scope(&good, "interviewing")));
    assert!(!guard.passes(&scope(&good, "applied")));
    let over = json!({"salary": 110, "budget": 100, "decided_at": "2024-01-01T00:00:00Z"});
    assert!(!guard.passes(&scope(&over, "interviewing")));
    let undecided = json!({"salary": 90, "budget": 100, "decided_at": null});
    assert!(!guard.passes(&scope(&undecided, "interviewing")));
    let unbudgeted = json!({"salary": 90, "decided_at": "2024-01-01T00:00:00Z"});
    assert!(!guard.passes(&scope(&unbudgeted, "interviewing")));
}

// ---------------------------------------------------------------- array index paths

#[test]
fn decimal_components_index_arrays() {
    assert_eq!(evaluate(path("data.tags.0")), Some(json!("a")));
    assert_eq!(evaluate(path("data.tags.2")), Some(json!("c")));
    assert_eq!(evaluate(path("data.matrix.1.0")), Some(json!(3)));
    assert_eq!(evaluate(path("data.people.1.name")), Some(json!("Bob")));
    assert!(passes(json!({"eq": [path("data.tags.1"), "b"]})));
}

#[test]
fn out_of_range_and_non_decimal_indexes_are_absent() {
    for text in [
        "data.tags.3",
        "data.tags.99999999999999999999999",
        "data.tags.-1",
        "data.tags.x",
        "data.tags.+1",
        "data.tags.1e0",
        "data.tags. 1",
    ] {
        assert_eq!(evaluate(path(text)), None, "{text}");
    }
}

#[test]
fn decimal_components_name_object_members() {
    assert_eq!(evaluate(path("data.by_index.0")), Some(json!("zero")));
    assert_eq!(evaluate(path("data.by_index.1")), None);
    assert_eq!(evaluate(path("data.owner.0")), None);
}

// ---------------------------------------------------------------- roots

#[test]
fn view_rules_may_not_use_input() {
    assert_eq!(
        refused(json!({"eq": [path("input.name"), "Ada"]}), RuleRoots::VIEW),
        [at("/eq/0/path", Code::RuleRoot)]
    );
    assert_eq!(
        refused(json!({"present": "input"}), RuleRoots::VIEW),
        [at("/present", Code::RuleRoot)]
    );
    let error = parse_rule(&json!({"present": "input.name"}), RuleRoots::VIEW).unwrap_err();
    assert_eq!(
        error.problems[0].message,
        r#""input" paths are not available here (a view sees data and state)"#
    );
}

#[test]
fn view_rules_may_use_data_and_state() {
    let expr = parse_rule(
        &json!({"all": [{"eq": [path("state"), "open"]}, {"gt": [path("data.votes"), 0]}]}),
        RuleRoots::VIEW,
    )
    .unwrap();
    let fixture = Fixture::new();
    let view_scope = Scope {
        input: None,
        ..fixture.scope()
    };
    assert!(expr.passes(&view_scope));
}

#[test]
fn command_rules_may_use_every_root() {
    assert!(passes(json!({"all": [
        {"present": "data.votes"},
        {"present": "input.votes"},
        {"present": "state"}
    ]})));
}

#[test]
fn parse_rule_does_not_check_fields() {
    // Without a schema any field name is accepted; it evaluates to absent.
    assert_eq!(evaluate(path("data.anything")), None);
}

// ---------------------------------------------------------------- refused rules

#[test]
fn refused_rules_report_pointers_relative_to_the_rule() {
    let command = RuleRoots::COMMAND;
    assert_eq!(refused(json!({}), command), [at("", Code::RuleOperator)]);
    assert_eq!(
        refused(json!({"eq": [1, 2], "ne": [1, 2]}), command),
        [at("", Code::RuleOperator)]
    );
    assert_eq!(
        refused(json!({"has": "data.x"}), command),
        [at("/has", Code::RuleOperator)]
    );
    assert_eq!(
        refused(json!({"eq": [1]}), command),
        [at("/eq", Code::RuleArity)]
    );
    assert_eq!(
        refused(json!({"any": []}), command),
        [at("/any", Code::RuleArity)]
    );
    assert_eq!(
        refused(json!({"path": "record.x"}), command),
        [at("/path", Code::RulePath)]
    );
    assert_eq!(
        refused(json!({"path": "state.x"}), command),
        [at("/path", Code::RulePath)]
    );
    assert_eq!(
        refused(json!([{"a": 1}]), command),
        [at("/0", Code::RuleObjectConstant)]
    );
    assert_eq!(
        refused(json!({"path": 1}), command),
        [at("/path", Code::WrongType)]
    );
}

#[test]
fn every_bad_operand_is_reported() {
    assert_eq!(
        refused(
            json!({"all": [{"path": "x"}, true, {"nope": 1}, {"eq": [1]}]}),
            RuleRoots::COMMAND
        ),
        [
            at("/all/0/path", Code::RulePath),
            at("/all/2/nope", Code::RuleOperator),
            at("/all/3/eq", Code::RuleArity),
        ]
    );
}

#[test]
fn rules_deeper_than_10_levels_are_refused() {
    let mut expr = json!(true);
    for _ in 1..10 {
        expr = json!({ "not": expr });
    }
    assert!(parse_rule(&expr, RuleRoots::COMMAND).is_ok());
    let deeper = json!({ "not": expr });
    assert_eq!(
        refused(deeper, RuleRoots::COMMAND),
        [at(&"/not".repeat(10), Code::RuleTooDeep)]
    );
}

#[test]
fn paths_of_more_than_8_components_are_refused() {
    assert!(parse_rule(&path("data.a.b.c.d.e.f.g"), RuleRoots::COMMAND).is_ok());
    assert_eq!(
        refused(path("data.a.b.c.d.e.f.g.h"), RuleRoots::COMMAND),
        [at("/path", Code::RulePath)]
    );
}

#[test]
fn all_and_any_take_at_most_30_operands() {
    for op in ["all", "any"] {
        assert!(parse_rule(&json!({op: vec![true; 30]}), RuleRoots::COMMAND).is_ok());
        assert_eq!(
            refused(json!({op: vec![true; 31]}), RuleRoots::COMMAND),
            [at(&format!("/{op}"), Code::RuleArity)]
        );
    }
}

// ---------------------------------------------------------------- hand-built expressions

#[test]
fn hand_built_deep_expressions_do_not_exhaust_the_stack() {
    let mut expr = Expr::Const(Constant::Bool(true));
    for _ in 0..2_000 {
        expr = Expr::Not(vec![expr].into());
    }
    let fixture = Fixture::new();
    // Beyond the evaluator's own depth bound the operand is absent; the result is a boolean.
    assert!(matches!(
        expr.evaluate(&fixture.scope()),
        Some(Value::Bool(_))
    ));
}
