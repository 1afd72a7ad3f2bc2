//! Points and pixels over a Mac's displays. macOS lays displays out in
//! global display coordinates, in points (the main display's top left is
//! the origin, y grows down); each display has a backing scale (2 on a
//! Retina panel). deskhand speaks global desktop pixels, so each display
//! gets a pixel rectangle of its real size, placed so that displays that
//! touch in points touch in pixels too: a 1× display right of a 2× one
//! starts where the 2× one's pixels end. Conversions then go through the
//! display a point or pixel is on.

use deskhand_backend::{Monitor, Point, Rect};
pub use deskhand_protocol::geometry::PointRect;
use deskhand_protocol::overlay::DisplayPlacement;

/// One display as macOS reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct Display {
    /// Its `CGDirectDisplayID`.
    pub id: u32,
    /// A name for people and logs.
    pub name: String,
    /// The main display (the menu bar's; origin of the coordinates).
    pub main: bool,
    /// `CGDisplayBounds`: where it is, in points.
    pub bounds: PointRect,
    /// Pixels per point of its backing store (1 or 2, sometimes more).
    pub scale: f64,
}

impl Display {
    fn pixel_size(&self) -> (u32, u32) {
        let s = self.scale();
        (
            (self.bounds.width * s).round().max(1.0) as u32,
            (self.bounds.height * s).round().max(1.0) as u32,
        )
    }

    fn scale(&self) -> f64 {
        if self.scale > 0.0 { self.scale } else { 1.0 }
    }
}

/// The part of a rectangle on one display.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Part {
    /// The display's `CGDirectDisplayID`.
    pub display: u32,
    /// The part in desktop pixels.
    pub pixels: Rect,
    /// The part in the display's own points, from its top left.
    pub points: PointRect,
}

/// The displays with their pixel rectangles.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    placed: Vec<(Display, Rect)>,
}

/// How close two edges must be, in points, to touch.
const TOUCH: f64 = 0.5;

/// Where `d` goes in pixels beside `a` (placed at `ap`), when they touch
/// along an edge of some length; offsets along the edge count in `a`'s
/// scale, so the shared edge meets itself.
fn beside(a: &Display, ap: Rect, d: &Display) -> Option<Rect> {
    let (w, h) = d.pixel_size();
    let (ab, db) = (&a.bounds, &d.bounds);
    let along = |from: f64, to: f64| ((to - from) * a.scale()).round() as i32;
    let vertical_overlap = ab.bottom().min(db.bottom()) - ab.y.max(db.y) > 0.0;
    let horizontal_overlap = ab.right().min(db.right()) - ab.x.max(db.x) > 0.0;
    let (x, y) = if vertical_overlap && (db.x - ab.right()).abs() < TOUCH {
        (ap.x + ap.width as i32, ap.y + along(ab.y, db.y))
    } else if vertical_overlap && (ab.x - db.right()).abs() < TOUCH {
        (ap.x - w as i32, ap.y + along(ab.y, db.y))
    } else if horizontal_overlap && (db.y - ab.bottom()).abs() < TOUCH {
        (ap.x + along(ab.x, db.x), ap.y + ap.height as i32)
    } else if horizontal_overlap && (ab.y - db.bottom()).abs() < TOUCH {
        (ap.x + along(ab.x, db.x), ap.y - h as i32)
    } else {
        return None;
    };
    Some(Rect::new(x, y, w, h))
}

/// Every display at its point origin times the largest scale: never
/// overlapping (each pixel rectangle lies inside its point rectangle
/// scaled up), though gaps may open beside lower-scale displays.
fn scaled_by_max(displays: &[Display]) -> Vec<(Display, Rect)> {
    let max = displays.iter().map(Display::scale).fold(1.0, f64::max);
    displays
        .iter()
        .map(|d| {
            let (w, h) = d.pixel_size();
            let x = (d.bounds.x * max).round() as i32;
            let y = (d.bounds.y * max).round() as i32;
            (d.clone(), Rect::new(x, y, w, h))
        })
        .collect()
}

