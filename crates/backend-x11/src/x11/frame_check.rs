//! The takeover frame checked from deskhand's side, before every act: the
//! overlay's windows must be children of the root, where they were put,
//! as large, and mapped; another program that moved or resized one
//! (`xdotool windowmove`, `windowsize`: anyone may configure another
//! client's window) has them put back and the act refused. So does a
//! frame hidden in place: a SHAPE region that leaves out what it draws, or
//! a `_NET_WM_WINDOW_OPACITY` below opaque (a compositor honours it). A
//! window stacked above the frame is beaten by raising the frame again.

use deskhand_backend::overlay_process::FrameInspector;
use deskhand_backend::{BackendError, FrameCheck, Rect};
use x11rb::connection::Connection;
use x11rb::cookie::Cookie;
use x11rb::protocol::shape::{self, ConnectionExt as _};
use x11rb::protocol::xproto::{
    Atom, AtomEnum, ClipOrdering, ConfigureWindowAux, ConnectionExt as _, GetGeometryReply,
    GetPropertyReply, GetWindowAttributesReply, MapState, Rectangle, StackMode,
    TranslateCoordinatesReply, Window, WindowClass,
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
    /// Whether its SHAPE regions (bounding and clip) hold every piece the
    /// frame draws on it.
    pub shaped_whole: bool,
    /// Whether it has no `_NET_WM_WINDOW_OPACITY` below opaque.
    pub opaque: bool,
}

/// What a frame check found, the gravest last (one verdict tells about
/// every window: the gravest found).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Verdict {
    /// As shown.
    Intact,
    /// Made see-through with `_NET_WM_WINDOW_OPACITY`.
    Faded,
    /// Its SHAPE regions leave out part of what it draws.
    Reshaped,
    /// Of another size.
    Resized,
    /// Moved elsewhere, or reparented.
    Moved,
    /// Not mapped: the overlay reports it lost and the takeover ends.
    Unmapped,
}

/// Compares what the server has with what was shown (`expected[i]` is
/// the rectangle of window `i`).
pub(crate) fn judge(expected: &[Rect], seen: &[Seen]) -> Verdict {
    expected
        .iter()
        .zip(seen)
        .map(|(want, got)| judge_one(want, got))
        .max()
        .unwrap_or(Verdict::Intact)
}

fn judge_one(want: &Rect, got: &Seen) -> Verdict {
    if !got.mapped {
        Verdict::Unmapped
    } else if !got.on_root || (got.rect.x, got.rect.y) != (want.x, want.y) {
        Verdict::Moved
    } else if (got.rect.width, got.rect.height) != (want.width, want.height) {
        Verdict::Resized
    } else if !got.shaped_whole {
        Verdict::Reshaped
    } else if !got.opaque {
        Verdict::Faded
    } else {
        Verdict::Intact
    }
}

/// The pieces of `covered` (root coordinates) that window `on` draws, in
/// the window's own coordinates: what its SHAPE regions must hold.
pub(crate) fn pieces_on(on: &Rect, covered: &[Rect]) -> Vec<Rect> {
    covered
        .iter()
        .filter_map(|c| c.intersection(on))
        .map(|r| Rect::new(r.x - on.x, r.y - on.y, r.width, r.height))
        .collect()
}

/// Whether `region` (disjoint rectangles, as the server gives a SHAPE
/// region) holds every one of `pieces` whole.
pub(crate) fn holds(region: &[Rect], pieces: &[Rect]) -> bool {
    pieces.iter().all(|p| {
        let inside: u64 = region.iter().map(|r| r.overlap_area(p)).sum();
        inside == u64::from(p.width) * u64::from(p.height)
    })
}

/// `_NET_WM_WINDOW_OPACITY` as compositors read it: fully opaque, or no
/// property at all.
const OPAQUE: u32 = u32::MAX;

fn rects_of(rectangles: &[Rectangle]) -> Vec<Rect> {
    rectangles
        .iter()
        .map(|r| {
            Rect::new(
                i32::from(r.x),
                i32::from(r.y),
                u32::from(r.width),
                u32::from(r.height),
            )
        })
        .collect()
}

fn rectangles_of(rects: &[Rect]) -> Vec<Rectangle> {
    rects
        .iter()
        .map(|r| {
            let (x, y, width, height) = r.clamped_16();
            Rectangle {
                x,
                y,
                width,
                height,
            }
        })
        .collect()
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
    opacity: Atom,
}

