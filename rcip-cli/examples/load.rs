//! Load on `rcip serve`, bounded in time and count, on loopback: `record.get` and
//! `command.execute` with 1, 16 and 64 concurrent keep-alive clients against one instance on
//! SQLite and two instances sharing one PostgreSQL schema; ops/s and p50/p99 per case; after
//! each case the change feed and the records are checked against what the clients were told
//! (every command answered 200 is in the feed exactly once, no event is there twice, and each
//! record's revision and data are those of its last command). A disagreement exits 1.
//!
//! ```text
//! cargo build --release -p rcip-cli --bin rcip --example load
//! RCIP_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test \
//!     target/release/examples/load [--seconds 5] [--clients 1,16,64] [--rcip PATH]
//! ```
//!
//! `--rcip` (or `RCIP_BIN`) names the `rcip` binary; the default is the one next to this
//! program's folder (`target/release/rcip` for `target/release/examples/load`). Without
//! `RCIP_TEST_POSTGRES_URL` (or with an `rcip` built without the `postgres` feature) the
//! PostgreSQL cases are skipped with one line. `--smoke` runs every case with 2 clients for
//! 20 requests each: what `cargo test` runs (tests/load.rs), so the program cannot rot.
//!
//! The clients are threads, one blocking HTTP/1.1 connection each, because a load program
//! should measure the server and not a client library: no dependency besides the crate's.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

/// The package the commands run on: a poll takes votes for as long as it is open, and a
/// vote only needs another voter than the last (so one client can vote on its poll forever).
const POLLS: &str = include_str!("../../examples/programs/polls.json");

/// The human development token every client sends.
const TOKEN: &str = "load-token";

/// The variable naming the PostgreSQL server.
const POSTGRES_VAR: &str = "RCIP_TEST_POSTGRES_URL";

/// How long each case runs.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Budget {
    /// For this long.
    Time(Duration),
    /// This many requests per client.
    Requests(usize),
}

/// What to run.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    /// The `rcip` binary.
    pub(crate) rcip: PathBuf,
    /// The concurrent client counts.
    pub(crate) clients: Vec<usize>,
    /// Each case's budget.
    pub(crate) budget: Budget,
}

impl Options {
    /// The `cargo test` mode: 2 clients, 20 requests each.
    pub(crate) fn smoke(rcip: PathBuf) -> Self {
        Self {
            rcip,
            clients: vec![2],
            budget: Budget::Requests(20),
        }
    }
}

/// One measured case.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    /// `sqlite` or `postgres`.
    pub(crate) store: &'static str,
    /// `rcip serve` processes the clients were spread over.
    pub(crate) instances: usize,
    /// `record.get` or `command.execute`.
    pub(crate) operation: &'static str,
    /// Concurrent clients.
    pub(crate) clients: usize,
    /// The records they call on (one each, or all on one).
    pub(crate) records: usize,
    /// Requests answered 200.
    pub(crate) ok: usize,
    /// Wall time of the case.
    pub(crate) elapsed: Duration,
    /// Median latency of every request.
    pub(crate) p50: Duration,
    /// 99th percentile latency of every request.
    pub(crate) p99: Duration,
    /// Answers other than 200, by `STATUS CODE`.
    pub(crate) errors: BTreeMap<String, usize>,
    /// Events read back from the change feed (every one checked).
    pub(crate) feed_events: usize,
}

