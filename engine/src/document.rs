//! The unit of indexing: an external id, a title and a text.

/// A document as a user supplies it. `id` is the external id (`_id` in BEIR), unique in
/// an index. Title and text are indexed together as the flat field and kept separately
/// addressable in the segment format.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Document {
    pub id: String,
    pub title: String,
    pub text: String,
}

impl Document {
    pub fn new(id: impl Into<String>, title: impl Into<String>, text: impl Into<String>) -> Self {
        Document {
            id: id.into(),
            title: title.into(),
            text: text.into(),
        }
    }
}
