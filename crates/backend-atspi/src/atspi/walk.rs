//! Reading a window's tree: every element's calls are made concurrently,
//! and many elements are read at once (an element's children are queued
//! as soon as it is read), so the app is never waiting on us. The time of
//! a read is about the number of calls times what the app takes to answer
//! one, not the number of round trips.

use std::collections::VecDeque;

use atspi::Interface;
use deskhand_backend::Rect;
use deskhand_backend::accessibility::{
    A11yNode, A11yTree, NodePath, ReadSlot, Role, State, TreeLimits, in_document_order, is_secure,
};
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;

use super::calls::{Caller, Obj};
use super::error::AtspiError;
use super::map;

/// How many elements are read at once (each with up to five calls in
/// flight).
pub(super) const IN_FLIGHT: usize = 48;
/// The most characters of an editable field's text put in a tree read.
const MAX_VALUE_CHARS: i32 = 4096;

/// What was read of one element.
pub(super) struct Info {
    role: Role,
    name: String,
    description: String,
    states: Vec<State>,
    bounds: Option<Rect>,
    actions: Vec<String>,
    value: Option<String>,
    pub(super) child_count: u32,
}

/// An element found: where it is, and what was read of it.
pub(super) struct Slot {
    pub(super) obj: Obj,
    /// Its index among its parent's children.
    pub(super) index: u32,
    pub(super) depth: usize,
    pub(super) info: Option<Info>,
    pub(super) children: Vec<usize>,
}

/// An optional call's result: a failed call is `None` (the app does not
/// offer it after all), a timeout fails the read.
fn optional<T>(r: Result<T, AtspiError>) -> Result<Option<T>, AtspiError> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e @ AtspiError::Timeout { .. }) => Err(e),
        Err(e) => {
            tracing::debug!(error = %e, "an optional accessibility call failed");
            Ok(None)
        }
    }
}

/// The value shown for an element: an editable field's text, a Value's
/// number; never anything of a secure field.
async fn value_of(
    caller: &Caller,
    obj: &Obj,
    ifaces: atspi::InterfaceSet,
    secure: bool,
) -> Result<Option<String>, AtspiError> {
    if secure {
        return Ok(None);
    }
    if ifaces.contains(Interface::EditableText) && ifaces.contains(Interface::Text) {
        return optional(caller.text(obj, 0, MAX_VALUE_CHARS).await);
    }
    if ifaces.contains(Interface::Value) {
        let v = optional(caller.current_value(obj).await)?;
        return Ok(v.map(|v| v.to_string()));
    }
    Ok(None)
}

/// Reads what the structure needs of one element (role, name,
/// description, child count), and its children's references when
/// `want_children`.
pub(super) async fn read_structure(
    caller: &Caller,
    obj: &Obj,
    want_children: bool,
) -> Result<(Info, Vec<Obj>), AtspiError> {
    let (props, role) = tokio::join!(caller.props(obj), caller.role(obj));
    let (props, role) = (props?, map::role(role?));
    let children = match want_children && props.child_count > 0 {
        true => caller.children(obj).await?,
        false => Vec::new(),
    };
    let info = Info {
        states: map::states(atspi::StateSet::empty(), &role),
        role,
        name: props.name,
        description: props.description,
        bounds: None,
        actions: Vec::new(),
        value: None,
        child_count: u32::try_from(props.child_count).unwrap_or(0),
    };
    Ok((info, children.iter().filter_map(Obj::from_ref).collect()))
}

/// Reads one element, and its children's references when `want_children`.
pub(super) async fn read_node(
    caller: &Caller,
    obj: &Obj,
    want_children: bool,
) -> Result<(Info, Vec<Obj>), AtspiError> {
    let (props, role, states, ifaces) = tokio::join!(
        caller.props(obj),
        caller.role(obj),
        caller.states(obj),
        caller.interfaces(obj),
    );
    let (props, ifaces) = (props?, ifaces?);
    let role = map::role(role?);
    let states = map::states(states?, &role);
    let secure = is_secure(&role, &states);
    // What is not on screen (a row scrolled away) has no bounds worth a
    // call: GTK gives such rows a position of `i32::MIN`.
    let showing = states.contains(&State::Showing);
    let extents = async {
        match showing && ifaces.contains(Interface::Component) {
            true => optional(caller.extents(obj).await),
            false => Ok(None),
        }
    };
    let actions = async {
        match ifaces.contains(Interface::Action) {
            true => optional(caller.action_names(obj).await),
            false => Ok(None),
        }
    };
    // A leaf (most elements) costs no GetChildren.
    let children = async {
        match want_children && props.child_count > 0 {
            true => caller.children(obj).await,
            false => Ok(Vec::new()),
        }
    };
    let (extents, actions, value, children) = tokio::join!(
        extents,
        actions,
        value_of(caller, obj, ifaces, secure),
        children
    );
    let info = Info {
        role,
        name: props.name,
        description: props.description,
        states,
        bounds: extents?.and_then(map::bounds),
        actions: actions?.unwrap_or_default(),
        value: value?,
        child_count: u32::try_from(props.child_count).unwrap_or(0),
    };
    let children = children?.iter().filter_map(Obj::from_ref).collect();
    Ok((info, children))
}