impl Row {
    /// 200 answers a second.
    pub(crate) fn rate(&self) -> f64 {
        self.ok as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

// ------------------------------------------------------------------ HTTP

/// One keep-alive connection to an instance.
struct Connection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Connection {
    fn open(address: &str) -> Result<Self, String> {
        let stream = TcpStream::connect(address).map_err(|e| format!("connect {address}: {e}"))?;
        // One write per request; without this the kernel may hold a small write back waiting
        // for an acknowledgement, and the figures would measure that.
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .map_err(|e| e.to_string())?;
        let writer = stream.try_clone().map_err(|e| e.to_string())?;
        Ok(Self {
            reader: BufReader::new(stream),
            writer,
        })
    }

    /// `POST /v1/operations`: the status and the JSON body.
    fn call(&mut self, operation: &str, arguments: &Value) -> Result<(u16, Value), String> {
        let body = json!({"operation": operation, "arguments": arguments}).to_string();
        let request = format!(
            "POST /v1/operations HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {TOKEN}\r\n\
             content-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        self.writer
            .write_all(request.as_bytes())
            .map_err(|e| format!("send: {e}"))?;
        let mut line = String::new();
        self.reader
            .read_line(&mut line)
            .map_err(|e| format!("receive: {e}"))?;
        let status: u16 = line
            .get(9..12)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("not an HTTP status line: {line:?}"))?;
        let mut length = None;
        loop {
            line.clear();
            self.reader
                .read_line(&mut line)
                .map_err(|e| format!("receive: {e}"))?;
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse::<usize>().ok();
            }
        }
        let length = length.ok_or("an answer without content-length")?;
        let mut body = vec![0u8; length];
        self.reader
            .read_exact(&mut body)
            .map_err(|e| format!("receive: {e}"))?;
        let body = serde_json::from_slice(&body).map_err(|e| format!("not JSON: {e}"))?;
        Ok((status, body))
    }

    /// A call that must succeed: its `result`.
    fn ok(&mut self, operation: &str, arguments: &Value) -> Result<Value, String> {
        match self.call(operation, arguments)? {
            (200, mut body) => Ok(body["result"].take()),
            (status, body) => Err(format!("{operation}: {status} {body}")),
        }
    }
}

/// `STATUS CODE` of a refused call.
fn error_key(status: u16, body: &Value) -> String {
    let code = body["error"]["code"].as_str().unwrap_or("?");
    format!("{status} {code}")
}

// ------------------------------------------------------------------ instances

/// A folder of its own, removed when dropped.
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<Self, String> {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = std::env::temp_dir().join(format!("rcip-load-{}-{nanos:x}", std::process::id()));
        std::fs::create_dir_all(path.join("programs")).map_err(|e| e.to_string())?;
        std::fs::write(path.join("programs").join("polls.json"), POLLS)
            .map_err(|e| e.to_string())?;
        Ok(Self(path))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A running `rcip serve`, killed when dropped.
pub(crate) struct Instance {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub(crate) address: String,
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Instance {
    /// Starts `rcip serve` on a free loopback port and waits for the address it prints.
    fn start(rcip: &Path, database: &str, dir: &TempDir, name: &str) -> Result<Self, String> {
        let log = dir.0.join(format!("{name}.log"));
        let stderr = std::fs::File::create(&log).map_err(|e| e.to_string())?;
        let mut child = Command::new(rcip)
            .args(["serve", "--bind", "127.0.0.1:0", "--database", database])
            .arg("--programs")
            .arg(dir.0.join("programs"))
            .args(["--insecure-dev-token", &format!("{TOKEN}=human:ada")])
            // The figures are the service's, not the per-principal limit's (every client is
            // the one principal).
            .args(["--rate-limit", "0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", rcip.display()))?;
        let mut line = String::new();
        let read = child
            .stdout
            .take()
            .map(|stdout| BufReader::new(stdout).read_line(&mut line));
        let Some(address) = line.trim().strip_prefix("listening on http://") else {
            let _ = child.kill();
            let _ = child.wait();
            let log = std::fs::read_to_string(&log).unwrap_or_default();
            return Err(format!("rcip serve did not start ({read:?}): {log}"));
        };
        Ok(Self {
            address: address.to_owned(),
            child,
        })
    }
}

// ------------------------------------------------------------------ the cases

/// A client's record and what it was told about it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ledger {
    /// The client's poll.
    pub(crate) record_id: String,
    /// The revisions of the commands answered 200, in order.
    pub(crate) committed: Vec<u64>,
    /// The last committed vote's input.
    pub(crate) last_vote: Option<(String, u64)>,
}

/// What one client measured.
#[derive(Debug, Default)]
pub(crate) struct Measured {
    latencies: Vec<Duration>,
    ok: usize,
    errors: BTreeMap<String, usize>,
    /// What it was told.
    pub(crate) ledger: Ledger,
}

/// One client: its own connection, to `address`, for `budget`.
pub(crate) fn client(
    address: &str,
    workspace: &str,
    operation: &'static str,
    index: usize,
    mut ledger: Ledger,
    budget: Budget,
    start: &Barrier,
) -> Result<Measured, String> {
    let connection = Connection::open(address);
    // Every client passes the barrier, connected or not, so none waits forever.
    start.wait();
    let mut connection = connection?;
    let started = Instant::now();
    let mut revision = 1;
    let mut measured = Measured::default();
    let mut sent = 0usize;
    loop {
        let more = match budget {
            Budget::Time(limit) => started.elapsed() < limit,
            Budget::Requests(count) => sent < count,
        };
        if !more {
            break;
        }
        sent += 1;
        // A voter of its own each time: the guard refuses a voter voting twice in a row.
        let vote = (format!("c{index}-{sent}"), sent as u64 % 10);
        let arguments = match operation {
            "record.get" => json!({"workspace_id": workspace, "record_id": ledger.record_id}),
            _ => json!({
                "workspace_id": workspace, "record_id": ledger.record_id,
                "command": "vote", "expected_revision": revision,
                "idempotency_key": format!("vote-{index}-{sent}"),
                "input": {"voter": vote.0, "choice": vote.1},
            }),
        };
        let begun = Instant::now();
        let answer = connection.call(operation, &arguments);
        measured.latencies.push(begun.elapsed());
        match answer {
            Ok((200, body)) => {
                measured.ok += 1;
                if operation == "command.execute" {
                    revision = body["result"]["revision"]
                        .as_u64()
                        .ok_or_else(|| format!("no revision in {body}"))?;
                    ledger.committed.push(revision);
                    ledger.last_vote = Some(vote);
                }
            }
            Ok((status, body)) => {
                *measured.errors.entry(error_key(status, &body)).or_default() += 1;
                if operation == "command.execute" {
                    // Read the revision again (untimed), so one refusal is not all the rest.
                    let record = connection.ok(
                        "record.get",
                        &json!({"workspace_id": workspace, "record_id": ledger.record_id}),
                    )?;
                    revision = record["revision"].as_u64().unwrap_or(revision);
                }
            }
            Err(error) => {
                *measured.errors.entry(format!("io {error}")).or_default() += 1;
                connection = Connection::open(address)?;
            }
        }
    }
    measured.ledger = ledger;
    Ok(measured)
}

/// Creates a workspace with one poll per client (on the first instance).
pub(crate) fn set_up(address: &str, workspace: &str, polls: usize) -> Result<Vec<String>, String> {
    let mut connection = Connection::open(address)?;
    connection.ok(
        "workspace.create",
        &json!({"workspace_id": workspace, "name": workspace, "idempotency_key": "w"}),
    )?;
    connection.ok(
        "collection.create",
        &json!({"workspace_id": workspace, "collection_id": "polls", "name": "Polls",
            "idempotency_key": "c"}),
    )?;
    (0..polls)
        .map(|i| {
            let record = connection.ok(
                "record.create",
                &json!({"workspace_id": workspace, "collection_id": "polls",
                "namespace": "polls", "version": 1, "type": "poll",
                "data": {"question": format!("Poll {i}?"), "options": ["yes", "no"], "vote_count": 0},
                "idempotency_key": format!("poll-{i}")}),
            )?;
            record["id"]
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("record.create: no id in {record}"))
        })
        .collect()
}

/// The whole change feed of `workspace`, every page.
fn read_feed(address: &str, workspace: &str) -> Result<Vec<Value>, String> {
    let mut connection = Connection::open(address)?;
    let mut events = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut arguments = json!({"workspace_id": workspace, "limit": 100});
        if let Some(cursor) = &cursor {
            arguments["cursor"] = json!(cursor);
        }
        let mut page = connection.ok("changes.feed", &arguments)?;
        if let Some(items) = page["items"].as_array_mut() {
            events.append(items);
        }
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return Ok(events),
        }
    }
}

