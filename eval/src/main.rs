//! `heddle-eval`: index, search, and measure heddle.

use clap::Parser;

fn main() -> std::process::ExitCode {
    end_quietly_on_a_closed_pipe();
    let cli = match heddle_eval::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return parse_error(&e),
    };
    // SAFETY: no thread has been started yet (parsing the command line starts none).
    unsafe { heddle_eval::cli::before_threads(&cli) };
    encode_each_request_on_one_thread(&cli);
    match heddle_eval::cli::run(cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            heddle_eval::note!("heddle-eval: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// What clap's `exit` does for `--help`, `--version` and a bad command line, except that
/// help or version text that cannot be written (`--help >/dev/full`) is an error (exit 1)
/// rather than a silent success: clap itself ignores the failed write.
fn parse_error(e: &clap::Error) -> std::process::ExitCode {
    match e.print() {
        Ok(()) => std::process::ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2)),
        Err(io) => {
            let to = if e.use_stderr() { "error" } else { "output" };
            heddle_eval::note!("heddle-eval: error: writing to standard {to}: {io}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The bench's vector and hybrid arms encode a query per request on the worker that runs
/// it: the workers are the parallelism, and the model's kernels on a pool of their own
/// would make requests queue for it inside the measured time. Set before any thread
/// exists, as the encoder's kernels read it once.
#[cfg(feature = "embed")]
fn encode_each_request_on_one_thread(cli: &heddle_eval::cli::Cli) {
    if let heddle_eval::cli::Command::Bench(args) = &cli.command
        && args.arm != "text"
    {
        // SAFETY: no other thread exists yet (clap parsing starts none).
        unsafe { heddle_encoder::set_kernel_threads(std::num::NonZeroUsize::MIN) };
    }
}

#[cfg(not(feature = "embed"))]
fn encode_each_request_on_one_thread(_: &heddle_eval::cli::Cli) {}

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
