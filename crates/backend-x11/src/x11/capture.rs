//! Capture: MIT-SHM GetImage into a shared-memory segment (no copy out;
//! the engine encodes straight from it), plain GetImage where SHM is
//! missing, and the cursor image through XFixes.

use std::sync::Arc;

use deskhand_backend::{BackendError, Capture, Point, Rect};
use deskhand_backend::{Bitmap, CursorImage};
use x11rb::connection::{Connection, RequestConnection};
use x11rb::protocol::shm::{self, ConnectionExt as _};
use x11rb::protocol::xfixes::{self, ConnectionExt as _};
use x11rb::protocol::xproto::{ConnectionExt as _, ImageFormat};

use super::exclusion::Exclusion;
use super::{Shared, X11ResultExt};

/// A SysV shared-memory segment attached to us and to the X server.
struct Segment {
    seg: shm::Seg,
    addr: *mut u8,
    size: usize,
}

// SAFETY: the segment is only touched by the thread that owns the capture
// (the engine's desktop thread); the pointer is not shared.
unsafe impl Send for Segment {}

pub struct X11Capture {
    shared: Arc<Shared>,
    shm_ok: bool,
    xfixes_ok: bool,
    segment: Option<Segment>,
    exclusion: Exclusion,
}

impl X11Capture {
    pub fn new(shared: Arc<Shared>) -> Self {
        let conn = &shared.conn;
        let shm_ok = conn
            .extension_information(shm::X11_EXTENSION_NAME)
            .ok()
            .flatten()
            .is_some()
            && conn
                .shm_query_version()
                .ok()
                .and_then(|c| c.reply().ok())
                .is_some();
        let xfixes_ok = conn
            .extension_information(xfixes::X11_EXTENSION_NAME)
            .ok()
            .flatten()
            .is_some()
            && conn
                .xfixes_query_version(4, 0)
                .ok()
                .and_then(|c| c.reply().ok())
                .is_some();
        Self {
            exclusion: Exclusion::default(),
            shared,
            shm_ok,
            xfixes_ok,
            segment: None,
        }
    }

    pub fn uses_shm(&self) -> bool {
        self.shm_ok
    }

    pub fn has_xfixes(&self) -> bool {
        self.xfixes_ok
    }

    /// A segment of at least `size` bytes, attached to the server.
    fn segment(&mut self, size: usize) -> Result<&Segment, BackendError> {
        if self.segment.as_ref().is_some_and(|s| s.size < size) {
            self.drop_segment();
        }
        if self.segment.is_none() {
            match self.create_segment(size) {
                Ok(segment) => self.segment = Some(segment),
                Err(e) => {
                    self.shm_ok = false;
                    return Err(e);
                }
            }
        }
        self.segment
            .as_ref()
            .ok_or_else(|| BackendError::Failed("no shared-memory segment".into()))
    }

