//! `heddle-eval`: index, search, and measure heddle.

use clap::Parser;

fn main() -> std::process::ExitCode {
    end_quietly_on_a_closed_pipe();
    let cli = heddle_eval::cli::Cli::parse();
    // SAFETY: no thread has been started yet (parsing the command line starts none).
    unsafe { heddle_eval::cli::before_threads(&cli) };
    match heddle_eval::cli::run(cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("heddle-eval: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Rust ignores SIGPIPE, so a write to a closed pipe (`heddle-eval search … | head -1`)
/// fails with EPIPE and `println!` panics on it, in every command. With the default
/// disposition the process ends at that write as any Unix filter does (status 141 in a
/// shell), whichever of the many `println!`s it was. That is safe for the writing
/// commands too: a commit is atomic, so this ends them as any kill would, and each prints
/// only after its commit.
fn end_quietly_on_a_closed_pipe() {
    // SAFETY: `signal` with SIG_DFL installs no handler; it runs first in `main`, before
    // any other thread exists that could race on the disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
