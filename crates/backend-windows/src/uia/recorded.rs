//! Recorded UI Automation trees for the tests: a window's control view as
//! Windows' Inspect tool shows it (control types by their SDK names,
//! `BoundingRectangle` as left, top, right, bottom), loaded from
//! `fixtures/*.json`. Pattern calls change the recorded state as the app
//! would, and are logged, so a test sees an act's effect in a new read.

use std::cell::RefCell;

use serde::Deserialize;

use super::UiaError;
use super::acts::Actor;
use super::map::{self, Call, Expand, Patterns, Props, Toggle, ValueField};
use super::tree::Source;

/// One element as recorded.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Element {
    #[serde(rename = "type")]
    control_type: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    help: String,
    rect: Option<[i32; 4]>,
    #[serde(default = "yes")]
    enabled: bool,
    #[serde(default)]
    focused: bool,
    #[serde(default)]
    focusable: bool,
    #[serde(default)]
    offscreen: bool,
    #[serde(default)]
    password: bool,
    #[serde(default)]
    dialog: bool,
    #[serde(default)]
    invoke: bool,
    toggle: Option<String>,
    selected: Option<bool>,
    expand: Option<String>,
    value: Option<String>,
    #[serde(default)]
    read_only: bool,
    range: Option<f64>,
    /// The Text pattern's document, for fields with no Value pattern.
    text: Option<String>,
    #[serde(default)]
    children: Vec<Element>,
}

fn yes() -> bool {
    true
}

/// A recorded tree, its elements numbered in document order.
pub(crate) struct Recorded {
    nodes: RefCell<Vec<Element>>,
    calls: RefCell<Vec<(String, Call)>>,
}

/// An element of a recorded tree: the indices leading to it.
pub(crate) type At = Vec<usize>;

impl Recorded {
    /// The fixture `name` (`fixtures/<name>.json`).
    pub(crate) fn load(name: &str) -> Self {
        let text = match name {
            "notepad" => include_str!("fixtures/notepad.json"),
            "sign_in" => include_str!("fixtures/sign_in.json"),
            other => panic!("no fixture {other}"),
        };
        let root: Element = serde_json::from_str(text).expect("a valid fixture");
        Self {
            nodes: RefCell::new(vec![root]),
            calls: RefCell::new(Vec::new()),
        }
    }

    /// The window's root element and its properties.
    pub(crate) fn root(&self) -> (At, Props) {
        let props = props(&self.nodes.borrow()[0]);
        (Vec::new(), props)
    }

    /// The pattern calls made, each with the element's name.
    pub(crate) fn calls(&self) -> Vec<(String, Call)> {
        self.calls.borrow().clone()
    }

    /// The recorded value of the element named `name`.
    pub(crate) fn value_of(&self, name: &str) -> Option<String> {
        self.find(name, |e| e.value.clone()).flatten()
    }

    /// Renames the element named `name` (the app changed it).
    pub(crate) fn rename(&self, name: &str, to: &str) {
        self.find(name, |e| e.name = to.into());
    }

    /// Marks the element named `name` a password field.
    pub(crate) fn make_password(&self, name: &str) {
        self.find(name, |e| e.password = true);
    }

    /// Removes the element named `name` from its parent.
    pub(crate) fn remove(&self, name: &str) {
        let mut nodes = self.nodes.borrow_mut();
        remove_in(&mut nodes[0], name);
    }

    /// Runs `f` on the element named `name`.
    fn find<T>(&self, name: &str, f: impl FnOnce(&mut Element) -> T) -> Option<T> {
        let mut nodes = self.nodes.borrow_mut();
        find_in(&mut nodes[0], name).map(f)
    }

    /// Runs `f` on the element at `at`.
    fn with<T>(&self, at: &At, f: impl FnOnce(&mut Element) -> T) -> Result<T, UiaError> {
        let mut nodes = self.nodes.borrow_mut();
        let mut e = &mut nodes[0];
        for &i in at {
            e = e
                .children
                .get_mut(i)
                .ok_or_else(|| UiaError::NotFound("the element is gone".into()))?;
        }
        Ok(f(e))
    }
}

fn find_in<'a>(e: &'a mut Element, name: &str) -> Option<&'a mut Element> {
    if e.name == name {
        return Some(e);
    }
    e.children.iter_mut().find_map(|c| find_in(c, name))
}

fn remove_in(e: &mut Element, name: &str) {
    e.children.retain(|c| c.name != name);
    for c in &mut e.children {
        remove_in(c, name);
    }
}

/// A recorded element's properties, as UI Automation would report them.
fn props(e: &Element) -> Props {
    let control_type = map::control_type_id(&e.control_type)
        .unwrap_or_else(|| panic!("unknown control type {}", e.control_type));
    Props {
        control_type,
        name: e.name.clone(),
        help_text: e.help.clone(),
        enabled: e.enabled,
        focused: e.focused,
        focusable: e.focusable,
        offscreen: e.offscreen,
        password: e.password,
        required: false,
        dialog: e.dialog,
        modal: e.dialog,
        bounds: e.rect.and_then(|[l, t, r, b]| map::rect_of(l, t, r, b)),
        patterns: Patterns {
            invoke: e.invoke,
            toggle: e.toggle.as_deref().map(toggle_of),
            selection_item: e.selected,
            expand_collapse: e.expand.as_deref().map(expand_of),
            value: e.value.as_ref().map(|v| ValueField {
                value: v.clone(),
                read_only: e.read_only,
            }),
            range: e.range.map(|n| (n, e.read_only)),
            text: e.text.is_some() || e.control_type == "Document",
        },
        text: e.text.clone(),
    }
}

fn toggle_of(raw: &str) -> Toggle {
    match raw {
        "On" => Toggle::On,
        "Off" => Toggle::Off,
        "Indeterminate" => Toggle::Indeterminate,
        other => panic!("no toggle state {other}"),
    }
}

fn expand_of(raw: &str) -> Expand {
    match raw {
        "Collapsed" => Expand::Collapsed,
        "Expanded" => Expand::Expanded,
        "PartiallyExpanded" => Expand::Partially,
        "LeafNode" => Expand::Leaf,
        other => panic!("no expand state {other}"),
    }
}

impl Source for Recorded {
    type Element = At;

    fn children(&self, of: &At) -> Result<Vec<(At, Props)>, UiaError> {
        let kids = self.with(of, |e| e.children.clone())?;
        Ok(kids
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let mut at = of.clone();
                at.push(i);
                (at, props(c))
            })
            .collect())
    }
}

impl Actor for Recorded {
    fn now(&self, element: &At) -> Result<Props, UiaError> {
        self.with(element, |e| props(e))
    }

    fn call(&self, element: &At, call: Call) -> Result<(), UiaError> {
        let name = self.with(element, |e| {
            match call {
                Call::Invoke => {}
                Call::Toggle => {
                    let on = e.toggle.as_deref() == Some("On");
                    e.toggle = Some(if on { "Off" } else { "On" }.into());
                }
                Call::Select => e.selected = Some(true),
                Call::Expand => e.expand = Some("Expanded".into()),
                Call::Collapse => e.expand = Some("Collapsed".into()),
            }
            e.name.clone()
        })?;
        self.calls.borrow_mut().push((name, call));
        Ok(())
    }

    fn set_value(&self, element: &At, text: &str) -> Result<(), UiaError> {
        self.with(element, |e| e.value = Some(text.into()))
    }

    fn text(&self, element: &At) -> Result<String, UiaError> {
        self.with(element, |e| {
            e.value
                .clone()
                .or_else(|| e.text.clone())
                .unwrap_or_default()
        })
    }
}
