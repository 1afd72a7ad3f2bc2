//! From what AX reports of an element (`AXRole`, `AXSubrole`, its
//! attributes and action names) to deskhand's row: role, states, actions
//! and value, as the other backends give them. A secure text field
//! (`AXSecureTextField`) is a password field: its `AXValue` is never
//! asked for ([`may_read_value`]) and never shown.

use deskhand_backend::Rect;
use deskhand_backend::accessibility::{A11yNode, NodePath, Role, State, is_secure};

/// The most characters of a field's text put in a tree read.
pub const MAX_VALUE_CHARS: usize = 4096;

/// AX roles and deskhand's role for each. A role not listed keeps its
/// name (`AXRuler`).
pub const ROLES: &[(&str, Role)] = &[
    ("AXWindow", Role::Window),
    ("AXSheet", Role::Dialog),
    ("AXDrawer", Role::Panel),
    ("AXButton", Role::Button),
    ("AXMenuButton", Role::Button),
    ("AXDisclosureTriangle", Role::Button),
    ("AXPopUpButton", Role::ComboBox),
    ("AXComboBox", Role::ComboBox),
    ("AXCheckBox", Role::CheckBox),
    ("AXRadioButton", Role::RadioButton),
    ("AXTextField", Role::TextField),
    ("AXTextArea", Role::TextField),
    ("AXSearchField", Role::TextField),
    ("AXStaticText", Role::Label),
    ("AXHeading", Role::Label),
    ("AXLink", Role::Link),
    ("AXImage", Role::Image),
    ("AXList", Role::List),
    ("AXTable", Role::Table),
    ("AXGrid", Role::Table),
    ("AXBrowser", Role::Table),
    ("AXOutline", Role::Tree),
    ("AXRow", Role::ListItem),
    ("AXCell", Role::TableCell),
    ("AXColumn", Role::Panel),
    ("AXMenuBar", Role::MenuBar),
    ("AXMenuBarItem", Role::MenuItem),
    ("AXMenu", Role::Menu),
    ("AXMenuItem", Role::MenuItem),
    ("AXToolbar", Role::ToolBar),
    ("AXTabGroup", Role::TabList),
    ("AXScrollArea", Role::ScrollPane),
    ("AXScrollBar", Role::ScrollBar),
    ("AXWebArea", Role::Document),
    ("AXGroup", Role::Panel),
    ("AXSplitGroup", Role::Panel),
    ("AXLayoutArea", Role::Panel),
    ("AXSplitter", Role::Separator),
    ("AXSlider", Role::Slider),
    ("AXIncrementor", Role::SpinButton),
    ("AXStepper", Role::SpinButton),
    ("AXProgressIndicator", Role::ProgressBar),
    ("AXBusyIndicator", Role::ProgressBar),
    ("AXLevelIndicator", Role::ProgressBar),
];

/// A value as AX gives it (`AXValue`).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum AxValue {
    /// No value, or one not read.
    #[default]
    None,
    /// A string (a text field's text).
    Text(String),
    /// A number (a check box's 0/1/2, a slider's position).
    Number(f64),
}

/// What AX reports of one element, its bounds already in desktop pixels.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AxProps {
    /// `AXRole`.
    pub role: String,
    /// `AXSubrole`, `""` when none.
    pub subrole: String,
    /// `AXTitle`.
    pub title: String,
    /// `AXDescription`.
    pub description: String,
    /// `AXHelp`.
    pub help: String,
    /// `AXValue` (never read for a secure field).
    pub value: AxValue,
    /// Whether `AXValue` is settable (an editable field).
    pub value_settable: bool,
    /// `AXEnabled`.
    pub enabled: bool,
    /// `AXFocused`.
    pub focused: bool,
    /// Whether `AXFocused` is settable (it can take the focus).
    pub focusable: bool,
    /// `AXSelected`, when the element has it.
    pub selected: Option<bool>,
    /// `AXExpanded`, when the element has it.
    pub expanded: Option<bool>,
    /// `AXModal` of a window.
    pub modal: bool,
    /// `AXPosition` and `AXSize` in desktop pixels; `None` when empty.
    pub bounds: Option<Rect>,
    /// Its action names (`AXPress`, `AXIncrement`, …).
    pub actions: Vec<String>,
}

/// Whether the element is a secure text field, from its role and subrole
/// alone: what decides, before anything else is read, that its value is
/// never asked for.
pub fn is_secure_field(role: &str, subrole: &str) -> bool {
    subrole == "AXSecureTextField" || role == "AXSecureTextField"
}

/// Whether the AX client may ask for `AXValue` of an element with this
/// role and subrole.
pub fn may_read_value(role: &str, subrole: &str) -> bool {
    !is_secure_field(role, subrole)
}

