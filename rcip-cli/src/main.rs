//! `rcip`: command-line tools for rcip projects.
//!
//! `rcip check FILE...` validates `relationship/v1` program packages and prints every problem
//! as `file: pointer: message`; the files are also checked together, as `rcip-build` takes a
//! folder of them (several versions of a namespace may be given; one
//! `namespace/version` with two contents is `VERSION_CONFLICT`). Exit status: 0 when every package is valid, 1
//! when one has problems, 2 when a file cannot be read or the command line is wrong.
//!
//! `rcip digest FILE` prints the MCPL revision of a manifest (`-` reads standard input);
//! `--canonical` prints its canonical JSON instead. Exit status: 0, 1 with the error code
//! (`identifier_charset`, `manifest_not_object`), 2 for unreadable input or invalid JSON.
//!
//! `rcip export --profile NAME CATALOG` prints a catalog (as `cargo run --example polls --
//! export` prints it; `-` reads standard input) as the tool list one consumer accepts:
//! `mcp-2025-11-25`, `mcp-2026-07-28`, `openai`, `anthropic`, `gemini` or
//! `gemini-json-schema` (see `rcip_export`). Exit status: 0, 1 with the error and its code
//! (`UNSUPPORTED_SCHEMA`, `NAME_COLLISION`, ...) when the catalog cannot be exported, 2 for
//! unreadable input, invalid JSON or an unknown profile.
//!
//! `rcip diff OLD NEW` compares two versions of a contract from its consumer's side and
//! prints each change with its severity (`breaking`, `warning`, `info`), rule id, capability
//! and JSON pointer, one line each as a build check reports it (`<severity> <rule>
//! [<capability>] [<pointer>]: <message>`; `--format json` for the report as JSON): two
//! catalog exports (with
//! `--profile NAME`, also as that provider's tools), two versions of a relationship package,
//! or two MCPL manifests (`--kind` when the files do not tell). The rules are in
//! `docs/diff-rules.md`. Exit status: 0 when no change reaches `--fail-on` (`breaking` by
//! default, `warning`, `never`), 1 when one does, 2 for unreadable or invalid input.
//!
//! `rcip serve --bind ADDR --database URL --programs DIR` (feature `serve`, default) serves
//! the Relationship Protocol platform on REST and MCP (`rcip-server`) over a SQLite file
//! (`sqlite:PATH` or a path) or PostgreSQL (`postgres://...`, with the `postgres` feature),
//! the packages of DIR installed at start, until SIGTERM or Ctrl-C (the requests in flight
//! are answered first). It prints `listening on http://ADDR` once it accepts. Exit status: 0
//! after a clean stop, 2 when it cannot start. Its credentials: `--origin` for console
//! sessions, `--issuer ISSUER=JWKS_FILE` for JWTs, and the opaque tokens of
//! `rcip token create --database URL --workspace W --principal P --scope S...` (the secret
//! printed once; `rcip token revoke ID`, `rcip token list`); a human signs in through the
//! one-time link `rcip console ticket --database URL --principal ada` prints.

use std::fs;
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

#[cfg(feature = "serve")]
mod credentials;
#[cfg(feature = "serve")]
mod observe;
#[cfg(feature = "serve")]
mod serve;

use clap::{Parser, Subcommand};
use rcip_diff::Contract;
use rcip_export::{Profile, export_catalog};
use rcip_mcpl::{digest_of_canonical, manifest_canonical_json};
use rcip_relationship::{duplicate_namespaces, parse_package};

