//! The one coordinate space of every backend: global desktop pixels, and
//! the monitors laid out in it.

use serde::Serialize;

pub use deskhand_protocol::geometry::{Point, Rect};

/// One display as the backend reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Monitor {
    /// Stable index (order reported by the backend).
    pub index: u32,
    /// Name such as `DUMMY0` or `screen`.
    pub name: String,
    /// Whether this is the primary display.
    pub primary: bool,
    /// Position and size in physical pixels.
    pub rect: Rect,
    /// Physical pixels per logical pixel.
    pub scale: f64,
}

impl Monitor {
    /// Size in logical pixels.
    pub fn logical_size(&self) -> [u32; 2] {
        let s = if self.scale > 0.0 { self.scale } else { 1.0 };
        [
            (f64::from(self.rect.width) / s).round() as u32,
            (f64::from(self.rect.height) / s).round() as u32,
        ]
    }
}