/// The role of an element with these properties: the role's, refined by
/// the subrole where it says more.
pub fn role(p: &AxProps) -> Role {
    if is_secure_field(&p.role, &p.subrole) {
        return Role::PasswordText;
    }
    match (p.role.as_str(), p.subrole.as_str()) {
        ("AXWindow", "AXDialog" | "AXSystemDialog" | "AXFloatingWindow") => {
            return Role::Dialog;
        }
        ("AXWindow", _) if p.modal => return Role::Dialog,
        ("AXCheckBox", "AXSwitch" | "AXToggle") => return Role::ToggleButton,
        ("AXRadioButton", "AXTabButton") => return Role::Tab,
        ("AXRow", "AXOutlineRow") => return Role::TreeItem,
        _ => {}
    }
    ROLES
        .iter()
        .find(|(name, _)| *name == p.role)
        .map_or_else(|| Role::Other(p.role.clone()), |(_, r)| r.clone())
}

/// The element's name: its title, else its description, else a label's
/// text (what VoiceOver reads).
pub fn name(p: &AxProps, role: &Role) -> String {
    if !p.title.is_empty() {
        return p.title.clone();
    }
    if !p.description.is_empty() {
        return p.description.clone();
    }
    match (&p.value, role) {
        (AxValue::Text(t), Role::Label) => t.clone(),
        _ => String::new(),
    }
}

/// The element's description: its help, else its description when the
/// title is its name.
pub fn description(p: &AxProps) -> String {
    if !p.help.is_empty() {
        p.help.clone()
    } else if !p.title.is_empty() {
        p.description.clone()
    } else {
        String::new()
    }
}

/// A check box's or radio button's `AXValue`: 1 is on, 2 mixed.
fn check_state(p: &AxProps) -> Option<u8> {
    match p.value {
        AxValue::Number(1.0) => Some(1),
        AxValue::Number(2.0) => Some(2),
        AxValue::Number(_) => Some(0),
        _ => None,
    }
}

/// The states of an element with these properties and `role`, sorted.
pub fn states(p: &AxProps, role: &Role) -> Vec<State> {
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
    add(p.bounds.is_some(), State::Visible);
    add(p.bounds.is_some(), State::Showing);
    add(*role == Role::PasswordText, State::Secure);
    add(p.modal, State::Modal);
    let checkable = matches!(
        role,
        Role::CheckBox | Role::RadioButton | Role::ToggleButton
    );
    let check = if checkable { check_state(p) } else { None };
    add(
        check == Some(1) && *role == Role::ToggleButton,
        State::Pressed,
    );
    add(
        check == Some(1) && *role != Role::ToggleButton,
        State::Checked,
    );
    add(check == Some(2), State::Indeterminate);
    add(p.selected.is_some(), State::Selectable);
    add(p.selected == Some(true), State::Selected);
    add(p.expanded.is_some(), State::Expandable);
    add(p.expanded == Some(true), State::Expanded);
    let popup = matches!(
        p.role.as_str(),
        "AXPopUpButton" | "AXMenuButton" | "AXComboBox"
    );
    add(popup, State::HasPopup);
    let text = matches!(role, Role::TextField | Role::PasswordText);
    add(text && p.value_settable, State::Editable);
    add(text && !p.value_settable, State::ReadOnly);
    add(
        p.role == "AXTextArea" || *role == Role::Document,
        State::MultiLine,
    );
    s.sort();
    s.dedup();
    s
}

/// AX actions and deskhand's name for each; an action not listed keeps
/// its name in lower case without `AX` (`AXPick` → `pick`).
const ACTIONS: &[(&str, &str)] = &[
    ("AXPress", "click"),
    ("AXIncrement", "increment"),
    ("AXDecrement", "decrement"),
    ("AXShowMenu", "show_menu"),
    ("AXConfirm", "confirm"),
    ("AXCancel", "cancel"),
    ("AXRaise", "raise"),
    ("AXShowDefaultUI", "show_default_ui"),
    ("AXShowAlternateUI", "show_alternate_ui"),
];

/// deskhand's name of AX action `ax`.
pub fn action_name(ax: &str) -> String {
    ACTIONS.iter().find(|(a, _)| *a == ax).map_or_else(
        || ax.strip_prefix("AX").unwrap_or(ax).to_lowercase(),
        |(_, n)| (*n).to_owned(),
    )
}

/// The AX action an action name asks for (`press`, `activate` and
/// `invoke` are other names of `click`), case ignored; `None` for an
/// action the element does not offer.
pub fn ax_action<'a>(name: &str, offered: &'a [String]) -> Option<&'a str> {
    let lower = name.to_ascii_lowercase();
    let wanted = match lower.as_str() {
        "press" | "activate" | "invoke" => "click",
        other => other,
    };
    offered
        .iter()
        .find(|a| action_name(a) == wanted)
        .map(String::as_str)
}

/// The action names of an element's row, `click` first.
pub fn actions(p: &AxProps) -> Vec<String> {
    let mut names: Vec<String> = p.actions.iter().map(|a| action_name(a)).collect();
    if let Some(i) = names.iter().position(|n| n == "click") {
        let click = names.remove(i);
        names.insert(0, click);
    }
    names
}

/// A number as a row shows it: no fraction when it has none.
fn format_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        n.to_string()
    }
}

