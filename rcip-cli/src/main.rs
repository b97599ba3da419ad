//! `rcip`: command-line tools for rcip projects.
//!
//! `rcip check FILE...` validates `relationship/v1` program packages and prints every problem
//! as `file: pointer: message`. Exit status: 0 when every package is valid, 1 when one has
//! problems, 2 when a file cannot be read or the command line is wrong.

use std::fs;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use rcip_core::relationship::parse_package;

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
}

/// Some package has problems.
const INVALID: u8 = 1;
/// A file could not be read.
const UNREADABLE: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Check { files, quiet } => check(&files, quiet),
    }
}

fn check(files: &[PathBuf], quiet: bool) -> ExitCode {
    let mut status = 0;
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
            }
            Err(error) => {
                println!("{}", error.in_file(file));
                status = status.max(INVALID);
            }
        }
    }
    ExitCode::from(status)
}
