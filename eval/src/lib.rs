//! heddle-eval: the commands a user types (index, add, search) and the instrument that
//! measures heddle (bench).

/// `println!` that fails the command with an error, instead of panicking, when standard
/// output cannot be written (`>/dev/full`, a full disk). A closed pipe still ends the
/// process by SIGPIPE first (see `main`).
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
            .map_err(|e| anyhow::anyhow!("writing to standard output: {e}"))?
    }};
}

/// `print!` as [`outln!`] fails: an error instead of a panic when standard output
/// cannot be written. The text is flushed at once, so that a full output is seen here
/// and not at a later, unrelated write.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut stdout = std::io::stdout().lock();
        write!(stdout, $($arg)*)
            .and_then(|()| stdout.flush())
            .map_err(|e| anyhow::anyhow!("writing to standard output: {e}"))?
    }};
}

/// `eprintln!` for notes and progress that must never stop the work: a standard error
/// that cannot be written (`2>/dev/full`) loses the note, not the index being built.
#[macro_export]
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

pub mod ab;
pub mod allocator;
pub mod bench;
pub mod cli;
pub mod cost;
#[cfg(feature = "embed")]
pub mod embed;
pub mod encoding;
pub mod env;
pub mod formats;
pub mod html;
pub mod output;
pub mod progress;
pub mod quality;
pub mod serve;
pub mod vectors;