/// Places displays beside the ones already placed, the main one first;
/// `None` when one touches none or would overlap another.
fn by_adjacency(displays: &[Display]) -> Option<Vec<(Display, Rect)>> {
    let main = displays.iter().position(|d| d.main).unwrap_or(0);
    let first = &displays[main];
    let (w, h) = first.pixel_size();
    let origin = Rect::new(
        (first.bounds.x * first.scale()).round() as i32,
        (first.bounds.y * first.scale()).round() as i32,
        w,
        h,
    );
    let mut placed = vec![(main, origin)];
    while placed.len() < displays.len() {
        let next = (0..displays.len())
            .filter(|i| placed.iter().all(|(p, _)| p != i))
            .find_map(|i| {
                placed.iter().find_map(|(p, pr)| {
                    beside(&displays[*p], *pr, &displays[i])
                        .filter(|r| placed.iter().all(|(_, q)| q.overlap_area(r) == 0))
                        .map(|r| (i, r))
                })
            })?;
        placed.push(next);
    }
    placed.sort_by_key(|(i, _)| *i);
    Some(
        placed
            .into_iter()
            .map(|(i, r)| (displays[i].clone(), r))
            .collect(),
    )
}

impl Layout {
    /// Lays `displays` out in pixels (see the module's notes).
    pub fn new(displays: Vec<Display>) -> Self {
        if displays.is_empty() {
            return Self { placed: Vec::new() };
        }
        let placed = by_adjacency(&displays).unwrap_or_else(|| {
            tracing::warn!("displays do not tile edge to edge: laid out at their largest scale");
            scaled_by_max(&displays)
        });
        Self { placed }
    }

    /// The displays as deskhand's monitors, in the order given.
    pub fn monitors(&self) -> Vec<Monitor> {
        self.placed
            .iter()
            .enumerate()
            .map(|(i, (d, r))| Monitor {
                index: i as u32,
                name: d.name.clone(),
                primary: d.main,
                rect: *r,
                scale: d.scale(),
            })
            .collect()
    }

    /// Each display's pixel rectangle and its bounds in points, in the
    /// order given (what the overlay process needs to place its windows).
    pub fn placements(&self) -> Vec<DisplayPlacement> {
        self.placed
            .iter()
            .map(|(d, r)| DisplayPlacement {
                pixels: *r,
                points: d.bounds,
            })
            .collect()
    }

    /// The bounds in points of the display whose pixel rectangle is
    /// exactly `pixels` (a monitor as the engine knows it).
    pub fn bounds_of(&self, pixels: Rect) -> Option<PointRect> {
        self.placed
            .iter()
            .find(|(_, r)| *r == pixels)
            .map(|(d, _)| d.bounds)
    }

    /// The display pixel `p` is on, and `p` in global points there.
    pub fn to_points(&self, p: Point) -> Option<(u32, f64, f64)> {
        let (d, r) = self.placed.iter().find(|(_, r)| r.contains(p))?;
        let x = d.bounds.x + f64::from(p.x - r.x) / d.scale();
        let y = d.bounds.y + f64::from(p.y - r.y) / d.scale();
        Some((d.id, x, y))
    }

    /// The pixel of global point `(x, y)`, through the display it is on,
    /// else the nearest one (the pointer can sit on a display's far edge).
    pub fn to_pixels(&self, x: f64, y: f64) -> Option<Point> {
        let (d, r) = self
            .placed
            .iter()
            .find(|(d, _)| d.bounds.contains(x, y))
            .or_else(|| self.nearest(x, y))?;
        let px = r.x + ((x - d.bounds.x) * d.scale()).floor() as i32;
        let py = r.y + ((y - d.bounds.y) * d.scale()).floor() as i32;
        Some(Point::new(px, py))
    }

    fn nearest(&self, x: f64, y: f64) -> Option<&(Display, Rect)> {
        let distance = |b: &PointRect| {
            let dx = (b.x - x).max(x - b.right()).max(0.0);
            let dy = (b.y - y).max(y - b.bottom()).max(0.0);
            dx * dx + dy * dy
        };
        self.placed
            .iter()
            .min_by(|a, b| distance(&a.0.bounds).total_cmp(&distance(&b.0.bounds)))
    }

    /// A rectangle in points (a window's bounds) in pixels, through the
    /// display it covers most; `None` when it has no area or there is no
    /// display.
    pub fn rect_to_pixels(&self, r: PointRect) -> Option<Rect> {
        if r.width <= 0.0 || r.height <= 0.0 {
            return None;
        }
        let (d, _) = self
            .placed
            .iter()
            .filter(|(d, _)| d.bounds.overlap(&r) > 0.0)
            .max_by(|a, b| a.0.bounds.overlap(&r).total_cmp(&b.0.bounds.overlap(&r)))
            .or_else(|| self.nearest(r.x, r.y))?;
        let origin = self.to_pixels_via(d, r.x, r.y);
        let s = d.scale();
        let w = (r.width * s).round().max(1.0) as u32;
        let h = (r.height * s).round().max(1.0) as u32;
        Some(Rect::new(origin.x, origin.y, w, h))
    }

