//! Acts on one element: its action, its text. Each act first reads the
//! element's role, states and interfaces live, so a changed structure or a
//! field that turned secure is caught right before anything is done.

use atspi::{Interface, InterfaceSet};
use deskhand_backend::accessibility::{NodeTarget, Role, State, TextRead, TextWrite, is_secure};

use super::calls::{Caller, Obj};
use super::error::AtspiError;
use super::map;

/// The element as it is now.
struct Live {
    role: Role,
    states: Vec<State>,
    ifaces: InterfaceSet,
}

impl Live {
    /// Whether it is a secure field now.
    fn secure(&self) -> bool {
        is_secure(&self.role, &self.states)
    }
}

/// Reads the element's role, states and interfaces (and name, when
/// `target` expects one), and checks that it is still the element read.
async fn live(caller: &Caller, obj: &Obj, target: &NodeTarget) -> Result<Live, AtspiError> {
    let name = async {
        match &target.expect_name {
            Some(_) => caller.props(obj).await.map(|p| Some(p.name)),
            None => Ok(None),
        }
    };
    let (role, states, ifaces, name) = tokio::join!(
        caller.role(obj),
        caller.states(obj),
        caller.interfaces(obj),
        name
    );
    let role = map::role(role?);
    let live = Live {
        states: map::states(states?, &role),
        role,
        ifaces: ifaces?,
    };
    if let Some(expected) = target.expect_role.as_ref().filter(|r| **r != live.role) {
        return Err(AtspiError::NotFound(format!(
            "the element at {} is now a {}, not a {expected}: the window changed",
            target.path, live.role
        )));
    }
    let (name, expected) = (name?, target.expect_name.as_ref());
    if let (Some(now), Some(expected)) = (&name, expected)
        && now != expected
    {
        return Err(AtspiError::NotFound(format!(
            "the {} at {} is now named {now:?}, not {expected:?}: the window changed",
            live.role, target.path
        )));
    }
    Ok(live)
}

/// Does `action` (or the default action) of the element; returns its name.
pub(crate) async fn press(
    caller: &Caller,
    obj: &Obj,
    target: &NodeTarget,
    action: Option<&str>,
) -> Result<String, AtspiError> {
    let now = live(caller, obj, target).await?;
    if !now.ifaces.contains(Interface::Action) {
        return Err(AtspiError::Unable(format!(
            "the {} at {} has no actions",
            now.role, target.path
        )));
    }
    let names = caller.action_names(obj).await?;
    let index = match action {
        Some(wanted) => names.iter().position(|n| n.eq_ignore_ascii_case(wanted)),
        None => map::default_action(&names),
    }
    .ok_or_else(|| {
        AtspiError::Unable(format!(
            "the {} at {} offers no {} action (it offers {names:?})",
            now.role,
            target.path,
            action.unwrap_or("default")
        ))
    })?;
    let done = caller
        .do_action(obj, i32::try_from(index).unwrap_or(i32::MAX))
        .await?;
    if !done {
        return Err(AtspiError::Unable(format!(
            "the app did not do {:?} on the {} at {}",
            names[index], now.role, target.path
        )));
    }
    Ok(names[index].clone())
}

/// Replaces the field's text, unless it is secure now.
pub(crate) async fn set_text(
    caller: &Caller,
    obj: &Obj,
    target: &NodeTarget,
    text: &str,
) -> Result<TextWrite, AtspiError> {
    let now = live(caller, obj, target).await?;
    if now.secure() {
        tracing::info!(path = %target.path, "refused to write a secure field");
        return Ok(TextWrite::RefusedSecure);
    }
    if !now.ifaces.contains(Interface::EditableText) || !now.states.contains(&State::Editable) {
        return Err(AtspiError::Unable(format!(
            "the {} at {} is not an editable field",
            now.role, target.path
        )));
    }
    if !caller.set_text(obj, text).await? {
        return Err(AtspiError::Unable(format!(
            "the {} at {} did not take the text",
            now.role, target.path
        )));
    }
    Ok(TextWrite::Written)
}

/// Reads the field's whole text, unless it is secure now.
pub(crate) async fn read_text(
    caller: &Caller,
    obj: &Obj,
    target: &NodeTarget,
) -> Result<TextRead, AtspiError> {
    let now = live(caller, obj, target).await?;
    if now.secure() {
        return Ok(TextRead::Secure);
    }
    if !now.ifaces.contains(Interface::Text) {
        return Err(AtspiError::Unable(format!(
            "the {} at {} has no text",
            now.role, target.path
        )));
    }
    Ok(TextRead::Text(caller.text(obj, 0, -1).await?))
}
