//! A scripted [`Accessibility`] for contract tests of the engine and its
//! adapters, so they run without D-Bus. It behaves like the AT-SPI
//! backend: the same limits and truncation, the same live checks before
//! an act (role, name, secure), the same [`BackendError`] variants.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use deskhand_backend::accessibility::{
    A11yNode, A11yTree, Accessibility, BusStatus, NodePath, NodeTarget, Role, State, TextRead,
    TextWrite, TreeLimits, WindowRef,
};
use deskhand_backend::{BackendError, Rect};

/// What a press runs on the window's tree (add a widget, toggle a state).
type Effect = Box<dyn Fn(&mut A11yTree) + Send>;
/// What a field stores of the text written to it.
type Filter = Box<dyn Fn(&str) -> String + Send>;

/// How many calls of each kind the mock received (refused ones included).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Calls of `read_window_tree`.
    pub reads: usize,
    /// Calls of `press`.
    pub presses: usize,
    /// Calls of `set_text`.
    pub writes: usize,
    /// Calls of `read_text`.
    pub text_reads: usize,
}

/// One window as scripted.
#[derive(Default)]
struct Window {
    /// Whether it has a tree (scripting a delay alone does not add it).
    present: bool,
    /// Its tree, normalized (see [`relink`]).
    tree: A11yTree,
    /// How long the app takes to answer a read.
    delay: Duration,
    /// The error the next read returns.
    fail_next: Option<BackendError>,
    /// What pressing the element at a path does to the tree.
    effects: HashMap<NodePath, Effect>,
    /// Elements that turn secure once this many more acts were made.
    turn_secure: Vec<(NodePath, u32)>,
}

/// The mock's state, behind its mutex.
struct Inner {
    windows: HashMap<(u32, String), Window>,
    bus: BusStatus,
    filter: Option<Filter>,
    presses: Vec<(NodePath, String)>,
    writes: Vec<(NodePath, String)>,
    counts: Counts,
}

impl Default for Inner {
    fn default() -> Self {
        Self {
            windows: HashMap::new(),
            bus: BusStatus::Ok,
            filter: None,
            presses: Vec::new(),
            writes: Vec::new(),
            counts: Counts::default(),
        }
    }
}

impl Inner {
    /// Fails like the real backend (`Unsupported`) when the bus is down.
    fn bus_ok(&self) -> Result<(), BackendError> {
        match &self.bus {
            BusStatus::Ok => Ok(()),
            BusStatus::Unavailable { problem, detail } => Err(BackendError::Unsupported(format!(
                "{}: {detail}",
                problem.reason_code()
            ))),
        }
    }

    /// The scripted window, created empty (without a tree) when unknown.
    fn script(&mut self, pid: u32, title: &str) -> &mut Window {
        self.windows.entry((pid, title.to_owned())).or_default()
    }

    /// The window `w` refers to, or the real backend's "not found".
    fn window(&mut self, w: &WindowRef) -> Result<&mut Window, BackendError> {
        let pid_known = self
            .windows
            .iter()
            .any(|((pid, _), win)| *pid == w.pid && win.present);
        let message = match pid_known {
            true => format!(
                "process {} has no accessible window titled {:?}",
                w.pid, w.title
            ),
            false => format!("process {} has no app on the accessibility bus", w.pid),
        };
        self.windows
            .get_mut(&(w.pid, w.title.clone()))
            .filter(|win| win.present)
            .ok_or(BackendError::Stale(message))
    }
}

/// An in-memory [`Accessibility`]: a scripted tree per window (by pid and
/// title), acts that change it, and a record of what was done. Clones
/// share one state, so a test keeps one and hands another to the engine.
#[derive(Clone, Default)]
pub struct MockAccessibility {
    inner: Arc<Mutex<Inner>>,
}

impl std::fmt::Debug for MockAccessibility {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.lock();
        let windows: Vec<_> = s.windows.keys().collect();
        f.debug_struct("MockAccessibility")
            .field("windows", &windows)
            .field("bus", &s.bus)
            .field("counts", &s.counts)
            .finish()
    }
}

