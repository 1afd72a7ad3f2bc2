//! Keeping the takeover indicator out of captures (DESIGN decision 5): with
//! Composite redirection on, every top-level window keeps its own contents
//! even where the indicator covers it, so the covered rectangles of a
//! capture are painted again from what lies beneath: the root background,
//! then each window bottom to top, skipping the indicator's.
//!
//! The root background cannot be read back directly; a hidden window per
//! covered rectangle with a `ParentRelative` background, redirected
//! manually (so the server never draws it on screen), with no input
//! region and at the bottom of the stack, holds it.

use deskhand_backend::{BackendError, Rect};
use x11rb::connection::{Connection, RequestConnection};
use x11rb::cookie::Cookie;
use x11rb::protocol::composite::{self, ConnectionExt as _, Redirect};
use x11rb::protocol::shape::{self, ConnectionExt as _};
use x11rb::protocol::xproto::{
    BackPixmap, ClipOrdering, ConfigureWindowAux, ConnectionExt as _, CreateWindowAux,
    GetGeometryReply, GetImageReply, GetWindowAttributesReply, ImageFormat, MapState,
    QueryTreeReply, StackMode, Window, WindowClass,
};
use x11rb::rust_connection::RustConnection;

use super::X11ResultExt;

/// What is left out of captures, and how it is painted over.
#[derive(Default)]
pub(crate) struct Exclusion {
    overlay: Vec<Window>,
    covered: Vec<Rect>,
    /// Hidden background holders, one per covered rectangle.
    backgrounds: Vec<(Window, Rect)>,
    redirected: bool,
    /// The windows beneath as the last repair found them.
    beneath: Beneath,
}

fn intersect(a: &Rect, b: &Rect) -> Option<Rect> {
    let x1 = a.x.max(b.x);
    let y1 = a.y.max(b.y);
    let x2 = (a.x + a.width as i32).min(b.x + b.width as i32);
    let y2 = (a.y + a.height as i32).min(b.y + b.height as i32);
    (x2 > x1 && y2 > y1).then(|| Rect::new(x1, y1, (x2 - x1) as u32, (y2 - y1) as u32))
}

/// Copies BGRX `src` (`r.width` wide) into the bitmap at `r` (global), the
/// bitmap covering `bitmap_rect`.
fn paste(bitmap: &mut [u8], bitmap_rect: &Rect, r: &Rect, src: &[u8]) {
    let stride = bitmap_rect.width as usize * 4;
    let row = r.width as usize * 4;
    for y in 0..r.height as usize {
        let fy = (r.y - bitmap_rect.y) as usize + y;
        let fx = (r.x - bitmap_rect.x) as usize * 4;
        let (Some(dst), Some(s)) = (
            bitmap.get_mut(fy * stride + fx..fy * stride + fx + row),
            src.get(y * row..(y + 1) * row),
        ) else {
            return;
        };
        dst.copy_from_slice(s);
    }
}

impl Exclusion {
    /// Whether anything is left out.
    pub(crate) fn active(&self) -> bool {
        !self.overlay.is_empty()
    }

    /// Leaves `windows` out from now on, painting `covered` from beneath.
    pub(crate) fn set(
        &mut self,
        conn: &RustConnection,
        root: Window,
        windows: &[u64],
        covered: &[Rect],
    ) -> Result<(), BackendError> {
        self.beneath = Beneath::default();
        for (w, _) in self.backgrounds.drain(..) {
            let _ = conn.destroy_window(w);
        }
        self.overlay = windows
            .iter()
            .filter_map(|&w| u32::try_from(w).ok())
            .collect();
        self.covered = covered.to_vec();
        if self.overlay.is_empty() {
            conn.flush().backend()?;
            return Ok(());
        }
        self.prepare(conn, root)?;
        for r in &self.covered {
            let w = conn.generate_id().backend()?;
            conn.create_window(
                0,
                w,
                root,
                r.x as i16,
                r.y as i16,
                r.width.max(1) as u16,
                r.height.max(1) as u16,
                0,
                WindowClass::INPUT_OUTPUT,
                0,
                &CreateWindowAux::new()
                    .background_pixmap(BackPixmap::PARENT_RELATIVE)
                    .override_redirect(1),
            )
            .backend()?;
            conn.composite_redirect_window(w, Redirect::MANUAL)
                .backend()?;
            // Never in the way: no input, at the bottom of the stack.
            conn.shape_rectangles(
                shape::SO::SET,
                shape::SK::INPUT,
                ClipOrdering::UNSORTED,
                w,
                0,
                0,
                &[],
            )
            .backend()?
            .check()
            .map_err(|e| BackendError::Failed(format!("empty input shape: {e}")))?;
            conn.configure_window(w, &ConfigureWindowAux::new().stack_mode(StackMode::BELOW))
                .backend()?;
            conn.map_window(w).backend()?;
            self.backgrounds.push((w, *r));
        }
        conn.flush().backend()?;
        Ok(())
    }

