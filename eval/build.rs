//! Records what this build is, for the environment every report carries (src/env):
//! the git commit and whether the tree was dirty, the build profile and the compiler.
//! Anything that cannot be found is left out and reported as unknown, never guessed.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let root = manifest.parent().unwrap_or(&manifest).to_path_buf();

    if let Some(commit) = git(&root, &["rev-parse", "HEAD"]) {
        println!("cargo:rustc-env=HEDDLE_GIT_COMMIT={commit}");
        // Tracked changes and untracked files that are not ignored: either can change
        // what was built.
        if let Some(status) = git(&root, &["status", "--porcelain"]) {
            let dirty = !status.is_empty();
            println!("cargo:rustc-env=HEDDLE_GIT_DIRTY={dirty}");
        }
        // Rerun when HEAD moves, the index changes, or any source of the workspace does
        // (cargo scans a directory recursively), so that "dirty" is never stale.
        for dir in ["--git-dir", "--git-common-dir"] {
            if let Some(d) = git(&root, &["rev-parse", "--path-format=absolute", dir]) {
                for f in ["HEAD", "index", "refs", "packed-refs"] {
                    watch(&Path::new(&d).join(f));
                }
            }
        }
        for p in ["engine", "eval", "corpus-tools", "Cargo.toml", "Cargo.lock"] {
            watch(&root.join(p));
        }
    }
    if let Ok(profile) = std::env::var("PROFILE") {
        println!("cargo:rustc-env=HEDDLE_BUILD_PROFILE={profile}");
    }
    if let Ok(opt) = std::env::var("OPT_LEVEL") {
        println!("cargo:rustc-env=HEDDLE_BUILD_OPT_LEVEL={opt}");
    }
    if let Ok(target) = std::env::var("TARGET") {
        println!("cargo:rustc-env=HEDDLE_BUILD_TARGET={target}");
    }
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    if let Some(v) = output(Command::new(rustc).arg("--version")) {
        println!("cargo:rustc-env=HEDDLE_RUSTC_VERSION={v}");
    }
    println!("cargo:rerun-if-env-changed=RUSTC");
    println!("cargo:rerun-if-changed=build.rs");
}

fn watch(path: &Path) {
    if path.exists() {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}

fn git(root: &Path, args: &[&str]) -> Option<String> {
    output(Command::new("git").arg("-C").arg(root).args(args))
}

fn output(cmd: &mut Command) -> Option<String> {
    let out = cmd.output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}