/// The requests about one frame window, in flight.
struct Asked<'c> {
    geometry: Cookie<'c, RustConnection, GetGeometryReply>,
    attributes: Cookie<'c, RustConnection, GetWindowAttributesReply>,
    at: Cookie<'c, RustConnection, TranslateCoordinatesReply>,
    bounding: Cookie<'c, RustConnection, shape::GetRectanglesReply>,
    clip: Cookie<'c, RustConnection, shape::GetRectanglesReply>,
    opacity: Cookie<'c, RustConnection, GetPropertyReply>,
}

impl Asked<'_> {
    /// What the replies say of the window; `on_root` whether it is a child
    /// of the root, `pieces` what its regions must hold.
    fn seen(self, on_root: bool, pieces: &[Rect]) -> Result<Seen, BackendError> {
        let (g, a, t) = (
            self.geometry.reply().backend()?,
            self.attributes.reply().backend()?,
            self.at.reply().backend()?,
        );
        let (bounding, clip) = (
            self.bounding.reply().backend()?,
            self.clip.reply().backend()?,
        );
        let opacity = self.opacity.reply().backend()?;
        Ok(Seen {
            rect: Rect::new(
                i32::from(t.dst_x),
                i32::from(t.dst_y),
                u32::from(g.width),
                u32::from(g.height),
            ),
            on_root,
            mapped: a.map_state == MapState::VIEWABLE,
            shaped_whole: holds(&rects_of(&bounding.rectangles), pieces)
                && holds(&rects_of(&clip.rectangles), pieces),
            opaque: opacity
                .value32()
                .and_then(|mut v| v.next())
                .is_none_or(|v| v == OPAQUE),
        })
    }
}

impl FrameWindows {
    pub(crate) fn connect(display: &str) -> Result<Self, BackendError> {
        let (conn, screen) = RustConnection::connect(Some(display))
            .map_err(|e| BackendError::DisplayUnavailable(e.to_string()))?;
        let root = conn.setup().roots[screen].root;
        let opacity = conn
            .intern_atom(false, b"_NET_WM_WINDOW_OPACITY")
            .backend()?
            .reply()
            .backend()?
            .atom;
        Ok(Self {
            conn,
            root,
            opacity,
        })
    }

