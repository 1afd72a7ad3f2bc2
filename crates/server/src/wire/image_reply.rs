//! The screenshot reply as the pieces of its JSON text: the envelope up to
//! the image, the image's base64 (kept by the encoder for the parts it
//! caches, SIMD-encoded for the rest) and the other fields. The socket
//! writes the pieces as they are; the base64 is never copied into a JSON
//! value nor scanned for escapes (it never needs any).

use std::borrow::Cow;
use std::fmt::Write as _;

use deskhand_engine::encode::EncodedImage;
use serde_json::Value;

/// `{"type":"SCREENSHOT_RESPONSE","id":…,"ts":…,"payload":{"image_base64":"…",…}}`
/// in pieces.
pub struct ScreenshotText<'a> {
    head: String,
    image: Vec<Cow<'a, str>>,
    tail: String,
}

impl ScreenshotText<'_> {
    /// The pieces, in order.
    pub fn pieces(&self) -> Vec<&str> {
        std::iter::once(self.head.as_str())
            .chain(self.image.iter().map(|p| p.as_ref()))
            .chain(std::iter::once(self.tail.as_str()))
            .collect()
    }
}

/// Builds the reply, where the payload's other fields come from `rest` (an
/// object).
pub fn screenshot_envelope<'a>(
    id: Option<&str>,
    ts: f64,
    image: &'a EncodedImage,
    rest: &Value,
) -> ScreenshotText<'a> {
    let mut head = String::from(r#"{"type":"SCREENSHOT_RESPONSE","#);
    if let Some(id) = id {
        head.push_str(r#""id":"#);
        head.push_str(&Value::from(id).to_string());
        head.push(',');
    }
    let _ = write!(head, r#""ts":{ts},"payload":{{"image_base64":""#);
    let mut tail = String::from('"');
    if let Some(fields) = rest.as_object() {
        for (key, value) in fields.iter().filter(|(k, _)| *k != "image_base64") {
            tail.push(',');
            tail.push_str(&Value::from(key.as_str()).to_string());
            tail.push(':');
            tail.push_str(&value.to_string());
        }
    }
    tail.push_str("}}");
    ScreenshotText {
        head,
        image: image.base64_pieces(),
        tail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn is_valid_json_with_every_field() {
        let image = EncodedImage::from(b"\x89PNG".to_vec());
        let text = screenshot_envelope(
            Some("r\"1"),
            12.5,
            &image,
            &json!({"image_base64": "", "width": 2, "meta": {"origin": [1, 2]}}),
        )
        .pieces()
        .concat();
        let v: Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(v["type"], "SCREENSHOT_RESPONSE");
        assert_eq!(v["id"], "r\"1");
        assert_eq!(v["ts"], 12.5);
        assert_eq!(v["payload"]["image_base64"], "iVBORw==");
        assert_eq!(v["payload"]["width"], 2);
        assert_eq!(v["payload"]["meta"]["origin"], json!([1, 2]));
    }
}
