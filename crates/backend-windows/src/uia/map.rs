//! From what UI Automation reports of an element (its control type, its
//! properties, the patterns it offers) to deskhand's row: role, states,
//! actions and value. Plain data in, plain data out, so Linux tests it on
//! recorded trees.

use deskhand_backend::Rect;
use deskhand_backend::accessibility::{Role, State, is_secure};

/// The most characters of a field's text put in a tree read.
pub const MAX_VALUE_CHARS: usize = 4096;

/// Every UI Automation control type: its id (`UIA_*ControlTypeId`), its
/// name as the SDK spells it, and deskhand's role for it. A control type
/// not listed keeps its id as the role (`uia_50099`).
pub const CONTROL_TYPES: [(i32, &str, Role); 41] = [
    (50000, "Button", Role::Button),
    (50001, "Calendar", Role::Table),
    (50002, "CheckBox", Role::CheckBox),
    (50003, "ComboBox", Role::ComboBox),
    (50004, "Edit", Role::TextField),
    (50005, "Hyperlink", Role::Link),
    (50006, "Image", Role::Image),
    (50007, "ListItem", Role::ListItem),
    (50008, "List", Role::List),
    (50009, "Menu", Role::Menu),
    (50010, "MenuBar", Role::MenuBar),
    (50011, "MenuItem", Role::MenuItem),
    (50012, "ProgressBar", Role::ProgressBar),
    (50013, "RadioButton", Role::RadioButton),
    (50014, "ScrollBar", Role::ScrollBar),
    (50015, "Slider", Role::Slider),
    (50016, "Spinner", Role::SpinButton),
    (50017, "StatusBar", Role::StatusBar),
    (50018, "Tab", Role::TabList),
    (50019, "TabItem", Role::Tab),
    (50020, "Text", Role::Label),
    (50021, "ToolBar", Role::ToolBar),
    (50022, "ToolTip", Role::Label),
    (50023, "Tree", Role::Tree),
    (50024, "TreeItem", Role::TreeItem),
    (50025, "Custom", Role::Panel),
    (50026, "Group", Role::Panel),
    (50027, "Thumb", Role::ScrollBar),
    (50028, "DataGrid", Role::Table),
    (50029, "DataItem", Role::ListItem),
    (50030, "Document", Role::Document),
    (50031, "SplitButton", Role::Button),
    (50032, "Window", Role::Window),
    (50033, "Pane", Role::Panel),
    (50034, "Header", Role::Panel),
    (50035, "HeaderItem", Role::TableCell),
    (50036, "Table", Role::Table),
    (50037, "TitleBar", Role::ToolBar),
    (50038, "Separator", Role::Separator),
    (50039, "SemanticZoom", Role::Panel),
    (50040, "AppBar", Role::ToolBar),
];

/// `ToggleState` of the Toggle pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toggle {
    /// `ToggleState_Off`.
    Off,
    /// `ToggleState_On`.
    On,
    /// `ToggleState_Indeterminate`.
    Indeterminate,
}

impl Toggle {
    /// From the property's number (0, 1, 2); anything else is `None`.
    pub fn from_raw(raw: i32) -> Option<Self> {
        match raw {
            0 => Some(Toggle::Off),
            1 => Some(Toggle::On),
            2 => Some(Toggle::Indeterminate),
            _ => None,
        }
    }
}

/// `ExpandCollapseState` of the ExpandCollapse pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expand {
    /// `ExpandCollapseState_Collapsed`.
    Collapsed,
    /// `ExpandCollapseState_Expanded`.
    Expanded,
    /// `ExpandCollapseState_PartiallyExpanded`.
    Partially,
    /// `ExpandCollapseState_LeafNode`: nothing to expand.
    Leaf,
}

impl Expand {
    /// From the property's number (0 to 3); anything else is `None`.
    pub fn from_raw(raw: i32) -> Option<Self> {
        match raw {
            0 => Some(Expand::Collapsed),
            1 => Some(Expand::Expanded),
            2 => Some(Expand::Partially),
            3 => Some(Expand::Leaf),
            _ => None,
        }
    }
}

/// The Value pattern's properties.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ValueField {
    /// `Value.Value` (empty when not read: a password field's never is).
    pub value: String,
    /// `Value.IsReadOnly`.
    pub read_only: bool,
}

