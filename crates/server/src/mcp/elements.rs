//! The accessibility side of the MCP tools: `get_window_state`'s tree
//! (full, skeleton, drill-down), `observe {tree}`, and the element acts —
//! `click`, `type_text` and `set_value` on an element token, done through
//! the element's own interface in any input mode (headless included),
//! never with keys; a click on an element without actions is a pointer
//! click at it in takeover mode only.

use deskhand_engine::elements::{
    ActPath, ElementAct, ElementOutcome, MarkSet, TreeKind, TreeQuery, TreeView,
};
use deskhand_engine::{ListedWindow, Mark, Paint, ScreenshotTarget};
use deskhand_protocol::mcp::{
    ActResult, Bounds, ErrorObject, MarkRow, Observe, Observed, SetValueArgs, Target, TreeRead,
    WindowStateArgs,
};
use deskhand_protocol::messages::ImageFormat;
use rmcp::model::{CallToolResult, ContentBlock};

use super::acts::Steps;
use super::envelope::{Fail, structured};
use super::sessions::DriverSession;
use super::{Call, reads, targets};

/// The protocol's read of an engine view.
pub fn tree_read(view: TreeView) -> TreeRead {
    TreeRead {
        snapshot_id: view.snapshot_id,
        elements: view.rows,
        tree_text: view.text,
        truncated: view.truncated,
    }
}

/// The read `get_window_state`'s arguments ask for.
pub fn query_of(args: &WindowStateArgs) -> Result<TreeQuery, Fail> {
    let kind = match (args.skeleton.unwrap_or(false), &args.root) {
        (true, Some(_)) => return Err(Fail::invalid("give skeleton or root, not both")),
        (true, None) => TreeKind::Skeleton,
        (false, Some(token)) => TreeKind::Below(token.clone()),
        (false, None) => TreeKind::Full,
    };
    Ok(TreeQuery {
        kind,
        max_elements: args.max_elements,
        max_depth: args.max_depth,
    })
}

/// Reads `w`'s tree for `s`.
pub async fn read(
    call: &Call<'_>,
    s: &DriverSession,
    w: &ListedWindow,
    query: TreeQuery,
) -> Result<TreeView, Fail> {
    Ok(call.engine().read_tree(&s.engine, w, query).await?)
}

/// What an element act returns: the act's outcome, and what `observe`
/// asked for.
struct Done<'a, 'c> {
    call: &'a Call<'c>,
    session: DriverSession,
    token: String,
    steps: Steps,
}

impl<'a, 'c> Done<'a, 'c> {
    /// Starts timing an element act of the session `session_id` names.
    async fn begin(
        call: &'a Call<'c>,
        session_id: Option<&str>,
        token: &str,
    ) -> Result<Self, Fail> {
        let session = call.live_session(session_id).await?;
        Ok(Self {
            call,
            session,
            token: token.to_owned(),
            steps: Steps::new(),
        })
    }

    /// Does `act` on the token's element.
    async fn run(mut self, act: ElementAct, observe: Observe) -> Result<CallToolResult, Fail> {
        let outcome = self
            .call
            .engine()
            .element_act(&self.session.engine, &self.session.apps, &self.token, act)
            .await?;
        self.steps.mark("act");
        Ok(self.finish(outcome, observe).await)
    }

    async fn finish(mut self, outcome: ElementOutcome, observe: Observe) -> CallToolResult {
        let (observed, image) = self.observe(&outcome.window_id, observe).await;
        let effect = match (&outcome.action, outcome.readback) {
            (Some(_), _) => "done",
            (None, Some(deskhand_engine::elements::Readback::Match)) => "confirmed",
            _ => "written",
        };
        let verified = effect == "confirmed";
        let synthetic = matches!(outcome.path, ActPath::Synthetic(_));
        let result = ActResult {
            ok: true,
            effect: effect.into(),
            verified,
            path: if synthetic {
                "synthetic"
            } else {
                "accessibility"
            }
            .into(),
            took_cursor: synthetic,
            window_id: Some(outcome.window_id),
            typed_characters: None,
            took_ms: self.call.elapsed_ms(),
            steps: self.steps.take(),
            observe: observed,
            element_token: Some(self.token.clone()),
            action: outcome.action,
            readback: outcome.readback.map(|r| r.as_str().to_owned()),
            diff: outcome.diff,
        };
        let mut out = structured(&result);
        out.content.extend(image);
        out
    }