impl MockAccessibility {
    /// An empty mock: no windows, the bus answers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Locks the state, even after a test panicked holding it.
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sets the tree of the window with `pid` and `title` (normalized: see
    /// [`relink`]), putting the window on the bus.
    pub fn set_tree(&self, pid: u32, title: &str, tree: A11yTree) {
        let mut s = self.lock();
        let w = s.script(pid, title);
        w.tree = relink(&tree);
        w.present = true;
    }

    /// Takes the window off the bus (its app quit): acts and reads of it
    /// fail as for an unknown window.
    pub fn remove_window(&self, pid: u32, title: &str) {
        self.lock().windows.remove(&(pid, title.to_owned()));
    }

    /// The window's tree as stored now (with every value, secure or not),
    /// to check what acts did to it.
    pub fn tree(&self, pid: u32, title: &str) -> Option<A11yTree> {
        let s = self.lock();
        let w = s.windows.get(&(pid, title.to_owned()))?;
        w.present.then(|| w.tree.clone())
    }

    /// Makes every read of the window take `delay`; a read whose limits
    /// allow less fails with `Failed` after its bound, as a hung app does.
    pub fn set_delay(&self, pid: u32, title: &str, delay: Duration) {
        self.lock().script(pid, title).delay = delay;
    }

    /// Makes the next read of the window fail with `error` (once).
    pub fn fail_next_read(&self, pid: u32, title: &str, error: BackendError) {
        self.lock().script(pid, title).fail_next = Some(error);
    }

    /// Runs `effect` on the window's tree each time the element at `path`
    /// is pressed (after the press is recorded); the tree is normalized
    /// again afterwards, so an effect may add children by index.
    pub fn on_press(
        &self,
        pid: u32,
        title: &str,
        path: NodePath,
        effect: impl Fn(&mut A11yTree) + Send + 'static,
    ) {
        let mut s = self.lock();
        s.script(pid, title).effects.insert(path, Box::new(effect));
    }

    /// Makes every field store `filter(text)` instead of the text written,
    /// to test a read-back that does not match.
    pub fn set_write_filter(&self, filter: impl Fn(&str) -> String + Send + 'static) {
        self.lock().filter = Some(Box::new(filter));
    }

    /// Makes the element at `path` turn secure (gain [`State::Secure`])
    /// right before the window's act number `after_acts + 1` from now
    /// (0: the next press, write or text read), to test the live check.
    pub fn make_secure(&self, pid: u32, title: &str, path: NodePath, after_acts: u32) {
        let mut s = self.lock();
        s.script(pid, title).turn_secure.push((path, after_acts));
    }

    /// Sets what [`Accessibility::bus_status`] says; while unavailable,
    /// every other call fails with `Unsupported`, as the real backend's.
    pub fn set_bus_status(&self, status: BusStatus) {
        self.lock().bus = status;
    }

    /// Every press done: the element's path and the action's name.
    pub fn presses(&self) -> Vec<(NodePath, String)> {
        self.lock().presses.clone()
    }

    /// Every text written (not refused): the field's path and the text as
    /// asked (before the write filter).
    pub fn writes(&self) -> Vec<(NodePath, String)> {
        self.lock().writes.clone()
    }

    /// How many calls of each kind were made so far.
    pub fn counts(&self) -> Counts {
        self.lock().counts
    }
}

impl Accessibility for MockAccessibility {
    /// The window's tree within `limits`, cut as the AT-SPI walk cuts it.
    fn read_window_tree(
        &self,
        window: &WindowRef,
        limits: &TreeLimits,
    ) -> Result<A11yTree, BackendError> {
        let delay = {
            let mut s = self.lock();
            s.counts.reads += 1;
            s.bus_ok()?;
            let w = s.window(window)?;
            if let Some(e) = w.fail_next.take() {
                return Err(e);
            }
            w.delay
        };
        wait(delay, limits)?;
        let mut s = self.lock();
        Ok(limited(&s.window(window)?.tree, limits))
    }

