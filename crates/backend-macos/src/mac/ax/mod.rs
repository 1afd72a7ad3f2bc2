//! Accessibility through AX (`AXUIElement`): a window's tree read breadth
//! first within [`TreeLimits`] from the app's element for the window
//! (picked among its `AXWindows` by title and bounds), rows mapped by
//! [`crate::ax::map`], paths followed back for acts (`AXPerformAction`,
//! `AXValue` set and read back), each act checking first that the element
//! is the one read and, for text, that it is not a secure field.

mod element;

use std::collections::VecDeque;
use std::time::Instant;

use deskhand_backend::BackendError;
use deskhand_backend::accessibility::{
    A11yNode, A11yTree, Accessibility, BusProblem, BusStatus, Candidate, NodePath, NodeTarget,
    ReadSlot, TextRead, TextWrite, TreeLimits, WindowRef, choose_root, in_document_order,
};

use self::element::El;
use super::SharedLayout;
use crate::ax::map::{self, action_name, ax_action, is_secure_field};
use crate::layout::Layout;

pub(crate) struct MacAccessibility {
    layout: SharedLayout,
}

/// The per-call bound of acts (reads take theirs from the limits).
const ACT_TIMEOUT: f32 = 2.0;

impl MacAccessibility {
    pub(crate) fn new(layout: SharedLayout) -> Self {
        Self { layout }
    }

    /// The element at `path` under `root`, when there is one.
    fn follow(root: El, path: &NodePath, timeout: f32) -> Result<Option<El>, BackendError> {
        let mut at = root;
        for step in &path.0 {
            let Some(child) = at.children()?.into_iter().nth(*step as usize) else {
                return Ok(None);
            };
            child.bound(timeout);
            at = child;
        }
        Ok(Some(at))
    }

    /// The target's element, checked to be the one read: the same child
    /// counts along its path, role and name.
    fn target(&self, t: &NodeTarget) -> Result<(El, A11yNode), BackendError> {
        let layout = self.layout.current()?;
        let mut at = window_element(&t.window, &layout, ACT_TIMEOUT)?;
        for (depth, step) in t.path.0.iter().enumerate() {
            let children = at.children()?;
            if t.expect_child_counts
                .get(depth)
                .is_some_and(|n| *n as usize != children.len())
            {
                return Err(BackendError::Stale("the window's structure changed".into()));
            }
            at = children
                .into_iter()
                .nth(*step as usize)
                .ok_or_else(|| BackendError::Stale("the element is gone".into()))?;
            at.bound(ACT_TIMEOUT);
        }
        let node = map::node_of(&at.props(&layout, false)?, 0);
        let role_changed = t.expect_role.as_ref().is_some_and(|r| *r != node.role);
        let name_changed = t.expect_name.as_ref().is_some_and(|n| *n != node.name);
        if role_changed || name_changed {
            return Err(BackendError::Stale(
                "another element is where it was".into(),
            ));
        }
        Ok((at, node))
    }
}

/// The element of `window`: among its app's windows, the one with its
/// title that fits its bounds best.
fn window_element(window: &WindowRef, layout: &Layout, timeout: f32) -> Result<El, BackendError> {
    let app = El::application(window.pid, timeout)
        .ok_or_else(|| BackendError::Stale(format!("no process {}", window.pid)))?;
    let candidates = app
        .elements("AXWindows")?
        .into_iter()
        .map(|w| {
            w.bound(timeout);
            Ok(Candidate {
                name: w.string("AXTitle")?,
                bounds: w.frame(layout)?,
                item: w,
            })
        })
        .collect::<Result<Vec<_>, BackendError>>()?;
    choose_root(candidates, window).ok_or_else(|| {
        BackendError::Stale(format!("window {:?} is not among its app's", window.title))
    })
}

/// Raises `window` within its app (`AXRaise`).
pub(crate) fn raise(window: &WindowRef, layout: &Layout) -> Result<(), BackendError> {
    window_element(window, layout, ACT_TIMEOUT)?.perform("AXRaise")
}

