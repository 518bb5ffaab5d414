//! Which analysis the two engines run: the same tokens (matched), or each its own
//! recommended English analysis (native).

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

use heddle::AnalyzerConfig;

/// How text becomes tokens in each engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Analysis {
    /// Both engines run heddle's `english` analyzer (tantivy through a registered
    /// tokenizer): same tokens, same BM25, so the engines answer the same question.
    Matched,
    /// Each engine with its own recommended English analysis: heddle's `english`,
    /// tantivy's built-in `en_stem`. The engines answer different questions.
    Native,
}

impl Analysis {
    pub fn name(self) -> &'static str {
        match self {
            Analysis::Matched => "matched",
            Analysis::Native => "native",
        }
    }

    /// How the mode is labelled in every report.
    pub fn label(self) -> &'static str {
        match self {
            Analysis::Matched => "matched analysis (both engines: heddle english tokens)",
            Analysis::Native => {
                "NATIVE analysis (heddle english vs tantivy en_stem: different tokens, different answers)"
            }
        }
    }

    /// heddle's analyzer in either mode.
    pub fn heddle_analyzer(self) -> AnalyzerConfig {
        AnalyzerConfig::english()
    }
}

impl std::fmt::Display for Analysis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
