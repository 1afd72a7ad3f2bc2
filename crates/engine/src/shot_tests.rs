//! Mapping tests of screenshots: fixed layouts, and properties over layouts
//! drawn from a seeded generator (no test dependency needed).

use super::*;
use deskhand_protocol::ErrorCode;

fn mon(index: u32, primary: bool, rect: Rect, scale: f64) -> Monitor {
    Monitor {
        index,
        name: format!("M{index}"),
        primary,
        rect,
        scale,
    }
}

fn code(e: EngineError) -> ErrorCode {
    e.code()
}

fn one_1080p() -> Layout {
    Layout::new(vec![mon(0, true, Rect::new(0, 0, 1920, 1080), 1.0)])
}

/// Left display at a negative origin, a taller one right of it with a gap
/// below the first.
fn negative_pair() -> Layout {
    Layout::new(vec![
        mon(0, true, Rect::new(0, 0, 1920, 1080), 1.0),
        mon(1, false, Rect::new(-1280, 0, 1280, 800), 2.0),
    ])
}

#[test]
fn anthropic_cap_follows_the_formula() {
    let s = VendorCap::Anthropic.scale(1920, 1080);
    let expect = (1568f64 / 1920.0).min((1.15e6f64 / (1920.0 * 1080.0)).sqrt());
    assert!((s - expect).abs() < 1e-12);
    let p = ShotPlan::new(&one_1080p(), DisplaySelect::All, anthropic()).expect("plan");
    assert!(p.width <= 1568 && p.height <= 1568);
    assert!(f64::from(p.width) * f64::from(p.height) <= 1.15e6);
    assert_eq!((p.width, p.height), (1429, 804));
    assert_eq!(
        VendorCap::Anthropic.scale(1024, 768),
        1.0,
        "XGA is left alone"
    );
    // A tall thin desktop is bound by the long edge.
    let s = VendorCap::Anthropic.scale(400, 4000);
    assert!((s - 1568.0 / 4000.0).abs() < 1e-12);
}

#[test]
fn openai_cap_fits_2048_then_a_768_short_edge() {
    let p = ShotPlan::new(&one_1080p(), DisplaySelect::All, openai()).expect("plan");
    assert_eq!((p.width, p.height), (1365, 768));
    assert_eq!(VendorCap::OpenAi.scale(1024, 768), 1.0);
    let s = VendorCap::OpenAi.scale(8000, 1000);
    assert!((s - 2048.0 / 8000.0).abs() < 1e-12, "the box binds first");
}

fn anthropic() -> ShotLimits {
    ShotLimits {
        vendor: VendorCap::Anthropic,
        ..ShotLimits::default()
    }
}

fn openai() -> ShotLimits {
    ShotLimits {
        vendor: VendorCap::OpenAi,
        ..ShotLimits::default()
    }
}

#[test]
fn max_width_and_height_bound_the_screenshot() {
    let limits = ShotLimits {
        max_width: 1000,
        max_height: 1000,
        vendor: VendorCap::None,
    };
    let p = ShotPlan::new(&one_1080p(), DisplaySelect::All, limits).expect("plan");
    assert_eq!((p.width, p.height), (1000, 562));
    let full =
        ShotPlan::new(&one_1080p(), DisplaySelect::All, ShotLimits::default()).expect("plan");
    assert_eq!((full.width, full.height), (1920, 1080), "never upscaled");
    assert_eq!(
        full.to_global(1919, 1079).expect("corner"),
        Point::new(1919, 1079)
    );
}

#[test]
fn negative_origins_keep_the_layout_and_the_gap_is_refused() {
    let limits = ShotLimits {
        max_width: 3200,
        max_height: 1200,
        vendor: VendorCap::None,
    };
    let p = ShotPlan::new(&negative_pair(), DisplaySelect::All, limits).expect("plan");
    assert_eq!((p.width, p.height), (3200, 1080));
    assert_eq!(p.bounds, Rect::new(-1280, 0, 3200, 1080));
    assert_eq!(p.displays[0].index, 1, "left display first at the same top");
    assert_eq!(p.displays[0].pixel, Rect::new(0, 0, 1280, 800));
    assert_eq!(p.displays[1].pixel, Rect::new(1280, 0, 1920, 1080));
    assert_eq!(p.to_global(0, 0).expect("left"), Point::new(-1280, 0));
    assert_eq!(p.to_global(1280, 0).expect("primary"), Point::new(0, 0));
    let gap = p.to_global(10, 900).expect_err("below the left display");
    assert_eq!(code(gap), ErrorCode::DesktopCoordinateOutOfBounds);
}

#[test]
fn edges_and_negatives_are_out_of_bounds() {
    let p = ShotPlan::new(&one_1080p(), DisplaySelect::All, anthropic()).expect("plan");
    for (x, y) in [(-1, 0), (0, -1), (1429, 0), (0, 804), (i64::MAX, 3)] {
        let e = p.to_global(x, y).expect_err("out");
        assert_eq!(
            code(e),
            ErrorCode::DesktopCoordinateOutOfBounds,
            "({x},{y})"
        );
    }
    assert_eq!(
        p.to_global(1428, 803).expect("last pixel"),
        Point::new(1919, 1079)
    );
}