/// The patterns an element offers, with the properties that go with them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Patterns {
    /// Invoke pattern available.
    pub invoke: bool,
    /// Toggle pattern: its state.
    pub toggle: Option<Toggle>,
    /// SelectionItem pattern: whether it is selected.
    pub selection_item: Option<bool>,
    /// ExpandCollapse pattern: its state.
    pub expand_collapse: Option<Expand>,
    /// Value pattern.
    pub value: Option<ValueField>,
    /// RangeValue pattern: its value and whether it is read-only.
    pub range: Option<(f64, bool)>,
    /// Text pattern available (a document, a multi-line edit).
    pub text: bool,
}

/// What UI Automation reports of one element. A structure-only read fills
/// the control type, name, help text and `password` alone.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Props {
    /// `ControlType` (`UIA_*ControlTypeId`).
    pub control_type: i32,
    /// `Name`.
    pub name: String,
    /// `HelpText` (the description).
    pub help_text: String,
    /// `IsEnabled`.
    pub enabled: bool,
    /// `HasKeyboardFocus`.
    pub focused: bool,
    /// `IsKeyboardFocusable`.
    pub focusable: bool,
    /// `IsOffscreen`.
    pub offscreen: bool,
    /// `IsPassword`: never read, never written.
    pub password: bool,
    /// `IsRequiredForForm`.
    pub required: bool,
    /// `IsDialog` (Windows 10 1809 and later).
    pub dialog: bool,
    /// `Window.IsModal`.
    pub modal: bool,
    /// `BoundingRectangle` in physical screen pixels (deskhand's desktop
    /// pixels); `None` when empty.
    pub bounds: Option<Rect>,
    /// The patterns offered.
    pub patterns: Patterns,
    /// The text of a Text pattern's document (at most
    /// [`MAX_VALUE_CHARS`]), read for fields with no Value pattern.
    pub text: Option<String>,
}

/// The role of an element with these properties.
pub fn role(p: &Props) -> Role {
    let base = CONTROL_TYPES
        .iter()
        .find(|(id, _, _)| *id == p.control_type)
        .map(|(_, _, role)| role.clone())
        .unwrap_or_else(|| Role::Other(format!("uia_{}", p.control_type)));
    match base {
        Role::TextField | Role::Document if p.password => Role::PasswordText,
        Role::Button if p.patterns.toggle.is_some() => Role::ToggleButton,
        Role::Window if p.dialog || p.modal => Role::Dialog,
        other => other,
    }
}

/// The SDK's name of a control type id (`Edit`), for messages.
pub fn control_type_name(id: i32) -> Option<&'static str> {
    CONTROL_TYPES
        .iter()
        .find(|(i, _, _)| *i == id)
        .map(|(_, name, _)| *name)
}

/// The control type id of an SDK name (`Edit` → 50004).
pub fn control_type_id(name: &str) -> Option<i32> {
    CONTROL_TYPES
        .iter()
        .find(|(_, n, _)| *n == name)
        .map(|(id, _, _)| *id)
}

/// The states of an element with these properties and `role`, sorted.
pub fn states(p: &Props, role: &Role) -> Vec<State> {
    let mut s = Vec::new();
    let mut add = |on: bool, state: State| {
        if on {
            s.push(state);
        }
    };
    add(p.enabled, State::Enabled);
    add(p.enabled, State::Sensitive);
    add(p.focused, State::Focused);
    add(p.focusable, State::Focusable);
    add(!p.offscreen, State::Visible);
    add(!p.offscreen, State::Showing);
    add(p.password, State::Secure);
    add(p.required, State::Required);
    add(p.modal, State::Modal);
    add(*role == Role::Document, State::MultiLine);
    let pat = &p.patterns;
    let on = pat.toggle == Some(Toggle::On);
    add(on && *role == Role::ToggleButton, State::Pressed);
    add(on && *role != Role::ToggleButton, State::Checked);
    add(
        pat.toggle == Some(Toggle::Indeterminate),
        State::Indeterminate,
    );
    add(pat.selection_item.is_some(), State::Selectable);
    let selected = pat.selection_item == Some(true);
    add(selected, State::Selected);
    add(selected && *role == Role::RadioButton, State::Checked);
    let expand = pat.expand_collapse.filter(|e| *e != Expand::Leaf);
    add(expand.is_some(), State::Expandable);
    add(
        matches!(expand, Some(Expand::Expanded | Expand::Partially)),
        State::Expanded,
    );
    add(*role == Role::ComboBox && expand.is_some(), State::HasPopup);
    if let Some(v) = &pat.value {
        add(!v.read_only, State::Editable);
        add(v.read_only, State::ReadOnly);
    }
    s.sort();
    s.dedup();
    s
}

