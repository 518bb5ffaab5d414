//! File names are the engine's own: a manifest (whose footer is a checksum, not an
//! authentication) cannot make heddle open or delete a file outside the index, and
//! cleaning up after a crash never touches a file heddle did not write (issue 13, item 5).

mod common;

use common::{file_names, rewrite_manifest, two_segments};

use heddle::{Error, Index, SearchOptions, check_index};

#[test]
fn a_manifest_naming_a_path_outside_the_index_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let victim = root.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    let outside_dir = root.path().join("outside");
    let elsewhere = outside_dir
        .join("seg-000001")
        .to_string_lossy()
        .into_owned();
    for (k, name) in ["../victim/seg-000001".to_string(), elsewhere]
        .into_iter()
        .enumerate()
    {
        let dir = root.path().join(format!("index{k}"));
        std::fs::create_dir(&dir).unwrap();
        drop(two_segments(&dir));
        // The outside files are a copy of seg-000001, so the lie is otherwise consistent.
        let target = if k == 0 { &victim } else { &outside_dir };
        std::fs::create_dir_all(target).unwrap();
        for file in file_names(&dir) {
            if let Some(ext) = file.strip_prefix("seg-000001.") {
                std::fs::copy(dir.join(&file), target.join(format!("seg-000001.{ext}"))).unwrap();
            }
        }
        let outside_before = file_names(target);
        rewrite_manifest(&dir, |m| m["segments"][0]["name"] = name.clone().into());

        let expected = format!("segments[0].name {name:?}: not a segment name");
        let err = Index::open(&dir)
            .err()
            .expect("the manifest must be refused");
        assert!(
            matches!(&err, Error::Manifest { path, .. } if *path == dir.join("MANIFEST")),
            "{err}"
        );
        assert!(err.to_string().contains(&expected), "{err}");
        let report = check_index(&dir);
        assert!(!report.is_ok(), "check passed a manifest naming {name}");
        assert!(
            report.problems[0].to_string().contains(&expected),
            "{:?}",
            report.problems
        );

        // Whatever a writer and a merge do with it, the outside files stay.
        if let Ok(index) = Index::open(&dir)
            && let Ok(mut w) = index.writer()
        {
            let _ = w.merge(1);
            let _ = w.collect_garbage();
        }
        assert_eq!(file_names(target), outside_before, "{name}");
    }
}

#[test]
fn a_delete_file_of_another_segment_or_outside_the_index_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let index = two_segments(dir.path());
    let mut w = index.writer().unwrap();
    w.delete("d6");
    w.commit().unwrap();
    drop(w);
    drop(index);
    let file = file_names(dir.path())
        .into_iter()
        .find(|n| n.contains(".del-"))
        .unwrap();
    assert!(file.starts_with("seg-000002."), "{file}");
    for lie in [
        file.replace("seg-000002", "seg-000001"),
        format!("../{file}"),
    ] {
        rewrite_manifest(dir.path(), |m| {
            m["segments"][1]["deletes"]["file"] = lie.clone().into()
        });
        let err = Index::open(dir.path()).err().expect("refused");
        assert!(
            err.to_string().contains("segments[1].deletes.file"),
            "{lie}: {err}"
        );
        assert!(!check_index(dir.path()).is_ok(), "{lie}");
        rewrite_manifest(dir.path(), |m| {
            m["segments"][1]["deletes"]["file"] = file.clone().into()
        });
    }
    assert!(check_index(dir.path()).is_ok());
}

#[test]
fn gc_never_removes_a_user_file_named_like_a_segment() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("index");
    std::fs::create_dir(&dir).unwrap();
    let index = two_segments(&dir);
    let outside = root.path().join("precious.txt");
    std::fs::write(&outside, "mine").unwrap();
    let user_files = [
        "seg-notes",
        "seg-000001.txt",
        "seg-000001.lens.bak",
        "seg-1.lens",
    ];
    for name in user_files {
        std::fs::write(dir.join(name), "user data").unwrap();
    }
    std::os::unix::fs::symlink(&outside, dir.join("seg-000099.lens")).unwrap();
    // What a crash leaves: heddle's own names, which must still go.
    std::fs::write(dir.join("seg-000099.flat.post"), "leftover").unwrap();
    std::fs::write(dir.join("seg-000099.del-000007"), "leftover").unwrap();
    std::fs::write(dir.join("MANIFEST.tmp"), "leftover").unwrap();

    let mut w = index.writer().unwrap();
    w.set_background_merges(false);
    w.merge(1).unwrap().unwrap();
    w.collect_garbage().unwrap();
    drop(w);

    let left = file_names(&dir);
    for name in user_files.iter().chain(&["seg-000099.lens"]) {
        assert!(
            left.contains(&name.to_string()),
            "{name} was removed: {left:?}"
        );
    }
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "mine");
    for name in [
        "seg-000099.flat.post",
        "seg-000099.del-000007",
        "MANIFEST.tmp",
    ] {
        assert!(!left.contains(&name.to_string()), "{name} kept: {left:?}");
    }
    // The symlink under a heddle name is left alone, and reported as what it is: an
    // entry a writer must not write through (issue 33); nothing else is a problem.
    let report = check_index(&dir);
    assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
    assert!(matches!(
        &report.problems[0],
        heddle::Error::NotRegular { path, found: "a symlink" } if *path == dir.join("seg-000099.lens")
    ));
}

#[test]
fn a_directory_named_like_a_segment_does_not_stop_the_writer() {
    let dir = tempfile::tempdir().unwrap();
    let index = two_segments(dir.path());
    for name in ["seg-dir", "seg-000050.lens"] {
        std::fs::create_dir(dir.path().join(name)).unwrap();
        std::fs::write(dir.path().join(name).join("inside"), "user data").unwrap();
    }
    let mut w = index
        .writer()
        .expect("a stray directory must not stop the writer");
    w.set_background_merges(false);
    w.add(heddle::Document::new("new", "", "bats again"))
        .unwrap();
    w.commit().unwrap();
    w.merge(1).unwrap().unwrap();
    w.collect_garbage().unwrap();
    drop(w);
    for name in ["seg-dir", "seg-000050.lens"] {
        assert!(dir.path().join(name).join("inside").exists(), "{name}");
    }
    let hits = index
        .searcher()
        .search("bats", &SearchOptions::default())
        .unwrap();
    assert!(hits.iter().any(|h| h.id == "new"));
    // A directory under a heddle name is reported (a writer would one day need the
    // name); one under any other name is none of heddle's business.
    let report = check_index(dir.path());
    assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
    assert!(matches!(
        &report.problems[0],
        heddle::Error::NotRegular { path, found: "a directory" } if *path == dir.path().join("seg-000050.lens")
    ));
}
