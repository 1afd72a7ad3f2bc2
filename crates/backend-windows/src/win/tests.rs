//! The Win32 side's own tests: they call Windows, so they run in the
//! Windows build, under Wine in CI (`tests/e2e/test_windows_backend.py`
//! runs this test program in its Wine desktop).

use deskhand_backend::{Capture as _, Displays as _, Rect};

use super::capture::WinCapture;
use super::displays::WinDisplays;

#[test]
fn the_displays_cover_the_desktop_and_one_is_primary() {
    let monitors = WinDisplays.monitors().expect("monitors");
    assert!(!monitors.is_empty());
    let primary: Vec<_> = monitors.iter().filter(|m| m.primary).collect();
    assert_eq!(primary.len(), 1, "{monitors:?}");
    assert_eq!((primary[0].rect.x, primary[0].rect.y), (0, 0));
    let desktop = super::displays::virtual_desktop();
    assert!(monitors.iter().all(|m| desktop.contains_rect(&m.rect)));
}

#[test]
fn a_capture_hands_over_exactly_the_rectangle_asked() {
    let mut capture = WinCapture::open();
    assert!(["wgc", "dxgi", "gdi"].contains(&capture.method()));
    let mut got = None;
    capture
        .capture(Rect::new(3, 5, 17, 9), &mut |b| {
            got = Some((
                b.width,
                b.height,
                b.stride >= 17 * 4,
                b.pixels.len() >= b.stride * 9,
            ));
        })
        .expect("a capture");
    assert_eq!(got, Some((17, 9, true, true)));
    let empty = capture.capture(Rect::new(0, 0, 0, 4), &mut |_| {});
    assert!(empty.is_err());
}

#[test]
fn the_pointer_is_drawn_where_it_is() {
    let at = super::displays::cursor().expect("the pointer");
    let image = super::capture::cursor_image()
        .expect("the cursor")
        .expect("a visible cursor");
    assert!(image.width > 0 && image.height > 0);
    assert_eq!(image.argb.len(), (image.width * image.height) as usize);
    // The hot spot is inside the image.
    assert!(image.origin.x <= at.x && at.x < image.origin.x + image.width as i32);
    assert!(
        image.argb.iter().any(|p| p >> 24 == 0xff),
        "no opaque pixel"
    );
}

#[test]
fn this_process_runs_its_own_program() {
    let exe = super::image_of(std::process::id()).expect("our own image");
    let name = crate::launch::program_name(&exe);
    assert!(name.starts_with("deskhand_backend_windows"), "{exe}");
}

#[test]
fn the_input_desktop_is_the_persons() {
    assert_eq!(super::doctor::input_desktop().as_deref(), Some("Default"));
}

#[test]
fn ui_automation_answers_or_msaa_stands_in_and_says_the_code() {
    let path = super::a11y::check().expect("an accessibility path");
    if path != "UI Automation" {
        assert!(
            path.starts_with("MSAA (IAccessible), because ")
                && path.contains("CoCreateInstance(CUIAutomation) failed: 0x"),
            "{path}"
        );
    }
}

#[test]
fn the_msaa_numbers_are_the_sdks() {
    use windows::Win32::UI::Accessibility as A;
    use windows::Win32::UI::WindowsAndMessaging as W;

    use crate::msaa;
    let roles = [
        (A::ROLE_SYSTEM_WINDOW, "WINDOW"),
        (A::ROLE_SYSTEM_CLIENT, "CLIENT"),
        (A::ROLE_SYSTEM_DIALOG, "DIALOG"),
        (A::ROLE_SYSTEM_DOCUMENT, "DOCUMENT"),
        (A::ROLE_SYSTEM_TEXT, "TEXT"),
        (A::ROLE_SYSTEM_PUSHBUTTON, "PUSHBUTTON"),
        (A::ROLE_SYSTEM_CHECKBUTTON, "CHECKBUTTON"),
        (A::ROLE_SYSTEM_RADIOBUTTON, "RADIOBUTTON"),
        (A::ROLE_SYSTEM_COMBOBOX, "COMBOBOX"),
        (A::ROLE_SYSTEM_OUTLINEITEM, "OUTLINEITEM"),
        (A::ROLE_SYSTEM_SPLITBUTTON, "SPLITBUTTON"),
        (A::ROLE_SYSTEM_OUTLINEBUTTON, "OUTLINEBUTTON"),
    ];
    for (number, name) in roles {
        let row = msaa::ROLES.iter().find(|r| r.1 == name).expect(name);
        assert_eq!(row.0, number, "{name}");
    }
    assert_eq!(msaa::ROLE_TEXT, A::ROLE_SYSTEM_TEXT);
    assert_eq!(msaa::ROLE_DOCUMENT, A::ROLE_SYSTEM_DOCUMENT);
    assert_eq!(msaa::ROLE_DIALOG, A::ROLE_SYSTEM_DIALOG);
    assert_eq!(msaa::PROTECTED, W::STATE_SYSTEM_PROTECTED);
    assert_eq!(msaa::READONLY, W::STATE_SYSTEM_READONLY);
    assert_eq!(msaa::COLLAPSED, W::STATE_SYSTEM_COLLAPSED);
    assert_eq!(msaa::SELECTABLE, W::STATE_SYSTEM_SELECTABLE);
}
