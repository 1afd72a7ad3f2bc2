//! Element acts: an element named by its token is pressed, or its text
//! written and read back, through its accessibility interface. The
//! element's window is checked live (still there, a granted app's, not
//! refused by the person's policy), the element is checked by the
//! backend right before the act (its path, role, name and its ancestors'
//! child counts), and secure fields are never written or read. In takeover
//! mode a press on an element without actions falls back to a synthetic
//! click at the centre of its visible box, hit-tested on the desktop
//! thread (the element's window must be the one under that point).

use std::sync::Arc;
use std::time::{Duration, Instant};

use deskhand_protocol::tree::TreeDiff;
use serde_json::json;

use super::diff::diff;
use super::snapshots::Snapshot;
use crate::accessibility::{
    A11yNode, A11yTree, Accessibility, NodeTarget, TextRead, TextWrite, TreeLimits, WindowRef,
};
use crate::action::Action;
use crate::backend::{BackendError, Button, NativeWindow};
use crate::consent::AppScope;
use crate::error::EngineError;
use crate::geometry::Point;
use crate::scope_check::ScopeCheck;
use crate::{Engine, Session};

/// The longest the tree is waited on to stop changing after an act.
const SETTLE_MAX: Duration = Duration::from_millis(500);
/// Time between reads while it changes.
const SETTLE_INTERVAL: Duration = Duration::from_millis(10);

/// What to do to an element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ElementAct {
    /// Its action by name, or its default action (`click`, `press`,
    /// `activate`, `toggle`).
    Press {
        /// The action's name; the default one when `None`.
        action: Option<String>,
    },
    /// Replace an editable field's text.
    SetValue(String),
    /// Add text at the end of an editable field's text.
    Append(String),
}

impl ElementAct {
    /// The audit log's name of the act.
    fn op(&self) -> &'static str {
        match self {
            Self::Press { .. } => "element.press",
            Self::SetValue(_) => "element.set_value",
            Self::Append(_) => "element.type_text",
        }
    }
}

/// What a read-back of a written value found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readback {
    /// The field holds exactly what was written.
    Match,
    /// It holds something else.
    Mismatch,
    /// It could not be read back (the read failed, or the field turned
    /// secure).
    Unverified,
}

impl Readback {
    /// The driver contract's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Match => "match",
            Self::Mismatch => "mismatch",
            Self::Unverified => "unverified",
        }
    }
}

/// How an element act reached the element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActPath {
    /// Through the element's accessibility interface; the pointer and
    /// keys were not used.
    Accessibility,
    /// A synthetic click at this global point (takeover mode, an element
    /// without actions).
    Synthetic(Point),
}

/// What an element act did.
#[derive(Debug, Clone, PartialEq)]
pub struct ElementOutcome {
    /// The element's window.
    pub window_id: String,
    /// How the act reached the element.
    pub path: ActPath,
    /// For a press: the action done.
    pub action: Option<String>,
    /// For a write: what the read-back found.
    pub readback: Option<Readback>,
    /// What changed in the tree (`None` when it could not be read again:
    /// the act happened anyway).
    pub diff: Option<TreeDiff>,
}

impl Engine {
    /// Does `act` to the element `token` names, for `session` granted
    /// `apps`.
    pub async fn element_act(
        &self,
        session: &Session,
        apps: &AppScope,
        token: &str,
        act: ElementAct,
    ) -> Result<ElementOutcome, EngineError> {
        let started = Instant::now();
        let op = act.op();
        let result = self.element_act_inner(session, apps, token, act).await;
        let target = json!({
            "window_id": result.as_ref().ok().map(|o| o.window_id.clone()),
            "element": token.rsplit_once(':').map(|(_, n)| n.to_owned()),
        });
        self.record(session, op, target, result.as_ref().map(|_| ()), started);
        result
    }