    /// The elements at `paths`, read in full (secure values left out).
    fn read_nodes(
        &self,
        window: &WindowRef,
        paths: &[NodePath],
        limits: &TreeLimits,
    ) -> Result<Vec<Option<A11yNode>>, BackendError> {
        let full = self.read_window_tree(
            window,
            &TreeLimits {
                structure_only: false,
                ..*limits
            },
        )?;
        Ok(paths
            .iter()
            .map(|p| {
                full.at(p).cloned().map(|mut n| {
                    n.parent = None;
                    n.children.clear();
                    n
                })
            })
            .collect())
    }

    /// Checks the element live, picks the action, records it and runs the
    /// scripted effect.
    fn press(&self, target: &NodeTarget, action: Option<&str>) -> Result<String, BackendError> {
        let mut s = self.lock();
        s.counts.presses += 1;
        s.bus_ok()?;
        let w = s.window(&target.window)?;
        let node = live(w, target)?;
        let done = chosen_action(node, target, action)?;
        if let Some(effect) = w.effects.get(&target.path) {
            effect(&mut w.tree);
            w.tree = relink(&w.tree);
        }
        s.presses.push((target.path.clone(), done.clone()));
        Ok(done)
    }

    /// Refuses a secure field (checked live), writes an editable one.
    fn set_text(&self, target: &NodeTarget, text: &str) -> Result<TextWrite, BackendError> {
        let mut s = self.lock();
        s.counts.writes += 1;
        s.bus_ok()?;
        let stored = s
            .filter
            .as_ref()
            .map_or_else(|| text.to_owned(), |f| f(text));
        let node = live(s.window(&target.window)?, target)?;
        if node.is_secure() {
            return Ok(TextWrite::RefusedSecure);
        }
        if !node.has(State::Editable) {
            return Err(BackendError::InvalidTarget(format!(
                "the {} at {} is not an editable field",
                node.role, target.path
            )));
        }
        node.value = Some(stored);
        s.writes.push((target.path.clone(), text.to_owned()));
        Ok(TextWrite::Written)
    }

    /// The field's value, unless it is secure (checked live).
    fn read_text(&self, target: &NodeTarget) -> Result<TextRead, BackendError> {
        let mut s = self.lock();
        s.counts.text_reads += 1;
        s.bus_ok()?;
        let node = live(s.window(&target.window)?, target)?;
        if node.is_secure() {
            return Ok(TextRead::Secure);
        }
        match (&node.value, node.has(State::Editable)) {
            (Some(v), _) => Ok(TextRead::Text(v.clone())),
            (None, true) => Ok(TextRead::Text(String::new())),
            (None, false) => Err(BackendError::InvalidTarget(format!(
                "the {} at {} has no text",
                node.role, target.path
            ))),
        }
    }

    /// As scripted by [`MockAccessibility::set_bus_status`].
    fn bus_status(&self) -> BusStatus {
        self.lock().bus.clone()
    }
}

/// Waits as an app answering in `delay` makes a read wait; fails as a
/// timeout does when `limits` allow less.
fn wait(delay: Duration, limits: &TreeLimits) -> Result<(), BackendError> {
    let bound = limits.per_call_timeout.min(limits.total_timeout);
    std::thread::sleep(delay.min(bound));
    if delay > bound {
        return Err(BackendError::Failed(format!(
            "the accessibility tree read did not answer within {} ms",
            bound.as_millis()
        )));
    }
    Ok(())
}

/// The element `target` names, after the window's scripted changes, when
/// it is still the one read (role and name as expected).
fn live<'a>(w: &'a mut Window, target: &NodeTarget) -> Result<&'a mut A11yNode, BackendError> {
    turn_secure(w);
    let i = follow(&w.tree, &target.path, &target.expect_child_counts)?;
    let node = &mut w.tree.nodes[i];
    if let Some(expected) = target.expect_role.as_ref().filter(|r| **r != node.role) {
        return Err(BackendError::Stale(format!(
            "the element at {} is now a {}, not a {expected}: the window changed",
            target.path, node.role
        )));
    }
    if let Some(expected) = target.expect_name.as_ref().filter(|n| **n != node.name) {
        return Err(BackendError::Stale(format!(
            "the {} at {} is now named {:?}, not {expected:?}: the window changed",
            node.role, target.path, node.name
        )));
    }
    Ok(node)
}

