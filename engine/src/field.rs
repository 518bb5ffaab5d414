//! The searchable fields of a document.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Which part of a document a query is scored against. `Flat` (title and text as one
/// field, as BEIR baselines index them) always exists; `Title` and `Text` exist in
/// indexes built with per-field postings ([`crate::IndexSettings::per_field`]).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Field {
    #[default]
    Flat,
    Title,
    Text,
}

impl Field {
    pub const ALL: [Field; 3] = [Field::Flat, Field::Title, Field::Text];

    pub fn name(self) -> &'static str {
        match self {
            Field::Flat => "flat",
            Field::Title => "title",
            Field::Text => "text",
        }
    }

    pub fn parse(name: &str) -> Result<Field> {
        Field::ALL
            .into_iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| {
                Error::InvalidArgument(format!("unknown field {name:?}; known: flat, title, text"))
            })
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// One count per field (tokens, terms), as the manifest records them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FieldCounts {
    pub flat: u64,
    pub title: u64,
    pub text: u64,
}

impl FieldCounts {
    pub fn get(&self, field: Field) -> u64 {
        match field {
            Field::Flat => self.flat,
            Field::Title => self.title,
            Field::Text => self.text,
        }
    }

    pub(crate) fn set(&mut self, field: Field, value: u64) {
        match field {
            Field::Flat => self.flat = value,
            Field::Title => self.title = value,
            Field::Text => self.text = value,
        }
    }
}