    async fn element_act_inner(
        &self,
        session: &Session,
        apps: &AppScope,
        token: &str,
        act: ElementAct,
    ) -> Result<ElementOutcome, EngineError> {
        let a11y = self.a11y()?;
        let (before, index) =
            self.snapshots
                .lookup(&session.id, token, self.takeovers.resumes())?;
        self.takeovers.refuse_while_held()?;
        let window = self.live_window(&before.window, apps).await?;
        let wref = WindowRef::of(&window).ok_or_else(|| {
            EngineError::Backend(BackendError::Unsupported(
                "the window's process is unknown".into(),
            ))
        })?;
        let target = node_target(&before, index, wref.clone());
        if !matches!(act, ElementAct::Press { .. }) && before.tree.nodes[index].is_secure() {
            return Err(EngineError::SecureField);
        }
        let stale = |e: EngineError| match e {
            EngineError::Backend(BackendError::Stale(_)) => EngineError::StaleElementToken {
                token: token.chars().take(64).collect(),
            },
            other => other,
        };
        let node = self.full_row(&before, index, &wref, token).await?;
        let clicks_instead =
            matches!(act, ElementAct::Press { action: None }) && node.actions.is_empty();
        if clicks_instead && !self.holds_input(session) {
            return Err(EngineError::invalid(
                "element_token",
                "the element has no action of its own: a session in takeover mode clicks it \
                 with the pointer, a headless one cannot",
            ));
        }
        let (path, action, readback) = if clicks_instead {
            let at = self
                .synthetic_click(session, apps, &before, (index, &node), &window)
                .await?;
            (ActPath::Synthetic(at), Some("click".to_owned()), None)
        } else {
            let (action, readback) =
                tokio::task::spawn_blocking(move || perform(&*a11y, &target, act))
                    .await
                    .map_err(|_| EngineError::ShuttingDown)?
                    .map_err(stale)?;
            (ActPath::Accessibility, action, readback)
        };
        let diff = self.settled_diff(session, &before, wref).await;
        Ok(ElementOutcome {
            window_id: before.window.clone(),
            path,
            action,
            readback,
            diff,
        })
    }

    /// Row `index` of `s` with its states, bounds and actions: a light
    /// snapshot's row (a skeleton read lists only some rows in full) is
    /// read again by its path.
    async fn full_row(
        &self,
        s: &Snapshot,
        index: usize,
        window: &WindowRef,
        token: &str,
    ) -> Result<A11yNode, EngineError> {
        let node = s.tree.nodes[index].clone();
        if !s.light {
            return Ok(node);
        }
        let a11y = self.a11y()?;
        let (w, path) = (window.clone(), node.path.clone());
        let read = tokio::task::spawn_blocking(move || {
            a11y.read_nodes(&w, &[path], &TreeLimits::default())
        })
        .await
        .map_err(|_| EngineError::ShuttingDown)??;
        match read.into_iter().next().flatten() {
            Some(r) if r.role == node.role => Ok(A11yNode {
                states: r.states,
                bounds: r.bounds,
                actions: r.actions,
                ..node
            }),
            _ => Err(EngineError::StaleElementToken {
                token: token.chars().take(64).collect(),
            }),
        }
    }

    /// Whether `session` holds its takeover, not paused.
    fn holds_input(&self, session: &Session) -> bool {
        self.takeovers.require_input(&session.id).is_ok()
    }

    /// Clicks the centre of row `index`'s visible box, once the desktop
    /// thread found its window to be the one under that point; returns
    /// the point.
    async fn synthetic_click(
        &self,
        session: &Session,
        apps: &AppScope,
        s: &Snapshot,
        (index, node): (usize, &A11yNode),
        window: &NativeWindow,
    ) -> Result<Point, EngineError> {
        let visible = node
            .bounds
            .and_then(|f| super::marks::visible_part(s, index, f, window.rect));
        let visible = visible.ok_or_else(|| {
            EngineError::invalid(
                "element_token",
                "the element shows nowhere inside its window: scroll it into view first",
            )
        })?;
        let at = visible.center();
        let click = Action::Click {
            at: Some(at),
            button: Button::Left,
            count: 1,
            modifiers: Vec::new(),
        };
        let scope = ScopeCheck {
            apps: apps.clone(),
            window: Some(s.window.clone()),
        };
        self.act_inner(session, click, Some(scope), None).await?;
        Ok(at)
    }

