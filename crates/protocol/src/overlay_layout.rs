//! Where the takeover indicator's parts go and how they look: the frame
//! round each monitor, the label on the first, the Continue and Stop
//! buttons under it while paused. Every indicator draws these parts: the
//! overlay process with an 8×8 bitmap font at twice its size, the GNOME
//! Shell extension with its own text.

use crate::geometry::{Point, Rect};

/// Frame thickness.
pub const FRAME: u32 = 6;
/// Glyph scale (8×8 font drawn at 16×16).
pub const SCALE: u32 = 2;
/// A character's cell, square.
pub const GLYPH: u32 = 8 * SCALE;
const PAD: u32 = 8;

/// The label while deskhand drives: who, and how to take back control.
pub const ACTIVE_LABEL: &str = "deskhand: an agent is at work \u{b7} move your mouse to take over";
/// The label once the person took over.
pub const PAUSED_LABEL: &str = "You have control \u{b7} the agent waits for you";
/// The button that gives the desktop back to the agent that was paused.
const CONTINUE_LABEL: &str = "Let the agent continue";
/// The button that stops every agent (as the kill switch does).
const STOP_LABEL: &str = "Stop agents";

/// A button of the paused indicator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Press {
    /// Resume the paused takeover.
    Continue,
    /// End every takeover.
    Stop,
}

impl Press {
    /// Its text.
    pub fn text(self) -> &'static str {
        match self {
            Press::Continue => CONTINUE_LABEL,
            Press::Stop => STOP_LABEL,
        }
    }

    /// Its background.
    pub fn colour(self) -> u32 {
        match self {
            Press::Continue => GREEN,
            Press::Stop => DARK,
        }
    }
}

/// The frame and the label while an agent drives (0RGB).
pub const RED: u32 = 0x00e0_1b24;
/// The frame while paused.
pub const DIM_RED: u32 = 0x0078_2828;
/// Text.
pub const WHITE: u32 = 0x00ff_ffff;
/// The label while paused, and Stop.
pub const DARK: u32 = 0x0020_2020;
/// Continue.
pub const GREEN: u32 = 0x0026_7a34;

/// The indicator's geometry for a set of monitors.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// Monitor rectangles (global); the label goes on the first.
    pub monitors: Vec<Rect>,
    /// Paused look.
    pub paused: bool,
}

/// How wide `text` is drawn.
pub fn text_width(text: &str) -> u32 {
    text.chars().count() as u32 * GLYPH
}

impl Layout {
    /// The four frame strips of monitor `m`.
    pub fn frame(m: &Rect) -> [Rect; 4] {
        let t = FRAME.min(m.width / 2).min(m.height / 2);
        let inner_h = m.height.saturating_sub(2 * t);
        [
            Rect::new(m.x, m.y, m.width, t),
            Rect::new(m.x, m.y + (m.height - t) as i32, m.width, t),
            Rect::new(m.x, m.y + t as i32, t, inner_h),
            Rect::new(m.x + (m.width - t) as i32, m.y + t as i32, t, inner_h),
        ]
    }

    fn label_text(&self) -> &'static str {
        if self.paused {
            PAUSED_LABEL
        } else {
            ACTIVE_LABEL
        }
    }

    /// The label box (global), centred under the top frame of the first
    /// monitor.
    pub fn label(&self) -> Option<Rect> {
        let m = self.monitors.first()?;
        let w = (text_width(self.label_text()) + 2 * PAD).min(m.width);
        let h = GLYPH + 2 * PAD;
        Some(Rect::new(
            m.x + ((m.width - w) / 2) as i32,
            m.y + FRAME as i32,
            w,
            h,
        ))
    }

    /// The buttons (global) while paused: Continue centred under the
    /// label, Stop beside it on the right (under Continue where the
    /// monitor is too narrow).
    pub fn buttons(&self) -> Vec<(Press, Rect)> {
        let (Some(m), Some(label), true) = (self.monitors.first(), self.label(), self.paused)
        else {
            return Vec::new();
        };
        let size = |p: Press| (text_width(p.text()) + 3 * PAD, GLYPH + 2 * PAD);
        let (w, h) = size(Press::Continue);
        let centre = m.x + (m.width / 2) as i32;
        let go = Rect::new(
            centre - (w / 2) as i32,
            label.y + label.height as i32 + PAD as i32,
            w,
            h,
        );
        let (sw, sh) = size(Press::Stop);
        let beside = go.x + w as i32 + 2 * PAD as i32;
        let stop = if beside + sw as i32 <= m.x + m.width as i32 - FRAME as i32 {
            Rect::new(beside, go.y, sw, sh)
        } else {
            Rect::new(
                centre - (sw / 2) as i32,
                go.y + h as i32 + PAD as i32,
                sw,
                sh,
            )
        };
        vec![(Press::Continue, go), (Press::Stop, stop)]
    }

    /// The button at global point `p`, if any.
    pub fn button_at(&self, p: Point) -> Option<Press> {
        self.buttons()
            .into_iter()
            .find(|(_, r)| r.contains(p))
            .map(|(press, _)| press)
    }

    /// Everything the indicator covers on monitor `i` (global).
    pub fn covered_on(&self, i: usize) -> Vec<Rect> {
        self.parts(i).into_iter().map(|p| p.rect).collect()
    }

    /// Everything the indicator covers (global).
    pub fn covered(&self) -> Vec<Rect> {
        (0..self.monitors.len())
            .flat_map(|i| self.covered_on(i))
            .collect()
    }
}

