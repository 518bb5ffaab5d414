//! The unit of indexing: an external id, a title, a text, and a dense vector in an index
//! that stores them.

/// A document as a user supplies it. `id` is the external id (`_id` in BEIR), unique in
/// an index. Title and text are indexed together as the flat field and kept separately
/// addressable in the segment format. `vector` is required in an index created with a
/// vector dimension ([`crate::IndexSettings::vector_dim`]), of that many finite values,
/// and refused in any other.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Document {
    pub id: String,
    pub title: String,
    pub text: String,
    pub vector: Option<Vec<f32>>,
}

impl Document {
    pub fn new(id: impl Into<String>, title: impl Into<String>, text: impl Into<String>) -> Self {
        Document {
            id: id.into(),
            title: title.into(),
            text: text.into(),
            vector: None,
        }
    }

    /// The document with `vector` as its dense vector.
    pub fn with_vector(mut self, vector: Vec<f32>) -> Self {
        self.vector = Some(vector);
        self
    }

    /// Heap bytes the document holds: its strings' and its vector's capacities (what a
    /// writer's memory budget counts for it while it is buffered).
    pub fn heap_bytes(&self) -> usize {
        self.id.capacity()
            + self.title.capacity()
            + self.text.capacity()
            + self
                .vector
                .as_ref()
                .map_or(0, |v| v.capacity() * std::mem::size_of::<f32>())
    }
}
