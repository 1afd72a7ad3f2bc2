//! Screenshots (computer tool): the selected displays laid out in one image at
//! one scale, and the mapping between its pixels and global desktop
//! pixels. Pure arithmetic: the pixels themselves are scaled and composed
//! by `deskhand-encode` (see `shot_capture.rs`).
//!
//! Rules: negative origins are kept; gaps are black and not clickable;
//! mirrored displays (the same rectangle) count once, the primary winning;
//! overlapping displays that are not mirrors fail closed; a screenshot is only
//! good for the layout it was made from (`DESKTOP_LAYOUT_CHANGED`).

use serde::Serialize;

use crate::error::EngineError;
use crate::geometry::{Layout, Monitor, Point, Rect};

/// Anthropic's long-edge cap, in pixels.
pub const ANTHROPIC_LONG_EDGE: f64 = 1568.0;
/// Anthropic's area cap, in pixels (about 1.15 megapixels).
pub const ANTHROPIC_MAX_PIXELS: f64 = 1.15e6;
/// OpenAI's high-detail image box: the image fits a square this size...
pub const OPENAI_BOX: f64 = 2048.0;
/// ...and then its short edge is at most this.
pub const OPENAI_SHORT_EDGE: f64 = 768.0;

/// The image caps of the client the screenshot is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum VendorCap {
    /// Only `max_width`/`max_height`.
    #[default]
    None,
    /// `min(1, 1568/max(w,h), sqrt(1.15e6/(w·h)))`.
    Anthropic,
    /// Fit 2048×2048, then a short edge of at most 768 (OpenAI's
    /// documented high-detail image processing).
    OpenAi,
}

impl VendorCap {
    /// The largest scale the vendor accepts for a `w` × `h` image.
    pub fn scale(self, w: u32, h: u32) -> f64 {
        let (w, h) = (f64::from(w.max(1)), f64::from(h.max(1)));
        match self {
            Self::None => 1.0,
            Self::Anthropic => 1f64
                .min(ANTHROPIC_LONG_EDGE / w.max(h))
                .min((ANTHROPIC_MAX_PIXELS / (w * h)).sqrt()),
            Self::OpenAi => 1f64
                .min(OPENAI_BOX / w.max(h))
                .min(OPENAI_SHORT_EDGE / w.min(h)),
        }
    }
}

/// The size limits of a screenshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShotLimits {
    /// Widest screenshot, in pixels.
    pub max_width: u32,
    /// Tallest screenshot, in pixels.
    pub max_height: u32,
    /// The client's own caps.
    pub vendor: VendorCap,
}

impl Default for ShotLimits {
    /// 1920×1200, no vendor cap (the computer-tool spec's defaults).
    fn default() -> Self {
        Self {
            max_width: 1920,
            max_height: 1200,
            vendor: VendorCap::None,
        }
    }
}

/// Which displays a screenshot shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DisplaySelect {
    /// Every display, in one composite.
    #[default]
    All,
    /// The primary display.
    Primary,
    /// One display, by index.
    One(u32),
}

/// One display of a screenshot: where it is on the desktop and in the image.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShotDisplay {
    /// The display's index.
    pub index: u32,
    /// Its name.
    pub name: String,
    /// Whether it is the primary display.
    pub primary: bool,
    /// The part of it the screenshot shows, in global desktop pixels.
    pub rect: Rect,
    /// Where that part is in the image, in screenshot pixels.
    pub pixel: Rect,
    /// The display's own scale (physical per logical pixel).
    pub scale: f64,
}

/// A screenshot's geometry: its size, its displays, and the layout it was
/// made from.
#[derive(Debug, Clone, PartialEq)]
pub struct ShotPlan {
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// The global rectangle the image shows.
    pub bounds: Rect,
    /// Screenshot pixels per global pixel (≤ 1).
    pub scale: f64,
    /// The displays, sorted by top, then left, then index.
    pub displays: Vec<ShotDisplay>,
    layout: Vec<(u32, Rect, u64)>,
}