    /// Turns Composite redirection on (once): from then on every top-level
    /// window keeps its own contents, covered or not.
    pub(crate) fn prepare(
        &mut self,
        conn: &RustConnection,
        root: Window,
    ) -> Result<(), BackendError> {
        if self.redirected {
            return Ok(());
        }
        if conn
            .extension_information(composite::X11_EXTENSION_NAME)
            .backend()?
            .is_none()
        {
            return Err(BackendError::Unsupported("no Composite extension".into()));
        }
        conn.composite_query_version(0, 4)
            .backend()?
            .reply()
            .backend()?;
        conn.composite_redirect_subwindows(root, Redirect::AUTOMATIC)
            .backend()?;
        conn.flush().backend()?;
        self.redirected = true;
        Ok(())
    }

    /// Sends everything the repair of `bitmap_rect` needs, to be sent just
    /// before the capture itself (the small replies are then read while
    /// the server copies the screen): the root's children and the
    /// state of the windows found beneath the indicator last time (to check
    /// that nothing moved), and the covered pieces as they would be if
    /// nothing did. [`Exclusion::finish`] reads the answers; in the usual
    /// case (no window mapped, moved or restacked since) the whole repair
    /// costs no round trip of its own.
    pub(crate) fn begin<'c>(
        &self,
        conn: &'c RustConnection,
        root: Window,
        bitmap_rect: &Rect,
    ) -> Result<Option<PendingRepair<'c>>, BackendError> {
        let todo = self.todo(bitmap_rect);
        if !self.active() || todo.is_empty() {
            return Ok(None);
        }
        let tree = conn.query_tree(root).backend()?;
        let checks = request_states(conn, &self.beneath.children)?;
        let pieces = self.request_pieces(conn, &todo, &self.beneath.windows)?;
        Ok(Some(PendingRepair {
            todo,
            tree,
            checks,
            pieces,
        }))
    }

    /// Paints the covered parts of `bitmap` (BGRX of `bitmap_rect`) from what
    /// lies beneath the indicator, with the answers to [`Exclusion::begin`];
    /// asks again (one or two more round trips) when the windows changed.
    pub(crate) fn finish(
        &mut self,
        conn: &RustConnection,
        bitmap_rect: &Rect,
        pending: PendingRepair<'_>,
        bitmap: &mut [u8],
    ) -> Result<(), BackendError> {
        let children: Vec<Window> = pending
            .tree
            .reply()
            .backend()?
            .children
            .into_iter()
            .filter(|w| !self.ours(w))
            .collect();
        let same_children = children == self.beneath.children;
        let states = read_states(pending.checks);
        let pieces = if same_children && states == self.beneath.windows {
            pending.pieces
        } else {
            drop(pending.pieces);
            let windows = if same_children {
                states
            } else {
                read_states(request_states(conn, &children)?)
            };
            self.beneath = Beneath { children, windows };
            self.request_pieces(conn, &pending.todo, &self.beneath.windows)?
        };
        paste_pieces(pieces, bitmap, bitmap_rect)
    }

    /// The covered rectangles inside `bitmap_rect`, each with its background
    /// holder.
    fn todo(&self, bitmap_rect: &Rect) -> Vec<(Rect, Option<Window>)> {
        self.covered
            .iter()
            .zip(
                self.backgrounds
                    .iter()
                    .map(|(w, _)| Some(*w))
                    .chain(std::iter::repeat(None)),
            )
            .filter_map(|(c, bg)| intersect(c, bitmap_rect).map(|r| (r, bg)))
            .collect()
    }

    /// Whether `w` is one of the indicator's windows or a background
    /// holder.
    fn ours(&self, w: &Window) -> bool {
        self.overlay.contains(w) || self.backgrounds.iter().any(|(b, _)| b == w)
    }

    /// Asks for every piece of `todo`, in paste order: the background
    /// first, then `windows` bottom to top.
    fn request_pieces<'c>(
        &self,
        conn: &'c RustConnection,
        todo: &[(Rect, Option<Window>)],
        windows: &[(Window, Rect)],
    ) -> Result<Vec<Piece<'c>>, BackendError> {
        let mut pieces = Vec::new();
        for &(r, bg) in todo {
            if let Some(bg) = bg {
                let origin = self
                    .backgrounds
                    .iter()
                    .find(|(w, _)| *w == bg)
                    .map_or((r.x, r.y), |(_, b)| (b.x, b.y));
                conn.clear_area(false, bg, 0, 0, 0, 0).backend()?;
                let image = conn
                    .get_image(
                        ImageFormat::Z_PIXMAP,
                        bg,
                        (r.x - origin.0) as i16,
                        (r.y - origin.1) as i16,
                        r.width as u16,
                        r.height as u16,
                        !0,
                    )
                    .backend()?;
                pieces.push((r, image, true));
            }
            for (w, inner) in windows {
                let Some(part) = intersect(&r, inner) else {
                    continue;
                };
                let image = conn
                    .get_image(
                        ImageFormat::Z_PIXMAP,
                        *w,
                        (part.x - inner.x) as i16,
                        (part.y - inner.y) as i16,
                        part.width as u16,
                        part.height as u16,
                        !0,
                    )
                    .backend()?;
                pieces.push((part, image, false));
            }
        }
        Ok(pieces)
    }
}

