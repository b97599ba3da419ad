//! The README's first command, `cargo run --example polls`, keeps telling its story: cargo
//! builds the example before running tests, and this runs it and reads its transcript.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::process::Command;

/// `target/<profile>/examples/polls`, next to this test's `target/<profile>/deps/` binary.
fn example_binary() -> PathBuf {
    let test_binary = std::env::current_exe().unwrap();
    let profile_dir = test_binary.parent().and_then(|deps| deps.parent()).unwrap();
    profile_dir
        .join("examples")
        .join(format!("polls{}", std::env::consts::EXE_SUFFIX))
}

#[test]
fn polls_example_prints_the_whole_story() {
    // (the relationship part's record id is random: lines with it are matched in parts)
    let binary = example_binary();
    assert!(binary.exists(), "{} was not built", binary.display());
    let output = Command::new(&binary).output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let transcript = String::from_utf8(output.stdout).unwrap();
    // The vote and its idempotent replay: the same first result twice, revision 2.
    let votes = transcript
        .lines()
        .filter(|l| l.contains("<- succeeded polls.poll.vote:") && l.contains("\"revision\":2,"))
        .count();
    assert_eq!(votes, 2, "{transcript}");
    for line in [
        "RCIP protocol 1.0: application \"polls\"",
        "<- succeeded polls.list: []",
        "[host UI] approves \"Create a poll\"",
        "<- succeeded polls.create: {\"pollId\":\"p1\"}",
        "[host UI] declines \"Close a poll\"",
        "<- denied polls.close: CONFIRMATION_DECLINED The user declined the requested operation.",
        "<- failed polls.create: INPUT_INVALID The capability input does not match its declared schema.",
        "issue at \"/options\" (minItems): must NOT have fewer than 2 items",
        "<- failed polls.delete: CAPABILITY_NOT_FOUND",
        // The relationship program, through its generated capabilities.
        "[host UI] approves \"Create poll\"",
        "<- failed polls.poll.vote: EXECUTION_FAILED GUARD_FAILED: the guard of command \"vote\" did not pass",
        "<- failed polls.poll.vote: EXECUTION_FAILED STALE_REVISION: stale revision: expected 1, the record is at 2",
        "\"revision\":4,\"state\":\"closed\",\"work_requested\":[\"notify_voters\"]}",
    ] {
        assert!(
            transcript.contains(line),
            "missing {line:?} in:\n{transcript}"
        );
    }
}

/// The lines of the transcript from the one starting with `from`, in order.
fn section<'a>(transcript: &'a str, from: &str) -> Vec<&'a str> {
    let lines: Vec<&str> = transcript.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with(from))
        .unwrap_or_else(|| panic!("no {from:?} in:\n{transcript}"));
    lines[start..].to_vec()
}

/// Asserts that `expected` appear in `lines` in this order (other lines may come between).
fn in_order(lines: &[&str], expected: &[&str]) {
    let mut rest = lines.iter();
    for line in expected {
        assert!(
            rest.any(|l| l.contains(line)),
            "missing {line:?} (in this order) in:\n{}",
            lines.join("\n")
        );
    }
}

#[test]
fn polls_example_runs_a_scripted_assistant_through_assist() {
    let output = Command::new(example_binary()).output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let transcript = String::from_utf8(output.stdout).unwrap();
    let assist = section(&transcript, "== Assist, read-only");
    in_order(
        &assist,
        &[
            // Read-only: a read runs; a write is refused without reaching the runtime.
            "user: Show me the polls",
            "(decide is shown 11 capabilities, 11 of them reads)",
            "<- succeeded polls.list: [{\"closed\":false,\"id\":\"p1\",\"question\":\"Where should we meet?\",\"watchers\":0}]",
            "assistant: The polls: p1 (Where should we meet?).",
            "[status: success]",
            "user: Create a poll: Team dinner? Pizza, Sushi",
            "<- denied polls.create: POLICY_DENIED Assist read-only mode denied a state-changing capability.",
            "assistant: The action stopped: Assist read-only mode denied a state-changing capability.",
            "[status: error]",
            // Interactive: a confirmed write, a declined destructive action.
            "== Assist, interactive",
            "user: Create a poll: Team dinner? Pizza, Sushi",
            "[host UI] Assist asks: \"Create a poll\" (Creates a poll with a question and 2 to 10 options.): approved",
            "<- succeeded polls.create: {\"pollId\":\"p2\"}",
            "assistant: Created poll p2.",
            "[status: success]",
            "user: Close poll p2",
            "[host UI] Assist asks: \"Close a poll\" (This cannot be undone.): declined",
            "<- denied polls.close: CONFIRMATION_DECLINED The user declined the requested operation.",
            "assistant: The action stopped: The user declined the requested operation.",
            "[status: error]",
            // An ambiguous request: a message, nothing run.
            "user: Do the thing",
            "assistant: I'm not sure what you'd like.",
            "[status: active]",
            // Cancelled in the pause after the first of three votes.
            "== Assist, a turn cancelled between two actions",
            "user: Vote 0 on p2, 3 times",
            "(the user presses cancel)",
            "<- succeeded poll.vote: {\"pollId\":\"p2\",\"votes\":[1,0]}",
            "assistant: The request was cancelled.",
            "[status: active]",
            "(the conversation kept 8 messages for the host)",
        ],
    );
    // The ambiguous request ran nothing, and the cancelled turn ran one vote of three.
    let ambiguous = section(&transcript, "  user: Do the thing");
    assert!(
        ambiguous[1].starts_with("  assistant: I'm not sure"),
        "{ambiguous:?}"
    );
    let cancelled = section(&transcript, "  user: Vote 0 on p2");
    let votes = cancelled
        .iter()
        .filter(|l| l.contains("-> poll.vote"))
        .count();
    assert_eq!(votes, 1, "{cancelled:?}");
}

