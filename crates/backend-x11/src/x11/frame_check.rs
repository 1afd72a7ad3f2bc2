//! The takeover frame checked from deskhand's side, before every act: the
//! overlay's windows must be children of the root, where they were put,
//! as large, and mapped; another program that moved or resized one
//! (`xdotool windowmove`, `windowsize`: anyone may configure another
//! client's window) has them put back and the act refused. A window
//! stacked above the frame is beaten by raising the frame again.

use deskhand_backend::{BackendError, Rect};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{
    ConfigureWindowAux, ConnectionExt as _, MapState, StackMode, Window, WindowClass,
};
use x11rb::rust_connection::RustConnection;

use super::X11ResultExt;

/// One overlay window as the server has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Seen {
    /// Where it is on the root window.
    pub rect: Rect,
    /// Whether it is a child of the root (not reparented elsewhere).
    pub on_root: bool,
    /// Whether it is mapped (viewable).
    pub mapped: bool,
}

/// What a frame check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// As shown.
    Intact,
    /// Moved elsewhere, or reparented.
    Moved,
    /// Of another size.
    Resized,
    /// Not mapped: the overlay reports it lost and the takeover ends.
    Unmapped,
}

/// Compares what the server has with what was shown (`expected[i]` is
/// the rectangle of window `i`).
pub(crate) fn judge(expected: &[Rect], seen: &[Seen]) -> Verdict {
    let mut verdict = Verdict::Intact;
    for (want, got) in expected.iter().zip(seen) {
        if !got.mapped {
            return Verdict::Unmapped;
        }
        if !got.on_root || (got.rect.x, got.rect.y) != (want.x, want.y) {
            verdict = Verdict::Moved;
        } else if (got.rect.width, got.rect.height) != (want.width, want.height)
            && verdict == Verdict::Intact
        {
            verdict = Verdict::Resized;
        }
    }
    verdict
}

/// Whether a window above the frame hides part of it: `above` are the
/// viewable windows stacked over the lowest frame window, `covered` what
/// the frame draws.
pub(crate) fn hidden_by(above: &[Rect], covered: &[Rect]) -> bool {
    above
        .iter()
        .any(|a| covered.iter().any(|c| a.overlap_area(c) > 0))
}

/// The overlay's windows on a connection of deskhand's own.
pub(crate) struct FrameWindows {
    conn: RustConnection,
    root: Window,
}

impl FrameWindows {
    pub(crate) fn connect(display: &str) -> Result<Self, BackendError> {
        let (conn, screen) = RustConnection::connect(Some(display))
            .map_err(|e| BackendError::DisplayUnavailable(e.to_string()))?;
        let root = conn.setup().roots[screen].root;
        Ok(Self { conn, root })
    }

    /// Reads `windows` as the server has them and the root's children
    /// (bottom first).
    fn read(&self, windows: &[u32]) -> Result<(Vec<Seen>, Vec<Window>), BackendError> {
        let children = self
            .conn
            .query_tree(self.root)
            .backend()?
            .reply()
            .backend()?
            .children;
        let mut seen = Vec::new();
        for &w in windows {
            let geometry = self.conn.get_geometry(w).backend()?;
            let attributes = self.conn.get_window_attributes(w).backend()?;
            let at = self
                .conn
                .translate_coordinates(w, self.root, 0, 0)
                .backend()?;
            let (g, a, t) = (
                geometry.reply().backend()?,
                attributes.reply().backend()?,
                at.reply().backend()?,
            );
            seen.push(Seen {
                rect: Rect::new(
                    i32::from(t.dst_x),
                    i32::from(t.dst_y),
                    u32::from(g.width),
                    u32::from(g.height),
                ),
                on_root: children.contains(&w),
                mapped: a.map_state == MapState::VIEWABLE,
            });
        }
        Ok((seen, children))
    }

    /// The viewable windows of others stacked above the lowest of ours.
    fn above(&self, ours: &[u32], children: &[Window]) -> Result<Vec<Rect>, BackendError> {
        let Some(lowest) = children.iter().position(|c| ours.contains(c)) else {
            return Ok(Vec::new());
        };
        let mut rects = Vec::new();
        for &w in children[lowest..].iter().filter(|w| !ours.contains(w)) {
            let attributes = self.conn.get_window_attributes(w).backend()?;
            let geometry = self.conn.get_geometry(w).backend()?;
            // A window gone meanwhile hides nothing.
            let (Ok(a), Ok(g)) = (attributes.reply(), geometry.reply()) else {
                continue;
            };
            if a.map_state == MapState::VIEWABLE && a.class != WindowClass::INPUT_ONLY {
                let border = u32::from(g.border_width) * 2;
                rects.push(Rect::new(
                    i32::from(g.x),
                    i32::from(g.y),
                    u32::from(g.width) + border,
                    u32::from(g.height) + border,
                ));
            }
        }
        Ok(rects)
    }