/// The layout's identity for the change check: index, rectangle, scale.
fn fingerprint(layout: &Layout) -> Vec<(u32, Rect, u64)> {
    let mut v: Vec<_> = layout
        .monitors
        .iter()
        .map(|m| (m.index, m.rect, m.scale.to_bits()))
        .collect();
    v.sort_by_key(|(i, ..)| *i);
    v
}

/// The displays of `layout` a screenshot may show: checked, mirrors coalesced.
fn usable_displays(layout: &Layout) -> Result<Vec<Monitor>, EngineError> {
    let mut kept: Vec<Monitor> = Vec::new();
    for m in &layout.monitors {
        if !(m.scale.is_finite() && m.scale > 0.0) || m.rect.width == 0 || m.rect.height == 0 {
            return Err(unusable(format!(
                "display {} has an invalid size or scale",
                m.index
            )));
        }
        if layout
            .monitors
            .iter()
            .filter(|o| o.index == m.index)
            .count()
            > 1
        {
            return Err(unusable(format!(
                "display id {} is reported twice",
                m.index
            )));
        }
        match kept.iter_mut().find(|k| k.rect == m.rect) {
            Some(twin) if m.primary && !twin.primary => *twin = m.clone(),
            Some(_) => {}
            None => kept.push(m.clone()),
        }
    }
    for (i, a) in kept.iter().enumerate() {
        if let Some(b) = kept[i + 1..]
            .iter()
            .find(|b| a.rect.overlap_area(&b.rect) > 0)
        {
            return Err(unusable(format!(
                "displays {} and {} overlap without mirroring each other",
                a.index, b.index
            )));
        }
    }
    if kept.is_empty() {
        return Err(unusable("no display is connected".into()));
    }
    Ok(kept)
}

fn unusable(why: String) -> EngineError {
    EngineError::LayoutUnusable { why }
}

/// `x` floored, with a little slack for float error (1919.9999999 → 1920).
fn floor(x: f64) -> i64 {
    (x + 1e-7).floor() as i64
}

impl ShotPlan {
    /// Plans a screenshot of `select` on `layout` within `limits`.
    pub fn new(
        layout: &Layout,
        select: DisplaySelect,
        limits: ShotLimits,
    ) -> Result<Self, EngineError> {
        let displays = usable_displays(layout)?;
        let chosen: Vec<Monitor> = match select {
            DisplaySelect::All => displays,
            DisplaySelect::Primary => {
                let primary = layout.primary().map(|m| m.rect);
                displays
                    .into_iter()
                    .filter(|m| Some(m.rect) == primary)
                    .collect()
            }
            DisplaySelect::One(index) => {
                // A mirror coalesced away is selected through its twin.
                let wanted = layout.get(index).ok_or_else(|| {
                    EngineError::invalid(
                        "display",
                        format!(
                            "no display {index}; the displays are {:?}",
                            layout.monitors.iter().map(|m| m.index).collect::<Vec<_>>()
                        ),
                    )
                })?;
                displays
                    .into_iter()
                    .filter(|m| m.rect == wanted.rect)
                    .collect()
            }
        };
        let parts = chosen.into_iter().map(|m| (m.rect, m)).collect();
        Self::build(layout, parts, None, limits)
    }

    /// Plans a zoom: the global `region` of the displays this screenshot shows,
    /// at up to full detail within `limits`.
    pub fn zoom(
        &self,
        layout: &Layout,
        region: Rect,
        limits: ShotLimits,
    ) -> Result<Self, EngineError> {
        let parts = self
            .displays
            .iter()
            .filter_map(|d| {
                let m = layout.get(d.index)?.clone();
                d.rect.intersection(&region).map(|r| (r, m))
            })
            .collect::<Vec<_>>();
        if parts.is_empty() {
            return Err(EngineError::CoordinateOutOfBounds {
                point: [i64::from(region.x), i64::from(region.y)],
                shot_size: [self.width, self.height],
                why: "the zoom region covers no display",
            });
        }
        Self::build(layout, parts, Some(region), limits)
    }