/// One thing the indicator draws: a filled rectangle (global desktop
/// pixels), its text centred in it, and the button it is.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Part {
    /// Where.
    pub rect: Rect,
    /// Its fill, 0RGB.
    pub colour: u32,
    /// Its text (white), if any.
    pub text: Option<&'static str>,
    /// The button it is, if any.
    pub press: Option<Press>,
}

impl Layout {
    /// Everything drawn on monitor `i`, bottom first.
    pub fn parts(&self, i: usize) -> Vec<Part> {
        let Some(m) = self.monitors.get(i) else {
            return Vec::new();
        };
        let colour = if self.paused { DIM_RED } else { RED };
        let mut parts: Vec<Part> = Layout::frame(m)
            .into_iter()
            .map(|rect| Part {
                rect,
                colour,
                text: None,
                press: None,
            })
            .collect();
        if i == 0 {
            parts.extend(self.label().map(|rect| Part {
                rect,
                colour: if self.paused { DARK } else { RED },
                text: Some(self.label_text()),
                press: None,
            }));
            parts.extend(self.buttons().into_iter().map(|(press, rect)| Part {
                rect,
                colour: press.colour(),
                text: Some(press.text()),
                press: Some(press),
            }));
        }
        parts.retain(|p| p.rect.width > 0 && p.rect.height > 0);
        parts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(paused: bool) -> Layout {
        Layout {
            monitors: vec![Rect::new(0, 0, 1280, 800)],
            paused,
        }
    }

    #[test]
    fn frame_hugs_the_edges() {
        let [top, bottom, left, right] = Layout::frame(&Rect::new(100, 50, 800, 600));
        assert_eq!(top, Rect::new(100, 50, 800, FRAME));
        assert_eq!(bottom, Rect::new(100, 644, 800, FRAME));
        assert_eq!(left, Rect::new(100, 56, FRAME, 588));
        assert_eq!(right, Rect::new(894, 56, FRAME, 588));
    }

    #[test]
    fn buttons_only_while_paused_continue_centred_under_the_label_stop_beside() {
        assert!(one(false).buttons().is_empty());
        let l = one(true);
        let label = l.label().expect("label");
        let [(Press::Continue, go), (Press::Stop, stop)] = l.buttons()[..] else {
            panic!("Continue and Stop: {:?}", l.buttons());
        };
        assert!(go.y > label.y + label.height as i32);
        // Where tests/e2e/person.py clicks Continue: the top centre.
        assert!(go.contains(Point::new(640, 6 + 32 + 8 + 16)));
        assert_eq!((stop.y, stop.x > go.x + go.width as i32), (go.y, true));
        assert_eq!(
            l.button_at(Point::new(stop.x + 1, stop.y + 1)),
            Some(Press::Stop)
        );
        assert_eq!(l.button_at(Point::new(640, 400)), None);
        assert_eq!(l.covered().len(), 7);
        assert_eq!(one(false).covered().len(), 5);
    }

    #[test]
    fn on_a_narrow_monitor_stop_goes_under_continue_and_stays_on_it() {
        let l = Layout {
            monitors: vec![Rect::new(0, 0, 640, 480)],
            paused: true,
        };
        let [(_, go), (_, stop)] = l.buttons()[..] else {
            panic!("two buttons");
        };
        assert!(stop.y >= go.y + go.height as i32);
        assert!(stop.x >= 0 && stop.x + stop.width as i32 <= 640);
    }
}
