//! Which analysis the engines run: the same tokens (matched), or each its own
//! recommended English analysis (native). What "its own" means depends on the peer: see
//! [`Peer`].

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

use heddle::AnalyzerConfig;

/// How text becomes tokens in each engine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Analysis {
    /// Both engines run heddle's `english` analyzer (tantivy through a registered
    /// tokenizer, Lucene over heddle's pre-analysed tokens): same tokens, same BM25, so
    /// the engines answer the same question.
    #[default]
    Matched,
    /// Each engine with its own English analysis: heddle's `english` against tantivy's
    /// built-in `en_stem`; heddle's `lucene-english` against Lucene's `EnglishAnalyzer`.
    /// The engines answer different questions.
    Native,
}

/// The engine heddle is compared with (`heddle-bench bench` or `heddle-bench lucene`):
/// it names the peer's analysis in every label, and in native mode it decides heddle's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    Tantivy,
    Lucene,
}

impl Analysis {
    pub fn name(self) -> &'static str {
        match self {
            Analysis::Matched => "matched",
            Analysis::Native => "native",
        }
    }

    /// How the mode is labelled in every report of a comparison with `peer`.
    pub fn label(self, peer: Peer) -> &'static str {
        match (self, peer) {
            (Analysis::Matched, Peer::Tantivy) => {
                "matched analysis (both engines: heddle english tokens)"
            }
            (Analysis::Matched, Peer::Lucene) => {
                "matched analysis (both engines: heddle english tokens; Lucene's WhitespaceAnalyzer over them)"
            }
            (Analysis::Native, Peer::Tantivy) => {
                "NATIVE analysis (heddle english vs tantivy en_stem: different tokens, different answers)"
            }
            (Analysis::Native, Peer::Lucene) => {
                "NATIVE analysis (heddle lucene-english vs Lucene EnglishAnalyzer: different tokens, different answers)"
            }
        }
    }

    /// heddle's analyzer in a comparison with `peer`: `english`, except against
    /// Lucene's own analysis, where heddle runs the preset written to match it.
    pub fn heddle_analyzer(self, peer: Peer) -> AnalyzerConfig {
        match (self, peer) {
            (Analysis::Native, Peer::Lucene) => AnalyzerConfig::lucene_english(),
            _ => AnalyzerConfig::english(),
        }
    }

    /// The working directory's folder for this mode's indexes. Matched indexes are
    /// shared by both comparisons (heddle's is the same index); native ones are not,
    /// since heddle's analyzer differs by peer.
    pub fn dir_name(self, peer: Peer) -> &'static str {
        match (self, peer) {
            (Analysis::Matched, _) => "matched",
            (Analysis::Native, Peer::Tantivy) => "native",
            (Analysis::Native, Peer::Lucene) => "native-lucene",
        }
    }
}

impl std::fmt::Display for Analysis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_labels_name_the_peer_and_say_the_answers_differ() {
        for peer in [Peer::Tantivy, Peer::Lucene] {
            let native = Analysis::Native.label(peer);
            assert!(native.starts_with("NATIVE analysis"), "{native}");
            assert!(native.contains("different answers"), "{native}");
            assert!(
                Analysis::Matched
                    .label(peer)
                    .starts_with("matched analysis")
            );
        }
        assert!(
            Analysis::Native
                .label(Peer::Tantivy)
                .contains("tantivy en_stem")
        );
        let lucene = Analysis::Native.label(Peer::Lucene);
        assert!(lucene.contains("Lucene EnglishAnalyzer"), "{lucene}");
        assert!(lucene.contains("heddle lucene-english"), "{lucene}");
        assert!(!lucene.contains("tantivy"), "{lucene}");
        assert!(!Analysis::Matched.label(Peer::Lucene).contains("tantivy"));
    }

    #[test]
    fn heddle_runs_lucene_english_only_against_lucenes_own_analysis() {
        let name = |a: Analysis, p: Peer| a.heddle_analyzer(p).name;
        assert_eq!(name(Analysis::Native, Peer::Lucene), "lucene-english");
        assert_eq!(name(Analysis::Native, Peer::Tantivy), "english");
        assert_eq!(name(Analysis::Matched, Peer::Lucene), "english");
        assert_eq!(name(Analysis::Matched, Peer::Tantivy), "english");
    }

    #[test]
    fn native_indexes_are_kept_apart_by_peer_and_matched_ones_shared() {
        assert_eq!(
            Analysis::Matched.dir_name(Peer::Tantivy),
            Analysis::Matched.dir_name(Peer::Lucene)
        );
        let dirs = [
            Analysis::Matched.dir_name(Peer::Lucene),
            Analysis::Native.dir_name(Peer::Tantivy),
            Analysis::Native.dir_name(Peer::Lucene),
        ];
        for (i, a) in dirs.iter().enumerate() {
            for b in &dirs[i + 1..] {
                assert_ne!(a, b);
            }
        }
        // The tantivy comparison's folders are where earlier runs left them.
        assert_eq!(Analysis::Native.dir_name(Peer::Tantivy), "native");
    }
}