    /// The parts of pixel rectangle `r` on each display: the display's
    /// id, the part in desktop pixels, and the part in the display's own
    /// points (from its top left), as ScreenCaptureKit's source rectangle.
    pub fn parts(&self, r: Rect) -> Vec<Part> {
        self.placed
            .iter()
            .filter_map(|(d, dr)| {
                let px = dr.intersection(&r)?;
                let s = d.scale();
                Some(Part {
                    display: d.id,
                    pixels: px,
                    points: PointRect {
                        x: f64::from(px.x - dr.x) / s,
                        y: f64::from(px.y - dr.y) / s,
                        width: f64::from(px.width) / s,
                        height: f64::from(px.height) / s,
                    },
                })
            })
            .collect()
    }

    /// Where pixel rectangle `r`, inside window frame `frame` (points),
    /// is in the window's own points (from its top left), for a capture
    /// of the window's image; `None` when `r` is not inside the window.
    pub fn in_window(&self, frame: PointRect, r: Rect) -> Option<PointRect> {
        let window = self.rect_to_pixels(frame)?;
        if !window.contains_rect(&r) {
            return None;
        }
        let s = self
            .placed
            .iter()
            .filter(|(d, _)| d.bounds.overlap(&frame) > 0.0)
            .max_by(|a, b| {
                a.0.bounds
                    .overlap(&frame)
                    .total_cmp(&b.0.bounds.overlap(&frame))
            })
            .or_else(|| self.nearest(frame.x, frame.y))
            .map_or(1.0, |(d, _)| d.scale());
        Some(PointRect {
            x: f64::from(r.x - window.x) / s,
            y: f64::from(r.y - window.y) / s,
            width: f64::from(r.width) / s,
            height: f64::from(r.height) / s,
        })
    }