/// One covered piece asked for: where it goes, the image, and whether it
/// must answer (a background must; a window may have gone meanwhile).
type Piece<'c> = (Rect, Cookie<'c, RustConnection, GetImageReply>, bool);

/// The requests of a repair, sent with the capture.
pub(crate) struct PendingRepair<'c> {
    todo: Vec<(Rect, Option<Window>)>,
    tree: Cookie<'c, RustConnection, QueryTreeReply>,
    checks: Vec<StateCookies<'c>>,
    pieces: Vec<Piece<'c>>,
}

/// The attributes and geometry asked for one window.
type StateCookies<'c> = (
    Window,
    Cookie<'c, RustConnection, GetWindowAttributesReply>,
    Cookie<'c, RustConnection, GetGeometryReply>,
);

/// What the last repair found beneath the indicator: the root's other
/// children, bottom of the stack first, and the viewable ones among them
/// with their inside rectangles (global).
#[derive(Default)]
struct Beneath {
    children: Vec<Window>,
    windows: Vec<(Window, Rect)>,
}

/// Asks for the attributes and geometry of `windows`, all at once.
fn request_states<'c>(
    conn: &'c RustConnection,
    windows: &[Window],
) -> Result<Vec<StateCookies<'c>>, BackendError> {
    windows
        .iter()
        .map(|&w| {
            Ok((
                w,
                conn.get_window_attributes(w).backend()?,
                conn.get_geometry(w).backend()?,
            ))
        })
        .collect()
}

/// The viewable windows among the answers, with their inside rectangles;
/// a window that has gone meanwhile is left out.
fn read_states(checks: Vec<StateCookies<'_>>) -> Vec<(Window, Rect)> {
    let mut out = Vec::new();
    for (w, attrs, geom) in checks {
        let (Ok(a), Ok(g)) = (attrs.reply(), geom.reply()) else {
            continue;
        };
        if a.map_state != MapState::VIEWABLE || a.class == WindowClass::INPUT_ONLY {
            continue;
        }
        let b = i32::from(g.border_width);
        out.push((
            w,
            Rect::new(
                i32::from(g.x) + b,
                i32::from(g.y) + b,
                u32::from(g.width),
                u32::from(g.height),
            ),
        ));
    }
    out
}

/// Pastes the answered pieces in the order asked.
fn paste_pieces(
    pieces: Vec<Piece<'_>>,
    bitmap: &mut [u8],
    bitmap_rect: &Rect,
) -> Result<(), BackendError> {
    for (part, image, required) in pieces {
        match image.reply() {
            Ok(img) if img.data.len() >= part.width as usize * part.height as usize * 4 => {
                paste(bitmap, bitmap_rect, &part, &img.data);
            }
            Ok(_) => {}
            Err(e) if required => return Err(e).backend(),
            Err(_) => {} // the window is gone
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paste_writes_only_inside() {
        let bitmap_rect = Rect::new(10, 10, 4, 3);
        let mut bitmap = vec![0u8; 4 * 3 * 4];
        paste(&mut bitmap, &bitmap_rect, &Rect::new(11, 11, 2, 1), &[1; 8]);
        let row1 = &bitmap[16..32];
        assert_eq!(row1, &[0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0]);
        assert!(bitmap[..16].iter().all(|&b| b == 0));
        assert_eq!(
            intersect(&Rect::new(0, 0, 5, 5), &Rect::new(5, 0, 5, 5)),
            None
        );
        assert_eq!(
            intersect(&Rect::new(0, 0, 5, 5), &Rect::new(3, 3, 5, 5)),
            Some(Rect::new(3, 3, 2, 2))
        );
    }
}