/// The feed and the records against the clients' ledgers: the number of events checked, or
/// the problems found.
pub(crate) fn verify(address: &str, workspace: &str, ledgers: &[&Ledger]) -> Result<usize, String> {
    let events = read_feed(address, workspace)?;
    let mut problems = Vec::new();
    let mut seen = HashSet::new();
    // Record id -> the revisions of its command events, in feed order, and the last one's
    // payload.
    let mut commands: HashMap<&str, (Vec<u64>, &Value)> = HashMap::new();
    let mut created = HashSet::new();
    for event in &events {
        let id = event["event_id"].as_str().unwrap_or_default();
        if !seen.insert(id) {
            problems.push(format!("event {id} is in the feed twice"));
        }
        let record = event["record_id"].as_str().unwrap_or_default();
        match event["kind"].as_str() {
            Some("record.created") => {
                created.insert(record);
            }
            Some("command.executed") => {
                if event["payload"]["record"]["revision"] != event["revision"] {
                    problems.push(format!(
                        "an event whose snapshot is another revision: {event}"
                    ));
                }
                let entry = commands.entry(record).or_insert((Vec::new(), &Value::Null));
                entry.0.push(event["revision"].as_u64().unwrap_or(0));
                entry.1 = &event["payload"];
            }
            other => problems.push(format!("an unexpected event {other:?}: {event}")),
        }
    }
    // Clients sharing a record: together they were told of its commits, and its last vote
    // is the one with the highest revision.
    let mut merged: BTreeMap<&str, Ledger> = BTreeMap::new();
    for ledger in ledgers {
        let entry = merged
            .entry(ledger.record_id.as_str())
            .or_insert_with(|| Ledger {
                record_id: ledger.record_id.clone(),
                ..Ledger::default()
            });
        if ledger.committed.last() > entry.committed.last() {
            entry.last_vote.clone_from(&ledger.last_vote);
        }
        entry.committed.extend(&ledger.committed);
        entry.committed.sort_unstable();
    }
    let mut connection = Connection::open(address)?;
    for ledger in merged.values() {
        let id = ledger.record_id.as_str();
        if !created.contains(id) {
            problems.push(format!("{id}: no record.created event"));
        }
        let (in_feed, payload) = commands.remove(id).unwrap_or((Vec::new(), &Value::Null));
        if in_feed != ledger.committed {
            let told: HashSet<_> = ledger.committed.iter().collect();
            let fed: HashSet<_> = in_feed.iter().collect();
            problems.push(format!(
                "{id}: {} commands answered 200, {} in the feed (missing revisions {:?}, \
                 not answered {:?}, {} doubled)",
                ledger.committed.len(),
                in_feed.len(),
                told.difference(&fed).collect::<Vec<_>>(),
                fed.difference(&told).collect::<Vec<_>>(),
                in_feed.len() - fed.len(),
            ));
        }
        let record = connection.ok(
            "record.get",
            &json!({"workspace_id": workspace, "record_id": id}),
        )?;
        let expected = 1 + ledger.committed.len() as u64;
        if record["revision"].as_u64() != Some(expected) {
            problems.push(format!(
                "{id}: revision {} after {} commands",
                record["revision"],
                ledger.committed.len()
            ));
        }
        if let Some((voter, choice)) = &ledger.last_vote {
            let data = &record["data"];
            if data["last_voter"] != json!(voter) || data["last_choice"] != json!(choice) {
                problems.push(format!(
                    "{id}: data {data} after the vote ({voter}, {choice})"
                ));
            }
            // A command event's payload: the command, its input and the record after it.
            let snapshot = &payload["record"];
            if snapshot["data"] != *data
                || snapshot["revision"] != record["revision"]
                || payload["input"] != json!({"voter": voter, "choice": choice})
            {
                problems.push(format!(
                    "{id}: the last event {payload} is not the record {record} and its last vote"
                ));
            }
        }
    }
    for (id, (revisions, _)) in commands {
        problems.push(format!(
            "{id}: {} command events for a record no client had",
            revisions.len()
        ));
    }
    if problems.is_empty() {
        Ok(events.len())
    } else {
        Err(format!(
            "the feed and the records disagree with the answers:\n  {}",
            problems.join("\n  ")
        ))
    }
}