/// Command-line tools for rcip projects.
#[derive(Debug, Parser)]
#[command(name = "rcip", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Validate relationship/v1 program packages and print every problem.
    Check {
        /// Package files (JSON).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print nothing for valid packages.
        #[arg(short, long)]
        quiet: bool,
    },
    /// Print the MCPL revision (content digest) of a manifest.
    Digest {
        /// The manifest (JSON); `-` reads standard input.
        file: String,
        /// Print the canonical JSON that is hashed instead of the revision.
        #[arg(long)]
        canonical: bool,
    },
    /// Print a catalog's tools in the form one consumer accepts (a JSON array: the value of
    /// its `tools` member).
    Export {
        /// mcp-2025-11-25, mcp-2026-07-28, openai, anthropic, gemini or gemini-json-schema.
        #[arg(long)]
        profile: Profile,
        /// The catalog JSON (as `cargo run --example polls -- export` prints it); `-` reads
        /// standard input.
        catalog: String,
    },
    /// What changed between two versions of a contract (catalog export, relationship
    /// package or MCPL manifest), judged from the consumer's side: breaking, warning or info,
    /// each with its rule, capability and JSON pointer. Exit 0 when no change reaches
    /// `--fail-on`, 1 when one does, 2 when a file cannot be read or is not such a contract.
    Diff {
        /// The old version (`-` reads standard input).
        old: String,
        /// The new version.
        new: String,
        /// `text` (a line per change, then the counts) or `json`.
        #[arg(long, value_enum, default_value = "text")]
        format: DiffFormat,
        /// The severity that fails: `breaking`, `warning` or `never`.
        #[arg(long, value_enum, default_value = "breaking")]
        fail_on: FailOn,
        /// What the files are: `auto` tells by their marks (`protocol`, `capabilities`,
        /// `version`).
        #[arg(long, value_enum, default_value = "auto")]
        kind: DiffKind,
        /// Also compare the catalogs as this provider export sees them (tool names):
        /// mcp-2025-11-25, mcp-2026-07-28, openai, anthropic, gemini or gemini-json-schema.
        #[arg(long)]
        profile: Option<Profile>,
    },
    /// Serve the Relationship Protocol platform on REST and MCP until SIGTERM or Ctrl-C.
    #[cfg(feature = "serve")]
    Serve(Box<serve::ServeArgs>),
    /// Make, revoke and list the opaque API tokens `rcip serve` accepts.
    #[cfg(feature = "serve")]
    #[command(subcommand)]
    Token(credentials::TokenCommand),
    /// The operator's console path: one-time sign-in links for humans.
    #[cfg(feature = "serve")]
    #[command(subcommand)]
    Console(credentials::ConsoleCommand),
}

/// Some package has problems.
const INVALID: u8 = 1;
/// A file could not be read.
const UNREADABLE: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Check { files, quiet } => check(&files, quiet),
        Command::Digest { file, canonical } => digest(&file, canonical),
        Command::Export { profile, catalog } => export(profile, &catalog),
        Command::Diff {
            old,
            new,
            format,
            fail_on,
            kind,
            profile,
        } => diff(&old, &new, format, fail_on, kind, profile),
        #[cfg(feature = "serve")]
        Command::Serve(args) => serve::serve(*args),
        #[cfg(feature = "serve")]
        Command::Token(command) => credentials::token(command),
        #[cfg(feature = "serve")]
        Command::Console(command) => credentials::console(command),
    }
}

/// Reads `file` (`-`: standard input) as JSON, or says why not on standard error.
fn read_json(file: &str) -> Result<serde_json::Value, ExitCode> {
    let text = if file == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).map(|_| text)
    } else {
        fs::read_to_string(file)
    };
    let text = text.map_err(|error| {
        eprintln!("{file}: cannot read: {error}");
        ExitCode::from(UNREADABLE)
    })?;
    serde_json::from_str(&text).map_err(|error| {
        eprintln!("{file}: not JSON: {error}");
        ExitCode::from(UNREADABLE)
    })
}

/// How `rcip diff` prints its report.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum DiffFormat {
    Text,
    Json,
}

/// From which severity on `rcip diff` exits 1.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum FailOn {
    Breaking,
    Warning,
    Never,
}

/// What `rcip diff` compares.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum DiffKind {
    Auto,
    Catalog,
    Package,
    Manifest,
}