#[test]
fn one_display_is_selected_by_id() {
    let p = ShotPlan::new(
        &negative_pair(),
        DisplaySelect::One(1),
        ShotLimits::default(),
    )
    .expect("plan");
    assert_eq!((p.width, p.height), (1280, 800));
    assert_eq!(p.to_global(0, 0).expect("origin"), Point::new(-1280, 0));
    let e = ShotPlan::new(
        &negative_pair(),
        DisplaySelect::One(7),
        ShotLimits::default(),
    )
    .expect_err("no such display");
    assert_eq!(code(e), ErrorCode::InvalidArguments);
}

#[test]
fn mirrored_displays_count_once_and_the_primary_wins() {
    let l = Layout::new(vec![
        mon(0, false, Rect::new(0, 0, 1280, 800), 1.0),
        mon(1, true, Rect::new(0, 0, 1280, 800), 1.0),
        mon(2, false, Rect::new(1280, 0, 1280, 800), 1.0),
    ]);
    let p = ShotPlan::new(&l, DisplaySelect::All, ShotLimits::default()).expect("plan");
    let ids: Vec<u32> = p.displays.iter().map(|d| d.index).collect();
    assert_eq!(ids, vec![1, 2]);
    let only = ShotPlan::new(&l, DisplaySelect::One(0), ShotLimits::default()).expect("mirror");
    assert_eq!(only.displays.len(), 1);
    assert_eq!(
        only.displays[0].index, 1,
        "selected through its primary twin"
    );
}

#[test]
fn overlapping_displays_fail_closed() {
    let l = Layout::new(vec![
        mon(0, true, Rect::new(0, 0, 1280, 800), 1.0),
        mon(1, false, Rect::new(1000, 0, 1280, 800), 1.0),
    ]);
    let e = ShotPlan::new(&l, DisplaySelect::All, ShotLimits::default()).expect_err("overlap");
    assert!(matches!(e, EngineError::LayoutUnusable { .. }), "{e}");
    let bad_scale = Layout::new(vec![mon(0, true, Rect::new(0, 0, 10, 10), f64::NAN)]);
    assert!(ShotPlan::new(&bad_scale, DisplaySelect::All, ShotLimits::default()).is_err());
    let dup = Layout::new(vec![
        mon(0, true, Rect::new(0, 0, 10, 10), 1.0),
        mon(0, false, Rect::new(10, 0, 10, 10), 1.0),
    ]);
    assert!(ShotPlan::new(&dup, DisplaySelect::All, ShotLimits::default()).is_err());
}

#[test]
fn a_changed_layout_is_detected() {
    let l = negative_pair();
    let p = ShotPlan::new(&l, DisplaySelect::One(0), ShotLimits::default()).expect("plan");
    assert!(p.check_layout(&l).is_ok());
    let mut moved = l.clone();
    moved.monitors[1].rect.x = -1000;
    assert_eq!(
        code(p.check_layout(&moved).expect_err("moved")),
        ErrorCode::DesktopLayoutChanged,
        "a display the screenshot does not show moved: still a change"
    );
    let mut rescaled = l.clone();
    rescaled.monitors[0].scale = 1.5;
    assert!(p.check_layout(&rescaled).is_err());
    let unplugged = Layout::new(vec![l.monitors[0].clone()]);
    assert!(p.check_layout(&unplugged).is_err());
}

#[test]
fn zoom_maps_a_screenshot_region_to_full_detail() {
    let p = ShotPlan::new(&one_1080p(), DisplaySelect::All, anthropic()).expect("plan");
    let region = p.region_to_global([0, 0, 400, 300]).expect("region");
    assert_eq!(region.x, 0);
    // 400 screenshot pixels at 1429/1920 are about 537 desktop pixels.
    assert!((536..=538).contains(&region.width), "{region:?}");
    let z = p.zoom(&one_1080p(), region, anthropic()).expect("zoom");
    assert_eq!(
        (z.width, z.height),
        (region.width, region.height),
        "native detail"
    );
    assert!(p.region_to_global([10, 10, 5, 20]).is_err(), "inverted");
    assert!(
        p.region_to_global([0, 0, 1430, 10]).is_err(),
        "past the edge"
    );
}

/// xorshift64*: a seeded generator for the property tests.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Two to four displays in a row, at random sizes, gaps, vertical offsets
/// and a random (possibly negative) start.
fn random_layout(rng: &mut Rng) -> Layout {
    let n = 1 + rng.below(4) as u32;
    let mut x = rng.below(4000) as i32 - 2000;
    let monitors = (0..n)
        .map(|i| {
            let w = 640 + rng.below(3200) as u32;
            let h = 480 + rng.below(1800) as u32;
            let y = rng.below(1200) as i32 - 600;
            let m = mon(
                i,
                i == 0,
                Rect::new(x, y, w, h),
                [1.0, 1.25, 2.0][rng.below(3) as usize],
            );
            x += w as i32 + rng.below(300) as i32;
            m
        })
        .collect();
    Layout::new(monitors)
}

