//! Feature flags advertised in HELLO: the fine-grained
//! `computer_use_features` and the coarse buckets.

use serde::{Deserialize, Serialize};

/// A fine-grained feature: one wire op or one extension of an op.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[allow(missing_docs)]
pub enum Feature {
    #[serde(rename = "screenshot.region")]
    ScreenshotRegion,
    #[serde(rename = "screenshot.window")]
    ScreenshotWindow,
    #[serde(rename = "screenshot.cursor")]
    ScreenshotCursor,
    #[serde(rename = "input.click.modifiers")]
    InputClickModifiers,
    #[serde(rename = "input.click.button")]
    InputClickButton,
    #[serde(rename = "input.drag.path")]
    InputDragPath,
    #[serde(rename = "input.key.hold")]
    InputKeyHold,
    #[serde(rename = "input.mouse.down_up")]
    InputMouseDownUp,
    #[serde(rename = "input.scroll.amount")]
    InputScrollAmount,
    #[serde(rename = "input.wait")]
    InputWait,
    /// `type` can type characters that no key of the keyboard produces
    /// (on X11: a spare keycode is free to remap).
    #[serde(rename = "input.type.unicode")]
    InputTypeUnicode,
    #[serde(rename = "cursor.position")]
    CursorPosition,
    #[serde(rename = "display.info")]
    DisplayInfo,
    #[serde(rename = "window.list")]
    WindowList,
    #[serde(rename = "window.focus")]
    WindowFocus,
    #[serde(rename = "app.list")]
    AppList,
    #[serde(rename = "app.launch")]
    AppLaunch,
    #[serde(rename = "clipboard.read")]
    ClipboardRead,
    #[serde(rename = "clipboard.write")]
    ClipboardWrite,
    #[serde(rename = "permissions.check")]
    PermissionsCheck,
    /// `A11Y_TREE_REQUEST`: listed only while the accessibility bus
    /// answers (checked in the background, not at each HELLO).
    #[serde(rename = "a11y.tree")]
    A11yTree,
}

impl Feature {
    /// Every feature, in declaration order.
    pub const ALL: &'static [Feature] = &[
        Self::ScreenshotRegion,
        Self::ScreenshotWindow,
        Self::ScreenshotCursor,
        Self::InputClickModifiers,
        Self::InputClickButton,
        Self::InputDragPath,
        Self::InputKeyHold,
        Self::InputMouseDownUp,
        Self::InputScrollAmount,
        Self::InputWait,
        Self::InputTypeUnicode,
        Self::CursorPosition,
        Self::DisplayInfo,
        Self::WindowList,
        Self::WindowFocus,
        Self::AppList,
        Self::AppLaunch,
        Self::ClipboardRead,
        Self::ClipboardWrite,
        Self::PermissionsCheck,
        Self::A11yTree,
    ];

    /// The feature's name as advertised in HELLO.
    pub fn name(self) -> &'static str {
        match self {
            Self::ScreenshotRegion => "screenshot.region",
            Self::ScreenshotWindow => "screenshot.window",
            Self::ScreenshotCursor => "screenshot.cursor",
            Self::InputClickModifiers => "input.click.modifiers",
            Self::InputClickButton => "input.click.button",
            Self::InputDragPath => "input.drag.path",
            Self::InputKeyHold => "input.key.hold",
            Self::InputMouseDownUp => "input.mouse.down_up",
            Self::InputScrollAmount => "input.scroll.amount",
            Self::InputWait => "input.wait",
            Self::InputTypeUnicode => "input.type.unicode",
            Self::CursorPosition => "cursor.position",
            Self::DisplayInfo => "display.info",
            Self::WindowList => "window.list",
            Self::WindowFocus => "window.focus",
            Self::AppList => "app.list",
            Self::AppLaunch => "app.launch",
            Self::ClipboardRead => "clipboard.read",
            Self::ClipboardWrite => "clipboard.write",
            Self::PermissionsCheck => "permissions.check",
            Self::A11yTree => "a11y.tree",
        }
    }
}

/// A coarse capability bucket for at-a-glance UX.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)]
pub enum CoarseFeature {
    Screenshot,
    Input,
    Windows,
    Apps,
    Clipboard,
    Permissions,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_names_match_name() {
        for &f in Feature::ALL {
            let v = serde_json::to_value(f).expect("serialize");
            assert_eq!(v, serde_json::Value::String(f.name().to_owned()));
        }
    }
}
