//! A vocabulary file's problem list stops at its limit and says that it stopped.
#![allow(clippy::unwrap_used)]

use rcip_mcpl::{MAX_VOCABULARY_PATHS, MAX_VOCABULARY_PROBLEMS, parse_vocabulary};
use serde_json::{Map, Value, json};

#[test]
fn a_file_with_100_000_unknown_keys_lists_the_first_problems_and_a_marker() {
    let mut file: Map<String, Value> = (0..100_000).map(|i| (format!("x{i}"), json!(1))).collect();
    file.insert("vocabulary".to_owned(), json!("demo/1"));
    file.insert("paths".to_owned(), json!(["a"]));
    let problems = parse_vocabulary(&Value::Object(file)).unwrap_err();
    assert_eq!(problems.len(), MAX_VOCABULARY_PROBLEMS + 1);
    let last = problems.last().unwrap();
    assert_eq!(
        (last.pointer.as_str(), last.code),
        ("", "TOO_MANY_PROBLEMS")
    );
    assert!(
        problems[..MAX_VOCABULARY_PROBLEMS]
            .iter()
            .all(|p| p.code == "UNKNOWN_KEY")
    );
    let text: usize = problems.iter().map(|p| p.to_string().len()).sum();
    assert!(text < 20_000, "{text} bytes");
}

#[test]
fn a_file_with_many_bad_paths_or_outside_paths_is_cut() {
    // Within the path limit, every path wrong: one problem each, cut at the limit.
    let paths: Vec<Value> = (0..MAX_VOCABULARY_PATHS).map(|_| json!(1)).collect();
    let problems = parse_vocabulary(&json!({"vocabulary": "demo/1", "paths": paths})).unwrap_err();
    assert_eq!(problems.len(), MAX_VOCABULARY_PROBLEMS + 1);
    assert_eq!(problems.last().unwrap().code, "TOO_MANY_PROBLEMS");
    let outside: Vec<Value> = (0..MAX_VOCABULARY_PATHS)
        .map(|i| json!(format!("z{i}")))
        .collect();
    let problems = parse_vocabulary(
        &json!({"vocabulary": "demo/1", "paths": ["a"], "advertisedOutside": outside}),
    )
    .unwrap_err();
    assert_eq!(problems.len(), MAX_VOCABULARY_PROBLEMS + 1);
    assert_eq!(problems[0].code, "UNKNOWN_PATH");
    // Exactly the limit: no marker.
    let problems = parse_vocabulary(&json!({"vocabulary": "demo/1", "paths": ["a"],
        "advertisedOutside": outside[..MAX_VOCABULARY_PROBLEMS]}))
    .unwrap_err();
    assert_eq!(problems.len(), MAX_VOCABULARY_PROBLEMS);
    assert!(problems.iter().all(|p| p.code == "UNKNOWN_PATH"));
}

#[test]
fn more_than_the_most_paths_is_one_problem() {
    let paths: Vec<Value> = (0..100_000).map(|i| json!(format!("p{i}"))).collect();
    let problems = parse_vocabulary(&json!({"vocabulary": "demo/1", "paths": paths,
        "advertisedOutside": paths}))
    .unwrap_err();
    let codes: Vec<(&str, &str)> = problems
        .iter()
        .map(|p| (p.pointer.as_str(), p.code))
        .collect();
    assert_eq!(
        codes,
        [
            ("/paths", "TOO_MANY_PATHS"),
            ("/advertisedOutside", "TOO_MANY_PATHS")
        ]
    );
    // The most is taken (and built quickly: no scan of the paths per path).
    let started = std::time::Instant::now();
    let vocabulary = parse_vocabulary(&json!({"vocabulary": "demo/1",
        "paths": paths[..MAX_VOCABULARY_PATHS]}))
    .unwrap();
    assert_eq!(vocabulary.paths.len(), MAX_VOCABULARY_PATHS);
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}
