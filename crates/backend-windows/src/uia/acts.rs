//! Acting on one element through its patterns. Each act first follows the
//! path again (checking the ancestors' child counts), reads the element's
//! properties live and checks it is still the element read, so a changed
//! window or a field that turned into a password field is caught before
//! anything is done.

use deskhand_backend::accessibility::{NodeTarget, Role, TextRead, TextWrite, is_secure};

use super::UiaError;
use super::map::{self, Call, Props};
use super::tree::{Source, follow};

/// What acts need beyond the tree: live properties and pattern calls.
pub trait Actor: Source {
    /// The element's properties as they are now (every one).
    fn now(&self, element: &Self::Element) -> Result<Props, UiaError>;
    /// Calls `call` on the element's pattern.
    fn call(&self, element: &Self::Element, call: Call) -> Result<(), UiaError>;
    /// `IUIAutomationValuePattern::SetValue`.
    fn set_value(&self, element: &Self::Element, text: &str) -> Result<(), UiaError>;
    /// The field's whole text: its Value pattern's value, else its Text
    /// pattern's document.
    fn text(&self, element: &Self::Element) -> Result<String, UiaError>;
}

/// The element `target` names, as it is now, with its role; an error when
/// another element sits there.
fn live<A: Actor>(
    actor: &A,
    root: (A::Element, Props),
    target: &NodeTarget,
) -> Result<(A::Element, Props, Role), UiaError> {
    let (element, _) = follow(actor, root, &target.path, &target.expect_child_counts)?;
    let props = actor.now(&element)?;
    let role = map::role(&props);
    if let Some(expected) = target.expect_role.as_ref().filter(|r| **r != role) {
        return Err(UiaError::NotFound(format!(
            "the element at {} is now a {role}, not a {expected}: the window changed",
            target.path
        )));
    }
    if let Some(expected) = target.expect_name.as_ref().filter(|n| **n != props.name) {
        return Err(UiaError::NotFound(format!(
            "the {role} at {} is now named {:?}, not {expected:?}: the window changed",
            target.path, props.name
        )));
    }
    Ok((element, props, role))
}

/// Does `action` (or the element's default one) through its pattern;
/// returns the action's name.
pub fn press<A: Actor>(
    actor: &A,
    root: (A::Element, Props),
    target: &NodeTarget,
    action: Option<&str>,
) -> Result<String, UiaError> {
    let (element, props, role) = live(actor, root, target)?;
    if !props.enabled {
        return Err(UiaError::Unable(format!(
            "the {role} at {} is disabled",
            target.path
        )));
    }
    let offered = map::calls(&props.patterns);
    let call = match action {
        Some(name) => Call::named(name).filter(|c| offered.contains(c)),
        None => offered.first().copied(),
    }
    .ok_or_else(|| {
        UiaError::Unable(format!(
            "the {role} at {} offers no {} action (it offers {:?})",
            target.path,
            action.unwrap_or("default"),
            map::actions(&props.patterns)
        ))
    })?;
    actor.call(&element, call)?;
    Ok(call.name().to_owned())
}

/// Replaces the field's text through its Value pattern, unless it is a
/// password field now.
pub fn set_text<A: Actor>(
    actor: &A,
    root: (A::Element, Props),
    target: &NodeTarget,
    text: &str,
) -> Result<TextWrite, UiaError> {
    let (element, props, role) = live(actor, root, target)?;
    if is_secure(&role, &map::states(&props, &role)) {
        tracing::info!(path = %target.path, "refused to write a secure field");
        return Ok(TextWrite::RefusedSecure);
    }
    match &props.patterns.value {
        Some(v) if !v.read_only && props.enabled => {}
        _ => {
            return Err(UiaError::Unable(format!(
                "the {role} at {} is not an editable field",
                target.path
            )));
        }
    }
    actor.set_value(&element, text)?;
    Ok(TextWrite::Written)
}