    /// Checks `windows` against `expected` and `covered`; puts back what
    /// is moved or resized and raises the frame over a window that hides
    /// part of it. The verdict is about geometry only: a covered frame
    /// raised again counts as intact.
    pub(crate) fn check(
        &self,
        windows: &[u32],
        expected: &[Rect],
        covered: &[Rect],
    ) -> Result<Verdict, BackendError> {
        let (seen, children) = self.read(windows)?;
        let verdict = judge(expected, &seen);
        match verdict {
            Verdict::Intact => {
                if hidden_by(&self.above(windows, &children)?, covered) {
                    tracing::debug!("a window above the takeover frame: raised again");
                    self.raise(windows)?;
                }
            }
            Verdict::Moved | Verdict::Resized => self.put_back(windows, expected, &seen)?,
            Verdict::Unmapped => {}
        }
        Ok(verdict)
    }

    fn raise(&self, windows: &[u32]) -> Result<(), BackendError> {
        for &w in windows {
            self.conn
                .configure_window(w, &ConfigureWindowAux::new().stack_mode(StackMode::ABOVE))
                .backend()?;
        }
        self.sync()
    }

    /// Every window back on the root, in place, as large, on top.
    fn put_back(
        &self,
        windows: &[u32],
        expected: &[Rect],
        seen: &[Seen],
    ) -> Result<(), BackendError> {
        for ((&w, r), s) in windows.iter().zip(expected).zip(seen) {
            if !s.on_root {
                self.conn.reparent_window(w, self.root, 0, 0).backend()?;
            }
            let aux = ConfigureWindowAux::new()
                .x(r.x)
                .y(r.y)
                .width(r.width.max(1))
                .height(r.height.max(1))
                .stack_mode(StackMode::ABOVE);
            self.conn.configure_window(w, &aux).backend()?;
        }
        self.sync()
    }

    /// A round trip: every request before it is done.
    fn sync(&self) -> Result<(), BackendError> {
        self.conn.get_input_focus().backend()?.reply().backend()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(x: i32, y: i32, w: u32, h: u32) -> Seen {
        Seen {
            rect: Rect::new(x, y, w, h),
            on_root: true,
            mapped: true,
        }
    }

    #[test]
    fn a_frame_in_place_is_intact() {
        let want = [Rect::new(0, 0, 1280, 800), Rect::new(1280, 0, 1024, 768)];
        let got = [seen(0, 0, 1280, 800), seen(1280, 0, 1024, 768)];
        assert_eq!(judge(&want, &got), Verdict::Intact);
    }

    #[test]
    fn moved_resized_reparented_and_unmapped_frames_are_told() {
        let want = [Rect::new(0, 0, 1280, 800)];
        assert_eq!(judge(&want, &[seen(5000, 5000, 1280, 800)]), Verdict::Moved);
        assert_eq!(judge(&want, &[seen(0, 0, 1, 1)]), Verdict::Resized);
        let mut elsewhere = seen(0, 0, 1280, 800);
        elsewhere.on_root = false;
        assert_eq!(judge(&want, &[elsewhere]), Verdict::Moved);
        let mut unmapped = seen(0, 0, 1280, 800);
        unmapped.mapped = false;
        assert_eq!(judge(&want, &[unmapped]), Verdict::Unmapped);
    }

    #[test]
    fn a_move_outranks_a_resize_on_another_display() {
        let want = [Rect::new(0, 0, 1280, 800), Rect::new(1280, 0, 1024, 768)];
        let got = [seen(0, 0, 10, 10), seen(9000, 0, 1024, 768)];
        assert_eq!(judge(&want, &got), Verdict::Moved);
    }

    #[test]
    fn only_a_window_over_the_drawn_frame_hides_it() {
        // The frame draws 6-pixel strips; the middle of the screen is clear.
        let covered = [Rect::new(0, 0, 1280, 6), Rect::new(0, 794, 1280, 6)];
        assert!(!hidden_by(&[Rect::new(100, 100, 400, 300)], &covered));
        assert!(hidden_by(&[Rect::new(0, 0, 1280, 800)], &covered));
        assert!(!hidden_by(&[], &covered));
    }
}
