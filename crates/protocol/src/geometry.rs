//! Points and rectangles in global desktop pixels (X11: the root window's):
//! the one coordinate space every crate and process of deskhand shares.

use serde::{Deserialize, Serialize};

/// A point in global desktop pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Point {
    /// Horizontal position, growing to the right.
    pub x: i32,
    /// Vertical position, growing downwards.
    pub y: i32,
}

impl Point {
    /// Builds a point.
    pub const fn new(x: i32, y: i32) -> Self {
        Self { x, y }
    }
}

/// A rectangle in global desktop pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rect {
    /// Left edge.
    pub x: i32,
    /// Top edge.
    pub y: i32,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

impl Rect {
    /// Builds a rectangle.
    pub const fn new(x: i32, y: i32, width: u32, height: u32) -> Self {
        Self {
            x,
            y,
            width,
            height,
        }
    }

    /// The rectangle in 16-bit fields (as X11 requests carry one): the
    /// origin clamped to `i16`, the size to `u16`.
    pub fn clamped_16(&self) -> (i16, i16, u16, u16) {
        let clamp = |v: i32| v.clamp(i16::MIN.into(), i16::MAX.into()) as i16;
        let size = |v: u32| v.min(u16::MAX.into()) as u16;
        (
            clamp(self.x),
            clamp(self.y),
            size(self.width),
            size(self.height),
        )
    }

    /// Exclusive right edge.
    pub fn right(&self) -> i64 {
        i64::from(self.x) + i64::from(self.width)
    }

    /// Exclusive bottom edge.
    pub fn bottom(&self) -> i64 {
        i64::from(self.y) + i64::from(self.height)
    }

    /// The middle pixel (rounded towards the top-left).
    pub fn center(&self) -> Point {
        Point::new(
            (i64::from(self.x) + i64::from(self.width) / 2) as i32,
            (i64::from(self.y) + i64::from(self.height) / 2) as i32,
        )
    }

    /// Whether `p` lies inside.
    pub fn contains(&self, p: Point) -> bool {
        i64::from(p.x) >= i64::from(self.x)
            && i64::from(p.x) < self.right()
            && i64::from(p.y) >= i64::from(self.y)
            && i64::from(p.y) < self.bottom()
    }

    /// Whether `other` lies entirely inside.
    pub fn contains_rect(&self, other: &Rect) -> bool {
        other.x >= self.x
            && other.y >= self.y
            && other.right() <= self.right()
            && other.bottom() <= self.bottom()
    }

    /// Area of the overlap with `other`.
    pub fn overlap_area(&self, other: &Rect) -> u64 {
        let w = self.right().min(other.right()) - i64::from(self.x.max(other.x));
        let h = self.bottom().min(other.bottom()) - i64::from(self.y.max(other.y));
        if w <= 0 || h <= 0 {
            0
        } else {
            (w as u64) * (h as u64)
        }
    }

    /// The overlap with `other`, when there is one.
    pub fn intersection(&self, other: &Rect) -> Option<Rect> {
        let x1 = i64::from(self.x.max(other.x));
        let y1 = i64::from(self.y.max(other.y));
        let x2 = self.right().min(other.right());
        let y2 = self.bottom().min(other.bottom());
        (x2 > x1 && y2 > y1)
            .then(|| Rect::new(x1 as i32, y1 as i32, (x2 - x1) as u32, (y2 - y1) as u32))
    }

    /// `[x1, y1, x2, y2]`.
    pub fn corners(&self) -> [i32; 4] {
        [
            self.x,
            self.y,
            self.x.saturating_add_unsigned(self.width),
            self.y.saturating_add_unsigned(self.height),
        ]
    }
}

/// A rectangle in points, as macOS lays out its displays (global display
/// coordinates: the main display's top left is the origin, y grows down).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PointRect {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub width: f64,
    /// Height.
    pub height: f64,
}

impl PointRect {
    /// One past the right edge.
    pub fn right(&self) -> f64 {
        self.x + self.width
    }

    /// One past the bottom edge.
    pub fn bottom(&self) -> f64 {
        self.y + self.height
    }

    /// Whether the point `(x, y)` is inside.
    pub fn contains(&self, x: f64, y: f64) -> bool {
        x >= self.x && x < self.right() && y >= self.y && y < self.bottom()
    }

    /// The area this rectangle shares with `o`.
    pub fn overlap(&self, o: &PointRect) -> f64 {
        let w = self.right().min(o.right()) - self.x.max(o.x);
        let h = self.bottom().min(o.bottom()) - self.y.max(o.y);
        if w > 0.0 && h > 0.0 { w * h } else { 0.0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixteen_bit_fields_clamp_what_does_not_fit() {
        assert_eq!(Rect::new(-5, 7, 100, 50).clamped_16(), (-5, 7, 100, 50));
        assert_eq!(
            Rect::new(40_000, -40_000, 70_000, 1).clamped_16(),
            (i16::MAX, i16::MIN, u16::MAX, 1)
        );
    }
}
