//! The accessibility capability: one narrow trait, OS-free, that reads a
//! window's accessibility tree and acts on its elements (default action,
//! text), and the plain types it exchanges. The Linux implementation is
//! `deskhand-backend-atspi` (AT-SPI over D-Bus); the same trait serves
//! UI Automation and AX later.
//!
//! Secure fields (password entries) are part of the contract here: a
//! backend never fills [`A11yNode::value`] for one, and refuses to write or
//! read one back ([`TextWrite::RefusedSecure`], [`TextRead::Secure`]),
//! deciding from the field as it is at the moment of the call.

use std::fmt;
use std::time::Duration;

use crate::capabilities::{BackendError, NativeWindow};
use crate::geometry::{Point, Rect};

mod read;

pub use read::{Candidate, ReadSlot, choose_root, in_document_order};

/// An element's role, normalized across toolkits. The raw role of one
/// without a normalized name is kept in [`Role::Other`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Role {
    /// A top-level application window (AT-SPI `frame`).
    Window,
    /// A dialog window.
    Dialog,
    /// A push button.
    Button,
    /// A toggle button.
    ToggleButton,
    /// A check box.
    CheckBox,
    /// A radio button.
    RadioButton,
    /// A one-line or multi-line text field.
    TextField,
    /// A text field whose contents are hidden (a password entry): secure.
    PasswordText,
    /// A numeric field with up/down buttons.
    SpinButton,
    /// A slider.
    Slider,
    /// A combo box (drop-down).
    ComboBox,
    /// Static text.
    Label,
    /// A hyperlink.
    Link,
    /// An image or icon.
    Image,
    /// A list (list box).
    List,
    /// A row of a list.
    ListItem,
    /// A table or grid.
    Table,
    /// A cell of a table.
    TableCell,
    /// A tree view.
    Tree,
    /// A row of a tree.
    TreeItem,
    /// A menu bar.
    MenuBar,
    /// A menu.
    Menu,
    /// An item of a menu.
    MenuItem,
    /// A tool bar.
    ToolBar,
    /// A status bar.
    StatusBar,
    /// A set of tabs.
    TabList,
    /// One tab.
    Tab,
    /// A scrolled area.
    ScrollPane,
    /// A scroll bar.
    ScrollBar,
    /// A document (web page, text document).
    Document,
    /// A generic container (panel, filler, box).
    Panel,
    /// A separator.
    Separator,
    /// A progress bar.
    ProgressBar,
    /// A role without a normalized name: the toolkit's own, as it gave it.
    Other(String),
}

