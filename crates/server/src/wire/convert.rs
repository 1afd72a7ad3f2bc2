//! Wire payloads → engine requests. Every check that can fail happens here,
//! before the engine is asked to do anything, and names the field at fault.

use std::time::Duration;

use deskhand_engine::action::MAX_WAIT;
use deskhand_engine::keys::{parse_chord, parse_modifier};
use deskhand_engine::{
    Action, Button, EngineError, Features, Point, Rect, ScreenshotSpec, ScreenshotTarget,
    ScrollDirection,
};
use deskhand_protocol::Feature;
use deskhand_protocol::messages::{ImageFormat, InputActionPayload, ScreenshotRequest};

/// Longest text one `type` action may carry.
pub const MAX_TYPE_CHARS: usize = 65_536;
/// Most wheel steps one `scroll` may turn.
pub const MAX_SCROLL_STEPS: i64 = 100;
/// Most modifiers held during one click, scroll or drag.
pub const MAX_MODIFIERS: usize = 4;
/// Most keys of one chord.
pub const MAX_CHORD_KEYS: usize = 8;
/// Most points of a drag path.
pub const MAX_PATH_POINTS: usize = 1_000;

type R<T> = Result<T, EngineError>;

fn require(features: &Features, feature: Feature) -> R<()> {
    if features.has(feature) {
        Ok(())
    } else {
        Err(EngineError::NotSupported {
            feature: feature.name(),
        })
    }
}

fn int32(field: &'static str, v: i64) -> R<i32> {
    i32::try_from(v).map_err(|_| EngineError::invalid(field, format!("{v} is out of range")))
}

fn point(field: &'static str, v: &[i64]) -> R<Point> {
    match v {
        [x, y] => Ok(Point::new(int32(field, *x)?, int32(field, *y)?)),
        _ => Err(EngineError::invalid(field, "expected [x, y]")),
    }
}

fn button(name: Option<&str>, default: Button) -> R<Button> {
    match name {
        None => Ok(default),
        Some("left") => Ok(Button::Left),
        Some("middle") => Ok(Button::Middle),
        Some("right") => Ok(Button::Right),
        Some(other) => Err(EngineError::invalid(
            "button",
            format!("unknown button {other:?}; use left, middle or right"),
        )),
    }
}

fn duration(field: &'static str, ms: Option<i64>) -> R<Duration> {
    let ms = ms.ok_or_else(|| EngineError::required(field))?;
    if ms < 0 {
        return Err(EngineError::invalid(field, "must not be negative"));
    }
    // Capped server-side, as the spec says.
    Ok(Duration::from_millis(ms as u64).min(MAX_WAIT))
}

/// Converts SCREENSHOT_REQUEST.
pub fn screenshot(p: &ScreenshotRequest, features: &Features) -> R<ScreenshotSpec> {
    let target = match (&p.window_id, &p.region, p.monitor) {
        (Some(_), Some(_), _) => {
            return Err(EngineError::invalid(
                "window_id",
                "window_id and region are mutually exclusive",
            ));
        }
        (Some(handle), None, _) => {
            require(features, Feature::ScreenshotWindow)?;
            ScreenshotTarget::Window(handle.clone())
        }
        (None, region, monitor) => region_or_monitor(region.as_deref(), monitor, features)?,
    };
    let quality = match p.quality {
        None => 75,
        Some(q @ 1..=100) => q as u8,
        Some(q) => {
            return Err(EngineError::invalid(
                "quality",
                format!("{q} is not in 1..=100"),
            ));
        }
    };
    let include_cursor = p.include_cursor.unwrap_or(false);
    if include_cursor {
        require(features, Feature::ScreenshotCursor)?;
    }
    Ok(ScreenshotSpec {
        target,
        format: p.format.unwrap_or(ImageFormat::Png),
        quality,
        include_cursor,
        paint: Default::default(),
    })
}

