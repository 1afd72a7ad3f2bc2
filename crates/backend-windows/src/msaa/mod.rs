//! Accessibility through MSAA (`IAccessible`), the OS-free part: what an
//! MSAA object reports (role, state bits, value, default action,
//! location) becomes the same [`Props`] a UI Automation element gives, as
//! Windows' own MSAA-to-UIA proxy maps them, so the walk, the paths, the
//! act checks and the secure-field rules of [`crate::uia`] are the ones
//! used; and which MSAA call an act's [`Call`] is ([`how`]). Used where
//! UI Automation's client cannot be created (Wine 8: its client object is
//! not registered). The COM client is in `win/msaa/`.

use deskhand_backend::Rect;

use crate::uia::map::{Call, Expand, Patterns, Props, Toggle, ValueField, control_type_id};

/// `STATE_SYSTEM_UNAVAILABLE`: disabled.
pub const UNAVAILABLE: u32 = 0x1;
/// `STATE_SYSTEM_SELECTED`.
pub const SELECTED: u32 = 0x2;
/// `STATE_SYSTEM_FOCUSED`.
pub const FOCUSED: u32 = 0x4;
/// `STATE_SYSTEM_PRESSED`.
pub const PRESSED: u32 = 0x8;
/// `STATE_SYSTEM_CHECKED`.
pub const CHECKED: u32 = 0x10;
/// `STATE_SYSTEM_MIXED`: neither checked nor not.
pub const MIXED: u32 = 0x20;
/// `STATE_SYSTEM_READONLY`.
pub const READONLY: u32 = 0x40;
/// `STATE_SYSTEM_EXPANDED`.
pub const EXPANDED: u32 = 0x200;
/// `STATE_SYSTEM_COLLAPSED`.
pub const COLLAPSED: u32 = 0x400;
/// `STATE_SYSTEM_INVISIBLE`.
pub const INVISIBLE: u32 = 0x8000;
/// `STATE_SYSTEM_OFFSCREEN`.
pub const OFFSCREEN: u32 = 0x1_0000;
/// `STATE_SYSTEM_FOCUSABLE`.
pub const FOCUSABLE: u32 = 0x10_0000;
/// `STATE_SYSTEM_SELECTABLE`.
pub const SELECTABLE: u32 = 0x20_0000;
/// `STATE_SYSTEM_PROTECTED`: a password field; never read, never written.
pub const PROTECTED: u32 = 0x2000_0000;

/// Every MSAA role deskhand names: its number (`ROLE_SYSTEM_*`), the
/// SDK's name, and the UI Automation control type it stands for (the
/// proxy's table), whose [`crate::uia::map::CONTROL_TYPES`] row gives
/// deskhand's role. A role not listed is a `Custom` element.
pub const ROLES: [(u32, &str, &str); 50] = [
    (1, "TITLEBAR", "TitleBar"),
    (2, "MENUBAR", "MenuBar"),
    (3, "SCROLLBAR", "ScrollBar"),
    (4, "GRIP", "Thumb"),
    (8, "ALERT", "Pane"),
    (9, "WINDOW", "Window"),
    (10, "CLIENT", "Pane"),
    (11, "MENUPOPUP", "Menu"),
    (12, "MENUITEM", "MenuItem"),
    (13, "TOOLTIP", "ToolTip"),
    (14, "APPLICATION", "Window"),
    (15, "DOCUMENT", "Document"),
    (16, "PANE", "Pane"),
    (17, "CHART", "Image"),
    (18, "DIALOG", "Window"),
    (19, "BORDER", "Custom"),
    (20, "GROUPING", "Group"),
    (21, "SEPARATOR", "Separator"),
    (22, "TOOLBAR", "ToolBar"),
    (23, "STATUSBAR", "StatusBar"),
    (24, "TABLE", "Table"),
    (25, "COLUMNHEADER", "HeaderItem"),
    (26, "ROWHEADER", "HeaderItem"),
    (27, "COLUMN", "Custom"),
    (28, "ROW", "DataItem"),
    (29, "CELL", "DataItem"),
    (30, "LINK", "Hyperlink"),
    (31, "HELPBALLOON", "ToolTip"),
    (33, "LIST", "List"),
    (34, "LISTITEM", "ListItem"),
    (35, "OUTLINE", "Tree"),
    (36, "OUTLINEITEM", "TreeItem"),
    (37, "PAGETAB", "TabItem"),
    (38, "PROPERTYPAGE", "Pane"),
    (40, "GRAPHIC", "Image"),
    (41, "STATICTEXT", "Text"),
    (42, "TEXT", "Edit"),
    (43, "PUSHBUTTON", "Button"),
    (44, "CHECKBUTTON", "CheckBox"),
    (45, "RADIOBUTTON", "RadioButton"),
    (46, "COMBOBOX", "ComboBox"),
    (47, "DROPLIST", "ComboBox"),
    (48, "PROGRESSBAR", "ProgressBar"),
    (51, "SLIDER", "Slider"),
    (52, "SPINBUTTON", "Spinner"),
    (56, "BUTTONDROPDOWN", "SplitButton"),
    (57, "BUTTONMENU", "MenuItem"),
    (60, "PAGETABLIST", "Tab"),
    (62, "SPLITBUTTON", "SplitButton"),
    (64, "OUTLINEBUTTON", "Button"),
];

