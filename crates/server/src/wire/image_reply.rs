//! The screenshot reply, written straight into its JSON text: the base64
//! image is encoded once (SIMD), part by part, into the output buffer
//! instead of being copied into a JSON value and scanned for escapes (it
//! never needs any).

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
    base64_parts(image.parts(), &mut out);
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

/// Appends the base64 of the parts' concatenation: whole 3-byte groups
/// straight from each part, the 1–2 bytes left at a part's end carried
/// into the next.
fn base64_parts<'a>(parts: impl Iterator<Item = &'a [u8]>, out: &mut String) {
    let b64 = base64_simd::STANDARD;
    let mut carry = [0u8; 3];
    let mut carried = 0;
    for mut part in parts {
        if carried > 0 {
            let take = (3 - carried).min(part.len());
            carry[carried..carried + take].copy_from_slice(&part[..take]);
            carried += take;
            part = &part[take..];
            if carried < 3 {
                continue;
            }
            b64.encode_append(carry, out);
        }
        let whole = part.len() / 3 * 3;
        b64.encode_append(&part[..whole], out);
        let rest = &part[whole..];
        carry[..rest.len()].copy_from_slice(rest);
        carried = rest.len();
    }
    b64.encode_append(&carry[..carried], out);
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

    #[test]
    fn parts_encode_like_their_concatenation() {
        let data: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        for cuts in [
            vec![],
            vec![1],
            vec![2, 3],
            vec![1, 2, 3, 4, 5, 6],
            vec![0, 0, 7],
            vec![500, 501, 999],
        ] {
            let mut parts = Vec::new();
            let mut at = 0;
            for c in cuts.iter().chain([&1000]) {
                parts.push(&data[at..*c]);
                at = *c;
            }
            let mut out = String::new();
            base64_parts(parts.into_iter(), &mut out);
            assert_eq!(
                out,
                base64_simd::STANDARD.encode_to_string(&data),
                "cuts {cuts:?}"
            );
        }
        let mut out = String::new();
        base64_parts([b"a".as_slice()].into_iter(), &mut out);
        assert_eq!(out, "YQ==");
    }
}