/// A call of one of the patterns deskhand acts through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// `IUIAutomationInvokePattern::Invoke`.
    Invoke,
    /// `IUIAutomationTogglePattern::Toggle`.
    Toggle,
    /// `IUIAutomationSelectionItemPattern::Select`.
    Select,
    /// `IUIAutomationExpandCollapsePattern::Expand`.
    Expand,
    /// `IUIAutomationExpandCollapsePattern::Collapse`.
    Collapse,
}

impl Call {
    /// The action's name in rows and acts.
    pub fn name(self) -> &'static str {
        match self {
            Call::Invoke => "click",
            Call::Toggle => "toggle",
            Call::Select => "select",
            Call::Expand => "expand",
            Call::Collapse => "collapse",
        }
    }

    /// The call an action name asks for (`press`, `activate` and `invoke`
    /// are other names of `click`), case ignored.
    pub fn named(name: &str) -> Option<Call> {
        let calls = [
            Call::Invoke,
            Call::Toggle,
            Call::Select,
            Call::Expand,
            Call::Collapse,
        ];
        let lower = name.to_ascii_lowercase();
        match lower.as_str() {
            "press" | "activate" | "invoke" => Some(Call::Invoke),
            _ => calls.into_iter().find(|c| c.name() == lower),
        }
    }
}

/// The calls an element offers, its default one first: Invoke, then
/// Toggle, then Select, then the ExpandCollapse call that changes its
/// state (the other one after it).
pub fn calls(p: &Patterns) -> Vec<Call> {
    let mut out = Vec::new();
    if p.invoke {
        out.push(Call::Invoke);
    }
    if p.toggle.is_some() {
        out.push(Call::Toggle);
    }
    if p.selection_item.is_some() {
        out.push(Call::Select);
    }
    match p.expand_collapse {
        Some(Expand::Collapsed) => out.extend([Call::Expand, Call::Collapse]),
        Some(Expand::Expanded | Expand::Partially) => out.extend([Call::Collapse, Call::Expand]),
        Some(Expand::Leaf) | None => {}
    }
    out
}

/// The action names of an element's row.
pub fn actions(p: &Patterns) -> Vec<String> {
    calls(p).into_iter().map(|c| c.name().to_owned()).collect()
}

/// The value shown in an element's row: a Value pattern's text, a
/// RangeValue's number, or a document's text; never anything of a
/// password field.
pub fn value(p: &Props, role: &Role) -> Option<String> {
    if is_secure(role, &states(p, role)) {
        return None;
    }
    let text = match (&p.patterns.value, p.patterns.range, &p.text) {
        (Some(v), _, _) => v.value.clone(),
        (None, Some((n, _)), _) => format_number(n),
        (None, None, Some(t)) => t.clone(),
        (None, None, None) => return None,
    };
    Some(text.chars().take(MAX_VALUE_CHARS).collect())
}

/// A number as a row shows it: no fraction when it has none.
fn format_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        n.to_string()
    }
}

/// An element's bounds as a row shows them: none when it is off screen
/// or has no area.
pub fn bounds(p: &Props) -> Option<Rect> {
    p.bounds
        .filter(|r| !p.offscreen && r.width > 0 && r.height > 0)
}