/// One case: a fresh workspace, `clients` clients spread over `instances` and over `records`
/// records, then the check.
fn case(
    store: &'static str,
    instances: &[Instance],
    operation: &'static str,
    clients: usize,
    records: usize,
    budget: Budget,
) -> Result<Row, String> {
    let workspace = format!("load-{}-{clients}-{records}", operation.replace('.', "-"));
    let ids = set_up(&instances[0].address, &workspace, records)?;
    let start = Arc::new(Barrier::new(clients + 1));
    let workers: Vec<_> = (0..clients)
        .map(|index| {
            let record_id = ids[index % ids.len()].clone();
            let address = instances[index % instances.len()].address.clone();
            let workspace = workspace.clone();
            let start = Arc::clone(&start);
            let ledger = Ledger {
                record_id,
                ..Ledger::default()
            };
            std::thread::spawn(move || {
                client(
                    &address, &workspace, operation, index, ledger, budget, &start,
                )
            })
        })
        .collect();
    start.wait();
    let began = Instant::now();
    let mut measured = Vec::with_capacity(clients);
    for worker in workers {
        measured.push(
            worker
                .join()
                .map_err(|_| "a client panicked".to_owned())??,
        );
    }
    let elapsed = began.elapsed();
    let mut latencies: Vec<Duration> = measured
        .iter()
        .flat_map(|m| m.latencies.iter().copied())
        .collect();
    latencies.sort_unstable();
    let mut errors = BTreeMap::new();
    for m in &measured {
        for (key, count) in &m.errors {
            *errors.entry(key.clone()).or_default() += count;
        }
    }
    let ledgers: Vec<&Ledger> = measured.iter().map(|m| &m.ledger).collect();
    let feed_events = verify(&instances[0].address, &workspace, &ledgers)?;
    Ok(Row {
        store,
        instances: instances.len(),
        operation,
        clients,
        records,
        ok: measured.iter().map(|m| m.ok).sum(),
        elapsed,
        p50: percentile(&latencies, 50),
        p99: percentile(&latencies, 99),
        errors,
        feed_events,
    })
}

