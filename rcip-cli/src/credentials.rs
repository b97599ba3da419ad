//! `rcip token` and `rcip console`: the operator's side of the service's credentials, on the
//! database `rcip serve` uses (its token store's tables).
//!
//! An opaque token is printed once, when it is made, and stored as its SHA-256 only; a
//! console ticket is a one-time sign-in link for a human, valid for minutes.

use std::process::ExitCode;
use std::time::Duration;

use rcip_records::DelegatedScope;
use rcip_server::tokens::{self, NewToken, TokenInfo, TokenStore};

/// `rcip token ...`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum TokenCommand {
    /// Make an opaque API token for an agent in one workspace; prints its secret once.
    Create {
        /// The service's database (as `rcip serve --database`).
        #[arg(long)]
        database: String,
        /// The one workspace the token reaches.
        #[arg(long)]
        workspace: String,
        /// The agent principal it authenticates.
        #[arg(long)]
        principal: String,
        /// A scope it delegates (`records:read`, `commands:execute`, ...; repeatable).
        #[arg(long = "scope", required = true)]
        scopes: Vec<DelegatedScope>,
        /// An operator's note, shown by `rcip token list`.
        #[arg(long)]
        label: Option<String>,
    },
    /// Revoke a token by its id (`tok_...`): every instance refuses it from then on.
    Revoke {
        /// The service's database.
        #[arg(long)]
        database: String,
        /// The token's id, as `create` and `list` print it.
        id: String,
    },
    /// List the tokens (ids, principals, workspaces, scopes; never secrets).
    List {
        /// The service's database.
        #[arg(long)]
        database: String,
    },
}

/// `rcip console ...`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum ConsoleCommand {
    /// Print a one-time sign-in link for a human: opening it starts a console session.
    Ticket {
        /// The service's database.
        #[arg(long)]
        database: String,
        /// The human principal who signs in.
        #[arg(long)]
        principal: String,
        /// The service's public base URL, put in front of the link's path.
        #[arg(long, default_value = "http://127.0.0.1:8080")]
        base_url: String,
        /// Seconds the link stays valid.
        #[arg(long, default_value_t = 300)]
        lifetime: u64,
    },
}

/// Runs `rcip token ...`: 0, 1 when the token to revoke is not active, 2 when the database
/// cannot be used.
pub(crate) fn token(command: TokenCommand) -> ExitCode {
    run(async move {
        match command {
            TokenCommand::Create {
                database,
                workspace,
                principal,
                scopes,
                label,
            } => {
                let store = open(&database).await?;
                let new = NewToken {
                    principal,
                    workspace,
                    scopes,
                    label,
                };
                let created = tokens::create_token(store.as_ref(), new)
                    .await
                    .map_err(|e| e.to_string())?;
                eprintln!(
                    "made {} for {} in workspace {} ({}); the secret is shown this once:",
                    created.info.id,
                    created.info.principal,
                    created.info.workspace,
                    scopes_text(&created.info),
                );
                println!("{}", created.secret);
                Ok(ExitCode::SUCCESS)
            }
            TokenCommand::Revoke { database, id } => {
                let store = open(&database).await?;
                if tokens::revoke_token(store.as_ref(), &id)
                    .await
                    .map_err(|e| e.to_string())?
                {
                    eprintln!("revoked {id}");
                    Ok(ExitCode::SUCCESS)
                } else {
                    eprintln!("no active token {id}");
                    Ok(ExitCode::from(1))
                }
            }
            TokenCommand::List { database } => {
                let store = open(&database).await?;
                for info in tokens::list_tokens(store.as_ref())
                    .await
                    .map_err(|e| e.to_string())?
                {
                    let state = if info.revoked_at.is_some() {
                        "revoked"
                    } else {
                        "active"
                    };
                    println!(
                        "{}\t{state}\t{}\t{}\t{}\t{}",
                        info.id,
                        info.principal,
                        info.workspace,
                        scopes_text(&info),
                        info.label.as_deref().unwrap_or(""),
                    );
                }
                Ok(ExitCode::SUCCESS)
            }
        }
    })
}

/// Runs `rcip console ticket`: prints the sign-in link.
pub(crate) fn console(command: ConsoleCommand) -> ExitCode {
    run(async move {
        let ConsoleCommand::Ticket {
            database,
            principal,
            base_url,
            lifetime,
        } = command;
        let store = open(&database).await?;
        let ticket =
            tokens::issue_ticket(store.as_ref(), &principal, Duration::from_secs(lifetime))
                .await
                .map_err(|e| e.to_string())?;
        println!(
            "{}{}",
            base_url.trim_end_matches('/'),
            tokens::sign_in_path(&ticket)
        );
        Ok(ExitCode::SUCCESS)
    })
}

fn scopes_text(info: &TokenInfo) -> String {
    let names: Vec<&str> = info.scopes.iter().map(|scope| scope.as_str()).collect();
    names.join(" ")
}

async fn open(database: &str) -> Result<std::sync::Arc<dyn TokenStore>, String> {
    rcip_database::open_tokens(database)
        .await
        .map_err(|e| format!("{database}: {e}"))
}

/// Runs `work` on a runtime of its own; an error is printed with exit status 2.
fn run(work: impl Future<Output = Result<ExitCode, String>>) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("rcip: cannot start the runtime: {error}");
            return ExitCode::from(2);
        }
    };
    runtime.block_on(work).unwrap_or_else(|error| {
        eprintln!("rcip: {error}");
        ExitCode::from(2)
    })
}
