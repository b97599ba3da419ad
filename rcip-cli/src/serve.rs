//! `rcip serve`: the platform on REST and MCP with `rcip-server`, over SQLite or
//! PostgreSQL, with the packages of a folder installed at start, until SIGTERM or Ctrl-C.
//!
//! Shutdown: the signal stops the accepting (new connections are refused), the requests in
//! flight are answered (for at most `--shutdown-grace` seconds; then they are abandoned
//! unanswered), then the platform and its store are dropped. A commit that was answered is
//! on disk before its answer was sent; an abandoned request's commit may or may not have
//! happened, and its retry with the same idempotency key says which (it replays the first
//! result).

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use rcip_database::SqliteStore;
use rcip_platform::Platform;
use rcip_records::{Actor, Caller, DelegatedScope, Engine, RecordStore};
use rcip_server::tokens::TokenStore;
use rcip_server::{
    Authenticated, CancellationToken, ConnectionLimits, Credentials, CredentialsConfig, Issuer,
    Limits, RateLimit, Server, StaticTokens, console_router,
};
use serde_json::Value;

use crate::observe;

/// The options of `rcip serve`.
#[derive(Debug, clap::Args)]
pub(crate) struct ServeArgs {
    /// The address to listen on (port 0: any free port; the address is printed).
    #[arg(long, default_value = "127.0.0.1:8080")]
    bind: String,
    /// The database: a SQLite file (`rcip.db` or `sqlite:rcip.db`), or `postgres://...`
    /// (builds with the `postgres` feature).
    #[arg(long, default_value = "sqlite:rcip.db")]
    database: String,
    /// A folder of relationship/v1 packages (`*.json`) installed at start: every workspace
    /// sees them.
    #[arg(long)]
    programs: Option<PathBuf>,
    /// The public base URL the documents name (default: `http://` and the bound address).
    #[arg(long)]
    base_url: Option<String>,
    /// A JWT issuer whose tokens this resource accepts, with its keys:
    /// `ISSUER=JWKS_FILE` (repeatable); the protected-resource metadata lists it as an
    /// authorization server.
    #[arg(long = "issuer", value_name = "ISSUER=JWKS_FILE")]
    issuers: Vec<String>,
    /// A browser origin allowed to use a console session (`https://app.example.com`,
    /// compared exactly with `Origin`; repeatable). None: sessions are refused.
    #[arg(long = "origin")]
    origins: Vec<String>,
    /// The audience a JWT must carry on REST (default: the base URL; on `/mcp`, this
    /// followed by `/mcp`).
    #[arg(long)]
    resource: Option<String>,
    /// DEVELOPMENT ONLY: accept `Authorization: Bearer TOKEN` as a principal:
    /// `TOKEN=human:ID` or `TOKEN=agent:ID[/SCOPE,SCOPE...]` (every scope when none are
    /// given), optionally `@WORKSPACE` to limit it to one workspace (repeatable). The token
    /// is a plain secret on the command line: never use this where others can reach the port.
    #[arg(long = "insecure-dev-token", value_name = "TOKEN=PRINCIPAL")]
    dev_tokens: Vec<String>,
    /// The largest request body, in bytes.
    #[arg(long, default_value_t = rcip_server::DEFAULT_MAX_BODY_BYTES)]
    max_body_bytes: usize,
    /// Seconds a request may take before it is answered 504.
    #[arg(long, default_value_t = rcip_server::DEFAULT_REQUEST_TIMEOUT.as_secs())]
    timeout: u64,
    /// Requests served at once; one more is answered 503.
    #[arg(long, default_value_t = rcip_server::DEFAULT_MAX_CONCURRENT_REQUESTS)]
    max_concurrent: usize,
    /// Requests a second each principal may send on average (0: no rate limit); twice as
    /// many at once.
    #[arg(long, default_value_t = 50)]
    rate_limit: u32,
    /// Requests one principal may have in flight at once; one more is answered 429
    /// `CONCURRENCY_LIMITED`.
    #[arg(long, default_value_t = rcip_server::DEFAULT_MAX_CONCURRENT_PER_PRINCIPAL)]
    max_concurrent_per_principal: usize,
    /// Seconds a request body may take to arrive once its head has (408 `BODY_TIMEOUT`).
    #[arg(long, default_value_t = rcip_server::DEFAULT_BODY_TIMEOUT.as_secs())]
    body_timeout: u64,
    /// Requests a second each client address may send with a missing or refused credential
    /// on average (0: no such limit); five times as many at once. Checked before any
    /// credential is looked at.
    #[arg(long, default_value_t = 10)]
    unauthenticated_rate_limit: u32,
    /// Seconds a new connection has to send its first request head, and any connection to
    /// finish a head once it started; then it is closed.
    #[arg(long, default_value_t = rcip_server::DEFAULT_HEADER_TIMEOUT.as_secs())]
    header_timeout: u64,
    /// Seconds a keep-alive connection may stay silent between requests; then it is closed
    /// (keep it above your load balancer's idle timeout).
    #[arg(long, default_value_t = rcip_server::DEFAULT_IDLE_TIMEOUT.as_secs())]
    idle_timeout: u64,
    /// Connections open at once; more wait in the listen backlog (default: 4096, or less
    /// to stay under the process's open-file limit).
    #[arg(long)]
    max_connections: Option<usize>,
    /// Seconds the requests in flight get to finish after SIGTERM or Ctrl-C.
    #[arg(long, default_value_t = 30)]
    shutdown_grace: u64,
    /// Serve Prometheus metrics at `http://ADDRESS/metrics`, apart from the API (port 0:
    /// any free port; the address is printed before `listening on`).
    #[arg(long, value_name = "ADDRESS")]
    metrics_bind: Option<String>,
    /// Serve Prometheus metrics on the API's own address at this path (e.g. `/metrics`),
    /// without a credential: only where the port is not public.
    #[arg(long, value_name = "PATH")]
    metrics_path: Option<String>,
    /// Send traces over OTLP/HTTP to this collector endpoint (e.g.
    /// `http://127.0.0.1:4318/v1/traces`); needs a build with the `otel` feature.
    #[arg(long, value_name = "URL")]
    otlp_endpoint: Option<String>,
}