/// The nearest-rank percentile of sorted `values`.
fn percentile(values: &[Duration], percent: usize) -> Duration {
    if values.is_empty() {
        return Duration::ZERO;
    }
    let rank = (values.len() * percent).div_ceil(100).max(1);
    values[rank.min(values.len()) - 1]
}

fn cases(
    store: &'static str,
    instances: &[Instance],
    options: &Options,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    // A record per client, then (for commands) every client on one record: there most
    // calls lose the race for the revision and are refused 409 STALE_REVISION, by design.
    for (operation, shared) in [
        ("record.get", false),
        ("command.execute", false),
        ("command.execute", true),
    ] {
        for &clients in &options.clients {
            if shared && clients == 1 {
                continue;
            }
            let records = if shared { 1 } else { clients };
            let row = case(
                store,
                instances,
                operation,
                clients,
                records,
                options.budget,
            )
            .map_err(|e| {
                format!("{store}, {operation}, {clients} clients, {records} records: {e}")
            })?;
            eprintln!("{}", format_row(&row));
            rows.push(row);
        }
    }
    Ok(())
}

/// One instance on a fresh SQLite file in a folder of its own (dropped after the instance).
pub(crate) fn sqlite_instance(rcip: &Path) -> Result<(Instance, TempDir), String> {
    let dir = TempDir::new()?;
    let database = format!("sqlite:{}", dir.0.join("rcip.db").display());
    let instance = Instance::start(rcip, &database, &dir, "sqlite")?;
    Ok((instance, dir))
}

