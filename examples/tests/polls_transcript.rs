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

/// Runs `polls` with no arguments: the tour, as a new user first sees it.
fn tour() -> String {
    let binary = example_binary();
    assert!(binary.exists(), "{} was not built", binary.display());
    let output = Command::new(&binary).output().unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
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

/// The lines of the transcript from the one starting with `from` to the next blank line.
fn paragraph<'a>(transcript: &'a str, from: &str) -> Vec<&'a str> {
    section(transcript, from)
        .into_iter()
        .take_while(|l| !l.is_empty())
        .collect()
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

/// The tour: one heading per section, numbered, short, no raw epoch milliseconds, and a
/// last section pointing to MCP and the exports.
#[test]
fn polls_example_is_a_short_tour_ending_with_mcp() {
    let transcript = tour();
    let headings: Vec<&str> = transcript.lines().filter(|l| l.starts_with("==")).collect();
    let expected = [
        "== 1. Discovery: what a tool sees (snapshot revision 25: one per change the host made, \
         24 bindings + 1 context)",
        "== 2. A read: ",
        "== 3. A write: ",
        "== 4. A destructive action (available now that p1 is open): ",
        "== 5. Invalid input: ",
        "== 6. A relationship program (programs/polls.json): ",
        "== 7. Assist: ",
        "== Next: ",
    ];
    assert_eq!(headings.len(), expected.len(), "{headings:#?}");
    for (heading, expected) in headings.iter().zip(expected) {
        assert!(
            heading.starts_with(expected),
            "{heading:?} is not {expected:?}"
        );
    }
    let lines = transcript.lines().count();
    assert!(lines <= 90, "the tour grew to {lines} lines:\n{transcript}");
    // Times are shown relative ("expires in 2 min"), never as epoch milliseconds.
    let mut digits = 0;
    for c in transcript.chars() {
        digits = if c.is_ascii_digit() { digits + 1 } else { 0 };
        assert!(
            digits < 13,
            "a 13-digit number (epoch ms?) in:\n{transcript}"
        );
    }
    assert!(!transcript.contains("expires at"), "{transcript}");
    in_order(
        &section(&transcript, "== Next: "),
        &[
            "  cargo run --example polls -- mcp  ",
            "  cargo run --example polls -- mcp-http 127.0.0.1:8001  MCP over streamable HTTP",
            "  cargo run --example polls -- export  ",
            "  cargo run --example polls -- export --profile openai  ",
            "  MCP client config: {\"mcpServers\": {\"polls\": {\"command\": \"cargo\", \"args\": \
             [\"run\", \"-q\", \"--example\", \"polls\", \"--\", \"mcp\"]}}}",
        ],
    );
}

/// Discovery's table: the application's seven capabilities with their live facts, its
/// columns aligned whatever the ids' length.
#[test]
fn polls_example_discovery_is_an_aligned_table() {
    let transcript = tour();
    let discovery = paragraph(&transcript, "== 1. Discovery");
    let rows: Vec<&str> = discovery[1..discovery.len() - 1].to_vec();
    let words: Vec<Vec<&str>> = rows
        .iter()
        .map(|r| r.split_whitespace().take(2).collect())
        .collect();
    let columns: Vec<[&str; 2]> = words.iter().map(|w| [w[0], w[1]]).collect();
    assert_eq!(
        columns,
        [
            ["polls.list", "read"],
            ["polls.create", "write"],
            ["poll.rename", "write"],
            ["poll.vote", "write"],
            ["poll.results", "read"],
            ["polls.wait", "read"],
            ["polls.close", "destructive"],
        ],
        "{discovery:#?}"
    );
    // Each column starts at the same place on every row.
    let starts = |row: &str, word: &str| row.find(&format!(" {word} ")).unwrap() + 1;
    let titles = [
        "List polls",
        "Create a poll",
        "Rename a poll",
        "Vote",
        "Read results",
    ];
    for (row, title) in rows.iter().zip(titles) {
        assert_eq!(
            starts(row, title),
            starts(rows[0], "List polls"),
            "{discovery:#?}"
        );
    }
    for (row, [_, effect]) in rows.iter().zip(&columns) {
        assert_eq!(
            starts(row, effect),
            starts(rows[0], "read"),
            "{discovery:#?}"
        );
    }
    in_order(
        &discovery,
        &[
            "List polls      available",
            "Rename a poll   available, outside the current context (scope \"poll\")",
            "Close a poll    unavailable: There is no open poll to close.",
            "  + 17 more (8 read, 9 write) generated from the relationship program \
             programs/polls.json",
        ],
    );
}