/// Why serving could not start or went wrong: printed, exit status 2.
struct Failure(String);

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn failure(what: impl fmt::Display) -> Failure {
    Failure(what.to_string())
}

/// Runs `rcip serve`: exit status 0 after a clean shutdown, 2 when it cannot start.
pub(crate) fn serve(args: ServeArgs) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("rcip serve: cannot start the runtime: {error}");
            return ExitCode::from(2);
        }
    };
    let telemetry =
        match runtime.block_on(async { observe::telemetry(args.otlp_endpoint.as_deref()) }) {
            Ok(telemetry) => telemetry,
            Err(error) => {
                eprintln!("rcip serve: {error}");
                return ExitCode::from(2);
            }
        };
    let served = runtime.block_on(run(args));
    // The runtime first (its tasks hold spans), then the last traces are sent.
    drop(runtime);
    drop(telemetry);
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("rcip serve: {error}");
            ExitCode::from(2)
        }
    }
}

async fn run(args: ServeArgs) -> Result<(), Failure> {
    let tokens = dev_tokens(&args.dev_tokens)?;
    let database = args.database.as_str();
    if database.starts_with("postgres://") || database.starts_with("postgresql://") {
        return postgres(&args, tokens).await;
    }
    let path = database.strip_prefix("sqlite:").unwrap_or(database);
    if path.is_empty() {
        return Err(failure("--database: no SQLite file given"));
    }
    // The engine and the directory each hold a store on the one file (the platform has no
    // shared store value yet: docs/platform-design.md, "Not built yet").
    // SQLite: the engine, the directory and the credentials each on a connection of their
    // own to the one file (WAL: readers do not wait for the writer or for each other).
    let open = || SqliteStore::open(path).map_err(|e| failure(format!("{path}: {e}")));
    let platform = Platform::open(Engine::new(open()?), Arc::new(open()?))
        .await
        .map_err(failure)?;
    let token_store = rcip_database::open_tokens(database)
        .await
        .map_err(|e| failure(format!("the token store: {e}")))?;
    serve_platform(
        &args,
        Arc::new(platform),
        tokens,
        token_store,
        Arc::new(|| {}),
        |server| server,
    )
    .await
}

