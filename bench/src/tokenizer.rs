//! A tantivy tokenizer that runs heddle's analyzer, so that in matched mode both engines
//! index and query exactly the same tokens.
//!
//! heddle's [`Analyzer`] emits each token through a callback; tantivy pulls tokens from a
//! stream. The tokenizer analyses the whole text into a reused buffer of [`Token`]s, and
//! the stream walks that buffer. Offsets are those of the whole text: the index keeps
//! no positions or offsets (the flat field is indexed with frequencies only, as heddle's
//! is), so nothing reads them.

use std::sync::Arc;

use heddle::{Analyzer, AnalyzerConfig};
use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

/// The name the tokenizer is registered under in a matched-mode tantivy index.
pub const HEDDLE_TOKENIZER: &str = "heddle";

/// heddle's analysis behind tantivy's [`Tokenizer`] trait.
#[derive(Clone)]
pub struct HeddleTokenizer {
    analyzer: Arc<Analyzer>,
    scratch: String,
    /// Reused between texts: `tokens[..len]` are the current text's tokens.
    tokens: Vec<Token>,
    len: usize,
}

impl HeddleTokenizer {
    pub fn new(config: AnalyzerConfig) -> Self {
        HeddleTokenizer {
            analyzer: Arc::new(Analyzer::new(config)),
            scratch: String::new(),
            tokens: Vec::new(),
            len: 0,
        }
    }

    pub fn config(&self) -> &AnalyzerConfig {
        self.analyzer.config()
    }
}

impl Tokenizer for HeddleTokenizer {
    type TokenStream<'a> = HeddleTokenStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> HeddleTokenStream<'a> {
        let HeddleTokenizer {
            analyzer,
            scratch,
            tokens,
            len,
        } = self;
        *len = 0;
        analyzer.for_each_token(text, scratch, |t| {
            if *len == tokens.len() {
                tokens.push(Token::default());
            }
            let token = &mut tokens[*len];
            token.text.clear();
            token.text.push_str(t);
            token.position = *len;
            token.offset_from = 0;
            token.offset_to = text.len();
            token.position_length = 1;
            *len += 1;
        });
        HeddleTokenStream {
            tokens: &mut tokens[..*len],
            current: None,
        }
    }
}

/// The tokens of one text, in order.
pub struct HeddleTokenStream<'a> {
    tokens: &'a mut [Token],
    current: Option<usize>,
}

impl TokenStream for HeddleTokenStream<'_> {
    fn advance(&mut self) -> bool {
        let next = self.current.map_or(0, |c| c + 1);
        if next < self.tokens.len() {
            self.current = Some(next);
            true
        } else {
            self.current = Some(self.tokens.len());
            false
        }
    }

    fn token(&self) -> &Token {
        &self.tokens[self.current.expect("advance() before token()")]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.current.expect("advance() before token_mut()")]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream_texts(tok: &mut HeddleTokenizer, text: &str) -> Vec<(String, usize)> {
        let mut out = Vec::new();
        let mut stream = tok.token_stream(text);
        while stream.advance() {
            out.push((stream.token().text.clone(), stream.token().position));
        }
        out
    }

    #[test]
    fn emits_exactly_heddles_tokens_in_order() {
        let config = AnalyzerConfig::english();
        let analyzer = Analyzer::new(config.clone());
        let mut tok = HeddleTokenizer::new(config);
        for text in [
            "The Coronavirus's spike proteins were binding to ACE2 receptors.",
            "",
            "the and of",
            "Ünïcode wörds — naïve café, 2019-nCoV; SARS-CoV-2",
        ] {
            let got = stream_texts(&mut tok, text);
            let want = analyzer.tokens(text);
            assert_eq!(
                got.iter().map(|(t, _)| t.clone()).collect::<Vec<_>>(),
                want,
                "{text:?}"
            );
            assert!(got.iter().enumerate().all(|(i, (_, p))| *p == i));
        }
    }

    #[test]
    fn a_shorter_text_after_a_longer_one_yields_only_its_own_tokens() {
        let mut tok = HeddleTokenizer::new(AnalyzerConfig::english());
        assert_eq!(stream_texts(&mut tok, "viral load in patients").len(), 3);
        let short = stream_texts(&mut tok, "vaccines");
        assert_eq!(short, vec![("vaccin".to_string(), 0)]);
    }

    #[test]
    fn advancing_past_the_end_stays_at_the_end() {
        let mut tok = HeddleTokenizer::new(AnalyzerConfig::plain());
        let mut stream = tok.token_stream("one");
        assert!(stream.advance());
        assert!(!stream.advance());
        assert!(!stream.advance());
    }
}