/// Every case: SQLite with one instance, then PostgreSQL with two (skipped with one line
/// without the variable).
pub(crate) fn run(options: &Options) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    {
        let (instance, _dir) = sqlite_instance(&options.rcip)?;
        cases("sqlite", &[instance], options, &mut rows)?;
    }
    match std::env::var(POSTGRES_VAR) {
        Ok(url) if !url.trim().is_empty() => postgres(&url, options, &mut rows)?,
        _ => skipped(&format!("{POSTGRES_VAR} not set")),
    }
    Ok(rows)
}

/// The one line that says the PostgreSQL cases did not run: straight to stderr, because the
/// test harness captures `eprintln!` and this line must be seen under `cargo test` too.
fn skipped(why: &str) {
    let _ = writeln!(std::io::stderr(), "skipped: PostgreSQL load cases ({why})");
}

/// Two instances on a fresh schema of the server at `url`, dropped afterwards.
#[cfg(feature = "postgres")]
fn postgres(url: &str, options: &Options, rows: &mut Vec<Row>) -> Result<(), String> {
    use rcip_database::tokio_postgres::{Config, NoTls};

    let config: Config = url
        .parse()
        .map_err(|e| format!("{POSTGRES_VAR} is not a connection string: {e}"))?;
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let schema = format!("rcip_load_{}_{nanos:x}", std::process::id());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let admin = |statement: String| {
        runtime.block_on(async {
            let (client, connection) = config
                .connect(NoTls)
                .await
                .map_err(|e| format!("{POSTGRES_VAR}: cannot connect: {e}"))?;
            let driver = tokio::spawn(connection);
            let done = client
                .batch_execute(&statement)
                .await
                .map_err(|e| format!("{statement}: {e}"));
            drop(client);
            let _ = driver.await;
            done
        })
    };
    admin(format!("CREATE SCHEMA {schema}"))?;
    let separator = if url.contains('?') { '&' } else { '?' };
    let database = format!("{url}{separator}options=-csearch_path%3D{schema}");
    let result = (|| {
        let dir = TempDir::new()?;
        // One after the other: the second finds the package the first installed.
        let first = Instance::start(&options.rcip, &database, &dir, "postgres-1")?;
        let second = Instance::start(&options.rcip, &database, &dir, "postgres-2")?;
        cases("postgres", &[first, second], options, rows)
        // The instances are gone (their sessions closed) before the schema is dropped.
    })();
    let dropped = admin(format!("DROP SCHEMA {schema} CASCADE"));
    result.and(dropped)
}

#[cfg(not(feature = "postgres"))]
fn postgres(_url: &str, _options: &Options, _rows: &mut Vec<Row>) -> Result<(), String> {
    skipped("built without the `postgres` feature");
    Ok(())
}

// ------------------------------------------------------------------ output

fn millis(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1000.0)
}

/// The table's header.
pub(crate) const HEADER: &str = "| store | instances | operation | clients | records | 200s | ops/s | p50 ms | p99 ms | other answers | feed events checked |\n|---|---|---|---|---|---|---|---|---|---|---|";

/// One row of the table.
pub(crate) fn format_row(row: &Row) -> String {
    let errors = if row.errors.is_empty() {
        "none".to_owned()
    } else {
        row.errors
            .iter()
            .fold(String::new(), |mut s, (key, count)| {
                if !s.is_empty() {
                    s.push_str(", ");
                }
                let _ = write!(s, "{key}: {count}");
                s
            })
    };
    format!(
        "| {} | {} | {} | {} | {} | {} | {:.0} | {} | {} | {} | {} |",
        row.store,
        row.instances,
        row.operation,
        row.clients,
        row.records,
        row.ok,
        row.rate(),
        millis(row.p50),
        millis(row.p99),
        errors,
        row.feed_events,
    )
}