#[test]
fn polls_export_is_the_catalog_json_and_deterministic() {
    let run = || {
        let output = Command::new(example_binary())
            .arg("export")
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        output.stdout
    };
    let first = run();
    assert_eq!(first, run(), "two exports differ");
    let catalog: serde_json::Value = serde_json::from_slice(&first).unwrap();
    assert_eq!(catalog["protocolVersion"], "1.0");
    // The content revision is the digest of the export without it.
    let mut without = catalog.clone();
    let revision = without.as_object_mut().unwrap().remove("revision").unwrap();
    let canonical = rcip_mcpl::canonical_json(&without).unwrap();
    assert_eq!(
        revision.as_str().unwrap(),
        rcip_mcpl::digest_of_canonical(&canonical)
    );
    let capabilities = catalog["capabilities"].as_array().unwrap();
    let ids: Vec<&str> = capabilities
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    // The functions, then the relationship program's 17 capabilities.
    assert_eq!(ids.len(), 7 + 17);
    assert_eq!(
        ids[7..10],
        ["polls.poll.close", "polls.poll.reopen", "polls.poll.vote"]
    );
    assert_eq!(ids[ids.len() - 2..], ["polls.openPolls", "polls.changes"]);
    assert_eq!(
        ids[..7],
        [
            "polls.list",
            "polls.create",
            "poll.rename",
            "poll.vote",
            "poll.results",
            "polls.wait",
            "polls.close"
        ]
    );
    let text = String::from_utf8(first).unwrap();
    for banned in ["$ref", "$defs", "$schema", "\"format\""] {
        assert!(!text.contains(banned), "{banned} in the export");
    }
}

/// The export is the same bytes on every build of the same source: it is compared with the
/// copy committed beside the example (`examples/polls.catalog.json`). After an intended change
/// of the catalog, regenerate that file with
/// `cargo run --example polls -- export > examples/polls.catalog.json` and review the diff.
#[test]
fn polls_export_matches_the_committed_catalog() {
    let output = Command::new(example_binary())
        .arg("export")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let committed =
        std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("polls.catalog.json"))
            .unwrap();
    assert!(
        output.stdout == committed,
        "the export differs from examples/polls.catalog.json"
    );
}

/// `-- export --profile NAME`: each consumer's tool list, all 24 capabilities, accepted by
/// that profile's checker; an unknown profile is an error.
#[test]
fn polls_export_profiles_are_accepted_by_their_checkers() {
    for profile in rcip_export::Profile::ALL {
        let output = Command::new(example_binary())
            .args(["export", "--profile", profile.name()])
            .output()
            .unwrap();
        assert!(output.status.success(), "{profile}: {output:?}");
        let tools: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(
            rcip_export::check::check(profile, &tools),
            Ok(()),
            "{profile}"
        );
        let count = match profile {
            rcip_export::Profile::Gemini | rcip_export::Profile::GeminiJsonSchema => {
                tools[0]["functionDeclarations"].as_array().unwrap().len()
            }
            _ => tools.as_array().unwrap().len(),
        };
        assert_eq!(count, 24, "{profile}");
    }
    let unknown = Command::new(example_binary())
        .args(["export", "--profile", "nope"])
        .output()
        .unwrap();
    assert!(!unknown.status.success());
    let error = String::from_utf8_lossy(&unknown.stderr);
    assert!(error.contains("unknown profile"), "{error}");
}