impl Role {
    /// The normalized name, snake_case (`text_field`, `password_text`); the
    /// raw role, as given, for [`Role::Other`].
    pub fn name(&self) -> &str {
        match self {
            Role::Window => "window",
            Role::Dialog => "dialog",
            Role::Button => "button",
            Role::ToggleButton => "toggle_button",
            Role::CheckBox => "check_box",
            Role::RadioButton => "radio_button",
            Role::TextField => "text_field",
            Role::PasswordText => "password_text",
            Role::SpinButton => "spin_button",
            Role::Slider => "slider",
            Role::ComboBox => "combo_box",
            Role::Label => "label",
            Role::Link => "link",
            Role::Image => "image",
            Role::List => "list",
            Role::ListItem => "list_item",
            Role::Table => "table",
            Role::TableCell => "table_cell",
            Role::Tree => "tree",
            Role::TreeItem => "tree_item",
            Role::MenuBar => "menu_bar",
            Role::Menu => "menu",
            Role::MenuItem => "menu_item",
            Role::ToolBar => "tool_bar",
            Role::StatusBar => "status_bar",
            Role::TabList => "tablist",
            Role::Tab => "tab",
            Role::ScrollPane => "scroll_pane",
            Role::ScrollBar => "scroll_bar",
            Role::Document => "document",
            Role::Panel => "panel",
            Role::Separator => "separator",
            Role::ProgressBar => "progress_bar",
            Role::Other(raw) => raw,
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One state of an element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum State {
    /// Has the keyboard focus.
    Focused,
    /// Can take the keyboard focus.
    Focusable,
    /// Enabled (not greyed out).
    Enabled,
    /// Reacts to the person's input.
    Sensitive,
    /// Checked (check box, toggle, radio button).
    Checked,
    /// Neither checked nor unchecked (a mixed check box).
    Indeterminate,
    /// Pressed (a toggle button that is down).
    Pressed,
    /// Selected (a list row).
    Selected,
    /// Can be selected.
    Selectable,
    /// Expanded (a tree row, a combo box).
    Expanded,
    /// Can be expanded.
    Expandable,
    /// Its text can be edited.
    Editable,
    /// Read-only.
    ReadOnly,
    /// Multi-line text.
    MultiLine,
    /// Laid out to be shown (it and its ancestors are mapped).
    Visible,
    /// On screen now (not scrolled away or hidden).
    Showing,
    /// The active window or the active item of a container.
    Active,
    /// A modal window.
    Modal,
    /// Has a popup (a menu button).
    HasPopup,
    /// Must be filled in (a form field).
    Required,
    /// Its contents are secret (a password field): never read, never
    /// written. Set by the backend wherever the platform marks a field so.
    Secure,
}

impl State {
    /// The state's name, snake_case (`focused`, `read_only`).
    pub fn name(self) -> &'static str {
        match self {
            State::Focused => "focused",
            State::Focusable => "focusable",
            State::Enabled => "enabled",
            State::Sensitive => "sensitive",
            State::Checked => "checked",
            State::Indeterminate => "indeterminate",
            State::Pressed => "pressed",
            State::Selected => "selected",
            State::Selectable => "selectable",
            State::Expanded => "expanded",
            State::Expandable => "expandable",
            State::Editable => "editable",
            State::ReadOnly => "read_only",
            State::MultiLine => "multi_line",
            State::Visible => "visible",
            State::Showing => "showing",
            State::Active => "active",
            State::Modal => "modal",
            State::HasPopup => "has_popup",
            State::Required => "required",
            State::Secure => "secure",
        }
    }
}

/// Where an element sits under its window: the index of each ancestor
/// among its parent's children, from the window's root element (the
/// window itself is the empty path). A later act follows it again, so it
/// names the same element while the window's structure is unchanged.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodePath(pub Vec<u32>);

impl NodePath {
    /// The path of the window's root element.
    pub fn root() -> Self {
        Self(Vec::new())
    }

    /// The path of this element's `index`-th child.
    pub fn child(&self, index: u32) -> Self {
        let mut steps = self.0.clone();
        steps.push(index);
        Self(steps)
    }

    /// How many levels below the window's root element it is.
    pub fn depth(&self) -> usize {
        self.0.len()
    }
}

impl fmt::Display for NodePath {
    /// `/` for the root, else `/0/3/1`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("/");
        }
        for step in &self.0 {
            write!(f, "/{step}")?;
        }
        Ok(())
    }
}

/// One element of a window's tree as read.
#[derive(Debug, Clone, PartialEq)]
pub struct A11yNode {
    /// Normalized role.
    pub role: Role,
    /// Accessible name (the label a screen reader speaks), `""` when none.
    pub name: String,
    /// Accessible description, `""` when none.
    pub description: String,
    /// States, sorted, each once.
    pub states: Vec<State>,
    /// Bounds in global desktop pixels; `None` when the element is not
    /// showing (hidden, or scrolled out of view), has no area, or does not
    /// report its bounds.
    pub bounds: Option<Rect>,
    /// Names of the actions it offers (`click`, `press`, `activate`, …).
    pub actions: Vec<String>,
    /// Its current value: the text of an editable field, the number of a
    /// slider or spin button. Never filled for a secure field.
    pub value: Option<String>,
    /// Index of its parent in [`A11yTree::nodes`]; `None` for the root.
    pub parent: Option<usize>,
    /// Indices of its children that were read, in order.
    pub children: Vec<usize>,
    /// How many children the element reported (more than
    /// [`A11yNode::children`] holds when the read was cut).
    pub child_count: u32,
    /// Where it sits under the window, to act on it later.
    pub path: NodePath,
}

impl A11yNode {
    /// Whether the field is secure: a password field, or marked secure.
    /// Its value is never read and it is never written.
    pub fn is_secure(&self) -> bool {
        is_secure(&self.role, &self.states)
    }

    /// Whether it has `state`.
    pub fn has(&self, state: State) -> bool {
        self.states.contains(&state)
    }
}

/// Whether an element with `role` and `states` is a secure field.
pub fn is_secure(role: &Role, states: &[State]) -> bool {
    *role == Role::PasswordText || states.contains(&State::Secure)
}

/// A window's tree, flattened in document order (a parent before its
/// children, siblings in order): `nodes[0]` is the window's root element.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct A11yTree {
    /// Every element read.
    pub nodes: Vec<A11yNode>,
    /// Whether elements were left out to stay within [`TreeLimits`].
    pub truncated: bool,
}