/// `ROLE_SYSTEM_TEXT`: an edit field.
pub const ROLE_TEXT: u32 = 42;
/// `ROLE_SYSTEM_CHECKBUTTON`.
pub const ROLE_CHECKBUTTON: u32 = 44;
/// `ROLE_SYSTEM_RADIOBUTTON`.
pub const ROLE_RADIOBUTTON: u32 = 45;
/// `ROLE_SYSTEM_COMBOBOX`.
pub const ROLE_COMBOBOX: u32 = 46;
/// `ROLE_SYSTEM_DOCUMENT`.
pub const ROLE_DOCUMENT: u32 = 15;
/// `ROLE_SYSTEM_DIALOG`.
pub const ROLE_DIALOG: u32 = 18;

/// What one MSAA object (or simple child) reports.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MsaaProps {
    /// `accRole` (`ROLE_SYSTEM_*`; 0 when it is a string or missing).
    pub role: u32,
    /// `accName`.
    pub name: String,
    /// `accDescription`.
    pub description: String,
    /// `accState`'s bits.
    pub state: u32,
    /// `accLocation`, in screen pixels; `None` when empty or missing.
    pub bounds: Option<Rect>,
    /// `accValue`, when it has one (never asked of a protected field).
    pub value: Option<String>,
    /// `accDefaultAction` (empty when none).
    pub default_action: String,
}

impl MsaaProps {
    /// Whether state bit `bit` is set.
    pub fn has(&self, bit: u32) -> bool {
        self.state & bit != 0
    }
}

/// The UI Automation control type of MSAA role `role` (`Custom` when not
/// listed).
pub fn control_type(role: u32) -> i32 {
    let name = ROLES
        .iter()
        .find(|(r, _, _)| *r == role)
        .map_or("Custom", |(_, _, t)| *t);
    control_type_id(name).unwrap_or(50025)
}

/// The [`Props`] of an MSAA object: its control type from [`ROLES`], its
/// flags from the state bits, and the patterns its value, state and
/// default action stand for.
pub fn props(m: &MsaaProps) -> Props {
    let password = m.has(PROTECTED);
    let field = matches!(m.role, ROLE_TEXT | ROLE_DOCUMENT | ROLE_COMBOBOX);
    let value = match &m.value {
        Some(v) if field => Some(ValueField {
            value: if password { String::new() } else { v.clone() },
            read_only: m.has(READONLY),
        }),
        _ => None,
    };
    let acts = !m.default_action.is_empty();
    let patterns = Patterns {
        invoke: acts
            && !matches!(
                m.role,
                ROLE_CHECKBUTTON | ROLE_RADIOBUTTON | ROLE_TEXT | ROLE_COMBOBOX
            )
            && !m.has(EXPANDED | COLLAPSED),
        toggle: (m.role == ROLE_CHECKBUTTON).then(|| {
            if m.has(MIXED) {
                Toggle::Indeterminate
            } else if m.has(CHECKED) {
                Toggle::On
            } else {
                Toggle::Off
            }
        }),
        selection_item: if m.role == ROLE_RADIOBUTTON {
            Some(m.has(CHECKED))
        } else {
            m.has(SELECTABLE).then(|| m.has(SELECTED))
        },
        expand_collapse: if m.has(EXPANDED) {
            Some(Expand::Expanded)
        } else if m.has(COLLAPSED) {
            Some(Expand::Collapsed)
        } else {
            None
        },
        value,
        range: None,
        text: false,
    };
    Props {
        control_type: control_type(m.role),
        name: m.name.clone(),
        help_text: m.description.clone(),
        enabled: !m.has(UNAVAILABLE),
        focused: m.has(FOCUSED),
        focusable: m.has(FOCUSABLE),
        offscreen: m.has(INVISIBLE | OFFSCREEN),
        password,
        required: false,
        dialog: m.role == ROLE_DIALOG,
        modal: false,
        bounds: m.bounds,
        patterns,
        text: None,
    }
}

/// The MSAA call an act makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MsaaCall {
    /// `accDoDefaultAction`.
    DefaultAction,
    /// `accSelect(SELFLAG_TAKEFOCUS | SELFLAG_TAKESELECTION)`.
    Select,
    /// Nothing: the element already is as asked (expanding an expanded
    /// one).
    Nothing,
}

/// What `call` is in MSAA for an object with `m`: select is `accSelect`
/// (a radio button's default action checks it), expanding or collapsing
/// is the default action unless already so, the rest the default action.
pub fn how(call: Call, m: &MsaaProps) -> MsaaCall {
    match call {
        Call::Select if m.role == ROLE_RADIOBUTTON && !m.default_action.is_empty() => {
            MsaaCall::DefaultAction
        }
        Call::Select => MsaaCall::Select,
        Call::Expand if m.has(EXPANDED) => MsaaCall::Nothing,
        Call::Collapse if m.has(COLLAPSED) => MsaaCall::Nothing,
        Call::Invoke | Call::Toggle | Call::Expand | Call::Collapse => MsaaCall::DefaultAction,
    }
}