    fn create_segment(&self, size: usize) -> Result<Segment, BackendError> {
        // SAFETY: plain SysV calls; the id is marked for removal right after
        // both sides attached, so it disappears when we detach or exit.
        unsafe {
            let id = libc::shmget(libc::IPC_PRIVATE, size, libc::IPC_CREAT | 0o600);
            if id < 0 {
                return Err(BackendError::Failed("shmget failed".into()));
            }
            let addr = libc::shmat(id, std::ptr::null(), 0);
            if addr as isize == -1 {
                libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut());
                return Err(BackendError::Failed("shmat failed".into()));
            }
            let conn = &self.shared.conn;
            let attached = conn.generate_id().backend().and_then(|seg| {
                conn.shm_attach(seg, id as u32, false)
                    .backend()?
                    .check()
                    .backend()?;
                Ok(seg)
            });
            libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut());
            match attached {
                Ok(seg) => Ok(Segment {
                    seg,
                    addr: addr.cast(),
                    size,
                }),
                Err(e) => {
                    libc::shmdt(addr);
                    Err(e)
                }
            }
        }
    }

    fn drop_segment(&mut self) {
        if let Some(s) = self.segment.take() {
            let _ = self.shared.conn.shm_detach(s.seg);
            let _ = self.shared.conn.flush();
            // SAFETY: addr came from shmat and is detached once.
            unsafe {
                libc::shmdt(s.addr.cast());
            }
        }
    }

    fn capture_shm(
        &mut self,
        rect: Rect,
        sink: &mut dyn FnMut(&Bitmap<'_>),
    ) -> Result<(), BackendError> {
        let size = rect.width as usize * rect.height as usize * 4;
        let root = self.shared.root;
        let (seg, addr) = {
            let s = self.segment(size)?;
            (s.seg, s.addr)
        };
        let conn = &self.shared.conn;
        // The repair's small requests go first: their replies are read while
        // the server copies the screen into the segment.
        let repair = self.exclusion.begin(conn, root, &rect)?;
        let image = conn
            .shm_get_image(
                root,
                rect.x as i16,
                rect.y as i16,
                rect.width as u16,
                rect.height as u16,
                !0,
                ImageFormat::Z_PIXMAP.into(),
                seg,
                0,
            )
            .backend()?;
        let got = image.reply().backend()?.size as usize;
        if got < size {
            return Err(BackendError::Failed(format!(
                "short SHM image: {got} of {size} bytes"
            )));
        }
        // SAFETY: the server wrote `size` bytes into our segment of at least
        // `size` bytes, and the reply has arrived, so the write is complete;
        // the server touches the segment again only at our next request.
        let pixels = unsafe { std::slice::from_raw_parts_mut(addr, size) };
        if let Some(repair) = repair {
            self.exclusion.finish(conn, &rect, repair, pixels)?;
        }
        sink(&Bitmap::bgrx(rect.width, rect.height, pixels));
        Ok(())
    }

    fn capture_plain(
        &mut self,
        rect: Rect,
        sink: &mut dyn FnMut(&Bitmap<'_>),
    ) -> Result<(), BackendError> {
        let conn = &self.shared.conn;
        let repair = self.exclusion.begin(conn, self.shared.root, &rect)?;
        let image = conn
            .get_image(
                ImageFormat::Z_PIXMAP,
                self.shared.root,
                rect.x as i16,
                rect.y as i16,
                rect.width as u16,
                rect.height as u16,
                !0,
            )
            .backend()?;
        let mut reply = image.reply().backend()?;
        if let Some(repair) = repair {
            self.exclusion
                .finish(conn, &rect, repair, &mut reply.data)?;
        }
        sink(&Bitmap::bgrx(rect.width, rect.height, &reply.data));
        Ok(())
    }
}

impl Drop for X11Capture {
    fn drop(&mut self) {
        self.drop_segment();
    }
}

impl Capture for X11Capture {
    fn capture(
        &mut self,
        rect: Rect,
        sink: &mut dyn FnMut(&Bitmap<'_>),
    ) -> Result<(), BackendError> {
        if rect.width == 0 || rect.height == 0 || rect.width > 32767 || rect.height > 32767 {
            return Err(BackendError::Failed(format!("cannot capture {rect:?}")));
        }
        if self.shm_ok {
            match self.capture_shm(rect, sink) {
                Ok(()) => return Ok(()),
                Err(e @ BackendError::DisplayUnavailable(_)) => return Err(e),
                Err(e) => {
                    // This capture falls back; the next one tries SHM again
                    // with a fresh segment (a failed attach turns SHM off).
                    tracing::warn!(error = %e, "MIT-SHM capture failed; using GetImage this time");
                    self.drop_segment();
                }
            }
        }
        self.capture_plain(rect, sink)
    }

    fn cursor_image(&mut self) -> Result<Option<CursorImage>, BackendError> {
        if !self.xfixes_ok {
            return Ok(None);
        }
        let r = self
            .shared
            .conn
            .xfixes_get_cursor_image()
            .backend()?
            .reply()
            .backend()?;
        Ok(Some(CursorImage {
            origin: Point::new(
                i32::from(r.x) - i32::from(r.xhot),
                i32::from(r.y) - i32::from(r.yhot),
            ),
            width: u32::from(r.width),
            height: u32::from(r.height),
            argb: r.cursor_image,
        }))
    }

    fn supports_cursor(&self) -> bool {
        self.xfixes_ok
    }

    fn prepare_exclusion(&mut self) {
        if let Err(e) = self.exclusion.prepare(&self.shared.conn, self.shared.root) {
            tracing::warn!(error = %e, "cannot keep the indicator out of captures");
        }
    }

    fn exclude(&mut self, windows: &[u64], covered: &[Rect]) {
        if let Err(e) = self
            .exclusion
            .set(&self.shared.conn, self.shared.root, windows, covered)
        {
            tracing::warn!(error = %e, "cannot keep the indicator out of captures");
        }
    }
}
