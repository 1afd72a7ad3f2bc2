//! The red frame on GNOME: the indicator's parts
//! (`deskhand_protocol::overlay_layout`) drawn by deskhand's GNOME Shell
//! extension in the shell's top chrome, click-through but for Continue
//! and Stop, whose presses come back as the shell's own D-Bus signal.

use std::sync::Arc;
use std::time::{Duration, Instant};

use deskhand_backend::{BackendError, FrameCheck, Indicator, IndicatorEvent, IndicatorShown, Rect};
use deskhand_protocol::overlay_layout::{Layout, Part};
use futures_util::StreamExt;

use crate::rt::Rt;
use crate::shell::{FrameState, ShellExt};

const CALL: Duration = Duration::from_secs(3);

pub(crate) struct ShellIndicator {
    pub(crate) rt: Arc<Rt>,
    pub(crate) shell: ShellExt,
    pub(crate) layout: Option<Layout>,
    /// The top bar's height, once read: the label and the buttons go
    /// below it (GNOME's clock and notifications are there).
    pub(crate) inset: Option<u32>,
    /// The parts as last shown (what the frame check expects).
    pub(crate) placed: Vec<Part>,
}

/// How far from the pointer the buttons keep when they appear.
const POINTER_MARGIN: i32 = 16;

/// Moves the buttons below the pointer when they would appear under it
/// (or within [`POINTER_MARGIN`]): the person is about to click what is
/// there (a window's close button), and Continue must not take its place.
fn clear_of_pointer(parts: &mut [Part], (x, y): (i32, i32)) {
    let near = |r: &Rect| {
        x >= r.x - POINTER_MARGIN
            && x < r.x + r.width as i32 + POINTER_MARGIN
            && y >= r.y - POINTER_MARGIN
            && y < r.y + r.height as i32 + POINTER_MARGIN
    };
    let buttons = || parts.iter().filter(|p| p.press.is_some());
    let (true, Some(top)) = (
        buttons().any(|b| near(&b.rect)),
        buttons().map(|b| b.rect.y).min(),
    ) else {
        return;
    };
    let down = y + POINTER_MARGIN + 1 - top;
    for part in parts.iter_mut().filter(|p| p.press.is_some()) {
        part.rect.y += down;
    }
}

/// Every part of `layout`, all monitors, the label and buttons moved
/// `inset` pixels down (the frame's strips stay at the edges).
fn parts(layout: &Layout, inset: u32) -> Vec<Part> {
    let down = i32::try_from(inset).unwrap_or(0);
    (0..layout.monitors.len())
        .flat_map(|i| layout.parts(i))
        .map(|mut p| {
            if p.text.is_some() {
                p.rect.y += down;
            }
            p
        })
        .collect()
}

/// What is wrong with the frame as the shell reports it, if anything.
pub(crate) fn fault(expected: &[Part], state: &FrameState) -> Option<&'static str> {
    if state.parts != expected.len() || !state.on_top {
        return Some("reshaped");
    }
    if !state.visible {
        return Some("faded");
    }
    let moved = expected.iter().zip(&state.placed).any(|(p, [x, y, w, h])| {
        let r = p.rect;
        (
            f64::from(r.x),
            f64::from(r.y),
            f64::from(r.width),
            f64::from(r.height),
        ) != (*x, *y, *w, *h)
    });
    moved.then_some("moved")
}

impl ShellIndicator {
    /// The top bar's height, read once (0 when the shell does not say).
    fn inset(&mut self) -> u32 {
        if let Some(inset) = self.inset {
            return inset;
        }
        let shell = self.shell.clone();
        let inset = self
            .rt
            .run(CALL, "reading the top bar's height", async move {
                shell.top_inset().await
            })
            .unwrap_or_else(|e| {
                tracing::warn!(error = %e, "the top bar's height is unknown: the label may cover it");
                0
            });
        self.inset = Some(inset);
        inset
    }

    /// Shows `layout`: below the top bar, and while paused with the
    /// buttons clear of where the pointer is.
    fn put(&mut self, layout: Layout) -> Result<IndicatorShown, BackendError> {
        let mut parts = parts(&layout, self.inset());
        if layout.paused {
            let shell = self.shell.clone();
            match self.rt.run(
                CALL,
                "reading the pointer",
                async move { shell.pointer().await },
            ) {
                Ok((x, y, _)) => clear_of_pointer(&mut parts, (x, y)),
                Err(e) => tracing::warn!(error = %e, "the buttons are placed without the pointer"),
            }
        }
        self.layout = Some(layout);
        self.send(parts)
    }

    /// Shows `parts` as they are.
    fn send(&mut self, parts: Vec<Part>) -> Result<IndicatorShown, BackendError> {
        let json = serde_json::to_string(&parts)
            .map_err(|e| BackendError::Failed(format!("the frame's parts: {e}")))?;
        let shell = self.shell.clone();
        self.rt.run(CALL, "showing the frame", async move {
            shell.show_parts(&json).await
        })?;
        let covered: Vec<Rect> = parts.iter().map(|p| p.rect).collect();
        self.placed = parts;
        Ok(IndicatorShown {
            windows: Vec::new(),
            covered,
        })
    }
}

