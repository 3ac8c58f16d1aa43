//! Command-line arguments, one file per command. Nothing else depends on this module.

mod validate;

use clap::{Parser, Subcommand};

use crate::error::{Error, Exit};

pub use validate::ValidateArgs;

/// plikt: legal deposit of publishers' RSS feeds (KB e-plikt profile 2.4).
#[derive(Debug, Parser)]
#[command(name = "plikt", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// plikt's commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check a feed against KB's delivery profile 2.4 and report every finding.
    Validate(ValidateArgs),
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<Exit, Error> {
    match cli.command {
        Command::Validate(args) => validate::run(&args),
    }
}
