//! The desk's checks before every act, over a recording backend.
use std::sync::Mutex;

use super::*;
use crate::backend::{
    BackendError, Displays, FrameCheck, Indicator, IndicatorEvent, IndicatorShown, ScrollDirection,
};
use crate::geometry::Monitor;

struct OneDisplay;

impl Displays for OneDisplay {
    fn monitors(&mut self) -> Result<Vec<Monitor>, BackendError> {
        Ok(Vec::new())
    }
    fn cursor_position(&mut self) -> Result<Point, BackendError> {
        Ok(Point::new(0, 0))
    }
}

/// Every key event sent.
type Sent = Arc<Mutex<Vec<(Key, bool)>>>;

struct KeyLog(Sent);

impl Input for KeyLog {
    fn move_pointer(&mut self, _: Point) -> Result<(), BackendError> {
        Ok(())
    }
    fn button(&mut self, _: Button, _: bool) -> Result<(), BackendError> {
        Ok(())
    }
    fn key(&mut self, key: Key, press: bool) -> Result<(), BackendError> {
        self.0.lock().map(|mut l| l.push((key, press))).ok();
        Ok(())
    }
    fn text(&mut self, _: &str) -> Result<(), BackendError> {
        Ok(())
    }
    fn scroll(&mut self, _: ScrollDirection, _: u32) -> Result<(), BackendError> {
        Ok(())
    }
}

/// A frame whose checks find what the test queued, then intact.
struct Frame(Vec<FrameCheck>);

impl Indicator for Frame {
    fn set_events(&mut self, _: Arc<dyn Fn(IndicatorEvent) + Send + Sync>) {}
    fn show(&mut self, _: &[Rect], _: bool) -> Result<IndicatorShown, BackendError> {
        Ok(IndicatorShown::default())
    }
    fn set_paused(&mut self, _: bool) -> Result<IndicatorShown, BackendError> {
        Ok(IndicatorShown::default())
    }
    fn hide(&mut self) -> Result<(), BackendError> {
        Ok(())
    }
    fn verify(&mut self) -> Result<FrameCheck, BackendError> {
        Ok(if self.0.is_empty() {
            FrameCheck::Intact
        } else {
            self.0.remove(0)
        })
    }
}

fn desk(found: Vec<FrameCheck>) -> (Desk, Sent) {
    let keys = Arc::new(Mutex::new(Vec::new()));
    let backend = crate::test_support::input_only_backend(
        Box::new(OneDisplay),
        Box::new(KeyLog(keys.clone())),
    );
    let handback = Arc::new(HandBack::new());
    handback.arm(Point::new(0, 0));
    let mut desk = Desk::new(backend, handback);
    let frame: Box<dyn Indicator> = Box::new(Frame(found));
    desk.indicator = Some(Arc::new(Mutex::new(frame)));
    (desk, keys)
}

#[test]
fn a_frame_put_back_refuses_the_act_and_the_next_one_goes_through() {
    let (mut desk, keys) = desk(vec![FrameCheck::Restored("moved")]);
    let shift = Action::Key {
        keys: vec![Key::Shift],
    };
    let refused = desk.perform("s", &shift);
    assert!(
        matches!(refused, Err(EngineError::FrameDisturbed { what: "moved" })),
        "{refused:?}"
    );
    assert!(keys.lock().map(|k| k.is_empty()).unwrap_or(false), "sent");
    assert!(desk.perform("s", &shift).is_ok());
    let sent = keys.lock().map(|k| k.clone()).unwrap_or_default();
    assert_eq!(sent, [(Key::Shift, true), (Key::Shift, false)]);
}

#[test]
fn the_frame_is_checked_only_while_a_takeover_is_armed() {
    let (mut desk, keys) = desk(vec![FrameCheck::Restored("resized")]);
    desk.handback.disarm();
    let shift = Action::Key {
        keys: vec![Key::Shift],
    };
    assert!(desk.perform("s", &shift).is_ok());
    assert_eq!(keys.lock().map(|k| k.len()).unwrap_or(0), 2);
}

/// A console the backend keeps out of the window list (a Windows
/// tool window) but lists for the refusal policy.
struct ToolConsole;

impl crate::backend::Windows for ToolConsole {
    fn list(&mut self) -> Result<Vec<NativeWindow>, BackendError> {
        Ok(Vec::new())
    }
    fn list_for_refusal(&mut self) -> Result<Vec<NativeWindow>, BackendError> {
        Ok(vec![NativeWindow {
            id: 7,
            pid: None,
            class: "cmd".into(),
            instance: String::new(),
            title: "cmd".into(),
            rect: Rect::new(0, 0, 400, 300),
            focused: true,
            minimized: false,
            fullscreen: false,
            surface_origin: None,
        }])
    }
    fn focus(&mut self, _: u64, _: bool) -> Result<(), BackendError> {
        Ok(())
    }
}

#[test]
fn the_refusal_policy_judges_windows_left_out_of_the_list() {
    let (mut desk, _) = desk(Vec::new());
    desk.backend.windows = Some(Box::new(ToolConsole));
    assert!(desk.list_windows().map(|w| w.is_empty()).unwrap_or(false));
    let judged = desk.windows_for_refusal().unwrap_or_default();
    assert_eq!(judged.len(), 1, "{judged:?}");
    assert_eq!((judged[0].1.id, judged[0].1.focused), (7, true));
}