impl Indicator for ShellIndicator {
    fn set_events(&mut self, sink: Arc<dyn Fn(IndicatorEvent) + Send + Sync>) {
        let shell = self.shell.clone();
        self.rt.spawn(async move {
            let mut presses = match shell.presses().await {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(error = %e, "no presses from the GNOME Shell extension");
                    return;
                }
            };
            let Some(pin) = shell.pin().cloned() else {
                return;
            };
            loop {
                let msg = tokio::select! {
                    msg = presses.next() => msg,
                    why = pin.until_lost() => {
                        sink(IndicatorEvent::Lost(why));
                        return;
                    }
                };
                let Some(msg) = msg else { break };
                match msg.body().deserialize::<String>().as_deref() {
                    Ok("continue") => sink(IndicatorEvent::ContinueClicked(Instant::now())),
                    Ok("stop") => sink(IndicatorEvent::StopClicked),
                    other => tracing::debug!(?other, "an unknown press"),
                }
            }
            sink(IndicatorEvent::Lost("exited".into()));
        });
    }

    fn show(&mut self, monitors: &[Rect], paused: bool) -> Result<IndicatorShown, BackendError> {
        self.put(Layout {
            monitors: monitors.to_vec(),
            paused,
        })
    }

    fn set_paused(&mut self, paused: bool) -> Result<IndicatorShown, BackendError> {
        let monitors = self
            .layout
            .as_ref()
            .map(|l| l.monitors.clone())
            .unwrap_or_default();
        self.put(Layout { monitors, paused })
    }

    fn hide(&mut self) -> Result<(), BackendError> {
        self.layout = None;
        self.placed.clear();
        let shell = self.shell.clone();
        self.rt.run(
            CALL,
            "hiding the frame",
            async move { shell.hide_parts().await },
        )
    }

    fn verify(&mut self) -> Result<FrameCheck, BackendError> {
        if self.layout.is_none() {
            return Ok(FrameCheck::Intact);
        }
        let shell = self.shell.clone();
        let state = self.rt.run(CALL, "checking the frame", async move {
            shell.frame_state().await
        })?;
        match fault(&self.placed, &state) {
            None => Ok(FrameCheck::Intact),
            Some(what) => {
                tracing::warn!(what, "the frame was changed by another program: put back");
                self.send(self.placed.clone())?;
                Ok(FrameCheck::Restored(what))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(layout: &Layout) -> FrameState {
        let placed = parts(layout, 0)
            .iter()
            .map(|p| {
                let r = p.rect;
                [
                    f64::from(r.x),
                    f64::from(r.y),
                    f64::from(r.width),
                    f64::from(r.height),
                ]
            })
            .collect::<Vec<_>>();
        FrameState {
            parts: placed.len(),
            visible: true,
            on_top: true,
            placed,
        }
    }

    #[test]
    fn the_frame_is_intact_only_as_it_was_put() {
        let layout = Layout {
            monitors: vec![Rect::new(0, 0, 1280, 800)],
            paused: true,
        };
        let expected = parts(&layout, 0);
        let mut s = state(&layout);
        assert_eq!(fault(&expected, &s), None);
        s.placed[2][0] += 10.0;
        assert_eq!(fault(&expected, &s), Some("moved"));
        let mut s = state(&layout);
        s.visible = false;
        assert_eq!(fault(&expected, &s), Some("faded"));
        let mut s = state(&layout);
        s.parts -= 1;
        assert_eq!(fault(&expected, &s), Some("reshaped"));
    }

    #[test]
    fn the_label_and_buttons_go_below_the_top_bar_and_the_frame_stays() {
        let layout = Layout {
            monitors: vec![Rect::new(0, 0, 1280, 800)],
            paused: true,
        };
        let (flat, inset) = (parts(&layout, 0), parts(&layout, 32));
        for (a, b) in flat.iter().zip(&inset) {
            let moved = if a.text.is_some() { 32 } else { 0 };
            assert_eq!(b.rect.y, a.rect.y + moved, "{a:?}");
        }
    }

    #[test]
    fn the_buttons_appear_clear_of_the_pointer() {
        let layout = Layout {
            monitors: vec![Rect::new(0, 0, 1280, 800)],
            paused: true,
        };
        let placed = parts(&layout, 32);
        let go = placed
            .iter()
            .find(|p| p.press.is_some())
            .expect("Continue")
            .rect;
        let on_it = (go.x + 10, go.y + 5);
        let mut moved = placed.clone();
        clear_of_pointer(&mut moved, on_it);
        for (a, b) in placed.iter().zip(&moved) {
            if a.press.is_some() {
                assert!(
                    b.rect.y > on_it.1 + POINTER_MARGIN,
                    "{b:?} below the pointer"
                );
            } else {
                assert_eq!(a, b, "the frame and label stay");
            }
        }
        let mut away = placed.clone();
        clear_of_pointer(&mut away, (go.x, go.y + 200));
        assert_eq!(away, placed, "a pointer elsewhere moves nothing");
    }
}
