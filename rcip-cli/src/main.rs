//! `rcip`: command-line tools for rcip projects.
//!
//! `rcip check FILE...` validates `relationship/v1` program packages and prints every problem
//! as `file: pointer: message`; the files are also checked together, as `rcip-build` takes a
//! folder of them (one package per namespace). Exit status: 0 when every package is valid, 1
//! when one has problems, 2 when a file cannot be read or the command line is wrong.
//!
//! `rcip digest FILE` prints the MCPL revision of a manifest (`-` reads standard input);
//! `--canonical` prints its canonical JSON instead. Exit status: 0, 1 with the error code
//! (`identifier_charset`, `manifest_not_object`), 2 for unreadable input or invalid JSON.

use std::fs;
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
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
    }
}

fn digest(file: &str, canonical: bool) -> ExitCode {
    let text = if file == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).map(|_| text)
    } else {
        fs::read_to_string(file)
    };
    let text = match text {
        Ok(text) => text,
        Err(error) => {
            eprintln!("{file}: cannot read: {error}");
            return ExitCode::from(UNREADABLE);
        }
    };
    // The received JSON itself is hashed (never a typed round trip of it).
    let manifest: serde_json::Value = match serde_json::from_str(&text) {
        Ok(manifest) => manifest,
        Err(error) => {
            eprintln!("{file}: not JSON: {error}");
            return ExitCode::from(UNREADABLE);
        }
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
