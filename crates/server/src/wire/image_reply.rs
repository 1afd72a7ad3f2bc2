//! The screenshot reply, written straight into its JSON text: the image's
//! base64 (kept by the encoder for the parts it caches, SIMD-encoded for
//! the rest) goes part by part into the output buffer instead of being
//! copied into a JSON value and scanned for escapes (it never needs any).

use std::fmt::Write as _;

use deskhand_engine::encode::EncodedImage;
use serde_json::Value;

/// Builds `{"type":"SCREENSHOT_RESPONSE","id":…,"ts":…,"payload":{"image_base64":"…",…}}`
/// where the payload's other fields come from `rest` (an object).
pub fn screenshot_envelope(
    id: Option<&str>,
    ts: f64,
    image: &EncodedImage,
    rest: &Value,
) -> String {
    let mut out = String::with_capacity(image.len().div_ceil(3) * 4 + 512);
    out.push_str(r#"{"type":"SCREENSHOT_RESPONSE","#);
    if let Some(id) = id {
        out.push_str(r#""id":"#);
        out.push_str(&Value::from(id).to_string());
        out.push(',');
    }
    let _ = write!(out, r#""ts":{ts},"payload":{{"image_base64":""#);
    image.append_base64(&mut out);
    out.push('"');
    if let Some(fields) = rest.as_object() {
        for (key, value) in fields.iter().filter(|(k, _)| *k != "image_base64") {
            out.push(',');
            out.push_str(&Value::from(key.as_str()).to_string());
            out.push(':');
            out.push_str(&value.to_string());
        }
    }
    out.push_str("}}");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn is_valid_json_with_every_field() {
        let text = screenshot_envelope(
            Some("r\"1"),
            12.5,
            &EncodedImage::from(b"\x89PNG".to_vec()),
            &json!({"image_base64": "", "width": 2, "meta": {"origin": [1, 2]}}),
        );
        let v: Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(v["type"], "SCREENSHOT_RESPONSE");
        assert_eq!(v["id"], "r\"1");
        assert_eq!(v["ts"], 12.5);
        assert_eq!(v["payload"]["image_base64"], "iVBORw==");
        assert_eq!(v["payload"]["width"], 2);
        assert_eq!(v["payload"]["meta"]["origin"], json!([1, 2]));
    }
}
