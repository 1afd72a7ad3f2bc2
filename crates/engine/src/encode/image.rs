//! Encoded image bytes kept in parts: a PNG's compressed stripes are not
//! copied into one buffer (2.5 MB of fresh memory for a photo-like 1080p
//! screen); whoever sends the image reads the parts in order.

use std::sync::Arc;

/// Bytes shared with the encoder's cache.
pub type SharedBytes = Arc<dyn AsRef<[u8]> + Send + Sync>;

/// One part of an image.
#[derive(Clone)]
enum Part {
    Owned(Vec<u8>),
    Shared(SharedBytes),
}

impl Part {
    fn bytes(&self) -> &[u8] {
        match self {
            Self::Owned(v) => v,
            Self::Shared(s) => (**s).as_ref(),
        }
    }
}

/// PNG or JPEG bytes: the concatenation of [`parts`](Self::parts).
#[derive(Clone, Default)]
pub struct EncodedImage {
    parts: Vec<Part>,
    len: usize,
}

impl std::fmt::Debug for EncodedImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EncodedImage")
            .field("parts", &self.parts.len())
            .field("len", &self.len)
            .finish()
    }
}

impl From<Vec<u8>> for EncodedImage {
    fn from(bytes: Vec<u8>) -> Self {
        let mut image = Self::default();
        image.push(bytes);
        image
    }
}

impl EncodedImage {
    /// Appends bytes owned by the image.
    pub(crate) fn push(&mut self, bytes: Vec<u8>) {
        self.len += bytes.len();
        self.parts.push(Part::Owned(bytes));
    }

    /// Appends bytes shared with someone else (the stripe cache).
    pub(crate) fn push_shared(&mut self, bytes: SharedBytes) {
        self.len += (*bytes).as_ref().len();
        self.parts.push(Part::Shared(bytes));
    }

    /// Total length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no bytes at all.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The parts, in order.
    pub fn parts(&self) -> impl Iterator<Item = &[u8]> {
        self.parts.iter().map(Part::bytes)
    }

    /// All bytes in one buffer.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len);
        for p in self.parts() {
            out.extend_from_slice(p);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_concatenate_in_order() {
        let mut image = EncodedImage::from(b"ab".to_vec());
        image.push_shared(Arc::new(b"cde".to_vec()));
        image.push(Vec::new());
        image.push(b"f".to_vec());
        assert_eq!(image.len(), 6);
        assert!(!image.is_empty());
        assert_eq!(image.to_vec(), b"abcdef");
        assert_eq!(image.parts().count(), 4);
        assert!(EncodedImage::default().is_empty());
    }
}