#[cfg(test)]
mod tests {
    use deskhand_backend::accessibility::{Role, State};

    use super::*;
    use crate::uia::map::{actions, role, states, value};

    fn msaa(role: u32, state: u32) -> MsaaProps {
        MsaaProps {
            role,
            state,
            ..MsaaProps::default()
        }
    }

    #[test]
    fn every_role_maps_to_a_known_control_type_and_unknown_ones_are_custom() {
        let mut seen: Vec<u32> = ROLES.iter().map(|r| r.0).collect();
        seen.dedup();
        assert_eq!(seen.len(), ROLES.len());
        for (r, name, ty) in ROLES {
            assert!(control_type_id(ty).is_some(), "{name}: {ty}");
            assert_eq!(control_type(r), control_type_id(ty).unwrap_or(0));
        }
        assert_eq!(role(&props(&msaa(0x7777, 0))), Role::Panel);
        assert_eq!(role(&props(&msaa(ROLE_TEXT, 0))), Role::TextField);
        assert_eq!(role(&props(&msaa(43, 0))), Role::Button);
        assert_eq!(role(&props(&msaa(ROLE_DIALOG, 0))), Role::Dialog);
        assert_eq!(role(&props(&msaa(41, 0))), Role::Label);
    }

    #[test]
    fn an_edit_with_a_value_is_an_editable_field_and_a_read_only_one_is_not() {
        let mut edit = msaa(ROLE_TEXT, FOCUSED | FOCUSABLE);
        edit.value = Some("abc".into());
        let p = props(&edit);
        let r = role(&p);
        assert_eq!(value(&p, &r).as_deref(), Some("abc"));
        let s = states(&p, &r);
        for want in [
            State::Editable,
            State::Focused,
            State::Focusable,
            State::Enabled,
            State::Visible,
        ] {
            assert!(s.contains(&want), "{want:?} in {s:?}");
        }
        edit.state |= READONLY | UNAVAILABLE;
        let p = props(&edit);
        let s = states(&p, &role(&p));
        assert!(
            s.contains(&State::ReadOnly) && !s.contains(&State::Enabled),
            "{s:?}"
        );
        assert!(!s.contains(&State::Editable));
    }

    #[test]
    fn a_protected_field_is_a_secure_password_with_no_value() {
        let mut pass = msaa(ROLE_TEXT, PROTECTED);
        pass.value = Some("hunter2".into());
        let p = props(&pass);
        let r = role(&p);
        assert_eq!(r, Role::PasswordText);
        assert!(states(&p, &r).contains(&State::Secure));
        assert_eq!(value(&p, &r), None);
        assert_eq!(p.patterns.value.map(|v| v.value), Some(String::new()));
    }

    #[test]
    fn check_boxes_radios_and_outline_items_get_their_states_and_actions() {
        let mut check = msaa(ROLE_CHECKBUTTON, CHECKED);
        check.default_action = "Uncheck".into();
        let p = props(&check);
        let r = role(&p);
        assert_eq!(r, Role::CheckBox);
        assert!(states(&p, &r).contains(&State::Checked));
        assert_eq!(actions(&p.patterns), ["toggle"]);
        check.state = MIXED;
        assert!(states(&props(&check), &r).contains(&State::Indeterminate));
        let radio = MsaaProps {
            default_action: "Check".into(),
            ..msaa(ROLE_RADIOBUTTON, CHECKED)
        };
        let p = props(&radio);
        let s = states(&p, &role(&p));
        assert!(
            s.contains(&State::Checked) && s.contains(&State::Selected),
            "{s:?}"
        );
        assert_eq!(actions(&p.patterns), ["select"]);
        assert_eq!(how(Call::Select, &radio), MsaaCall::DefaultAction);
        let item = MsaaProps {
            default_action: "Expand".into(),
            ..msaa(36, COLLAPSED | SELECTABLE)
        };
        let p = props(&item);
        assert_eq!(role(&p), Role::TreeItem);
        assert_eq!(actions(&p.patterns), ["select", "expand", "collapse"]);
        assert_eq!(how(Call::Expand, &item), MsaaCall::DefaultAction);
        assert_eq!(how(Call::Collapse, &item), MsaaCall::Nothing);
        assert_eq!(how(Call::Select, &item), MsaaCall::Select);
    }

    #[test]
    fn a_button_with_a_default_action_clicks_and_hidden_ones_are_not_showing() {
        let mut b = msaa(43, INVISIBLE);
        b.default_action = "Press".into();
        b.bounds = Some(Rect::new(1, 2, 30, 20));
        let p = props(&b);
        assert_eq!(actions(&p.patterns), ["click"]);
        assert_eq!(how(Call::Invoke, &b), MsaaCall::DefaultAction);
        let s = states(&p, &role(&p));
        assert!(!s.contains(&State::Showing) && !s.contains(&State::Visible));
        assert_eq!(crate::uia::map::bounds(&p), None);
        b.default_action.clear();
        assert!(actions(&props(&b).patterns).is_empty());
    }
}
