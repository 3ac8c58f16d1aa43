//! The `plikt` binary: parse, run, map the result to an exit status (README: "Exit codes").

use std::process::ExitCode;

use clap::Parser;
use plikt::cli::{self, Cli};

fn main() -> ExitCode {
    // Everything plikt creates is private to its user (at most 0750 and 0640): the
    // catalog holds restricted metadata and subscribers' secrets.
    #[cfg(target_os = "linux")]
    let _previous = rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o027));
    let cli = Cli::parse();
    match cli::run(cli) {
        Ok(exit) => ExitCode::from(exit as u8),
        Err(e) => {
            eprintln!("plikt: error: {e}");
            ExitCode::from(e.exit() as u8)
        }
    }
}