#[cfg(feature = "postgres")]
async fn postgres(args: &ServeArgs, tokens: StaticTokens) -> Result<(), Failure> {
    use rcip_database::PostgresStore;
    // One store, one pool: records, the directory and the credentials.
    let store = Arc::new(
        PostgresStore::open(&args.database)
            .await
            .map_err(|e| failure(format!("the PostgreSQL database: {e}")))?,
    );
    let token_store = Arc::new(store.tokens());
    // Every instance on the database serves the MCP sessions any of them opened, replays
    // the events any of them sent, and hears of the sessions any of them ended.
    let sessions = Arc::new(store.mcp_sessions());
    let events = Arc::new(store.mcp_events());
    let relay = Arc::new(store.mcp_relay());
    let platform = Arc::new(
        Platform::open(Engine::new(Arc::clone(&store)), store.clone())
            .await
            .map_err(failure)?,
    );
    // The pool's use, read at every scrape.
    let refresh = Arc::new(move || {
        let usage = store.pool_use();
        #[allow(clippy::cast_precision_loss)] // Pool sizes.
        for (state, count) in [
            ("open", usage.open),
            ("idle", usage.idle),
            ("waiting", usage.waiting),
            ("max", usage.max),
        ] {
            metrics::gauge!("rcip_store_pool_connections", "pool" => "database", "state" => state)
                .set(count as f64);
        }
    });
    serve_platform(
        args,
        platform,
        tokens,
        token_store,
        refresh,
        move |server| {
            server
                .mcp_sessions(sessions)
                .mcp_events(events)
                .mcp_relay(relay)
        },
    )
    .await
}

#[cfg(not(feature = "postgres"))]
async fn postgres(_args: &ServeArgs, _tokens: StaticTokens) -> Result<(), Failure> {
    Err(failure(
        "this rcip was built without PostgreSQL (build it with the `postgres` feature)",
    ))
}