    /// Lays `parts` (global rectangle, its display) out in one image.
    fn build(
        layout: &Layout,
        mut parts: Vec<(Rect, Monitor)>,
        bounds: Option<Rect>,
        limits: ShotLimits,
    ) -> Result<Self, EngineError> {
        parts.sort_by_key(|(r, m)| (r.y, r.x, m.index));
        let bounds = bounds.unwrap_or_else(|| {
            Layout::new(
                parts
                    .iter()
                    .map(|(r, m)| Monitor {
                        rect: *r,
                        ..m.clone()
                    })
                    .collect(),
            )
            .bounds()
            .unwrap_or(Rect::new(0, 0, 1, 1))
        });
        let (bw, bh) = (bounds.width.max(1), bounds.height.max(1));
        let scale = 1f64
            .min(f64::from(limits.max_width.max(1)) / f64::from(bw))
            .min(f64::from(limits.max_height.max(1)) / f64::from(bh))
            .min(limits.vendor.scale(bw, bh));
        let width = floor(f64::from(bw) * scale).max(1) as u32;
        let height = floor(f64::from(bh) * scale).max(1) as u32;
        let (sx, sy) = (
            f64::from(width) / f64::from(bw),
            f64::from(height) / f64::from(bh),
        );
        let edge = |g: i32, origin: i32, s: f64| floor(f64::from(g - origin) * s);
        let displays = parts
            .into_iter()
            .map(|(r, m)| {
                let x0 = edge(r.x, bounds.x, sx);
                let y0 = edge(r.y, bounds.y, sy);
                let x1 = floor((r.right() - i64::from(bounds.x)) as f64 * sx);
                let y1 = floor((r.bottom() - i64::from(bounds.y)) as f64 * sy);
                ShotDisplay {
                    index: m.index,
                    name: m.name,
                    primary: m.primary,
                    rect: r,
                    pixel: Rect::new(x0 as i32, y0 as i32, (x1 - x0) as u32, (y1 - y0) as u32),
                    scale: m.scale,
                }
            })
            .collect();
        Ok(Self {
            width,
            height,
            bounds,
            scale,
            displays,
            layout: fingerprint(layout),
        })
    }

    /// Whether `layout` is still the one this screenshot was made from.
    pub fn check_layout(&self, layout: &Layout) -> Result<(), EngineError> {
        if fingerprint(layout) == self.layout {
            Ok(())
        } else {
            Err(EngineError::LayoutChanged)
        }
    }

    /// The global desktop pixel under screenshot pixel (`x`, `y`).
    pub fn to_global(&self, x: i64, y: i64) -> Result<Point, EngineError> {
        let out = |why| EngineError::CoordinateOutOfBounds {
            point: [x, y],
            shot_size: [self.width, self.height],
            why,
        };
        if x < 0 || y < 0 {
            return Err(out("coordinates must not be negative"));
        }
        if x >= i64::from(self.width) || y >= i64::from(self.height) {
            return Err(out(
                "the point is on or past the screenshot's right or bottom edge",
            ));
        }
        let d = self
            .displays
            .iter()
            .find(|d| d.pixel.contains(Point::new(x as i32, y as i32)))
            .ok_or_else(|| out("the point is in a gap between displays"))?;
        let map = |p: i64, p0: i32, pw: u32, g0: i32, gw: u32| {
            let off = ((p - i64::from(p0)) as f64 + 0.5) * f64::from(gw) / f64::from(pw.max(1));
            i64::from(g0) + (off.floor() as i64).clamp(0, i64::from(gw) - 1)
        };
        Ok(Point::new(
            map(x, d.pixel.x, d.pixel.width, d.rect.x, d.rect.width) as i32,
            map(y, d.pixel.y, d.pixel.height, d.rect.y, d.rect.height) as i32,
        ))
    }