/// Reads the tree under `root` within `limits` (but for the total time,
/// which the caller bounds).
pub(crate) async fn read_tree(
    caller: &Caller,
    root: Obj,
    limits: &TreeLimits,
) -> Result<A11yTree, AtspiError> {
    let mut slots = vec![Slot {
        obj: root,
        index: 0,
        depth: 0,
        info: None,
        children: Vec::new(),
    }];
    let mut queue = VecDeque::from([0usize]);
    let mut running = FuturesUnordered::new();
    let mut truncated = false;
    let max_elements = limits.max_elements.max(1);
    loop {
        while running.len() < IN_FLIGHT {
            let Some(i) = queue.pop_front() else { break };
            let (obj, want) = (slots[i].obj.clone(), slots[i].depth < limits.max_depth);
            let light = limits.structure_only;
            running.push(async move {
                let read = match light {
                    true => read_structure(caller, &obj, want).await,
                    false => read_node(caller, &obj, want).await,
                };
                (i, read)
            });
        }
        let Some((i, read)) = running.next().await else {
            break;
        };
        let (info, children) = read?;
        if slots[i].depth >= limits.max_depth && info.child_count > 0 {
            truncated = true;
        }
        slots[i].info = Some(info);
        for (index, obj) in children.into_iter().enumerate() {
            if slots.len() >= max_elements {
                truncated = true;
                break;
            }
            let child = slots.len();
            slots.push(Slot {
                obj,
                index: u32::try_from(index).unwrap_or(u32::MAX),
                depth: slots[i].depth + 1,
                info: None,
                children: Vec::new(),
            });
            slots[i].children.push(child);
            queue.push_back(child);
        }
    }
    Ok(flatten(slots, truncated))
}

/// Reads the elements at `paths` below `root` in full; `None` for a path
/// that leads nowhere.
pub(crate) async fn read_paths(
    caller: &Caller,
    root: &Obj,
    paths: &[NodePath],
) -> Result<Vec<Option<A11yNode>>, AtspiError> {
    futures_util::future::join_all(paths.iter().map(|path| read_path(caller, root, path)))
        .await
        .into_iter()
        .collect()
}

/// The element at `path` below `root`, read in full.
async fn read_path(
    caller: &Caller,
    root: &Obj,
    path: &NodePath,
) -> Result<Option<A11yNode>, AtspiError> {
    let obj = match super::find::follow(caller, root.clone(), path, &[]).await {
        Ok(obj) => obj,
        Err(AtspiError::NotFound(_)) => return Ok(None),
        Err(e) => return Err(e),
    };
    let (info, _) = read_node(caller, &obj, false).await?;
    Ok(Some(node_of(info, path.clone(), None)))
}

/// The node of what was read of an element at `path`.
fn node_of(info: Info, path: NodePath, parent: Option<usize>) -> A11yNode {
    A11yNode {
        role: info.role,
        name: info.name,
        description: info.description,
        states: info.states,
        bounds: info.bounds,
        actions: info.actions,
        value: info.value,
        parent,
        children: Vec::new(),
        child_count: info.child_count,
        path,
    }
}

/// The slots in document order (a parent before its children, siblings
/// in order), with parent and children as indices into the result.
pub(super) fn flatten(slots: Vec<Slot>, truncated: bool) -> A11yTree {
    let read = slots
        .into_iter()
        .map(|slot| ReadSlot {
            node: slot.info.map(|info| node_of(info, NodePath::root(), None)),
            index: slot.index,
            children: slot.children,
        })
        .collect();
    in_document_order(read, truncated)
}