    /// The live window `handle` names, when `apps` grants it and the
    /// person's refusal policy does not refuse it.
    async fn live_window(
        &self,
        handle: &str,
        apps: &AppScope,
    ) -> Result<NativeWindow, EngineError> {
        let handle = handle.to_owned();
        let (window, program) = self
            .exec
            .run(move |desk| {
                let (window, _) = desk.resolve_window(&handle)?;
                let apps = desk.backend.apps.as_mut();
                let program = window.pid.zip(apps).and_then(|(pid, a)| a.program_of(pid));
                Ok::<_, EngineError>((window, program))
            })
            .await??;
        let scope = ScopeCheck {
            apps: apps.clone(),
            window: None,
        };
        if !scope.allows(&window) {
            return Err(EngineError::OutOfScope {
                what: "the element's window belongs to an app this session was not granted",
            });
        }
        if let Some(class) =
            self.refusal_policy()
                .refused(&self.policy.refusal, &window, program.as_ref())
        {
            return Err(EngineError::Refused {
                class: class.name(),
                what: "the element is in its window",
            });
        }
        Ok(window)
    }

    /// Reads the window again until two reads agree (at most
    /// [`SETTLE_MAX`]; at once when the first read shows no change), stores
    /// it as the session's snapshot and returns the diff from `before`.
    async fn settled_diff(
        &self,
        session: &Session,
        before: &Arc<Snapshot>,
        window: WindowRef,
    ) -> Option<TreeDiff> {
        let started = Instant::now();
        let mut last: A11yTree = self.read_whole(window.clone()).await.ok()?;
        let mut looked = started;
        let mut same = last == before.tree;
        while !same && started.elapsed() < SETTLE_MAX {
            tokio::time::sleep(SETTLE_INTERVAL).await;
            looked = Instant::now();
            let next = self.read_whole(window.clone()).await.ok()?;
            same = next == last;
            last = next;
        }
        let settle_ms = (looked - started).as_secs_f64() * 1000.0;
        let after = self.snapshots.store(
            &session.id,
            &before.window,
            last,
            self.takeovers.resumes(),
            false,
        );
        Some(diff(before, &after, settle_ms))
    }
}

/// The backend's target for row `index` of `s`: its path, role and name,
/// and its ancestors' child counts.
fn node_target(s: &Snapshot, index: usize, window: WindowRef) -> NodeTarget {
    let node = &s.tree.nodes[index];
    let mut counts = Vec::with_capacity(node.path.depth());
    let mut up = node.parent;
    while let Some(p) = up {
        counts.push(s.tree.nodes[p].child_count);
        up = s.tree.nodes[p].parent;
    }
    counts.reverse();
    NodeTarget {
        window,
        path: node.path.clone(),
        expect_role: Some(node.role.clone()),
        expect_name: Some(node.name.clone()),
        expect_child_counts: counts,
    }
}

/// Does `act` on the backend; returns the action done or the read-back.
fn perform(
    a11y: &dyn Accessibility,
    target: &NodeTarget,
    act: ElementAct,
) -> Result<(Option<String>, Option<Readback>), EngineError> {
    let text = match act {
        ElementAct::Press { action } => {
            let done = a11y.press(target, action.as_deref())?;
            return Ok((Some(done), None));
        }
        ElementAct::SetValue(text) => text,
        ElementAct::Append(text) => match a11y.read_text(target)? {
            TextRead::Text(old) => old + &text,
            TextRead::Secure => return Err(EngineError::SecureField),
        },
    };
    if a11y.set_text(target, &text)? == TextWrite::RefusedSecure {
        return Err(EngineError::SecureField);
    }
    let readback = match a11y.read_text(target) {
        Ok(TextRead::Text(now)) if now == text => Readback::Match,
        Ok(TextRead::Text(_)) => Readback::Mismatch,
        Ok(TextRead::Secure) | Err(_) => Readback::Unverified,
    };
    Ok((None, Some(readback)))
}