    /// Every request about window `w`, sent at once (their replies are read
    /// later: one round trip for all the frame's windows).
    fn ask(&self, w: Window) -> Result<Asked<'_>, BackendError> {
        let conn = &self.conn;
        Ok(Asked {
            geometry: conn.get_geometry(w).backend()?,
            attributes: conn.get_window_attributes(w).backend()?,
            at: conn.translate_coordinates(w, self.root, 0, 0).backend()?,
            bounding: conn
                .shape_get_rectangles(w, shape::SK::BOUNDING)
                .backend()?,
            clip: conn.shape_get_rectangles(w, shape::SK::CLIP).backend()?,
            opacity: conn
                .get_property(false, w, self.opacity, AtomEnum::CARDINAL, 0, 1)
                .backend()?,
        })
    }

    /// Reads `windows` as the server has them and the root's children
    /// (bottom first); `expected` and `covered` say which pieces each
    /// window's SHAPE regions must hold.
    fn read(
        &self,
        windows: &[u32],
        expected: &[Rect],
        covered: &[Rect],
    ) -> Result<(Vec<Seen>, Vec<Window>), BackendError> {
        let tree = self.conn.query_tree(self.root).backend()?;
        let asked = windows
            .iter()
            .map(|&w| self.ask(w))
            .collect::<Result<Vec<_>, _>>()?;
        let children = tree.reply().backend()?.children;
        let mut seen = Vec::new();
        for ((&w, on), asked) in windows.iter().zip(expected).zip(asked) {
            let pieces = pieces_on(on, covered);
            seen.push(asked.seen(children.contains(&w), &pieces)?);
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
        let (seen, children) = self.read(windows, expected, covered)?;
        let verdict = judge(expected, &seen);
        match verdict {
            Verdict::Intact => {
                if hidden_by(&self.above(windows, &children)?, covered) {
                    tracing::debug!("a window above the takeover frame: raised again");
                    self.raise(windows)?;
                }
            }
            Verdict::Faded | Verdict::Reshaped | Verdict::Resized | Verdict::Moved => {
                self.put_back(windows, expected, covered, &seen)?;
            }
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

    /// Every window back on the root, in place, as large, drawn whole,
    /// opaque, on top.
    fn put_back(
        &self,
        windows: &[u32],
        expected: &[Rect],
        covered: &[Rect],
        seen: &[Seen],
    ) -> Result<(), BackendError> {
        for ((&w, r), s) in windows.iter().zip(expected).zip(seen) {
            if !s.on_root {
                self.conn.reparent_window(w, self.root, 0, 0).backend()?;
            }
            if !s.shaped_whole {
                self.reshape(w, &pieces_on(r, covered))?;
            }
            if !s.opaque {
                self.conn.delete_property(w, self.opacity).backend()?;
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

    /// The frame's own regions again: it draws `pieces` and its clip is
    /// the whole window.
    fn reshape(&self, w: Window, pieces: &[Rect]) -> Result<(), BackendError> {
        self.conn
            .shape_rectangles(
                shape::SO::SET,
                shape::SK::BOUNDING,
                ClipOrdering::UNSORTED,
                w,
                0,
                0,
                &rectangles_of(pieces),
            )
            .backend()?;
        self.conn
            .shape_mask(shape::SO::SET, shape::SK::CLIP, w, 0, 0, x11rb::NONE)
            .backend()?;
        Ok(())
    }

    /// A round trip: every request before it is done.
    fn sync(&self) -> Result<(), BackendError> {
        self.conn.get_input_focus().backend()?.reply().backend()?;
        Ok(())
    }
}

/// The X11 [`FrameInspector`]: [`FrameWindows`] on a connection opened at
/// the first check, and again after one that failed.
pub(crate) struct X11FrameInspector {
    display: String,
    windows: Option<FrameWindows>,
}

impl X11FrameInspector {
    /// An inspector of the frame on `display`; connects when first used.
    pub(crate) fn new(display: &str) -> Self {
        Self {
            display: display.to_owned(),
            windows: None,
        }
    }
}

impl FrameInspector for X11FrameInspector {
    fn inspect(
        &mut self,
        windows: &[u64],
        monitors: &[Rect],
        covered: &[Rect],
    ) -> Result<Option<FrameCheck>, BackendError> {
        if self.windows.is_none() {
            self.windows = Some(FrameWindows::connect(&self.display)?);
        }
        let Some(frame) = &self.windows else {
            return Ok(Some(FrameCheck::Intact));
        };
        // X11 window ids are 32-bit; the overlay reports them as such.
        let ids: Vec<u32> = windows.iter().map(|&w| w as u32).collect();
        let checked = frame.check(&ids, monitors, covered);
        if checked.is_err() {
            self.windows = None;
        }
        Ok(match checked? {
            Verdict::Intact => Some(FrameCheck::Intact),
            Verdict::Faded => Some(FrameCheck::Restored("faded")),
            Verdict::Reshaped => Some(FrameCheck::Restored("reshaped")),
            Verdict::Resized => Some(FrameCheck::Restored("resized")),
            Verdict::Moved => Some(FrameCheck::Restored("moved")),
            Verdict::Unmapped => None,
        })
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
            shaped_whole: true,
            opaque: true,
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

    #[test]
    fn a_frame_hidden_in_place_is_told_below_a_move() {
        let want = [Rect::new(0, 0, 1280, 800), Rect::new(1280, 0, 1024, 768)];
        let mut emptied = seen(0, 0, 1280, 800);
        emptied.shaped_whole = false;
        let mut faded = seen(1280, 0, 1024, 768);
        faded.opaque = false;
        assert_eq!(judge(&want, &[emptied, faded]), Verdict::Reshaped);
        assert_eq!(
            judge(&want, &[seen(0, 0, 1280, 800), faded]),
            Verdict::Faded
        );
        assert_eq!(
            judge(&want, &[emptied, seen(9000, 0, 1024, 768)]),
            Verdict::Moved
        );
    }

    #[test]
    fn a_region_must_hold_every_piece_the_frame_draws() {
        // The second monitor's window draws its part of the strips, in its
        // own coordinates.
        let on = Rect::new(1280, 0, 1024, 768);
        let covered = [Rect::new(0, 0, 2304, 6), Rect::new(1280, 762, 1024, 6)];
        let pieces = pieces_on(&on, &covered);
        assert_eq!(
            pieces,
            [Rect::new(0, 0, 1024, 6), Rect::new(0, 762, 1024, 6)]
        );
        // Unshaped: the server gives the whole window.
        assert!(holds(&[Rect::new(0, 0, 1024, 768)], &pieces));
        assert!(holds(&pieces, &pieces));
        assert!(!holds(&[], &pieces));
        // One strip a pixel short.
        let short = [Rect::new(0, 0, 1023, 6), Rect::new(0, 762, 1024, 6)];
        assert!(!holds(&short, &pieces));
    }
}