/// A UIA `BoundingRectangle` (left, top, right, bottom) as a rectangle;
/// `None` when empty.
pub fn rect_of(left: i32, top: i32, right: i32, bottom: i32) -> Option<Rect> {
    let (w, h) = (
        i64::from(right) - i64::from(left),
        i64::from(bottom) - i64::from(top),
    );
    match (u32::try_from(w), u32::try_from(h)) {
        (Ok(w), Ok(h)) if w > 0 && h > 0 => Some(Rect::new(left, top, w, h)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An enabled, shown element of `control_type`.
    fn props(control_type: &str) -> Props {
        Props {
            control_type: control_type_id(control_type).expect("a known control type"),
            enabled: true,
            ..Props::default()
        }
    }

    #[test]
    fn every_control_type_is_listed_once_and_unknown_ones_keep_their_id() {
        let mut ids: Vec<i32> = CONTROL_TYPES.iter().map(|c| c.0).collect();
        ids.dedup();
        assert_eq!(ids, (50000..=50040).collect::<Vec<_>>());
        let unknown = Props {
            control_type: 50099,
            ..Props::default()
        };
        assert_eq!(role(&unknown), Role::Other("uia_50099".into()));
        assert_eq!(control_type_name(50004), Some("Edit"));
    }

    #[test]
    fn password_edits_toggle_buttons_and_dialogs_get_their_own_roles() {
        let mut p = props("Edit");
        assert_eq!(role(&p), Role::TextField);
        p.password = true;
        assert_eq!(role(&p), Role::PasswordText);
        let mut b = props("Button");
        b.patterns.toggle = Some(Toggle::Off);
        assert_eq!(role(&b), Role::ToggleButton);
        let mut w = props("Window");
        assert_eq!(role(&w), Role::Window);
        w.dialog = true;
        assert_eq!(role(&w), Role::Dialog);
    }

    #[test]
    fn states_follow_properties_and_patterns() {
        let mut c = props("CheckBox");
        c.focusable = true;
        c.patterns.toggle = Some(Toggle::On);
        let r = role(&c);
        assert_eq!(
            states(&c, &r),
            [
                State::Focusable,
                State::Enabled,
                State::Sensitive,
                State::Checked,
                State::Visible,
                State::Showing
            ]
        );
        let mut t = props("Button");
        t.patterns.toggle = Some(Toggle::On);
        let r = role(&t);
        assert!(states(&t, &r).contains(&State::Pressed));
        assert!(!states(&t, &r).contains(&State::Checked));
        let mut radio = props("RadioButton");
        radio.patterns.selection_item = Some(true);
        let r = role(&radio);
        let s = states(&radio, &r);
        assert!(s.contains(&State::Checked) && s.contains(&State::Selected));
        let mut combo = props("ComboBox");
        combo.patterns.expand_collapse = Some(Expand::Expanded);
        combo.patterns.value = Some(ValueField {
            value: "a".into(),
            read_only: true,
        });
        let r = role(&combo);
        let s = states(&combo, &r);
        for want in [
            State::Expandable,
            State::Expanded,
            State::HasPopup,
            State::ReadOnly,
        ] {
            assert!(s.contains(&want), "{want:?} in {s:?}");
        }
        assert!(!s.contains(&State::Editable));
    }

    #[test]
    fn offscreen_elements_are_not_showing_and_have_no_bounds() {
        let mut p = props("Text");
        p.bounds = rect_of(10, 20, 110, 40);
        assert_eq!(bounds(&p), Some(Rect::new(10, 20, 100, 20)));
        p.offscreen = true;
        assert_eq!(bounds(&p), None);
        assert!(!states(&p, &Role::Label).contains(&State::Showing));
        assert_eq!(rect_of(5, 5, 5, 9), None);
        assert_eq!(rect_of(5, 5, 4, 9), None);
    }

    #[test]
    fn calls_put_the_default_first_and_the_state_changing_expand_next() {
        let mut p = Patterns {
            invoke: true,
            ..Patterns::default()
        };
        assert_eq!(actions(&p), ["click"]);
        p.invoke = false;
        p.expand_collapse = Some(Expand::Expanded);
        assert_eq!(actions(&p), ["collapse", "expand"]);
        p.expand_collapse = Some(Expand::Leaf);
        p.selection_item = Some(false);
        p.toggle = Some(Toggle::Off);
        assert_eq!(actions(&p), ["toggle", "select"]);
        assert_eq!(Call::named("Press"), Some(Call::Invoke));
        assert_eq!(Call::named("EXPAND"), Some(Call::Expand));
        assert_eq!(Call::named("jump"), None);
    }

    #[test]
    fn values_come_from_value_range_or_text_and_never_from_a_password() {
        let mut e = props("Edit");
        e.patterns.value = Some(ValueField {
            value: "Ada".into(),
            read_only: false,
        });
        assert_eq!(value(&e, &role(&e)).as_deref(), Some("Ada"));
        e.password = true;
        assert_eq!(value(&e, &role(&e)), None);
        let mut s = props("Slider");
        s.patterns.range = Some((40.0, false));
        assert_eq!(value(&s, &role(&s)).as_deref(), Some("40"));
        s.patterns.range = Some((2.5, false));
        assert_eq!(value(&s, &role(&s)).as_deref(), Some("2.5"));
        let mut d = props("Document");
        d.text = Some("x".repeat(MAX_VALUE_CHARS + 10));
        let shown = value(&d, &role(&d)).expect("the document's text");
        assert_eq!(shown.chars().count(), MAX_VALUE_CHARS);
        assert_eq!(value(&props("Button"), &Role::Button), None);
    }
}