/// Reads the tree under `root` breadth first within `limits`.
fn read_tree(
    root: El,
    layout: &Layout,
    limits: &TreeLimits,
    started: Instant,
) -> Result<A11yTree, BackendError> {
    let timeout = limits.per_call_timeout.as_secs_f32();
    let max = limits.max_elements.max(1);
    let mut slots = vec![ReadSlot {
        node: Some(map::node_of(&root.props(layout, limits.structure_only)?, 0)),
        index: 0,
        children: Vec::new(),
    }];
    let mut queue = VecDeque::from([(0usize, root, 0usize)]);
    let mut truncated = false;
    while let Some((slot, el, depth)) = queue.pop_front() {
        if started.elapsed() > limits.total_timeout {
            return Err(BackendError::Failed(format!(
                "the accessibility read took longer than {} ms",
                limits.total_timeout.as_millis()
            )));
        }
        let children = el.children()?;
        if let Some(node) = slots[slot].node.as_mut() {
            node.child_count = children.len() as u32;
        }
        for (i, child) in children.into_iter().enumerate() {
            if depth + 1 > limits.max_depth || slots.len() >= max {
                truncated = true;
                break;
            }
            child.bound(timeout);
            let props = match child.props(layout, limits.structure_only) {
                Ok(props) => props,
                // Gone while the tree was read (a closing popup): left
                // out, the read says it is incomplete.
                Err(BackendError::Stale(_)) => {
                    truncated = true;
                    continue;
                }
                Err(e) => return Err(e),
            };
            slots.push(ReadSlot {
                node: Some(map::node_of(&props, 0)),
                index: i as u32,
                children: Vec::new(),
            });
            let at = slots.len() - 1;
            slots[slot].children.push(at);
            queue.push_back((at, child, depth + 1));
        }
    }
    Ok(in_document_order(slots, truncated))
}

impl Accessibility for MacAccessibility {
    fn read_window_tree(
        &self,
        window: &WindowRef,
        limits: &TreeLimits,
    ) -> Result<A11yTree, BackendError> {
        let started = Instant::now();
        let layout = self.layout.current()?;
        let root = window_element(window, &layout, limits.per_call_timeout.as_secs_f32())?;
        read_tree(root, &layout, limits, started)
    }

    fn read_nodes(
        &self,
        window: &WindowRef,
        paths: &[NodePath],
        limits: &TreeLimits,
    ) -> Result<Vec<Option<A11yNode>>, BackendError> {
        let timeout = limits.per_call_timeout.as_secs_f32();
        let layout = self.layout.current()?;
        let root = window_element(window, &layout, timeout)?;
        paths
            .iter()
            .map(|path| {
                let Some(el) = Self::follow(root.clone(), path, timeout)? else {
                    return Ok(None);
                };
                let count = el.children()?.len() as u32;
                let mut node = map::node_of(&el.props(&layout, false)?, count);
                node.path = path.clone();
                Ok(Some(node))
            })
            .collect()
    }

    fn press(&self, target: &NodeTarget, action: Option<&str>) -> Result<String, BackendError> {
        let (el, node) = self.target(target)?;
        let offered = el.actions();
        let chosen = match action {
            Some(name) => ax_action(name, &offered),
            // The default: the row's first action (`click` when offered).
            None => node
                .actions
                .first()
                .and_then(|first| ax_action(first, &offered)),
        }
        .ok_or_else(|| {
            BackendError::InvalidTarget(format!(
                "the element offers no {}",
                action.unwrap_or("action")
            ))
        })?
        .to_owned();
        el.perform(&chosen)?;
        Ok(action_name(&chosen))
    }

    fn set_text(&self, target: &NodeTarget, text: &str) -> Result<TextWrite, BackendError> {
        let (el, _) = self.target(target)?;
        if is_secure_field(&el.string("AXRole")?, &el.string("AXSubrole")?) {
            return Ok(TextWrite::RefusedSecure);
        }
        if !el.settable("AXValue") {
            return Err(BackendError::InvalidTarget(
                "the element's text cannot be set".into(),
            ));
        }
        el.set_value(text)?;
        Ok(TextWrite::Written)
    }

    fn read_text(&self, target: &NodeTarget) -> Result<TextRead, BackendError> {
        let (el, _) = self.target(target)?;
        if is_secure_field(&el.string("AXRole")?, &el.string("AXSubrole")?) {
            return Ok(TextRead::Secure);
        }
        Ok(TextRead::Text(el.string("AXValue")?))
    }

    fn bus_status(&self) -> BusStatus {
        if super::permissions::accessibility_trusted() {
            BusStatus::Ok
        } else {
            BusStatus::Unavailable {
                problem: BusProblem::Unreachable,
                detail: "deskhand is not allowed to use accessibility: System Settings → Privacy & Security → Accessibility".into(),
            }
        }
    }
}
