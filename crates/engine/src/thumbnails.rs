//! Small copies of the images agents were shown (screenshots of every kind,
//! zooms), kept per session for the person's timeline in the tray app's
//! Activity window. Only a host that shows them turns them on; a headless
//! daemon makes none. Bounded: the newest per session, the newest sessions.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use deskhand_encode::{Bitmap, Thumbnail};

/// The widest thumbnail, in pixels.
pub const MAX_WIDTH: u32 = 240;
/// Thumbnails kept per session.
const PER_SESSION: usize = 40;
/// Sessions whose thumbnails are kept.
const SESSIONS: usize = 16;

/// What the timeline lists of a thumbnail (its bytes are fetched by id).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ThumbnailInfo {
    /// Its number, unique while deskhand runs.
    pub id: u64,
    /// The session it was shown to.
    pub session: String,
    /// When the agent got it (seconds since the Unix epoch, as audit records).
    pub ts: f64,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

#[derive(Debug)]
struct Kept {
    info: ThumbnailInfo,
    jpeg: Arc<Vec<u8>>,
}

/// The kept thumbnails, newest session last.
#[derive(Debug, Default)]
pub(crate) struct Thumbnails {
    wanted: AtomicBool,
    next: AtomicU64,
    sessions: Mutex<VecDeque<(String, VecDeque<Kept>)>>,
}

impl Thumbnails {
    /// From now on thumbnails are made and kept.
    pub(crate) fn want(&self) {
        self.wanted.store(true, Ordering::Relaxed);
    }

    /// A thumbnail of `bitmap` when they are wanted (made on the desktop
    /// thread while the captured pixels are at hand).
    pub(crate) fn of(&self, bitmap: &Bitmap<'_>) -> Option<Thumbnail> {
        if !self.wanted.load(Ordering::Relaxed) {
            return None;
        }
        deskhand_encode::thumbnail(bitmap, MAX_WIDTH)
            .inspect_err(|e| tracing::debug!(error = %e, "no thumbnail"))
            .ok()
    }

    /// Keeps `thumbnail` as shown to `session` now.
    pub(crate) fn keep(&self, session: &str, thumbnail: Option<Thumbnail>) {
        let Some(t) = thumbnail else {
            return;
        };
        let kept = Kept {
            info: ThumbnailInfo {
                id: self.next.fetch_add(1, Ordering::Relaxed) + 1,
                session: session.to_owned(),
                ts: crate::audit::now_ts(),
                width: t.width,
                height: t.height,
            },
            jpeg: Arc::new(t.jpeg),
        };
        let Ok(mut sessions) = self.sessions.lock() else {
            return;
        };
        let at = match sessions.iter().position(|(s, _)| s == session) {
            Some(i) => i,
            None => {
                if sessions.len() == SESSIONS {
                    sessions.pop_front();
                }
                sessions.push_back((session.to_owned(), VecDeque::new()));
                sessions.len() - 1
            }
        };
        let list = &mut sessions[at].1;
        if list.len() == PER_SESSION {
            list.pop_front();
        }
        list.push_back(kept);
    }

    /// Every kept thumbnail, oldest first per session.
    pub(crate) fn list(&self) -> Vec<ThumbnailInfo> {
        let Ok(sessions) = self.sessions.lock() else {
            return Vec::new();
        };
        sessions
            .iter()
            .flat_map(|(_, list)| list.iter().map(|k| k.info.clone()))
            .collect()
    }

    /// The JPEG bytes of thumbnail `id`, while it is kept.
    pub(crate) fn jpeg(&self, id: u64) -> Option<Arc<Vec<u8>>> {
        let sessions = self.sessions.lock().ok()?;
        sessions
            .iter()
            .flat_map(|(_, list)| list.iter())
            .find(|k| k.info.id == id)
            .map(|k| k.jpeg.clone())
    }
}

impl crate::Engine {
    /// Makes and keeps a thumbnail of every image an agent is shown from
    /// now on, for the person's timeline (the tray app).
    pub fn keep_thumbnails(&self) {
        self.thumbnails.want();
    }

    /// The kept thumbnails, oldest first per session.
    pub fn thumbnails(&self) -> Vec<ThumbnailInfo> {
        self.thumbnails.list()
    }

    /// The JPEG of thumbnail `id`, while it is kept.
    pub fn thumbnail_jpeg(&self, id: u64) -> Option<Arc<Vec<u8>>> {
        self.thumbnails.jpeg(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Thumbnail {
        Thumbnail {
            width: 2,
            height: 1,
            jpeg: vec![0xff, 0xd8],
        }
    }

    #[test]
    fn none_are_made_until_a_host_wants_them() {
        let thumbs = Thumbnails::default();
        let pixels = [0u8; 16];
        let bitmap = Bitmap {
            width: 2,
            height: 2,
            stride: 8,
            format: deskhand_encode::PixelFormat::Bgrx,
            pixels: &pixels,
        };
        assert!(thumbs.of(&bitmap).is_none());
        thumbs.want();
        assert!(thumbs.of(&bitmap).is_some());
    }

    #[test]
    fn the_newest_are_kept_per_session_and_the_newest_sessions() {
        let thumbs = Thumbnails::default();
        for _ in 0..PER_SESSION + 5 {
            thumbs.keep("a", Some(small()));
        }
        let a = thumbs.list();
        assert_eq!(a.len(), PER_SESSION);
        assert_eq!(a[0].id, 6, "the oldest five went");
        assert!(thumbs.jpeg(1).is_none() && thumbs.jpeg(6).is_some());
        for s in 0..SESSIONS {
            thumbs.keep(&format!("s{s}"), Some(small()));
        }
        assert!(
            thumbs.list().iter().all(|t| t.session != "a"),
            "the oldest session went"
        );
        assert_eq!(thumbs.list().len(), SESSIONS);
    }
}