/// The target of a screenshot without a window: a region or a display.
fn region_or_monitor(
    region: Option<&[i64]>,
    monitor: Option<i64>,
    features: &Features,
) -> R<ScreenshotTarget> {
    Ok(match (region, monitor) {
        (Some(region), _) => {
            require(features, Feature::ScreenshotRegion)?;
            let [x1, y1, x2, y2] = *region else {
                return Err(EngineError::invalid("region", "expected [x1, y1, x2, y2]"));
            };
            if x2 <= x1 || y2 <= y1 {
                return Err(EngineError::invalid(
                    "region",
                    "x2 and y2 must exceed x1 and y1",
                ));
            }
            let (x, y) = (int32("region", x1)?, int32("region", y1)?);
            let span = |a: i64, b: i64| {
                b.checked_sub(a)
                    .ok_or_else(|| EngineError::invalid("region", "out of range"))
                    .and_then(|d| int32("region", d))
            };
            let (w, h) = (span(x1, x2)?, span(y1, y2)?);
            ScreenshotTarget::Region(Rect::new(x, y, w as u32, h as u32))
        }
        (None, Some(m)) => ScreenshotTarget::Monitor(Some(
            u32::try_from(m).map_err(|_| EngineError::invalid("monitor", "must be ≥ 0"))?,
        )),
        (None, None) => ScreenshotTarget::Monitor(None),
    })
}

/// Converts INPUT_ACTION into the engine's action and its audit op name.
pub fn input(p: &InputActionPayload, features: &Features) -> R<Action> {
    let verb = p
        .action
        .as_deref()
        .ok_or_else(|| EngineError::required("action"))?;
    let at = p
        .coordinate
        .as_deref()
        .map(|c| point("coordinate", c))
        .transpose()?;
    let modifiers = p
        .modifiers
        .iter()
        .flatten()
        .map(|m| {
            parse_modifier(m)
                .ok_or_else(|| EngineError::invalid("modifiers", format!("unknown modifier {m:?}")))
        })
        .collect::<R<Vec<_>>>()?;
    if modifiers.len() > MAX_MODIFIERS {
        return Err(EngineError::invalid(
            "modifiers",
            format!("at most {MAX_MODIFIERS}"),
        ));
    }
    let mut modifiers = modifiers;
    modifiers.dedup();
    if !modifiers.is_empty() {
        require(features, Feature::InputClickModifiers)?;
    }
    if p.button.is_some() {
        require(features, Feature::InputClickButton)?;
    }
    let click = |default: Button, count: u8| -> R<Action> {
        Ok(Action::Click {
            at,
            button: button(p.button.as_deref(), default)?,
            count,
            modifiers: modifiers.clone(),
        })
    };
    match verb {
        "mouse_move" => {
            let to = at.ok_or_else(|| EngineError::required("coordinate"))?;
            match p.duration_ms {
                Some(ms) if ms != 0 => Ok(Action::Glide {
                    to,
                    duration: duration("duration_ms", Some(ms))?,
                }),
                _ => Ok(Action::MoveTo(to)),
            }
        }
        "left_click" => click(Button::Left, 1),
        "right_click" => click(Button::Right, 1),
        "middle_click" => click(Button::Middle, 1),
        "double_click" => click(Button::Left, 2),
        "triple_click" => click(Button::Left, 3),
        "mouse_down" | "mouse_up" => {
            require(features, Feature::InputMouseDownUp)?;
            let button = button(p.button.as_deref(), Button::Left)?;
            Ok(if verb == "mouse_down" {
                Action::ButtonDown { at, button }
            } else {
                Action::ButtonUp { at, button }
            })
        }
        "drag" => {
            require(features, Feature::InputDragPath)?;
            let raw = p
                .path
                .as_deref()
                .ok_or_else(|| EngineError::required("path"))?;
            if raw.len() < 2 || raw.len() > MAX_PATH_POINTS {
                return Err(EngineError::invalid(
                    "path",
                    format!("needs 2..={MAX_PATH_POINTS} points"),
                ));
            }
            let path = raw
                .iter()
                .map(|c| point("path", c))
                .collect::<R<Vec<_>>>()?;
            Ok(Action::Drag {
                path,
                button: button(p.button.as_deref(), Button::Left)?,
                modifiers,
            })
        }
        "scroll" => scroll(p, at, modifiers, features),
        "key" => Ok(Action::Key { keys: chord(p)? }),
        "hold_key" => {
            require(features, Feature::InputKeyHold)?;
            Ok(Action::HoldKey {
                keys: chord(p)?,
                duration: duration("duration_ms", p.duration_ms)?,
            })
        }
        "type" => {
            let text = p
                .text
                .clone()
                .ok_or_else(|| EngineError::required("text"))?;
            if text.chars().count() > MAX_TYPE_CHARS {
                return Err(EngineError::invalid(
                    "text",
                    format!("longer than {MAX_TYPE_CHARS} characters"),
                ));
            }
            if p.paste == Some(true) {
                Ok(Action::Paste {
                    text,
                    preserve_clipboard: p.preserve_clipboard == Some(true),
                })
            } else {
                Ok(Action::Type { text })
            }
        }
        "wait" => {
            require(features, Feature::InputWait)?;
            Ok(Action::Wait {
                duration: duration("duration_ms", p.duration_ms)?,
            })
        }
        other => Err(EngineError::invalid(
            "action",
            format!("unknown action {other:?}"),
        )),
    }
}

