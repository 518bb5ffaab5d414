//! The names of the files heddle writes in an index directory, decided in one place:
//! a manifest may name only these (a name like `../x/seg-000001` would reach outside the
//! index), and garbage collection removes only these (a user's `seg-notes` is not ours).
//!
//! Every name is canonical: `seg-000042` is a segment name, `seg-42` and `seg-0000042`
//! are not, so a name maps to exactly one id and back.

use super::SegmentComponent;
use crate::field::Field;
use crate::index::MANIFEST_FILE;

/// A file name heddle writes, taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HeddleFile<'a> {
    /// One component file of a segment: `seg-NNNNNN.<extension>`.
    Component {
        segment: &'a str,
        component: SegmentComponent,
    },
    /// A delete file: `seg-NNNNNN.del-GGGGGG`.
    Deletes { segment: &'a str, generation: u64 },
    /// The manifest being replaced: `MANIFEST.tmp`.
    ManifestTmp,
}

/// The segment name for `id`: `seg-` and at least six digits.
pub(crate) fn segment_name(id: u64) -> String {
    format!("seg-{id:06}")
}

/// The id of a segment name exactly as [`segment_name`] writes it; `None` for anything
/// else.
pub(crate) fn segment_id(name: &str) -> Option<u64> {
    canonical_number(name.strip_prefix("seg-")?)
}

/// The delete file of `segment` written by manifest generation `generation`.
pub(crate) fn delete_file_name(segment: &str, generation: u64) -> String {
    format!("{segment}.del-{generation:06}")
}

/// What `name` is, if heddle writes files of that name; `None` for anything else
/// (including `MANIFEST` and `LOCK`, which are never garbage).
pub(crate) fn classify(name: &str) -> Option<HeddleFile<'_>> {
    if name == format!("{MANIFEST_FILE}.tmp") {
        return Some(HeddleFile::ManifestTmp);
    }
    let (segment, rest) = name.split_once('.')?;
    segment_id(segment)?;
    if let Some(generation) = rest.strip_prefix("del-") {
        let generation = canonical_number(generation)?;
        return Some(HeddleFile::Deletes {
            segment,
            generation,
        });
    }
    SegmentComponent::all(&Field::ALL, true, true)
        .into_iter()
        .find(|c| c.extension() == rest)
        .map(|component| HeddleFile::Component { segment, component })
}

/// `digits` as a number if it is written as `{:06}` writes one: only ASCII digits, at
/// least six, no leading zero beyond that padding, and no overflow.
fn canonical_number(digits: &str) -> Option<u64> {
    if digits.len() < 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    (format!("{n:06}") == digits).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_heddle_writes_are_recognised() {
        assert_eq!(segment_id("seg-000001"), Some(1));
        assert_eq!(segment_id(&segment_name(1_234_567)), Some(1_234_567));
        for bad in [
            "seg-1",
            "seg-0000001",
            "seg-00000a",
            "seg-",
            "seg-dir",
            "seg-notes",
            "../v/seg-000001",
            "/tmp/seg-000001",
            "seg-+00001",
            "seg-99999999999999999999",
            "SEG-000001",
        ] {
            assert_eq!(segment_id(bad), None, "{bad}");
        }

        assert_eq!(
            classify("seg-000003.title.post"),
            Some(HeddleFile::Component {
                segment: "seg-000003",
                component: SegmentComponent::Postings(Field::Title)
            })
        );
        assert_eq!(
            classify(&delete_file_name("seg-000003", 12)),
            Some(HeddleFile::Deletes {
                segment: "seg-000003",
                generation: 12
            })
        );
        assert_eq!(
            classify("seg-000003.vec"),
            Some(HeddleFile::Component {
                segment: "seg-000003",
                component: SegmentComponent::Vectors
            })
        );
        assert_eq!(
            classify("seg-000003.hnsw"),
            Some(HeddleFile::Component {
                segment: "seg-000003",
                component: SegmentComponent::VectorGraph
            })
        );
        assert_eq!(classify("MANIFEST.tmp"), Some(HeddleFile::ManifestTmp));
        for not_ours in [
            "MANIFEST",
            "LOCK",
            "seg-notes",
            "seg-dir",
            "seg-000003",
            "seg-000003.txt",
            "seg-000003.lens.bak",
            "seg-000003.del-1",
            "seg-000003.del-",
            "seg-3.lens",
            "notes.lens",
        ] {
            assert_eq!(classify(not_ours), None, "{not_ours}");
        }
    }
}