async fn serve_platform<S: RecordStore>(
    args: &ServeArgs,
    platform: Arc<Platform<S>>,
    tokens: StaticTokens,
    token_store: Arc<dyn TokenStore>,
    refresh: Arc<dyn Fn() + Send + Sync>,
    // What the database adds to the server (PostgreSQL: the shared MCP sessions).
    shared: impl FnOnce(Server) -> Server,
) -> Result<(), Failure> {
    if let Some(folder) = &args.programs {
        install(&platform, folder).await?;
    }
    let listener = tokio::net::TcpListener::bind(&args.bind)
        .await
        .map_err(|e| failure(format!("cannot listen on {}: {e}", args.bind)))?;
    let address = listener.local_addr().map_err(failure)?;
    let base_url = args
        .base_url
        .clone()
        .unwrap_or_else(|| format!("http://{address}"));
    let credentials = credentials(args, &base_url, token_store)?;
    let limits = Limits {
        max_body_bytes: args.max_body_bytes,
        request_timeout: Duration::from_secs(args.timeout.max(1)),
        max_concurrent_requests: args.max_concurrent.max(1),
        rate_limit: (args.rate_limit > 0)
            .then(|| RateLimit::per_second(args.rate_limit, args.rate_limit.saturating_mul(2))),
        max_concurrent_per_principal: args.max_concurrent_per_principal.max(1),
        body_timeout: Duration::from_secs(args.body_timeout.max(1)),
        unauthenticated_rate_limit: (args.unauthenticated_rate_limit > 0).then(|| {
            RateLimit::per_second(
                args.unauthenticated_rate_limit,
                args.unauthenticated_rate_limit.saturating_mul(5),
            )
        }),
        ..Limits::default()
    };
    let defaults = ConnectionLimits::default();
    let connections = ConnectionLimits {
        header_timeout: Duration::from_secs(args.header_timeout.max(1)),
        idle_timeout: Duration::from_secs(args.idle_timeout.max(1)),
        max_connections: args
            .max_connections
            .unwrap_or(defaults.max_connections)
            .max(1),
    };
    let issuers: Vec<String> = credentials
        .config()
        .issuers
        .iter()
        .map(|issuer| issuer.issuer().to_owned())
        .collect();
    // The development tokens first, then the service's own credentials.
    let authenticate = tokens.otherwise(Arc::new(credentials.clone()));
    // Cancelled at the signal: MCP's open streams end, so they do not hold the drain.
    let streams = CancellationToken::new();
    let metrics = if args.metrics_bind.is_some() || args.metrics_path.is_some() {
        Some(observe::prometheus().map_err(failure)?)
    } else {
        None
    };
    let server = Server::new(Arc::clone(&platform), Arc::new(authenticate), base_url);
    let mut app = shared(server)
        .limits(limits)
        .authorization_servers(issuers)
        .shutdown(streams.clone())
        .record_metrics(metrics.is_some())
        .router()
        .merge(console_router(credentials));
    let (stop, stopped) = tokio::sync::watch::channel(false);
    if let (Some(handle), Some(path)) = (&metrics, &args.metrics_path) {
        if !path.starts_with('/') {
            return Err(failure(format!(
                "--metrics-path {path}: a path starts with /"
            )));
        }
        app = app.merge(observe::metrics_router(
            path,
            handle.clone(),
            Arc::clone(&refresh),
        ));
    }
    if let (Some(handle), Some(bind)) = (metrics, &args.metrics_bind) {
        let listener = tokio::net::TcpListener::bind(bind)
            .await
            .map_err(|e| failure(format!("--metrics-bind: cannot listen on {bind}: {e}")))?;
        let local = listener.local_addr().map_err(failure)?;
        let router = observe::metrics_router("/metrics", handle, refresh);
        let stopped = stopped.clone();
        tokio::spawn(async move {
            let stop = async move {
                let mut stopped = stopped;
                let _ = stopped.wait_for(|stop| *stop).await;
            };
            if let Err(error) =
                rcip_server::serve(listener, router, ConnectionLimits::default(), stop).await
            {
                tracing::warn!(target: "rcip::serve", %error, "the metrics listener failed");
            }
        });
        println!("metrics on http://{local}/metrics");
    }
    // The one line a supervisor (or a test) waits for.
    println!("listening on http://{address}");

    tokio::spawn(async move {
        shutdown_signal().await;
        let _ = stop.send(true);
        streams.cancel();
    });
    let signalled = |mut stopped: tokio::sync::watch::Receiver<bool>| async move {
        let _ = stopped.wait_for(|stop| *stop).await;
    };
    let serving = rcip_server::serve(listener, app, connections, signalled(stopped.clone()));
    let grace = Duration::from_secs(args.shutdown_grace);
    let deadline = async {
        signalled(stopped).await;
        eprintln!("rcip serve: stopping: no new connections; finishing the requests in flight");
        tokio::time::sleep(grace).await;
    };
    tokio::select! {
        served = serving => served.map_err(failure)?,
        () = deadline => eprintln!(
            "rcip serve: the requests still in flight after {} s were abandoned",
            grace.as_secs()
        ),
    }
    // After a clean stop the router and its connections are gone, so this is the last owner
    // and dropping it closes the store; after the grace, the abandoned connections' tasks
    // still hold it until the runtime is dropped on return (a store call running on a
    // blocking thread finishes first).
    drop(platform);
    eprintln!("rcip serve: stopped");
    Ok(())
}

/// Sessions, opaque tokens and JWTs, with tokens, tickets and sessions in the service's own
/// database (`rcip token`, `rcip console ticket` write them there).
fn credentials(
    args: &ServeArgs,
    base_url: &str,
    store: Arc<dyn TokenStore>,
) -> Result<Credentials, Failure> {
    let issuers = args
        .issuers
        .iter()
        .map(|spec| Issuer::from_spec(spec).map_err(|e| failure(format!("--issuer: {e}"))))
        .collect::<Result<Vec<_>, _>>()?;
    let mut config =
        CredentialsConfig::new(args.resource.clone().unwrap_or_else(|| base_url.to_owned()));
    config.allowed_origins.clone_from(&args.origins);
    config.issuers = issuers;
    // A cookie marked Secure is never sent over plain HTTP (a loopback setup).
    config.secure_cookie = base_url.starts_with("https://");
    Ok(Credentials::new(config, store))
}