#[test]
fn polls_example_reads_writes_and_is_refused() {
    let transcript = tour();
    assert!(
        transcript.starts_with("A tour of RCIP 1.0 with the \"polls\" app: "),
        "{transcript}"
    );
    assert_eq!(
        paragraph(&transcript, "== 2. A read"),
        [
            "== 2. A read: it runs at once (the host's policy lets reads through)",
            "  -> polls.list {}",
            "  <- succeeded polls.list: []",
        ]
    );
    assert_eq!(
        paragraph(&transcript, "== 3. A write")[1..],
        [
            "  -> polls.create {\"options\":[\"Clubhouse\",\"Garden\"],\"question\":\"Where should we meet?\"}",
            "  <- confirmation_required polls.create: \"Creates a poll with a question and 2 to 10 options.\" (write, expires in 2 min)",
            "  [host UI] approves \"Create a poll\"",
            "  <- succeeded polls.create: {\"pollId\":\"p1\"}",
        ]
    );
    assert_eq!(
        paragraph(&transcript, "== 4. A destructive action")[1..],
        [
            "  -> polls.close {\"pollId\":\"p1\"}",
            "  <- confirmation_required polls.close: \"This cannot be undone.\" (destructive, expires in 2 min)",
            "  [host UI] declines \"Close a poll\"",
            "  <- denied polls.close: CONFIRMATION_DECLINED The user declined the requested operation.",
        ]
    );
    assert_eq!(
        paragraph(&transcript, "== 5. Invalid input")[1..],
        [
            "  -> polls.create {\"extra\":true,\"options\":[\"Only one\"],\"question\":\"\"}",
            "  <- failed polls.create: INPUT_INVALID The capability input does not match its declared schema.",
            "       issue at \"/options\" (minItems): must NOT have fewer than 2 items",
            "       issue at \"/question\" (minLength): must NOT have fewer than 1 characters",
            "       issue at the top level (additionalProperties): must NOT have additional properties",
        ]
    );
}

#[test]
fn polls_example_drives_the_relationship_program() {
    // (the record id is random: lines with it are matched in parts)
    let transcript = tour();
    let records = paragraph(&transcript, "== 6. A relationship program");
    in_order(
        &records,
        &[
            "(the host UI approves every write here, as in 3: only the outcomes are shown)",
            "  -> polls.poll.create {\"collection_id\":\"team\",",
            "  <- succeeded polls.poll.create: record ",
            "  -- ada votes \"yes\": the guard passes",
            "  <- succeeded polls.poll.vote: ",
            "  -- ada again: the host UI approves, but the program's guard refuses",
            "  <- failed polls.poll.vote: EXECUTION_FAILED GUARD_FAILED: the guard of command \"vote\" did not pass",
            "  -- ada's first vote replayed (same idempotency_key): its first result again",
            "  <- succeeded polls.poll.vote: ",
            "  <- succeeded polls.poll.update: record ",
            "\"revision\":4,\"state\":\"closed\",\"work_requested\":[\"notify_voters\"]}",
        ],
    );
    let created = records[3];
    assert!(
        created.starts_with("  <- succeeded polls.poll.create: record ")
            && created.ends_with(", revision 1, state \"open\""),
        "{records:#?}"
    );
    // No approval is printed here.
    assert!(
        !records.iter().any(|l| l.contains("[host UI]")),
        "{records:#?}"
    );
    // The vote and its replay: the same request, and the same first result (revision 2).
    let lines_with = |start: &str| -> Vec<&str> {
        records
            .iter()
            .copied()
            .filter(|l| l.starts_with(start))
            .collect()
    };
    let votes = lines_with("  <- succeeded polls.poll.vote:");
    assert_eq!(votes.len(), 2, "{records:#?}");
    assert_eq!(votes[0], votes[1]);
    assert!(
        votes[0].contains("\"revision\":2,\"state\":\"open\""),
        "{votes:?}"
    );
    let first = lines_with(
        "  -> polls.poll.vote {\"expected_revision\":1,\"idempotency_key\":\"vote-ada\"",
    );
    assert_eq!(first.len(), 2, "{records:#?}");
    assert_eq!(first[0], first[1]);
}