/// The figures the data layer is held to: PostgreSQL with two instances against SQLite with
/// one, per client count, for a record each (`record.get`, `command.execute`): the ratio of
/// their rates (at least 0.40 each) and `command.execute`'s p99 on PostgreSQL (at most 60 ms).
pub(crate) fn ratios(rows: &[Row]) -> Vec<String> {
    let find = |store: &str, operation: &str, clients: usize| {
        rows.iter().find(|row| {
            row.store == store
                && row.operation == operation
                && row.clients == clients
                && row.records == clients
        })
    };
    let mut clients: Vec<usize> = rows.iter().map(|row| row.clients).collect();
    clients.sort_unstable();
    clients.dedup();
    let mut lines = Vec::new();
    for clients in clients {
        let mut parts = Vec::new();
        for operation in ["record.get", "command.execute"] {
            if let (Some(sqlite), Some(postgres)) = (
                find("sqlite", operation, clients),
                find("postgres", operation, clients),
            ) {
                let ratio = postgres.rate() / sqlite.rate().max(1e-9);
                let verdict = if ratio >= 0.40 { "met" } else { "NOT met" };
                parts.push(format!("{operation} {ratio:.2} (>= 0.40: {verdict})"));
                if operation == "command.execute" {
                    let p99 = postgres.p99.as_secs_f64() * 1000.0;
                    let verdict = if p99 <= 60.0 { "met" } else { "NOT met" };
                    parts.push(format!(
                        "command.execute p99 on postgres {p99:.1} ms (<= 60: {verdict})"
                    ));
                }
            }
        }
        if !parts.is_empty() {
            lines.push(format!(
                "postgres (2 instances) / sqlite (1), {clients} clients: {}",
                parts.join("; ")
            ));
        }
    }
    lines
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_owned())
}

fn parse_args() -> Result<Options, String> {
    let mut rcip = std::env::var_os("RCIP_BIN").map(PathBuf::from);
    let mut clients = vec![1, 16, 64];
    let mut budget = Budget::Time(Duration::from_secs(5));
    let mut smoke = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg}: a value is missing"));
        match arg.as_str() {
            "--rcip" => rcip = Some(PathBuf::from(value()?)),
            "--seconds" => {
                let seconds: f64 = value()?.parse().map_err(|e| format!("--seconds: {e}"))?;
                budget = Budget::Time(Duration::from_secs_f64(seconds.max(0.1)));
            }
            "--requests" => {
                budget =
                    Budget::Requests(value()?.parse().map_err(|e| format!("--requests: {e}"))?);
            }
            "--clients" => {
                clients = value()?
                    .split(',')
                    .map(|n| n.trim().parse::<usize>().map(|n| n.max(1)))
                    .collect::<Result<_, _>>()
                    .map_err(|e| format!("--clients: {e}"))?;
            }
            "--smoke" => smoke = true,
            other => {
                return Err(format!(
                    "unknown argument {other:?} (--rcip PATH, --seconds S, --requests N, \
                     --clients 1,16,64, --smoke)"
                ));
            }
        }
    }
    let rcip = match rcip {
        Some(rcip) => rcip,
        // target/release/examples/load -> target/release/rcip
        None => std::env::current_exe()
            .ok()
            .and_then(|exe| Some(exe.parent()?.parent()?.join("rcip")))
            .ok_or("no rcip binary: pass --rcip PATH")?,
    };
    if smoke {
        return Ok(Options::smoke(rcip));
    }
    Ok(Options {
        rcip,
        clients,
        budget,
    })
}

fn main() -> ExitCode {
    let options = match parse_args() {
        Ok(options) => options,
        Err(error) => {
            eprintln!("load: {error}");
            return ExitCode::from(2);
        }
    };
    let before = load_average();
    eprintln!("load: {} ({options:?})", options.rcip.display());
    match run(&options) {
        Ok(rows) => {
            println!("{HEADER}");
            for row in &rows {
                println!("{}", format_row(row));
            }
            let ratios = ratios(&rows);
            if !ratios.is_empty() {
                println!();
            }
            for line in ratios {
                println!("{line}");
            }
            println!(
                "\nload average (1, 5, 15 min) before: {before}; after: {}",
                load_average()
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("load: {error}");
            ExitCode::from(1)
        }
    }
}
