//! Guard evaluation: an `all` of four comparisons over `data`, `input` and `state`, as a
//! command guard is evaluated on every `command.execute`. Criterion reports evaluations per
//! second (throughput: one evaluation per iteration).
#![allow(missing_docs, clippy::unwrap_used)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rcip_relationship::{RuleRoots, Scope, parse_rule};
use serde_json::json;
use std::hint::black_box;

fn guard(c: &mut Criterion) {
    let rule = parse_rule(
        &json!({"all": [
            {"eq": [{"path": "state"}, "interviewing"]},
            {"gte": [{"path": "data.score"}, 7]},
            {"lte": [{"path": "input.salary"}, {"path": "input.budget"}]},
            {"ne": [{"path": "data.owner.team"}, {"path": "input.team"}]}
        ]}),
        RuleRoots::COMMAND,
    )
    .unwrap();
    let data = json!({"score": 8.5, "owner": {"team": "platform", "name": "Ada"}, "notes": "x"});
    let input = json!({"salary": 100_000, "budget": 120_000, "team": "search"});
    let scope = Scope {
        data: Some(&data),
        input: Some(&input),
        state: Some("interviewing"),
    };
    assert!(rule.passes(&scope));
    let failing = Scope {
        state: Some("applied"),
        ..scope
    };
    assert!(!rule.passes(&failing));

    let mut group = c.benchmark_group("guard");
    group.throughput(Throughput::Elements(1));
    group.bench_function("all_of_four_passing", |b| {
        b.iter(|| black_box(&rule).passes(black_box(&scope)));
    });
    group.bench_function("all_of_four_failing_first", |b| {
        b.iter(|| black_box(&rule).passes(black_box(&failing)));
    });
    group.finish();
}

criterion_group!(benches, guard);
criterion_main!(benches);