/// The chord of `key` (or, as some clients send it, `text`).
fn chord(p: &InputActionPayload) -> R<Vec<deskhand_engine::Key>> {
    let chord = p
        .key
        .as_deref()
        .or(p.text.as_deref())
        .ok_or_else(|| EngineError::required("key"))?;
    let keys = parse_chord(chord).map_err(|m| EngineError::invalid("key", m))?;
    if keys.len() > MAX_CHORD_KEYS {
        return Err(EngineError::invalid(
            "key",
            format!("at most {MAX_CHORD_KEYS} keys"),
        ));
    }
    Ok(keys)
}

fn scroll(
    p: &InputActionPayload,
    at: Option<Point>,
    modifiers: Vec<deskhand_engine::Key>,
    features: &Features,
) -> R<Action> {
    let name = p
        .scroll_direction
        .as_deref()
        .or(p.direction.as_deref())
        .ok_or_else(|| EngineError::required("scroll_direction"))?;
    let direction = match name {
        "up" => ScrollDirection::Up,
        "down" => ScrollDirection::Down,
        "left" => ScrollDirection::Left,
        "right" => ScrollDirection::Right,
        other => {
            return Err(EngineError::invalid(
                "scroll_direction",
                format!("unknown direction {other:?}"),
            ));
        }
    };
    if p.scroll_amount.is_some() {
        require(features, Feature::InputScrollAmount)?;
    }
    let amount = p.scroll_amount.or(p.clicks).unwrap_or(3);
    if !(0..=MAX_SCROLL_STEPS).contains(&amount) {
        return Err(EngineError::invalid(
            "scroll_amount",
            format!("must be in 0..={MAX_SCROLL_STEPS}"),
        ));
    }
    Ok(Action::Scroll {
        at,
        direction,
        amount: amount as u32,
        modifiers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use deskhand_backend_mock::MockDesktop;

    fn features() -> Features {
        let engine = deskhand_engine::Engine::new(
            MockDesktop::new().backend(),
            deskhand_engine::Consent::sandbox(),
            deskhand_engine::AuditLog::disabled(),
        );
        engine.features()
    }

    fn payload(json: &str) -> InputActionPayload {
        serde_json::from_str(json).expect("payload")
    }

    #[test]
    fn clicks_take_implied_and_explicit_buttons() {
        let f = features();
        let a = input(
            &payload(r#"{"action":"right_click","coordinate":[5,6]}"#),
            &f,
        )
        .expect("ok");
        assert!(matches!(
            a,
            Action::Click {
                button: Button::Right,
                count: 1,
                ..
            }
        ));
        let a = input(
            &payload(r#"{"action":"left_click","button":"middle","modifiers":["shift"]}"#),
            &f,
        )
        .expect("ok");
        assert!(
            matches!(a, Action::Click { button: Button::Middle, ref modifiers, .. } if modifiers.len() == 1)
        );
        let a = input(
            &payload(r#"{"action":"triple_click","coordinate":[1,1]}"#),
            &f,
        )
        .expect("ok");
        assert!(matches!(a, Action::Click { count: 3, .. }));
    }

    #[test]
    fn bad_fields_are_named() {
        let f = features();
        let cases = [
            (r#"{}"#, "action"),
            (r#"{"action":"fly"}"#, "action"),
            (r#"{"action":"mouse_move"}"#, "coordinate"),
            (r#"{"action":"mouse_move","coordinate":[1]}"#, "coordinate"),
            (r#"{"action":"left_click","button":"fourth"}"#, "button"),
            (
                r#"{"action":"left_click","modifiers":["hyper"]}"#,
                "modifiers",
            ),
            (r#"{"action":"drag","path":[[1,1]]}"#, "path"),
            (
                r#"{"action":"scroll","scroll_direction":"sideways"}"#,
                "scroll_direction",
            ),
            (
                r#"{"action":"scroll","scroll_direction":"up","scroll_amount":1000}"#,
                "scroll_amount",
            ),
            (r#"{"action":"key","key":"ctrl+nosuch"}"#, "key"),
            (r#"{"action":"hold_key","key":"a"}"#, "duration_ms"),
            (r#"{"action":"wait","duration_ms":-1}"#, "duration_ms"),
            (r#"{"action":"type"}"#, "text"),
            (r#"{"action":"key","key":"a+b+c+d+e+f+g+h+i"}"#, "key"),
            (
                r#"{"action":"left_click","modifiers":["shift","ctrl","alt","super","meta"]}"#,
                "modifiers",
            ),
        ];
        for (json, field) in cases {
            match input(&payload(json), &f) {
                Err(EngineError::InvalidArguments { field: got, .. }) => {
                    assert_eq!(got, field, "{json}")
                }
                other => panic!("{json}: expected invalid {field}, got {other:?}"),
            }
        }
    }

    #[test]
    fn wait_is_capped_and_legacy_scroll_fields_work() {
        let f = features();
        let a = input(&payload(r#"{"action":"wait","duration_ms":60000}"#), &f).expect("ok");
        assert_eq!(a, Action::Wait { duration: MAX_WAIT });
        let a = input(
            &payload(r#"{"action":"scroll","direction":"down","clicks":2}"#),
            &f,
        )
        .expect("ok");
        assert!(matches!(
            a,
            Action::Scroll {
                direction: ScrollDirection::Down,
                amount: 2,
                ..
            }
        ));
    }

    #[test]
    fn screenshot_fields() {
        let f = features();
        let req: ScreenshotRequest =
            serde_json::from_str(r#"{"region":[10,20,110,70],"format":"jpeg","quality":40}"#)
                .expect("req");
        let spec = screenshot(&req, &f).expect("ok");
        assert_eq!(
            spec.target,
            ScreenshotTarget::Region(Rect::new(10, 20, 100, 50))
        );
        assert_eq!(spec.quality, 40);
        for bad in [
            r#"{"region":[10,20,5,70]}"#,
            r#"{"quality":0}"#,
            r#"{"monitor":-1}"#,
            r#"{"region":[-1,0,9223372036854775807,1]}"#,
        ] {
            let req: ScreenshotRequest = serde_json::from_str(bad).expect("req");
            assert!(
                matches!(
                    screenshot(&req, &f),
                    Err(EngineError::InvalidArguments { .. })
                ),
                "{bad}"
            );
        }
        let req: ScreenshotRequest = serde_json::from_str(r#"{"window_id":"win_1"}"#).expect("req");
        assert_eq!(
            screenshot(&req, &f).expect("window").target,
            ScreenshotTarget::Window("win_1".into())
        );
        let req: ScreenshotRequest =
            serde_json::from_str(r#"{"window_id":"win_1","region":[0,0,1,1]}"#).expect("req");
        assert!(matches!(
            screenshot(&req, &f),
            Err(EngineError::InvalidArguments {
                field: "window_id",
                ..
            })
        ));
    }
}
