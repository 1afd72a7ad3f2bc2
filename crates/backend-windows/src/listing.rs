//! Which top-level windows each list takes, by their extended styles: a
//! plain function, so its rule is tested on any OS. The window list agents
//! see leaves tool windows out, as the system's own window switcher does
//! (deskhand's frame is one). The refusal policy judges them too: a
//! program can give a refused console `WS_EX_TOOLWINDOW` and it still takes
//! clicks and keys. Left out there are only deskhand's own frame (its
//! windows span every monitor but draw and take clicks only on the frame,
//! through their window region: judged, they would hide every window
//! beneath them from the check) and a click-through window that does not
//! have the focus (it takes neither clicks nor keys).

/// `WS_EX_TOOLWINDOW`.
pub const TOOL_WINDOW: u32 = 0x0000_0080;
/// `WS_EX_TRANSPARENT` (clicks pass through to the window beneath).
pub const CLICK_THROUGH: u32 = 0x0000_0020;

/// A visible top-level window as the lists see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Listed {
    /// Its extended style.
    pub ex: u32,
    /// It is the foreground window.
    pub focused: bool,
    /// Its process runs deskhand's own overlay program.
    pub own_overlay: bool,
}

/// Whether `w` is in the list agents see (`for_refusal` false) or in the
/// one the refusal policy judges.
pub fn listed(w: Listed, for_refusal: bool) -> bool {
    if !for_refusal {
        return w.ex & TOOL_WINDOW == 0;
    }
    !w.own_overlay && (w.focused || w.ex & CLICK_THROUGH == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(ex: u32, focused: bool) -> Listed {
        Listed {
            ex,
            focused,
            own_overlay: false,
        }
    }

    #[test]
    fn agents_see_no_tool_windows_but_the_refusal_policy_judges_them() {
        assert!(listed(window(0, false), false));
        assert!(!listed(window(TOOL_WINDOW, false), false));
        // A console made a tool window: still judged, focused or not.
        assert!(listed(window(TOOL_WINDOW, false), true));
        assert!(listed(window(TOOL_WINDOW, true), true));
    }

    #[test]
    fn deskhands_frame_and_unfocused_click_through_windows_are_not_judged() {
        let frame = Listed {
            own_overlay: true,
            ..window(TOOL_WINDOW, false)
        };
        assert!(!listed(frame, true));
        assert!(!listed(window(TOOL_WINDOW | CLICK_THROUGH, false), true));
        // A click-through console that has the focus takes the keys.
        assert!(listed(window(TOOL_WINDOW | CLICK_THROUGH, true), true));
    }
}