/// Counts one act down on the window's pending secure changes, applying
/// those that are due.
fn turn_secure(w: &mut Window) {
    let tree = &mut w.tree;
    w.turn_secure.retain_mut(|(path, left)| {
        if *left > 0 {
            *left -= 1;
            return true;
        }
        if let Some(node) = tree.nodes.iter_mut().find(|n| n.path == *path) {
            node.states.push(State::Secure);
            node.states.sort();
            node.states.dedup();
        }
        false
    });
}

/// The index of the element at `path`, followed child by child, each
/// ancestor's child count checked against `counts` as the real backend
/// does.
fn follow(tree: &A11yTree, path: &NodePath, counts: &[u32]) -> Result<usize, BackendError> {
    let missing = |why: String| BackendError::Stale(format!("no element at {path} ({why})"));
    if tree.nodes.is_empty() {
        return Err(missing("the window has no elements".into()));
    }
    let mut at = 0;
    for (depth, step) in path.0.iter().enumerate() {
        if let Some(&then) = counts.get(depth)
            && tree.nodes[at].child_count != then
        {
            return Err(missing(format!(
                "level {} has {} children now, not {then}",
                depth + 1,
                tree.nodes[at].child_count
            )));
        }
        let child = usize::try_from(*step).ok();
        at = *child
            .and_then(|c| tree.nodes[at].children.get(c))
            .ok_or_else(|| missing(format!("level {} has no child {step}", depth + 1)))?;
    }
    Ok(at)
}

/// The action a press does: `action` by name (any case), else the
/// default one, as the real backend picks it.
fn chosen_action(
    node: &A11yNode,
    target: &NodeTarget,
    action: Option<&str>,
) -> Result<String, BackendError> {
    if node.actions.is_empty() {
        return Err(BackendError::InvalidTarget(format!(
            "the {} at {} has no actions",
            node.role, target.path
        )));
    }
    let index = match action {
        Some(wanted) => node
            .actions
            .iter()
            .position(|a| a.eq_ignore_ascii_case(wanted)),
        None => default_action(&node.actions),
    };
    let index = index.ok_or_else(|| {
        BackendError::InvalidTarget(format!(
            "the {} at {} offers no {} action (it offers {:?})",
            node.role,
            target.path,
            action.unwrap_or("default"),
            node.actions
        ))
    })?;
    Ok(node.actions[index].clone())
}

/// The default action: `click`, `press`, `activate` or `toggle`, the
/// first offered in that order; else the only one (as AT-SPI's `map`).
fn default_action(actions: &[String]) -> Option<usize> {
    const PREFERRED: [&str; 4] = ["click", "press", "activate", "toggle"];
    PREFERRED
        .iter()
        .find_map(|p| actions.iter().position(|a| a.eq_ignore_ascii_case(p)))
        .or_else(|| (actions.len() == 1).then_some(0))
}

/// Which children of each element a read within `limits` keeps: read
/// breadth-first, as the walk queues them; and whether some were cut.
fn kept_children(tree: &A11yTree, limits: &TreeLimits) -> (Vec<Vec<usize>>, bool) {
    let max_elements = limits.max_elements.max(1);
    let mut kept = vec![Vec::new(); tree.nodes.len()];
    let (mut count, mut truncated) = (1, false);
    let mut queue = VecDeque::from([(0usize, 0usize)]);
    while let Some((i, depth)) = queue.pop_front() {
        let node = &tree.nodes[i];
        if depth >= limits.max_depth {
            truncated |= node.child_count > 0;
            continue;
        }
        for &c in &node.children {
            if count >= max_elements {
                truncated = true;
                break;
            }
            count += 1;
            kept[i].push(c);
            queue.push_back((c, depth + 1));
        }
    }
    (kept, truncated)
}