    /// The observation of the element's window, when asked for.
    async fn observe(
        &mut self,
        window_id: &str,
        observe: Observe,
    ) -> (Option<Observed>, Option<ContentBlock>) {
        if !observe.screenshot && !observe.tree {
            return (None, None);
        }
        let target = Target {
            window_id: Some(window_id.to_owned()),
            ..Target::default()
        };
        let (call, s) = (self.call, &self.session);
        let window = targets::resolve(call.engine(), s, &target, true).await;
        let window = match window {
            Ok(Some(w)) => w,
            Ok(None) => return (None, None),
            Err(Fail(e)) => return (Some(failed_observation(*e, observe)), None),
        };
        let (observed, image) = observe_window(call, s, &window, observe).await;
        self.steps.mark("observe");
        (Some(observed), image)
    }
}

/// An observation that could not be made at all.
fn failed_observation(e: ErrorObject, observe: Observe) -> Observed {
    Observed {
        screenshot: None,
        screenshot_error: observe.screenshot.then(|| e.clone()),
        tree: None,
        error: observe.tree.then_some(e),
    }
}

/// What `observe` asks for of `w`: its tree (a default read) and its
/// screenshot. Failures are reported inside, never as the act's error.
pub async fn observe_window(
    call: &Call<'_>,
    s: &DriverSession,
    w: &ListedWindow,
    observe: Observe,
) -> (Observed, Option<ContentBlock>) {
    let mut o = Observed {
        screenshot: None,
        screenshot_error: None,
        tree: None,
        error: None,
    };
    if observe.tree {
        match read(call, s, w, TreeQuery::full()).await {
            Ok(view) => o.tree = Some(tree_read(view)),
            Err(Fail(e)) => o.error = Some(*e),
        }
    }
    let mut image = None;
    if observe.screenshot {
        let target = ScreenshotTarget::Window(w.handle.clone());
        let paint = reads::blackouts(call, s, w);
        match reads::capture(call, s, target, ImageFormat::Png, 80, paint).await {
            Ok(shot) => {
                let (info, block) = reads::image_parts(call, shot);
                o.screenshot = Some(info);
                image = Some(block);
            }
            Err(Fail(e)) => o.screenshot_error = Some(*e),
        }
    }
    (o, image)
}

/// The paint of a set-of-mark screenshot: the secure fields blacked out,
/// the marks boxed.
pub fn mark_paint(set: &MarkSet) -> Paint {
    Paint {
        blackouts: set.secure_bounds.clone(),
        marks: set
            .marks
            .iter()
            .map(|m| Mark {
                number: m.number,
                rect: m.rect,
            })
            .collect(),
    }
}

/// The mark table of a set-of-mark screenshot.
pub fn mark_rows(set: MarkSet) -> Vec<MarkRow> {
    set.marks
        .into_iter()
        .map(|m| MarkRow {
            mark: m.number,
            element_token: m.token,
            role: m.role,
            label: m.label,
            frame: Bounds {
                x: m.rect.x,
                y: m.rect.y,
                width: m.rect.width,
                height: m.rect.height,
            },
        })
        .collect()
}

/// `click {element_token}`: the element's default action.
pub async fn click(
    call: &Call<'_>,
    session_id: Option<&str>,
    token: &str,
    observe: Observe,
) -> Result<CallToolResult, Fail> {
    let act = ElementAct::Press { action: None };
    Done::begin(call, session_id, token)
        .await?
        .run(act, observe)
        .await
}

/// `type_text {element_token}`: the text added to the field's own.
pub async fn type_text(
    call: &Call<'_>,
    session_id: Option<&str>,
    token: &str,
    text: String,
    observe: Observe,
) -> Result<CallToolResult, Fail> {
    Done::begin(call, session_id, token)
        .await?
        .run(ElementAct::Append(text), observe)
        .await
}

/// `set_value`: the field's whole text replaced, then read back.
pub async fn set_value(
    call: &Call<'_>,
    args: Result<SetValueArgs, Fail>,
) -> Result<CallToolResult, Fail> {
    let args = args?;
    Done::begin(call, args.session_id.as_deref(), &args.element_token)
        .await?
        .run(ElementAct::SetValue(args.value), args.observe)
        .await
}
