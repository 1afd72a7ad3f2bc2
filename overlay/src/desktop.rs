//! What the overlay needs from a desktop beyond winit: the only part that
//! differs per platform. X11 brings SHAPE regions, override-redirect and
//! its own watch of the windows; a platform where winit has the option
//! uses it instead (`Window::set_cursor_hittest` for click-through where
//! there are no input regions).

use deskhand_protocol::geometry::Rect;
use winit::window::{Window, WindowAttributes};

/// What the desktop's watcher saw happen to an overlay window (by the id
/// [`Desktop::adopt`] gave it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowNews {
    /// Mapped (visible).
    Mapped(u32),
    /// Unmapped, by us or by someone else.
    Unmapped(u32),
    /// Destroyed.
    Destroyed(u32),
    /// Partly or fully covered by another window.
    Covered(u32),
    /// Some window was mapped or restacked (it may now be above ours).
    Restacked(u32),
    /// The connection to the desktop failed.
    Closed,
}

/// The platform side of the overlay. It is cloned into a thread that
/// waits for [`Desktop::next`].
pub trait Desktop: Clone + Send + 'static {
    /// Adds what this desktop needs to an overlay window's attributes
    /// (kept out of the window manager's hands, on X11).
    fn attributes(&self, attrs: WindowAttributes) -> WindowAttributes;

    /// Starts watching `window`; answers the id the engine knows it by.
    fn adopt(&self, window: &Window) -> anyhow::Result<u32>;

    /// Sets what of the window is drawn (`visible`) and what takes input
    /// (`input`), in the window's own coordinates; nothing else of it may
    /// take a click.
    fn shape(
        &self,
        window: &Window,
        id: u32,
        visible: &[Rect],
        input: &[Rect],
    ) -> anyhow::Result<()>;

    /// Puts the window above every other.
    fn raise(&self, id: u32) -> anyhow::Result<()>;

    /// Blocks for the next piece of news about the adopted windows.
    fn next(&self) -> WindowNews;

    /// Where the pointer is now, in global desktop pixels, where the
    /// desktop says it at a click (Windows: a window that stops being
    /// click-through gets its press without a move before it); `None`
    /// leaves it to winit's cursor events.
    fn pointer(&self) -> Option<deskhand_protocol::geometry::Point> {
        None
    }
}