/// SIGTERM or Ctrl-C (SIGINT).
async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {},
        () = terminate => {},
    }
}

/// Installs every `*.json` package of `folder`, in name order.
async fn install<S: RecordStore>(platform: &Platform<S>, folder: &Path) -> Result<(), Failure> {
    let entries = std::fs::read_dir(folder)
        .map_err(|e| failure(format!("--programs {}: {e}", folder.display())))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file)
            .map_err(|e| failure(format!("{}: cannot read: {e}", file.display())))?;
        let package: Value = serde_json::from_str(&text)
            .map_err(|e| failure(format!("{}: not JSON: {e}", file.display())))?;
        let installed = platform.install(&package).await.map_err(|error| {
            let mut message = format!("{}: {} ({})", file.display(), error.message, error.code);
            for issue in &error.issues {
                message.push_str(&format!("\n  {}: {}", issue.instance_path, issue.message));
            }
            failure(message)
        })?;
        eprintln!(
            "rcip serve: installed {}/{} from {}",
            installed.namespace,
            installed.version,
            file.display()
        );
    }
    Ok(())
}

/// The `--insecure-dev-token` table.
fn dev_tokens(specs: &[String]) -> Result<StaticTokens, Failure> {
    let mut tokens = StaticTokens::new();
    for spec in specs {
        let (token, who) = dev_token(spec).map_err(|why| {
            failure(format!(
                "--insecure-dev-token: {why} (TOKEN=human:ID or TOKEN=agent:ID[/SCOPE,...][@WORKSPACE])"
            ))
        })?;
        tokens = tokens.token(token, who);
    }
    Ok(tokens)
}

fn dev_token(spec: &str) -> Result<(&str, Authenticated), String> {
    let (token, principal) = spec.split_once('=').ok_or("no `=`")?;
    if token.is_empty() {
        return Err("an empty token".to_owned());
    }
    let (principal, workspace) = match principal.rsplit_once('@') {
        Some((principal, workspace)) if !workspace.is_empty() => {
            (principal, Some(workspace.to_owned()))
        }
        Some(_) => return Err("an empty workspace after `@`".to_owned()),
        None => (principal, None),
    };
    let (kind, rest) = principal
        .split_once(':')
        .ok_or("no `kind:` before the id")?;
    let caller = match kind {
        "human" if !rest.is_empty() && !rest.contains('/') => Caller::human(Actor::new(rest)),
        "agent" => {
            let (id, scopes) = match rest.split_once('/') {
                Some((id, scopes)) => {
                    let scopes = scopes
                        .split(',')
                        .map(str::parse::<DelegatedScope>)
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(|e| e.to_string())?;
                    (id, scopes)
                }
                None => (rest, DelegatedScope::ALL.to_vec()),
            };
            if id.is_empty() {
                return Err("an empty principal id".to_owned());
            }
            Caller::agent(Actor::new(id), scopes)
        }
        _ => return Err(format!("{kind:?} is not `human:ID` or `agent:ID`")),
    };
    Ok((token, Authenticated { caller, workspace }))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // Tests: a failure is the report.
mod tests {
    use super::*;

    #[test]
    fn dev_tokens_name_a_principal_its_scopes_and_its_workspace() {
        let (token, who) = dev_token("t1=agent:bot/records:read,commands:execute@acme").unwrap();
        assert_eq!(token, "t1");
        assert_eq!(
            who.caller,
            Caller::agent(
                Actor::new("bot"),
                [DelegatedScope::RecordsRead, DelegatedScope::CommandsExecute]
            )
        );
        assert_eq!(who.workspace.as_deref(), Some("acme"));
        let (_, who) = dev_token("t2=human:ada").unwrap();
        assert_eq!(
            (who.caller, who.workspace),
            (Caller::human(Actor::new("ada")), None)
        );
        let (_, who) = dev_token("t3=agent:bot").unwrap();
        assert_eq!(who.caller.scopes.len(), DelegatedScope::ALL.len());
        for bad in [
            "t",
            "=human:ada",
            "t=robot:x",
            "t=human:",
            "t=agent:bot/records:delete",
            "t=human:ada@",
        ] {
            assert!(dev_token(bad).is_err(), "{bad}");
        }
    }
}