/// Reads the field's whole text, unless it is a password field now.
pub fn read_text<A: Actor>(
    actor: &A,
    root: (A::Element, Props),
    target: &NodeTarget,
) -> Result<TextRead, UiaError> {
    let (element, props, role) = live(actor, root, target)?;
    if is_secure(&role, &map::states(&props, &role)) {
        return Ok(TextRead::Secure);
    }
    if props.patterns.value.is_none() && !props.patterns.text {
        return Err(UiaError::Unable(format!(
            "the {role} at {} has no text",
            target.path
        )));
    }
    Ok(TextRead::Text(actor.text(&element)?))
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use deskhand_backend::accessibility::{A11yTree, State, TreeLimits, WindowRef};

    use super::*;
    use crate::uia::recorded::Recorded;
    use crate::uia::tree::read_tree;

    /// The recorded tree `name` and a read of it.
    fn read(name: &str) -> (Recorded, A11yTree) {
        let rec = Recorded::load(name);
        let tree =
            read_tree(&rec, rec.root(), &TreeLimits::default(), Instant::now()).expect("a read");
        (rec, tree)
    }

    /// The target of the row with `role` and `name`, as the engine makes
    /// it (role, name, ancestors' child counts).
    fn target(tree: &A11yTree, role: Role, name: &str) -> NodeTarget {
        let node = tree.find(&role, name).next().expect("the row");
        let mut counts = Vec::new();
        let mut up = node.parent;
        while let Some(p) = up {
            counts.push(tree.nodes[p].child_count);
            up = tree.nodes[p].parent;
        }
        counts.reverse();
        NodeTarget {
            window: WindowRef {
                pid: 1,
                title: tree.nodes[0].name.clone(),
                bounds: None,
                surface_origin: None,
            },
            path: node.path.clone(),
            expect_role: Some(node.role.clone()),
            expect_name: Some(node.name.clone()),
            expect_child_counts: counts,
        }
    }

    #[test]
    fn pressing_a_button_invokes_it() {
        let (rec, tree) = read("sign_in");
        let t = target(&tree, Role::Button, "Sign in");
        assert_eq!(press(&rec, rec.root(), &t, None).expect("pressed"), "click");
        assert_eq!(rec.calls(), [("Sign in".to_owned(), Call::Invoke)]);
        let other = press(&rec, rec.root(), &t, Some("expand")).expect_err("no expand");
        assert!(
            other.to_string().contains("offers no expand action"),
            "{other}"
        );
    }

    #[test]
    fn toggling_a_check_box_changes_what_a_new_read_shows() {
        let (rec, tree) = read("sign_in");
        let t = target(&tree, Role::CheckBox, "Remember me");
        assert_eq!(
            press(&rec, rec.root(), &t, None).expect("toggled"),
            "toggle"
        );
        let again = read_again(&rec);
        let node = again
            .find(&Role::CheckBox, "Remember me")
            .next()
            .expect("box");
        assert!(!node.has(State::Checked));
    }

    /// A new read of `rec` as it is now.
    fn read_again(rec: &Recorded) -> A11yTree {
        read_tree(rec, rec.root(), &TreeLimits::default(), Instant::now()).expect("a read")
    }

    #[test]
    fn expanding_a_combo_box_and_selecting_an_item() {
        let (rec, tree) = read("sign_in");
        let combo = target(&tree, Role::ComboBox, "Server");
        assert_eq!(
            press(&rec, rec.root(), &combo, None).expect("expanded"),
            "expand"
        );
        let item = target(&tree, Role::ListItem, "us-east");
        assert_eq!(
            press(&rec, rec.root(), &item, Some("select")).expect("selected"),
            "select"
        );
        let again = read_again(&rec);
        let node = again.find(&Role::ListItem, "us-east").next().expect("item");
        assert!(node.has(State::Selected));
        let combo = again.find(&Role::ComboBox, "Server").next().expect("combo");
        assert!(combo.has(State::Expanded));
    }

    #[test]
    fn text_is_written_and_read_back() {
        let (rec, tree) = read("sign_in");
        let t = target(&tree, Role::TextField, "User name");
        assert_eq!(
            set_text(&rec, rec.root(), &t, "grace").expect("written"),
            TextWrite::Written
        );
        assert_eq!(
            read_text(&rec, rec.root(), &t).expect("read"),
            TextRead::Text("grace".into())
        );
        let notepad = read("notepad");
        let doc = target(&notepad.1, Role::Document, "Text Editor");
        assert_eq!(
            read_text(&notepad.0, notepad.0.root(), &doc).expect("read"),
            TextRead::Text("Hello from a recorded tree".into())
        );
    }

    #[test]
    fn a_password_field_is_never_written_or_read() {
        let (rec, tree) = read("sign_in");
        let t = target(&tree, Role::PasswordText, "Password");
        assert_eq!(
            set_text(&rec, rec.root(), &t, "guess").expect("answered"),
            TextWrite::RefusedSecure
        );
        assert_eq!(
            read_text(&rec, rec.root(), &t).expect("answered"),
            TextRead::Secure
        );
        assert_eq!(rec.value_of("Password").as_deref(), Some("hunter2"));
        assert!(rec.calls().is_empty());
    }

    #[test]
    fn a_field_that_became_a_password_field_is_refused() {
        let (rec, tree) = read("sign_in");
        let t = target(&tree, Role::TextField, "User name");
        rec.make_password("User name");
        let changed = set_text(&rec, rec.root(), &t, "x").expect_err("the role changed");
        assert!(
            changed.to_string().contains("the window changed"),
            "{changed}"
        );
        let unchecked = NodeTarget {
            expect_role: None,
            ..t
        };
        assert_eq!(
            set_text(&rec, rec.root(), &unchecked, "x").expect("answered"),
            TextWrite::RefusedSecure
        );
    }

    #[test]
    fn a_renamed_element_or_a_changed_parent_is_stale() {
        let (rec, tree) = read("sign_in");
        let t = target(&tree, Role::Button, "Sign in");
        rec.rename("Sign in", "Delete account");
        let err = press(&rec, rec.root(), &t, None).expect_err("renamed");
        assert!(matches!(err, UiaError::NotFound(_)), "{err}");
        let cancel = target(&tree, Role::Button, "Cancel");
        rec.remove("Remember me");
        let err = press(&rec, rec.root(), &cancel, None).expect_err("a sibling went");
        assert!(err.to_string().contains("children now"), "{err}");
        assert!(rec.calls().is_empty());
    }

    #[test]
    fn read_only_and_disabled_elements_refuse() {
        let (rec, tree) = read("sign_in");
        let server = target(&tree, Role::ComboBox, "Server");
        let err = set_text(&rec, rec.root(), &server, "x").expect_err("read-only");
        assert!(err.to_string().contains("not an editable field"), "{err}");
        let help = target(&tree, Role::Link, "Forgot password?");
        let err = press(&rec, rec.root(), &help, None).expect_err("disabled");
        assert!(err.to_string().contains("disabled"), "{err}");
    }
}