fn random_limits(rng: &mut Rng) -> ShotLimits {
    ShotLimits {
        max_width: 800 + rng.below(3000) as u32,
        max_height: 600 + rng.below(2000) as u32,
        vendor: [VendorCap::None, VendorCap::Anthropic, VendorCap::OpenAi][rng.below(3) as usize],
    }
}

#[test]
fn property_every_screenshot_pixel_maps_onto_its_display_and_back() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for case in 0..300 {
        let layout = random_layout(&mut rng);
        let limits = random_limits(&mut rng);
        let p = ShotPlan::new(&layout, DisplaySelect::All, limits).expect("plan");
        assert!(
            p.width <= limits.max_width && p.height <= limits.max_height,
            "case {case}"
        );
        let vendor = limits.vendor.scale(p.bounds.width, p.bounds.height);
        assert!(p.scale <= vendor + 1e-12, "case {case}: vendor cap");
        for _ in 0..200 {
            let (x, y) = (
                rng.below(u64::from(p.width)) as i64,
                rng.below(u64::from(p.height)) as i64,
            );
            match p.to_global(x, y) {
                Ok(g) => {
                    let m = layout.monitor_at(g).expect("a display is under it");
                    let d = p
                        .displays
                        .iter()
                        .find(|d| d.index == m.index)
                        .expect("in the screenshot");
                    assert!(
                        d.pixel.contains(Point::new(x as i32, y as i32)),
                        "case {case}"
                    );
                    assert_eq!(p.to_shot(g), Some([x, y]), "case {case}: round trip");
                }
                Err(e) => {
                    assert_eq!(code(e), ErrorCode::DesktopCoordinateOutOfBounds);
                    let in_any = p
                        .displays
                        .iter()
                        .any(|d| d.pixel.contains(Point::new(x as i32, y as i32)));
                    assert!(!in_any, "case {case}: refused a pixel on a display");
                }
            }
        }
    }
}

#[test]
fn property_display_pixel_rects_keep_the_layout() {
    let mut rng = Rng(42);
    for case in 0..500 {
        let layout = random_layout(&mut rng);
        let p = ShotPlan::new(&layout, DisplaySelect::All, random_limits(&mut rng)).expect("plan");
        for (i, a) in p.displays.iter().enumerate() {
            assert!(a.pixel.right() <= i64::from(p.width), "case {case}");
            assert!(a.pixel.bottom() <= i64::from(p.height), "case {case}");
            for b in &p.displays[i + 1..] {
                assert_eq!(
                    a.pixel.overlap_area(&b.pixel),
                    0,
                    "case {case}: pixels overlap"
                );
                // Left of on the desktop stays left of in the image.
                if a.rect.right() <= i64::from(b.rect.x) {
                    assert!(a.pixel.right() <= i64::from(b.pixel.x), "case {case}");
                }
            }
        }
        // Every display's corners map to pixels of that display.
        for d in &p.displays {
            let corner = Point::new(d.rect.x, d.rect.y);
            let f = p.to_shot(corner).expect("shown");
            assert!(
                d.pixel.contains(Point::new(f[0] as i32, f[1] as i32)),
                "case {case}"
            );
        }
    }
}

#[test]
fn property_a_global_rect_maps_onto_every_screenshot_pixel_showing_it() {
    let mut rng = Rng(7);
    for case in 0..300 {
        let layout = random_layout(&mut rng);
        let p = ShotPlan::new(&layout, DisplaySelect::All, random_limits(&mut rng)).expect("plan");
        let b = p.bounds;
        let r = Rect::new(
            b.x + rng.below(u64::from(b.width)) as i32,
            b.y + rng.below(u64::from(b.height)) as i32,
            1 + rng.below(400) as u32,
            1 + rng.below(300) as u32,
        );
        let boxes = p.rect_to_shot(r);
        for fb in &boxes {
            assert!(
                fb.right() <= i64::from(p.width),
                "case {case}: past the screenshot"
            );
            assert!(
                fb.bottom() <= i64::from(p.height),
                "case {case}: past the screenshot"
            );
        }
        for _ in 0..50 {
            let g = Point::new(
                r.x + rng.below(u64::from(r.width)) as i32,
                r.y + rng.below(u64::from(r.height)) as i32,
            );
            if let Some([x, y]) = p.to_shot(g) {
                let at = Point::new(x as i32, y as i32);
                assert!(
                    boxes.iter().any(|fb| fb.contains(at)),
                    "case {case}: {g:?} shows at {at:?}, outside {boxes:?}"
                );
            }
        }
    }
}