impl A11yTree {
    /// The elements with this role and name, in document order.
    pub fn find<'a>(
        &'a self,
        role: &Role,
        name: &str,
    ) -> impl Iterator<Item = &'a A11yNode> + use<'a> {
        let (role, name) = (role.clone(), name.to_owned());
        self.nodes
            .iter()
            .filter(move |n| n.role == role && n.name == name)
    }

    /// The element at `path`, when it was read.
    pub fn at(&self, path: &NodePath) -> Option<&A11yNode> {
        self.nodes.iter().find(|n| n.path == *path)
    }

    /// The bounds of every secure field read, to black out of a
    /// screenshot of the window.
    pub fn secure_bounds(&self) -> Vec<Rect> {
        self.nodes
            .iter()
            .filter(|n| n.is_secure())
            .filter_map(|n| n.bounds)
            .collect()
    }
}

/// The window whose tree is read: what the window list says of it.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowRef {
    /// Its owning process.
    pub pid: u32,
    /// Its title.
    pub title: String,
    /// Its bounds in global desktop pixels, to tell apart windows of one
    /// app with the same title.
    pub bounds: Option<Rect>,
    /// Where the app's element extents count from, when not from the
    /// desktop's origin ([`NativeWindow::surface_origin`]).
    pub surface_origin: Option<Point>,
}

impl WindowRef {
    /// The window as the window list gives it; `None` when its owner is
    /// unknown (no pid: its app cannot be found on the bus).
    pub fn of(window: &NativeWindow) -> Option<Self> {
        Some(Self {
            pid: window.pid?,
            title: window.title.clone(),
            bounds: Some(window.rect),
            surface_origin: window.surface_origin,
        })
    }
}

/// Bounds of one read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeLimits {
    /// At most this many elements (the root included).
    pub max_elements: usize,
    /// At most this many levels below the root.
    pub max_depth: usize,
    /// The longest one call to the app may take: an app that does not
    /// answer in time fails the read instead of stalling it.
    pub per_call_timeout: Duration,
    /// The longest the whole read may take.
    pub total_timeout: Duration,
    /// Read only what the structure needs (role, name, description, child
    /// count), not states, bounds, actions or values: about half the
    /// calls, for reads that list few of the elements they walk.
    pub structure_only: bool,
}

impl Default for TreeLimits {
    /// The internal read of the driver contract (§3): 5,000 elements,
    /// depth 200; 2 s per call, 10 s in all.
    fn default() -> Self {
        Self {
            max_elements: 5000,
            max_depth: 200,
            per_call_timeout: Duration::from_secs(2),
            total_timeout: Duration::from_secs(10),
            structure_only: false,
        }
    }
}

/// The element an act is for: its window, its path, and the role (and
/// name) it had when it was read. A backend refuses the act when the
/// element at the path has another role or name now (the structure
/// changed), so an act never lands on another element.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeTarget {
    /// Its window.
    pub window: WindowRef,
    /// Its path under the window.
    pub path: NodePath,
    /// The role it had when read; `None` skips the check.
    pub expect_role: Option<Role>,
    /// The name it had when read; `None` skips the check (for elements
    /// whose name changes as they are used).
    pub expect_name: Option<String>,
    /// How many children each of its ancestors had when read, the
    /// window's root first: a backend refuses the act when one has more
    /// or fewer now. Empty skips the check.
    pub expect_child_counts: Vec<u32>,
}

/// What a text write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextWrite {
    /// The field accepted the text.
    Written,
    /// The field is secure (checked live, right before writing): nothing
    /// was written.
    RefusedSecure,
}

/// What a text read-back found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextRead {
    /// The field's whole text.
    Text(String),
    /// The field is secure (checked live): nothing was read.
    Secure,
}

/// Why the accessibility bus cannot be used, as the doctor reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BusProblem {
    /// Nothing tells where the accessibility bus is: no session bus, or
    /// no `org.a11y.Bus` on it (assistive technologies are off).
    NotAdvertised,
    /// The bus is advertised but does not answer (cannot connect, or its
    /// registry does not reply).
    Unreachable,
}

impl BusProblem {
    /// The driver contract's reason code (§6.3).
    pub fn reason_code(self) -> &'static str {
        match self {
            BusProblem::NotAdvertised => "atspi_bus_not_advertised",
            BusProblem::Unreachable => "atspi_bus_unreachable",
        }
    }
}

/// Whether the accessibility bus answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BusStatus {
    /// It answers: trees can be read.
    Ok,
    /// It cannot be used.
    Unavailable {
        /// Why, as a reason code.
        problem: BusProblem,
        /// What failed, for logs and the doctor's details.
        detail: String,
    },
}

/// Reads windows' accessibility trees and acts on their elements. Calls
/// block until done and are bounded in time (the limits given, or a
/// backend's own); they may be made from any thread.
pub trait Accessibility: Send + Sync {
    /// Reads `window`'s tree within `limits`.
    fn read_window_tree(
        &self,
        window: &WindowRef,
        limits: &TreeLimits,
    ) -> Result<A11yTree, BackendError>;