fn diff(
    old: &str,
    new: &str,
    format: DiffFormat,
    fail_on: FailOn,
    kind: DiffKind,
    profile: Option<Profile>,
) -> ExitCode {
    if old == "-" && new == "-" {
        eprintln!("-: only one of the two versions can come from standard input");
        return ExitCode::from(UNREADABLE);
    }
    let (old_document, new_document) = match (read_json(old), read_json(new)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(code), _) | (_, Err(code)) => return code,
    };
    let contract = match kind {
        DiffKind::Catalog => Contract::Catalog,
        DiffKind::Package => Contract::Package,
        DiffKind::Manifest => Contract::Manifest,
        DiffKind::Auto => {
            let detect = |file: &str, document| {
                Contract::detect(document).ok_or_else(|| {
                    eprintln!(
                        "{file}: not a catalog export, relationship package or MCPL manifest (pass --kind)"
                    );
                    ExitCode::from(UNREADABLE)
                })
            };
            match (detect(old, &old_document), detect(new, &new_document)) {
                (Ok(a), Ok(b)) if a == b => a,
                (Ok(a), Ok(b)) => {
                    eprintln!("{old} is a {}, {new} a {}", a.as_str(), b.as_str());
                    return ExitCode::from(UNREADABLE);
                }
                (Err(code), _) | (_, Err(code)) => return code,
            }
        }
    };
    let report = match (contract, profile) {
        (Contract::Catalog, Some(profile)) => {
            rcip_diff::diff_exports(profile, &old_document, &new_document)
        }
        (_, Some(_)) => {
            eprintln!(
                "--profile compares catalog exports, not a {}",
                contract.as_str()
            );
            return ExitCode::from(UNREADABLE);
        }
        (contract, None) => contract.diff(&old_document, &new_document),
    };
    let report = match report {
        Ok(report) => report,
        Err(rcip_diff::DiffError::Invalid {
            which,
            kind,
            reason,
        }) => {
            // A package's validator problems come one a line: each names the file.
            let file = if which == "old" { old } else { new };
            eprintln!("{file}: not a valid {which} {kind}:");
            for line in reason.lines() {
                eprintln!("{file}: {line}");
            }
            return ExitCode::from(UNREADABLE);
        }
    };
    match format {
        DiffFormat::Json => println!("{}", report.to_json()),
        DiffFormat::Text => {
            for change in &report.changes {
                println!("{change}");
            }
            println!(
                "{} breaking, {} warning, {} info",
                report.count(rcip_diff::Severity::Breaking),
                report.count(rcip_diff::Severity::Warning),
                report.count(rcip_diff::Severity::Info)
            );
        }
    }
    let failing = match fail_on {
        FailOn::Breaking => Some(rcip_diff::Severity::Breaking),
        FailOn::Warning => Some(rcip_diff::Severity::Warning),
        FailOn::Never => None,
    };
    if failing.is_some_and(|level| report.reaches(level)) {
        ExitCode::from(INVALID)
    } else {
        ExitCode::SUCCESS
    }
}

fn export(profile: Profile, file: &str) -> ExitCode {
    let catalog = match read_json(file) {
        Ok(catalog) => catalog,
        Err(code) => return code,
    };
    match export_catalog(profile, &catalog) {
        Ok(export) => {
            let json = serde_json::to_string_pretty(&export.to_json());
            println!("{}", json.unwrap_or_default());
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{file}: {} ({})", error, error.code());
            ExitCode::from(INVALID)
        }
    }
}

fn digest(file: &str, canonical: bool) -> ExitCode {
    // The received JSON itself is hashed (never a typed round trip of it).
    let manifest = match read_json(file) {
        Ok(manifest) => manifest,
        Err(code) => return code,
    };
    match manifest_canonical_json(&manifest) {
        Ok(json) if canonical => println!("{json}"),
        Ok(json) => println!("{}", digest_of_canonical(&json)),
        Err(error) => {
            eprintln!("{file}: {error}");
            println!("{}", error.code());
            return ExitCode::from(INVALID);
        }
    }
    ExitCode::SUCCESS
}

fn check(files: &[PathBuf], quiet: bool) -> ExitCode {
    let mut status = 0;
    let mut valid = Vec::new();
    for file in files {
        let text = match fs::read_to_string(file) {
            Ok(text) => text,
            Err(error) => {
                eprintln!("{}: cannot read: {error}", file.display());
                status = UNREADABLE;
                continue;
            }
        };
        match parse_package(&text) {
            Ok(package) => {
                if !quiet {
                    let commands: usize = package.types.iter().map(|t| t.commands.len()).sum();
                    println!(
                        "{}: ok ({} v{}: {} types, {} commands, {} views)",
                        file.display(),
                        package.namespace,
                        package.version,
                        package.types.len(),
                        commands,
                        package.views.len()
                    );
                }
                valid.push((file.clone(), package));
            }
            Err(error) => {
                println!("{}", error.in_file(file));
                status = status.max(INVALID);
            }
        }
    }
    // The files together, as `rcip-build` takes a folder of them.
    for error in duplicate_namespaces(&valid) {
        println!("{error}");
        status = status.max(INVALID);
    }
    ExitCode::from(status)
}
