//! The `plikt` binary: parse, run, map the result to an exit status (README: "Exit codes").

use std::process::ExitCode;

use clap::Parser;
use plikt::cli::{self, Cli};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli::run(cli) {
        Ok(exit) => ExitCode::from(exit as u8),
        Err(e) => {
            eprintln!("plikt: error: {e}");
            ExitCode::from(e.exit() as u8)
        }
    }
}