    /// Reads the elements at `paths` under `window` in full (states,
    /// bounds, actions, value, as a tree read gives them; `parent` and
    /// `children` empty), `None` for a path that leads nowhere now.
    fn read_nodes(
        &self,
        window: &WindowRef,
        paths: &[NodePath],
        limits: &TreeLimits,
    ) -> Result<Vec<Option<A11yNode>>, BackendError>;

    /// Does an action of the element: `action` by name, or when `None` its
    /// default one (`click`, `press`, `activate` or `toggle`, the first it
    /// offers). Returns the name of the action done. No pointer moves.
    fn press(&self, target: &NodeTarget, action: Option<&str>) -> Result<String, BackendError>;

    /// Replaces an editable field's text with `text`, after checking live
    /// that the field is not secure.
    fn set_text(&self, target: &NodeTarget, text: &str) -> Result<TextWrite, BackendError>;

    /// Reads a field's whole text back, after checking live that the field
    /// is not secure.
    fn read_text(&self, target: &NodeTarget) -> Result<TextRead, BackendError>;

    /// Whether the accessibility bus answers (for the doctor and the
    /// features offered).
    fn bus_status(&self) -> BusStatus;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A node named `n`.
    fn node(role: Role, states: Vec<State>, path: NodePath) -> A11yNode {
        A11yNode {
            role,
            name: "n".into(),
            description: String::new(),
            states,
            bounds: None,
            actions: Vec::new(),
            value: None,
            parent: None,
            children: Vec::new(),
            child_count: 0,
            path,
        }
    }

    #[test]
    fn password_role_or_secure_state_is_secure() {
        let p = NodePath::root();
        assert!(node(Role::PasswordText, vec![], p.clone()).is_secure());
        assert!(node(Role::TextField, vec![State::Secure], p.clone()).is_secure());
        assert!(!node(Role::TextField, vec![State::Editable], p).is_secure());
    }

    #[test]
    fn paths_extend_and_print() {
        let p = NodePath::root().child(0).child(3);
        assert_eq!(p.depth(), 2);
        assert_eq!(p.to_string(), "/0/3");
        assert_eq!(NodePath::root().to_string(), "/");
    }

    #[test]
    fn tree_finds_by_role_name_and_path() {
        let a = node(Role::Button, vec![], NodePath::root());
        let b = node(Role::Label, vec![], NodePath::root().child(0));
        let tree = A11yTree {
            nodes: vec![a, b],
            truncated: false,
        };
        assert_eq!(tree.find(&Role::Label, "n").count(), 1);
        assert_eq!(tree.find(&Role::Label, "x").count(), 0);
        let at = tree.at(&NodePath::root().child(0));
        assert_eq!(at.map(|n| &n.role), Some(&Role::Label));
    }

    #[test]
    fn secure_bounds_are_those_of_the_secure_fields() {
        let mut secret = node(Role::PasswordText, vec![], NodePath::root().child(0));
        secret.bounds = Some(Rect::new(1, 2, 3, 4));
        let mut shown = node(Role::TextField, vec![], NodePath::root().child(1));
        shown.bounds = Some(Rect::new(5, 6, 7, 8));
        let hidden = node(
            Role::TextField,
            vec![State::Secure],
            NodePath::root().child(2),
        );
        let tree = A11yTree {
            nodes: vec![secret, shown, hidden],
            truncated: false,
        };
        assert_eq!(tree.secure_bounds(), vec![Rect::new(1, 2, 3, 4)]);
    }

    #[test]
    fn a_window_ref_needs_the_windows_pid() {
        let mut w = NativeWindow {
            id: 7,
            pid: None,
            class: String::new(),
            instance: String::new(),
            title: "doc".into(),
            rect: Rect::new(0, 0, 10, 10),
            focused: false,
            minimized: false,
            fullscreen: false,
            surface_origin: None,
        };
        assert_eq!(WindowRef::of(&w), None);
        w.pid = Some(42);
        let r = WindowRef::of(&w).expect("a pid");
        assert_eq!(
            (r.pid, r.title.as_str(), r.bounds),
            (42, "doc", Some(w.rect))
        );
    }

    #[test]
    fn names_are_snake_case_and_reasons_are_the_contracts() {
        assert_eq!(Role::PasswordText.name(), "password_text");
        assert_eq!(Role::Other("canvas".into()).to_string(), "canvas");
        assert_eq!(State::ReadOnly.name(), "read_only");
        assert_eq!(
            BusProblem::NotAdvertised.reason_code(),
            "atspi_bus_not_advertised"
        );
        assert_eq!(
            BusProblem::Unreachable.reason_code(),
            "atspi_bus_unreachable"
        );
    }
}