/// What a read within `limits` returns of a normalized tree: the elements
/// kept, in document order, without the value of any secure field.
fn limited(tree: &A11yTree, limits: &TreeLimits) -> A11yTree {
    if tree.nodes.is_empty() {
        return A11yTree::default();
    }
    let (kept, truncated) = kept_children(tree, limits);
    let mut nodes: Vec<A11yNode> = Vec::new();
    let mut stack = vec![(0usize, None::<usize>)];
    while let Some((i, parent)) = stack.pop() {
        let me = nodes.len();
        if let Some(p) = parent {
            nodes[p].children.push(me);
        }
        stack.extend(kept[i].iter().rev().map(|&c| (c, Some(me))));
        let mut node = tree.nodes[i].clone();
        node.parent = parent;
        node.children = Vec::new();
        if node.is_secure() {
            node.value = None;
        }
        if limits.structure_only {
            // As AT-SPI's structure read: role, name, description, child
            // count (a password field keeps its Secure state: by role).
            node.states.retain(|s| *s == State::Secure);
            node.bounds = None;
            node.actions.clear();
            node.value = None;
        }
        nodes.push(node);
    }
    A11yTree { nodes, truncated }
}

/// `tree` normalized from its `children` links (the source of truth):
/// the elements reachable from `nodes[0]` in document order, with
/// `parent`, `path` and `child_count` set as a read sets them, states
/// sorted (a password field marked [`State::Secure`], as AT-SPI's are).
/// An index out of range is dropped; one listed twice is kept once.
pub fn relink(tree: &A11yTree) -> A11yTree {
    let len = tree.nodes.len();
    let mut seen = vec![false; len];
    let mut nodes: Vec<A11yNode> = Vec::with_capacity(len);
    let mut stack = match len {
        0 => Vec::new(),
        _ => vec![(0usize, None::<usize>, NodePath::root())],
    };
    while let Some((i, parent, path)) = stack.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        let me = nodes.len();
        if let Some(p) = parent {
            nodes[p].children.push(me);
        }
        let src = &tree.nodes[i];
        let kids: Vec<usize> = src.children.iter().copied().filter(|&c| c < len).collect();
        for (k, &c) in kids.iter().enumerate().rev() {
            stack.push((
                c,
                Some(me),
                path.child(u32::try_from(k).unwrap_or(u32::MAX)),
            ));
        }
        let mut node = src.clone();
        node.parent = parent;
        node.children = Vec::new();
        node.child_count = u32::try_from(kids.len()).unwrap_or(u32::MAX);
        node.path = path;
        normalize_states(&mut node);
        nodes.push(node);
    }
    A11yTree {
        nodes,
        truncated: false,
    }
}

/// Sorts and dedups the states, adding [`State::Secure`] to a password
/// field.
fn normalize_states(node: &mut A11yNode) {
    if node.role == Role::PasswordText {
        node.states.push(State::Secure);
    }
    node.states.sort();
    node.states.dedup();
}

/// An element to script, with its children: a tree written as nested
/// values, turned into an [`A11yTree`] by [`MockNode::build`].
#[derive(Debug, Clone, PartialEq)]
pub struct MockNode {
    role: Role,
    name: String,
    description: String,
    states: Vec<State>,
    bounds: Option<Rect>,
    actions: Vec<String>,
    value: Option<String>,
    children: Vec<MockNode>,
}

impl MockNode {
    /// An element with `role` and `name`, nothing else.
    pub fn new(role: Role, name: &str) -> Self {
        Self {
            role,
            name: name.to_owned(),
            description: String::new(),
            states: Vec::new(),
            bounds: None,
            actions: Vec::new(),
            value: None,
            children: Vec::new(),
        }
    }

    /// A window's root element titled `title`, showing and active.
    pub fn window(title: &str) -> Self {
        Self::new(Role::Window, title).states(shown([State::Active]))
    }

    /// A push button offering `click`.
    pub fn button(name: &str) -> Self {
        Self::new(Role::Button, name)
            .states(shown([State::Focusable]))
            .actions(&["click"])
    }

    /// An editable text field holding `value`.
    pub fn text_field(name: &str, value: &str) -> Self {
        Self::new(Role::TextField, name)
            .states(shown([State::Focusable, State::Editable]))
            .value(value)
    }

