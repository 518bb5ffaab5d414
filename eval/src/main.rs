//! `heddle-eval`: index, search, and measure heddle.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = heddle_eval::cli::Cli::parse();
    match heddle_eval::cli::run(cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("heddle-eval: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
