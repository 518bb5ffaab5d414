//! What this binary is: version, git commit (and whether the tree was dirty), build
//! profile and compiler, as recorded by the crate's build script.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Build {
    /// The heddle-eval package version.
    pub version: String,
    pub git_commit: Option<String>,
    /// Uncommitted changes (or untracked, unignored files) when it was built.
    pub git_dirty: Option<bool>,
    /// `release` or `debug`, and the optimisation level.
    pub profile: Option<String>,
    pub opt_level: Option<String>,
    pub rustc: Option<String>,
    pub target: Option<String>,
}

impl Build {
    /// This binary.
    pub fn this() -> Self {
        Build {
            version: env!("CARGO_PKG_VERSION").to_string(),
            git_commit: option_env!("HEDDLE_GIT_COMMIT").map(str::to_string),
            git_dirty: option_env!("HEDDLE_GIT_DIRTY").map(|d| d == "true"),
            profile: option_env!("HEDDLE_BUILD_PROFILE").map(str::to_string),
            opt_level: option_env!("HEDDLE_BUILD_OPT_LEVEL").map(str::to_string),
            rustc: option_env!("HEDDLE_RUSTC_VERSION").map(str::to_string),
            target: option_env!("HEDDLE_BUILD_TARGET").map(str::to_string),
        }
    }

    /// `0.1.0 73157cc4a1b2+dirty`: the version and the short commit.
    pub fn short(&self) -> String {
        let commit = match (&self.git_commit, self.git_dirty) {
            (Some(c), Some(true)) => format!("{}+dirty", &c[..c.len().min(12)]),
            (Some(c), _) => c[..c.len().min(12)].to_string(),
            (None, _) => "commit unknown".to_string(),
        };
        format!("{} {commit}", self.version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_build_knows_its_profile_and_compiler() {
        let b = Build::this();
        assert!(b.profile.is_some() && b.rustc.as_deref().is_some_and(|r| r.starts_with("rustc")));
        // Built from a git checkout (the tests always are), the commit is 40 hex digits.
        if let Some(c) = &b.git_commit {
            assert!(
                c.len() == 40 && c.chars().all(|x| x.is_ascii_hexdigit()),
                "{c}"
            );
            assert!(b.git_dirty.is_some());
        }
    }

    #[test]
    fn the_short_form_marks_a_dirty_tree() {
        let mut b = Build::this();
        b.git_commit = Some("0123456789abcdef0123456789abcdef01234567".to_string());
        b.git_dirty = Some(true);
        assert!(b.short().ends_with(" 0123456789ab+dirty"));
        b.git_commit = None;
        assert!(b.short().ends_with("commit unknown"));
    }
}