#[test]
fn polls_example_runs_a_scripted_assistant_through_assist() {
    let transcript = tour();
    let assist = paragraph(&transcript, "== 7. Assist");
    in_order(
        &assist,
        &[
            // Read-only: a write is refused without reaching the runtime.
            "  -- read-only (the default): ",
            "  user: Create a poll: Team dinner? Pizza, Sushi",
            "  (decide is shown 11 capabilities, 11 of them reads)",
            "  assistant -> polls.create {\"options\":[\"Pizza\",\"Sushi\"],\"question\":\"Team dinner?\"}",
            "  <- denied polls.create: POLICY_DENIED Assist read-only mode denied a state-changing capability.",
            "  assistant: The action stopped: Assist read-only mode denied a state-changing capability.  [status: error]",
            // Interactive: a confirmed write.
            "  -- interactive: ",
            "  user: Create a poll: Team dinner? Pizza, Sushi",
            "  <- succeeded polls.create: {\"pollId\":\"p2\"}",
            "  assistant: Created poll p2.  [status: success]",
            // Cancelled in the pause after the first of three votes.
            "  -- a turn cancelled: ",
            "  user: Vote 0 on p2, 3 times",
            "  <- succeeded poll.vote: {\"pollId\":\"p2\",\"votes\":[1,0]}",
            "  (cancel pressed in the pause after vote 1: already done before the cancel; the other 2 never ran)",
            "  assistant: The request was cancelled.  [status: active (ready for the next message)]",
        ],
    );
    // Read-only: the host was never asked.
    let read_only = section(&transcript, "  -- read-only");
    let read_only: Vec<&str> = read_only
        .iter()
        .copied()
        .take_while(|l| !l.starts_with("  -- interactive"))
        .collect();
    assert!(
        !read_only.iter().any(|l| l.contains("[host UI]")),
        "{read_only:#?}"
    );
    // Each confirmation prints right under the action it answered.
    for (action, answer) in [
        (
            "  assistant -> polls.create {\"options\":[\"Pizza\",\"Sushi\"],\"question\":\"Team dinner?\"}",
            "  [host UI] Assist asks: \"Create a poll\" (Creates a poll with a question and 2 to 10 options.): approved",
        ),
        (
            "  assistant -> poll.vote {\"option\":0,\"pollId\":\"p2\"}",
            "  [host UI] Assist asks: \"Vote\" (Casts one vote for an option of an open poll.): approved",
        ),
    ] {
        let after = section(&transcript, "  -- interactive");
        let at = after.iter().position(|l| *l == action).unwrap();
        assert_eq!(after[at + 1], answer, "{after:#?}");
    }
    // The cancelled turn ran one vote of three.
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
/// `cargo run --example polls -- export > examples/polls.catalog.json` and review the diff. The
/// build then checks that file against the last published contract (`build.rs`,
/// `examples/polls.contract.lock`): a breaking change fails `cargo build` until the version's
/// major component moves or `RCIP_ACCEPT_BREAKING=1` rewrites the lock.
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