    fn to_pixels_via(&self, d: &Display, x: f64, y: f64) -> Point {
        let r = self
            .placed
            .iter()
            .find(|(p, _)| p.id == d.id)
            .map_or(Rect::new(0, 0, 1, 1), |(_, r)| *r);
        Point::new(
            r.x + ((x - d.bounds.x) * d.scale()).round() as i32,
            r.y + ((y - d.bounds.y) * d.scale()).round() as i32,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn display(id: u32, main: bool, (x, y, w, h): (f64, f64, f64, f64), scale: f64) -> Display {
        Display {
            id,
            name: format!("display-{id}"),
            main,
            bounds: PointRect {
                x,
                y,
                width: w,
                height: h,
            },
            scale,
        }
    }

    /// A 2× laptop (1440×900 points) with a 1× monitor (1920×1080) on its
    /// right, tops aligned, and a 1× monitor (1280×1024) on its left, 100
    /// points lower.
    fn mixed() -> Layout {
        Layout::new(vec![
            display(1, true, (0.0, 0.0, 1440.0, 900.0), 2.0),
            display(2, false, (1440.0, 0.0, 1920.0, 1080.0), 1.0),
            display(3, false, (-1280.0, 100.0, 1280.0, 1024.0), 1.0),
        ])
    }

    #[test]
    fn displays_that_touch_in_points_touch_in_pixels() {
        let m = mixed().monitors();
        assert_eq!(m[0].rect, Rect::new(0, 0, 2880, 1800));
        assert_eq!(m[1].rect, Rect::new(2880, 0, 1920, 1080));
        assert_eq!(m[2].rect, Rect::new(-1280, 200, 1280, 1024));
        assert!(m[0].primary && !m[1].primary);
        assert_eq!(m[0].scale, 2.0);
        assert_eq!(m[0].logical_size(), [1440, 900]);
        assert_eq!(m[1].logical_size(), [1920, 1080]);
    }

    #[test]
    fn pixels_and_points_convert_through_their_display() {
        let l = mixed();
        assert_eq!(
            l.to_points(Point::new(2879, 1799)),
            Some((1, 1439.5, 899.5))
        );
        assert_eq!(l.to_points(Point::new(2880, 10)), Some((2, 1440.0, 10.0)));
        assert_eq!(l.to_points(Point::new(-1, 200)), Some((3, -1.0, 100.0)));
        assert_eq!(
            l.to_points(Point::new(-1, 199)),
            None,
            "above the left display"
        );
        assert_eq!(l.to_pixels(1439.5, 899.5), Some(Point::new(2879, 1799)));
        assert_eq!(l.to_pixels(1440.0, 10.0), Some(Point::new(2880, 10)));
        assert_eq!(l.to_pixels(-1.0, 100.0), Some(Point::new(-1, 200)));
        // Off every display: through the nearest.
        assert_eq!(l.to_pixels(3360.0, 5.0), Some(Point::new(4800, 5)));
        for p in [
            Point::new(0, 0),
            Point::new(1234, 567),
            Point::new(4000, 1000),
        ] {
            let (_, x, y) = l.to_points(p).expect("on a display");
            assert_eq!(l.to_pixels(x, y), Some(p), "{p:?}");
        }
    }

    #[test]
    fn a_window_converts_through_the_display_it_covers_most() {
        let l = mixed();
        let window = PointRect {
            x: 1400.0,
            y: 100.0,
            width: 400.0,
            height: 300.0,
        };
        assert_eq!(
            l.rect_to_pixels(window),
            Some(Rect::new(2840, 100, 400, 300))
        );
        let on_laptop = PointRect {
            x: 100.0,
            y: 50.0,
            width: 200.0,
            height: 100.0,
        };
        assert_eq!(
            l.rect_to_pixels(on_laptop),
            Some(Rect::new(200, 100, 400, 200))
        );
        let empty = PointRect {
            width: 0.0,
            ..on_laptop
        };
        assert_eq!(l.rect_to_pixels(empty), None);
    }

    #[test]
    fn a_display_below_keeps_its_horizontal_offset_in_the_upper_ones_scale() {
        let l = Layout::new(vec![
            display(1, true, (0.0, 0.0, 1440.0, 900.0), 2.0),
            display(2, false, (200.0, 900.0, 1920.0, 1080.0), 1.0),
        ]);
        assert_eq!(l.monitors()[1].rect, Rect::new(400, 1800, 1920, 1080));
    }

    #[test]
    fn displays_that_do_not_tile_fall_back_to_the_largest_scale() {
        // A gap between them: nothing to place the second beside.
        let l = Layout::new(vec![
            display(1, true, (0.0, 0.0, 1440.0, 900.0), 2.0),
            display(2, false, (2000.0, 0.0, 800.0, 600.0), 1.0),
        ]);
        let m = l.monitors();
        assert_eq!(m[0].rect, Rect::new(0, 0, 2880, 1800));
        assert_eq!(m[1].rect, Rect::new(4000, 0, 800, 600));
        assert_eq!(m[0].rect.overlap_area(&m[1].rect), 0);
    }

    #[test]
    fn a_rectangle_across_displays_is_cut_into_their_parts() {
        let l = mixed();
        let parts = l.parts(Rect::new(2780, 100, 200, 50));
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].display, 1);
        assert_eq!(parts[0].pixels, Rect::new(2780, 100, 100, 50));
        assert_eq!(
            parts[0].points,
            PointRect {
                x: 1390.0,
                y: 50.0,
                width: 50.0,
                height: 25.0
            }
        );
        assert_eq!(parts[1].display, 2);
        assert_eq!(parts[1].pixels, Rect::new(2880, 100, 100, 50));
        assert_eq!(parts[1].points.x, 0.0);
        assert!(l.parts(Rect::new(-5000, 0, 10, 10)).is_empty());
    }

    #[test]
    fn a_part_of_a_window_is_found_in_its_own_points() {
        let l = mixed();
        let frame = PointRect {
            x: 100.0,
            y: 50.0,
            width: 200.0,
            height: 100.0,
        };
        // The window is (200, 100, 400, 200) in pixels on the 2× display.
        let part = l.in_window(frame, Rect::new(220, 140, 100, 40));
        assert_eq!(
            part,
            Some(PointRect {
                x: 10.0,
                y: 20.0,
                width: 50.0,
                height: 20.0
            })
        );
        assert_eq!(l.in_window(frame, Rect::new(150, 100, 100, 40)), None);
    }

    #[test]
    fn one_display_at_scale_one_is_its_points() {
        let l = Layout::new(vec![display(7, true, (0.0, 0.0, 1280.0, 800.0), 1.0)]);
        assert_eq!(l.monitors()[0].rect, Rect::new(0, 0, 1280, 800));
        assert_eq!(l.to_points(Point::new(5, 6)), Some((7, 5.0, 6.0)));
        assert!(Layout::new(Vec::new()).monitors().is_empty());
    }
}
