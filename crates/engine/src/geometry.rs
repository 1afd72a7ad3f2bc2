//! The engine's one coordinate space: global desktop pixels (X11 root
//! coordinates), and the monitors laid out in it.

use serde::Serialize;

/// A point in global desktop pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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

    /// Exclusive right edge.
    pub fn right(&self) -> i64 {
        i64::from(self.x) + i64::from(self.width)
    }

    /// Exclusive bottom edge.
    pub fn bottom(&self) -> i64 {
        i64::from(self.y) + i64::from(self.height)
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

/// The monitors of the desktop.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Layout {
    /// Every monitor, by index.
    pub monitors: Vec<Monitor>,
}

impl Layout {
    /// Builds a layout.
    pub fn new(monitors: Vec<Monitor>) -> Self {
        Self { monitors }
    }

    /// The monitor under `p`, if any.
    pub fn monitor_at(&self, p: Point) -> Option<&Monitor> {
        self.monitors.iter().find(|m| m.rect.contains(p))
    }

    /// Whether `p` lies on some monitor (the union of display bounds).
    pub fn contains(&self, p: Point) -> bool {
        self.monitor_at(p).is_some()
    }

    /// The primary monitor, or the first one.
    pub fn primary(&self) -> Option<&Monitor> {
        self.monitors
            .iter()
            .find(|m| m.primary)
            .or_else(|| self.monitors.first())
    }

    /// The monitor with this index.
    pub fn get(&self, index: u32) -> Option<&Monitor> {
        self.monitors.iter().find(|m| m.index == index)
    }

    /// The monitor that overlaps `r` most.
    pub fn best_for(&self, r: &Rect) -> Option<&Monitor> {
        self.monitors
            .iter()
            .max_by_key(|m| m.rect.overlap_area(r))
            .filter(|m| m.rect.overlap_area(r) > 0)
    }

    /// The bounding box of every monitor.
    pub fn bounds(&self) -> Option<Rect> {
        let first = self.monitors.first()?;
        let (mut x1, mut y1) = (i64::from(first.rect.x), i64::from(first.rect.y));
        let (mut x2, mut y2) = (first.rect.right(), first.rect.bottom());
        for m in &self.monitors[1..] {
            x1 = x1.min(i64::from(m.rect.x));
            y1 = y1.min(i64::from(m.rect.y));
            x2 = x2.max(m.rect.right());
            y2 = y2.max(m.rect.bottom());
        }
        Some(Rect::new(
            x1 as i32,
            y1 as i32,
            (x2 - x1) as u32,
            (y2 - y1) as u32,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two() -> Layout {
        Layout::new(vec![
            Monitor {
                index: 0,
                name: "A".into(),
                primary: true,
                rect: Rect::new(0, 0, 1280, 800),
                scale: 1.0,
            },
            Monitor {
                index: 1,
                name: "B".into(),
                primary: false,
                rect: Rect::new(1280, 0, 1024, 768),
                scale: 2.0,
            },
        ])
    }

    #[test]
    fn union_of_displays_not_bounding_box() {
        let l = two();
        assert!(l.contains(Point::new(1300, 10)));
        assert!(
            !l.contains(Point::new(1300, 790)),
            "below the smaller display"
        );
        assert!(!l.contains(Point::new(2304, 0)), "right edge is exclusive");
        assert_eq!(l.bounds(), Some(Rect::new(0, 0, 2304, 800)));
    }

    #[test]
    fn best_monitor_for_a_region() {
        let l = two();
        assert_eq!(
            l.best_for(&Rect::new(1200, 0, 200, 10)).map(|m| m.index),
            Some(1)
        );
        assert_eq!(l.get(1).map(Monitor::logical_size), Some([512, 384]));
    }
}