/// The value shown in an element's row: a field's text or a control's
/// number; never anything of a secure field, and not a label's text
/// (its name already) nor a check box's state (its states).
pub fn value(p: &AxProps, role: &Role) -> Option<String> {
    if is_secure(role, &states(p, role)) || is_secure_field(&p.role, &p.subrole) {
        return None;
    }
    match (&p.value, role) {
        (_, Role::Label | Role::CheckBox | Role::RadioButton | Role::ToggleButton) => None,
        (AxValue::Text(t), _) => Some(t.chars().take(MAX_VALUE_CHARS).collect()),
        (AxValue::Number(n), _) => Some(format_number(*n)),
        (AxValue::None, _) => None,
    }
}

/// The row of an element with `p` that reported `child_count` children;
/// its place in the tree is filled in by the walk.
pub fn node_of(p: &AxProps, child_count: u32) -> A11yNode {
    let role = role(p);
    A11yNode {
        name: name(p, &role),
        description: description(p),
        states: states(p, &role),
        bounds: p.bounds.filter(|r| r.width > 0 && r.height > 0),
        actions: actions(p),
        value: value(p, &role),
        role,
        parent: None,
        children: Vec::new(),
        child_count,
        path: NodePath::root(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(role: &str, subrole: &str) -> AxProps {
        AxProps {
            role: role.into(),
            subrole: subrole.into(),
            enabled: true,
            ..AxProps::default()
        }
    }

    #[test]
    fn roles_are_refined_by_their_subroles() {
        assert_eq!(role(&props("AXTextField", "")), Role::TextField);
        assert_eq!(
            role(&props("AXTextField", "AXSecureTextField")),
            Role::PasswordText
        );
        assert_eq!(role(&props("AXWindow", "AXStandardWindow")), Role::Window);
        assert_eq!(role(&props("AXWindow", "AXDialog")), Role::Dialog);
        assert_eq!(role(&props("AXCheckBox", "AXSwitch")), Role::ToggleButton);
        assert_eq!(role(&props("AXRadioButton", "AXTabButton")), Role::Tab);
        assert_eq!(role(&props("AXRow", "AXOutlineRow")), Role::TreeItem);
        assert_eq!(role(&props("AXRow", "AXTableRow")), Role::ListItem);
        assert_eq!(role(&props("AXRuler", "")), Role::Other("AXRuler".into()));
    }

    #[test]
    fn a_secure_field_is_never_read() {
        assert!(!may_read_value("AXTextField", "AXSecureTextField"));
        assert!(may_read_value("AXTextField", "AXSearchField"));
        let mut p = props("AXTextField", "AXSecureTextField");
        // Even if a value slipped in, it is never shown.
        p.value = AxValue::Text("hunter2".into());
        let r = role(&p);
        assert_eq!(value(&p, &r), None);
        assert!(states(&p, &r).contains(&State::Secure));
    }

    #[test]
    fn check_boxes_switches_and_popups_have_their_states() {
        let mut c = props("AXCheckBox", "");
        c.value = AxValue::Number(1.0);
        let s = states(&c, &role(&c));
        assert!(s.contains(&State::Checked) && !s.contains(&State::Pressed));
        c.value = AxValue::Number(2.0);
        assert!(states(&c, &role(&c)).contains(&State::Indeterminate));
        let mut sw = props("AXCheckBox", "AXSwitch");
        sw.value = AxValue::Number(1.0);
        assert!(states(&sw, &role(&sw)).contains(&State::Pressed));
        assert_eq!(value(&sw, &role(&sw)), None, "a state, not a value");
        let pop = props("AXPopUpButton", "");
        assert!(states(&pop, &role(&pop)).contains(&State::HasPopup));
        let mut f = props("AXTextField", "");
        f.value_settable = true;
        assert!(states(&f, &role(&f)).contains(&State::Editable));
        f.value_settable = false;
        assert!(states(&f, &role(&f)).contains(&State::ReadOnly));
    }

    #[test]
    fn names_come_from_title_description_or_a_labels_text() {
        let mut b = props("AXButton", "");
        b.description = "Close".into();
        assert_eq!(name(&b, &role(&b)), "Close");
        b.title = "Done".into();
        assert_eq!(name(&b, &role(&b)), "Done");
        assert_eq!(description(&b), "Close");
        let mut l = props("AXStaticText", "");
        l.value = AxValue::Text("Sign in".into());
        assert_eq!(name(&l, &role(&l)), "Sign in");
        assert_eq!(value(&l, &role(&l)), None);
    }

    #[test]
    fn actions_put_click_first_and_accept_its_other_names() {
        let mut s = props("AXIncrementor", "");
        s.actions = vec!["AXIncrement".into(), "AXPress".into(), "AXPick".into()];
        assert_eq!(actions(&s), ["click", "increment", "pick"]);
        assert_eq!(ax_action("Press", &s.actions), Some("AXPress"));
        assert_eq!(ax_action("increment", &s.actions), Some("AXIncrement"));
        assert_eq!(ax_action("confirm", &s.actions), None);
        s.value = AxValue::Number(2.5);
        assert_eq!(value(&s, &role(&s)).as_deref(), Some("2.5"));
        s.value = AxValue::Number(40.0);
        assert_eq!(value(&s, &role(&s)).as_deref(), Some("40"));
    }
}
