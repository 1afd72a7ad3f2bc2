//! Which display each of the engine's monitors is, in points. The engine
//! speaks global desktop pixels (each Mac display laid out at its own
//! backing scale by the backend), while AppKit places windows in global
//! display points; the backend hands the overlay each display's pixel and
//! point rectangles (`deskhand_protocol::overlay::DISPLAYS_ENV`), and these
//! plain functions turn one into the other. Compiled everywhere so that Linux runs the tests.

use deskhand_protocol::geometry::{Point, PointRect, Rect};
use deskhand_protocol::overlay::DisplayPlacement;

/// Whether the pointer (global points, when read) is over one of
/// `buttons`: the window then takes clicks, else it lets them through.
pub fn over(buttons: &[PointRect], pointer: Option<(f64, f64)>) -> bool {
    pointer.is_some_and(|(x, y)| buttons.iter().any(|b| b.contains(x, y)))
}

/// The display the engine's monitor `pixels` is.
pub fn screen_of(screens: &[DisplayPlacement], pixels: Rect) -> Option<DisplayPlacement> {
    screens.iter().find(|s| s.pixels == pixels).copied()
}

/// Global point `(x, y)` in desktop pixels, through the display it is on.
pub fn to_pixels(screens: &[DisplayPlacement], x: f64, y: f64) -> Option<Point> {
    let s = screens.iter().find(|s| s.points.contains(x, y))?;
    let scale = s.scale();
    Some(Point::new(
        s.pixels.x + ((x - s.points.x) * scale).floor() as i32,
        s.pixels.y + ((y - s.points.y) * scale).floor() as i32,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use deskhand_protocol::overlay::parse_displays as parse;

    /// A Retina laptop (2×) with a 1× display to its right, as the
    /// backend lays them out (its tests hold the same pair).
    const PAIR: &str = "0,0,2880,1800@0,0,1440,900;2880,0,1920,1080@1440,0,1920,1080";

    #[test]
    fn a_monitor_is_found_by_its_pixels_and_placed_in_points() {
        let screens = parse(PAIR);
        let right = screen_of(&screens, Rect::new(2880, 0, 1920, 1080)).expect("found");
        assert_eq!(right.points.x, 1440.0);
        assert!(screen_of(&screens, Rect::new(0, 0, 1440, 900)).is_none());
        // A button 40 px down and 100 px in on the Retina display.
        let button = screens[0].global_points(Rect::new(100, 40, 200, 60));
        assert_eq!(
            button,
            PointRect {
                x: 50.0,
                y: 20.0,
                width: 100.0,
                height: 30.0
            }
        );
        let local = right.local_points(Rect::new(10, 20, 30, 40));
        assert_eq!((local.x, local.width), (10.0, 30.0));
    }

    #[test]
    fn only_a_pointer_on_a_button_makes_the_window_take_clicks() {
        let continue_ = PointRect {
            x: 50.0,
            y: 20.0,
            width: 100.0,
            height: 30.0,
        };
        assert!(over(&[continue_], Some((50.0, 20.0))));
        assert!(over(&[continue_], Some((149.9, 49.9))));
        assert!(
            !over(&[continue_], Some((150.0, 30.0))),
            "right edge is out"
        );
        assert!(!over(&[continue_], None), "pointer not read");
        assert!(!over(&[], Some((60.0, 30.0))), "no buttons while active");
    }

    #[test]
    fn points_go_to_pixels_through_their_display() {
        let screens = parse(PAIR);
        assert_eq!(
            to_pixels(&screens, 720.5, 450.0),
            Some(Point::new(1441, 900))
        );
        assert_eq!(
            to_pixels(&screens, 1440.0, 10.0),
            Some(Point::new(2880, 10))
        );
        assert_eq!(to_pixels(&screens, 5000.0, 0.0), None, "off every display");
    }
}
