//! Encoded image bytes kept in parts: a PNG's compressed stripes are not
//! copied into one buffer; whoever sends the image reads the parts in order, or their
//! base64, which the encoder keeps for the parts it caches.

use std::borrow::Cow;
use std::sync::Arc;

/// A part shared with the encoder's cache.
pub trait SharedPart: Send + Sync {
    /// The part's bytes.
    fn bytes(&self) -> &[u8];

    /// The base64 of [`bytes`](Self::bytes), where kept: only for a part
    /// whose length is a multiple of three (no padding), so that text for
    /// parts that follow one another joins up.
    fn base64(&self) -> Option<&str> {
        None
    }
}

impl SharedPart for Vec<u8> {
    fn bytes(&self) -> &[u8] {
        self
    }
}

/// Bytes shared with the encoder's cache.
pub type SharedBytes = Arc<dyn SharedPart>;

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
            Self::Shared(s) => s.bytes(),
        }
    }

    fn base64(&self) -> Option<&str> {
        match self {
            Self::Owned(_) => None,
            Self::Shared(s) => s.base64(),
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
        self.len += bytes.bytes().len();
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

    /// The base64 of all bytes, in pieces that concatenate to it: the kept
    /// text of a part that starts on a three-byte boundary, borrowed, and
    /// SIMD-encoded text for the rest (whole three-byte groups straight from
    /// each part, the one or two bytes left at a part's end carried into
    /// the next). A sender can write the pieces as they are.
    pub fn base64_pieces(&self) -> Vec<Cow<'_, str>> {
        let b64 = base64_simd::STANDARD;
        let mut pieces = Vec::with_capacity(self.parts.len() + 1);
        let mut fresh = String::new();
        let mut carry = [0u8; 3];
        let mut carried = 0;
        for part in &self.parts {
            if carried == 0
                && let Some(text) = part.base64()
            {
                if !fresh.is_empty() {
                    pieces.push(Cow::Owned(std::mem::take(&mut fresh)));
                }
                pieces.push(Cow::Borrowed(text));
                continue;
            }
            let mut bytes = part.bytes();
            if carried > 0 {
                let take = (3 - carried).min(bytes.len());
                carry[carried..carried + take].copy_from_slice(&bytes[..take]);
                carried += take;
                bytes = &bytes[take..];
                if carried < 3 {
                    continue;
                }
                b64.encode_append(carry, &mut fresh);
            }
            let whole = bytes.len() / 3 * 3;
            b64.encode_append(&bytes[..whole], &mut fresh);
            let rest = &bytes[whole..];
            carry[..rest.len()].copy_from_slice(rest);
            carried = rest.len();
        }
        b64.encode_append(&carry[..carried], &mut fresh);
        if !fresh.is_empty() {
            pieces.push(Cow::Owned(fresh));
        }
        pieces
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

    /// A shared part with base64 text of its own.
    struct Encoded(Vec<u8>, String);

    impl SharedPart for Encoded {
        fn bytes(&self) -> &[u8] {
            &self.0
        }
        fn base64(&self) -> Option<&str> {
            Some(&self.1)
        }
    }

    fn base64(bytes: &[u8]) -> String {
        base64_simd::STANDARD.encode_to_string(bytes)
    }

    #[test]
    fn base64_of_parts_is_that_of_their_concatenation() {
        let data: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        for cuts in [
            vec![],
            vec![1],
            vec![2, 3],
            vec![1, 2, 3, 4, 5, 6],
            vec![0, 0, 7],
            vec![500, 501, 999],
        ] {
            let mut image = EncodedImage::default();
            let mut at = 0;
            for c in cuts.iter().chain([&1000]) {
                image.push(data[at..*c].to_vec());
                at = *c;
            }
            let out = image.base64_pieces().concat();
            assert_eq!(out, base64(&data), "cuts {cuts:?}");
        }
        let out = EncodedImage::from(b"a".to_vec()).base64_pieces().concat();
        assert_eq!(out, "YQ==");
    }

    #[test]
    fn kept_base64_is_used_where_a_part_starts_on_a_group_boundary() {
        let mut image = EncodedImage::from(b"abc".to_vec());
        // Kept text that differs from the real encoding shows where it
        // was used.
        image.push_shared(Arc::new(Encoded(b"def".to_vec(), "KEPT".into())));
        image.push(b"g".to_vec());
        image.push_shared(Arc::new(Encoded(b"hij".to_vec(), "NOTUSED!".into())));
        let out = image.base64_pieces().concat();
        let mut expected = base64(b"abc");
        expected.push_str("KEPT");
        expected.push_str(&base64(b"ghij"));
        assert_eq!(out, expected);
        // The kept text is lent, not copied.
        let pieces = image.base64_pieces();
        assert_eq!(pieces.len(), 3);
        assert!(matches!(pieces[1], Cow::Borrowed("KEPT")));
        assert_eq!(pieces.concat(), expected);
    }

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