    /// An editable password field (secure) holding `value`, which no read
    /// may show.
    pub fn password(name: &str, value: &str) -> Self {
        Self::new(Role::PasswordText, name)
            .states(shown([State::Focusable, State::Editable]))
            .value(value)
    }

    /// A label.
    pub fn label(name: &str) -> Self {
        Self::new(Role::Label, name).states(shown([]))
    }

    /// Sets the description.
    pub fn description(mut self, description: &str) -> Self {
        self.description = description.to_owned();
        self
    }

    /// Sets the states (replacing those it had).
    pub fn states(mut self, states: impl IntoIterator<Item = State>) -> Self {
        self.states = states.into_iter().collect();
        self
    }

    /// Adds one state.
    pub fn with(mut self, state: State) -> Self {
        self.states.push(state);
        self
    }

    /// Sets the bounds, in global desktop pixels.
    pub fn bounds(mut self, bounds: Rect) -> Self {
        self.bounds = Some(bounds);
        self
    }

    /// Sets the actions offered, by name.
    pub fn actions(mut self, names: &[&str]) -> Self {
        self.actions = names.iter().map(|n| (*n).to_owned()).collect();
        self
    }

    /// Sets the value (a field's text, a slider's number).
    pub fn value(mut self, value: &str) -> Self {
        self.value = Some(value.to_owned());
        self
    }

    /// Adds a child, after those it has.
    pub fn child(mut self, child: MockNode) -> Self {
        self.children.push(child);
        self
    }

    /// Adds children, in order, after those it has.
    pub fn children(mut self, children: impl IntoIterator<Item = MockNode>) -> Self {
        self.children.extend(children);
        self
    }

    /// The tree rooted here, normalized as a read gives it (see
    /// [`relink`]): document order, parents, children, paths.
    pub fn build(self) -> A11yTree {
        let mut nodes = Vec::new();
        self.push_into(&mut nodes);
        relink(&A11yTree {
            nodes,
            truncated: false,
        })
    }

    /// Appends this element and its descendants to `nodes`, linked by
    /// `children` only; returns its index.
    fn push_into(self, nodes: &mut Vec<A11yNode>) -> usize {
        let me = nodes.len();
        nodes.push(A11yNode {
            role: self.role,
            name: self.name,
            description: self.description,
            states: self.states,
            bounds: self.bounds,
            actions: self.actions,
            value: self.value,
            parent: None,
            children: Vec::new(),
            child_count: 0,
            path: NodePath::root(),
        });
        for child in self.children {
            let i = child.push_into(nodes);
            nodes[me].children.push(i);
        }
        me
    }
}

/// `extra` with the states of an element on screen.
fn shown(extra: impl IntoIterator<Item = State>) -> Vec<State> {
    let mut states = vec![
        State::Enabled,
        State::Sensitive,
        State::Visible,
        State::Showing,
    ];
    states.extend(extra);
    states
}

/// Adds `child` (and its descendants) as the last child of the element at
/// `parent`, for a press effect; `false` when there is none there.
pub fn add_child(tree: &mut A11yTree, parent: &NodePath, child: MockNode) -> bool {
    let Some(p) = tree.nodes.iter().position(|n| n.path == *parent) else {
        return false;
    };
    let i = child.push_into(&mut tree.nodes);
    tree.nodes[p].children.push(i);
    *tree = relink(tree);
    true
}

/// Gives the element at `path` `state` when it has it not, else takes it
/// away (a check box checked by a press); `false` when there is none.
pub fn toggle_state(tree: &mut A11yTree, path: &NodePath, state: State) -> bool {
    let Some(node) = tree.nodes.iter_mut().find(|n| n.path == *path) else {
        return false;
    };
    match node.states.iter().position(|s| *s == state) {
        Some(i) => {
            node.states.remove(i);
        }
        None => {
            node.states.push(state);
            node.states.sort();
        }
    }
    true
}

#[cfg(test)]
#[path = "accessibility_tests.rs"]
mod tests;
