//! The engine's one coordinate space: global desktop pixels (the root
//! window's on X11, the virtual screen's on Windows), and the monitors laid out in it.

pub use deskhand_backend::geometry::{Monitor, Point, Rect};

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