    /// The screenshot pixel showing global pixel `p`, when the screenshot shows it.
    pub fn to_shot(&self, p: Point) -> Option<[i64; 2]> {
        let d = self.displays.iter().find(|d| d.rect.contains(p))?;
        let map = |g: i32, g0: i32, gw: u32, p0: i32, pw: u32| {
            let off = (f64::from(g - g0) + 0.5) * f64::from(pw) / f64::from(gw);
            i64::from(p0) + (off.floor() as i64).clamp(0, i64::from(pw.max(1)) - 1)
        };
        Some([
            map(p.x, d.rect.x, d.rect.width, d.pixel.x, d.pixel.width),
            map(p.y, d.rect.y, d.rect.height, d.pixel.y, d.pixel.height),
        ])
    }

    /// Where the global rectangle `r` shows in the screenshot: one screenshot
    /// rectangle per display it lies on (none when the screenshot does not show
    /// it), each covering every screenshot pixel that shows part of it.
    pub fn rect_to_shot(&self, r: Rect) -> Vec<Rect> {
        let mut out = Vec::new();
        for d in &self.displays {
            let Some(part) = r.intersection(&d.rect) else {
                continue;
            };
            let (sx, sy) = (
                f64::from(d.pixel.width) / f64::from(d.rect.width.max(1)),
                f64::from(d.pixel.height) / f64::from(d.rect.height.max(1)),
            );
            let x0 = floor(f64::from(part.x - d.rect.x) * sx);
            let y0 = floor(f64::from(part.y - d.rect.y) * sy);
            let x1 = ((part.right() - i64::from(d.rect.x)) as f64 * sx - 1e-7).ceil() as i64;
            let y1 = ((part.bottom() - i64::from(d.rect.y)) as f64 * sy - 1e-7).ceil() as i64;
            out.push(Rect::new(
                d.pixel.x + x0 as i32,
                d.pixel.y + y0 as i32,
                (x1 - x0).max(1) as u32,
                (y1 - y0).max(1) as u32,
            ));
        }
        out
    }

    /// The global rectangle under the screenshot rectangle `[x1, y1, x2, y2]`
    /// (exclusive right and bottom), for a zoom.
    pub fn region_to_global(&self, corners: [i64; 4]) -> Result<Rect, EngineError> {
        let [x1, y1, x2, y2] = corners;
        let out = |why| EngineError::CoordinateOutOfBounds {
            point: [x1, y1],
            shot_size: [self.width, self.height],
            why,
        };
        if x1 < 0 || y1 < 0 {
            return Err(out("coordinates must not be negative"));
        }
        if x2 <= x1 || y2 <= y1 {
            return Err(out("the region must have x1 < x2 and y1 < y2"));
        }
        if x2 > i64::from(self.width) || y2 > i64::from(self.height) {
            return Err(out("the region reaches past the screenshot's edges"));
        }
        let g = |v: i64, origin: i32, s: f64| i64::from(origin) + floor(v as f64 / s);
        let sx = f64::from(self.width) / f64::from(self.bounds.width.max(1));
        let sy = f64::from(self.height) / f64::from(self.bounds.height.max(1));
        let (gx1, gy1) = (g(x1, self.bounds.x, sx), g(y1, self.bounds.y, sy));
        let gx2 = g(x2, self.bounds.x, sx).min(self.bounds.right());
        let gy2 = g(y2, self.bounds.y, sy).min(self.bounds.bottom());
        Ok(Rect::new(
            gx1 as i32,
            gy1 as i32,
            (gx2 - gx1).max(1) as u32,
            (gy2 - gy1).max(1) as u32,
        ))
    }
}

#[cfg(test)]
#[path = "shot_tests.rs"]
mod tests;
