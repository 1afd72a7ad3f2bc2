//! The person's dialogs: a session's consent question (what it asks for,
//! "Also allow visible takeover" and "Allow clipboard reading" unticked,
//! the lease) and a call's approval question (the actions, a provider's
//! safety checks). The ticks live here, not in the page; a box, a lease
//! and Allow change only on a click the engine confirms came from a real
//! mouse ([`Engine::person_clicked`]), so neither an agent's synthetic
//! clicks nor the keyboard can grant anything. Deny, Escape, closing the
//! window and no answer in time all deny.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use deskhand_engine::approval::ApprovalAsk;
use deskhand_engine::{ConsentAnswer, ConsentAsk, Engine, TakeoverEvent};
use serde::Serialize;
use tauri::{AppHandle, Manager, Runtime, WebviewUrl, WebviewWindowBuilder, WindowEvent};

/// The lease choices of a consent dialog: key, label, seconds.
const LEASES: [(&str, &str, Option<u64>); 3] = [
    ("15m", "15 minutes", Some(15 * 60)),
    ("1h", "1 hour", Some(3600)),
    ("session", "Until it ends", None),
];
/// The lease chosen until the person picks another.
const DEFAULT_LEASE: &str = "1h";
/// How long after its timeout a dialog is taken down by the app itself.
const CLOSE_GRACE: Duration = Duration::from_secs(2);
/// What the dialog says when a click did not count.
const NOT_A_MOUSE: &str =
    "Only a click of your own mouse counts here (not the keyboard, not an agent): nothing changed.";

/// What a dialog asks.
enum Asked {
    Consent(ConsentAsk),
    Approval(ApprovalAsk),
}

/// One open dialog: its question and what the person chose so far.
struct Open {
    asked: Asked,
    ticked: BTreeSet<&'static str>,
    lease: &'static str,
    until: Instant,
    /// How the person stops agents, as it was when the dialog opened.
    stop_ways: String,
}

/// A box of the dialog, as the page shows it.
#[derive(Debug, Serialize)]
pub struct BoxView {
    key: &'static str,
    label: &'static str,
    ticked: bool,
}

/// The dialog as the page shows it.
#[derive(Debug, Serialize)]
pub struct View {
    kind: &'static str,
    title: String,
    lines: Vec<String>,
    boxes: Vec<BoxView>,
    leases: Vec<BoxView>,
    seconds_left: u64,
    note: Option<&'static str>,
}

/// Why a dialog's call did nothing.
#[derive(Debug, thiserror::Error)]
pub enum AskError {
    /// The question was answered, timed out or withdrawn.
    #[error("this question is over")]
    Over,
}

impl Serialize for AskError {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

/// The open dialogs of the app.
pub struct Questions {
    engine: Arc<Engine>,
    stop_ways: Box<dyn Fn() -> String + Send + Sync>,
    open: Mutex<HashMap<String, Open>>,
    /// Held while a click is judged and applied, so clicks count in the
    /// order they were made: Allow right after a box waits for the box
    /// (whose judging waits for the watcher's report of the press).
    turn: tokio::sync::Mutex<()>,
}

fn label_of(id: &str) -> String {
    format!(
        "ask-{}",
        id.replace(|c: char| !c.is_ascii_alphanumeric(), "-")
    )
}

impl Open {
    fn view(&self, note: Option<&'static str>) -> View {
        let seconds_left = self
            .until
            .saturating_duration_since(Instant::now())
            .as_secs();
        match &self.asked {
            Asked::Consent(ask) => consent_view(ask, self, seconds_left, note),
            Asked::Approval(ask) => approval_view(ask, seconds_left, note),
        }
    }

    fn boxes(&self) -> Vec<&'static str> {
        match &self.asked {
            Asked::Consent(ask) => {
                let mut keys = Vec::new();
                if ask.wants.takeover {
                    keys.push("takeover");
                }
                if ask.wants.clipboard_read {
                    keys.push("clipboard_read");
                }
                keys
            }
            Asked::Approval(_) => Vec::new(),
        }
    }
}

fn consent_view(
    ask: &ConsentAsk,
    open: &Open,
    seconds_left: u64,
    note: Option<&'static str>,
) -> View {
    let label = |key: &str| match key {
        "takeover" => {
            "ALSO allow VISIBLE TAKEOVER (it moves your mouse and types; a red frame shows)"
        }
        _ => "Allow clipboard reading (each read is still asked)",
    };
    View {
        kind: "consent",
        title: "An agent asks to use your desktop".to_owned(),
        lines: consent_lines(ask, &open.stop_ways),
        boxes: open
            .boxes()
            .into_iter()
            .map(|key| BoxView {
                key,
                label: label(key),
                ticked: open.ticked.contains(key),
            })
            .collect(),
        leases: LEASES
            .iter()
            .map(|(key, label, _)| BoxView {
                key,
                label,
                ticked: *key == open.lease,
            })
            .collect(),
        seconds_left,
        note,
    }
}

/// What a consent dialog says: who asks (in its own words), what it can
/// already do, what Allow adds, and how the person stops it.
fn consent_lines(ask: &ConsentAsk, stop_ways: &str) -> Vec<String> {
    let apps = match &ask.wants.apps {
        None => "the whole desktop".to_owned(),
        Some(apps) => apps.join(", "),
    };
    // A client named after its protocol (the MCP SDKs' default "mcp")
    // gave no name of its own.
    let who = if ask.client.trim().eq_ignore_ascii_case(ask.protocol) {
        format!(
            "An {} client that gave no name of its own",
            ask.protocol.to_uppercase()
        )
    } else {
        format!(
            "{} (over {}). That name is its own claim; deskhand cannot check it. It",
            ask.client, ask.protocol
        )
    };
    let mut lines = vec![
        format!("{who} asks to work with {apps}."),
        format!(
            "It can already see your screen: it has the token. Allow lets it work with {apps}, and do what you tick below, nothing more."
        ),
    ];
    if let Some(s) = ask.wants.lease_s {
        lines.push(format!("It asks for {s} seconds at most."));
    }
    lines.push(stop_ways.to_owned());
    lines
}

/// How the person stops agents here, naming only ways that work: the
/// kill-switch chord while it is in force, and where deskhand's menu is
/// (`menu`: "in the tray", "in deskhand's menu in the top bar" …).
pub fn stop_ways(chord: Option<&str>, menu: &str) -> String {
    let chord = chord.map(|c| format!(", press {c}")).unwrap_or_default();
    format!(
        "To stop it at any time: move your mouse or press a key (it pauses; Stop agents on the red frame then ends it){chord}, or choose Stop all agents {menu}."
    )
}

fn approval_view(ask: &ApprovalAsk, seconds_left: u64, note: Option<&'static str>) -> View {
    let mut lines = vec![format!(
        "Session {} wants to run: {}.",
        ask.session,
        if ask.actions.is_empty() {
            "a read".to_owned()
        } else {
            ask.actions.join(", ")
        }
    )];
    lines.extend(
        ask.safety_checks
            .iter()
            .map(|c| format!("Safety check ({}): {}", c.code, c.message)),
    );
    View {
        kind: "approval",
        title: match ask.needs {
            "clipboard_read" => "An agent asks to read what you copied",
            "input" => "An agent asks to use your mouse and keyboard",
            _ => "An agent asks to look at your screen",
        }
        .to_owned(),
        lines,
        boxes: Vec::new(),
        leases: Vec::new(),
        seconds_left,
        note,
    }
}

impl Questions {
    /// No dialog open yet, over `engine`; `stop_ways` says how the person
    /// stops agents as things are now.
    pub fn new(engine: Arc<Engine>, stop_ways: Box<dyn Fn() -> String + Send + Sync>) -> Arc<Self> {
        Arc::new(Self {
            engine,
            stop_ways,
            open: Mutex::new(HashMap::new()),
            turn: tokio::sync::Mutex::new(()),
        })
    }

    fn open(&self) -> std::sync::MutexGuard<'_, HashMap<String, Open>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn view(&self, id: &str, note: Option<&'static str>) -> Result<View, AskError> {
        self.open()
            .get(id)
            .map(|o| o.view(note))
            .ok_or(AskError::Over)
    }

    /// Answers question `id` and forgets it: allowed with what was ticked,
    /// or denied.
    fn answer(&self, id: &str, allow: bool) -> bool {
        let Some(open) = self.open().remove(id) else {
            return false;
        };
        match open.asked {
            Asked::Consent(_) => {
                let lease = LEASES.iter().find(|l| l.0 == open.lease).and_then(|l| l.2);
                self.engine.answer_consent(
                    id,
                    ConsentAnswer {
                        allow,
                        takeover: allow && open.ticked.contains("takeover"),
                        clipboard_read: allow && open.ticked.contains("clipboard_read"),
                        lease_s: lease,
                    },
                )
            }
            Asked::Approval(_) => self.engine.answer_approval(id, allow),
        }
    }
}

/// Opens a dialog for every question the engine asks, and takes it down
/// when the question is over.
pub async fn follow<R: Runtime>(app: AppHandle<R>, questions: Arc<Questions>) {
    let mut events = questions.engine.takeover_events();
    loop {
        let (id, asked, timeout_s) = match events.recv().await {
            Ok(TakeoverEvent::ConsentRequested(ask)) => {
                (ask.id.clone(), Asked::Consent(ask.clone()), ask.timeout_s)
            }
            Ok(TakeoverEvent::ApprovalRequested(ask)) => {
                (ask.id.clone(), Asked::Approval(ask.clone()), ask.timeout_s)
            }
            Ok(TakeoverEvent::ConsentEnded { id, .. }) => {
                close(&app, &questions, &id);
                continue;
            }
            Ok(_) => continue,
            Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                tracing::warn!(missed = n, "the dialogs fell behind on events");
                continue;
            }
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
        };
        let until = Instant::now() + Duration::from_secs(timeout_s);
        questions.open().insert(
            id.clone(),
            Open {
                asked,
                ticked: BTreeSet::new(),
                lease: DEFAULT_LEASE,
                until,
                stop_ways: (questions.stop_ways)(),
            },
        );
        if let Err(e) = show(&app, &questions, &id) {
            tracing::warn!(error = %e, "the dialog could not open: the question is denied");
            questions.answer(&id, false);
            continue;
        }
        let (app, questions) = (app.clone(), questions.clone());
        tauri::async_runtime::spawn(async move {
            // The engine's own timeout denies first (and says so); this
            // takes the dialog down should its end not arrive.
            tokio::time::sleep_until((until + CLOSE_GRACE).into()).await;
            close(&app, &questions, &id);
        });
    }
}

fn show<R: Runtime>(app: &AppHandle<R>, questions: &Arc<Questions>, id: &str) -> tauri::Result<()> {
    let page = format!("ask.html#{id}");
    let window = WebviewWindowBuilder::new(app, label_of(id), WebviewUrl::App(page.into()))
        .title("deskhand: your answer")
        .inner_size(440.0, 520.0)
        .resizable(false)
        .always_on_top(true)
        .center()
        .focused(true)
        .build()?;
    let (questions, id) = (questions.clone(), id.to_owned());
    window.on_window_event(move |event| {
        if let WindowEvent::Destroyed = event
            && questions.answer(&id, false)
        {
            tracing::info!("the person closed the dialog: denied");
        }
    });
    Ok(())
}

/// Takes question `id`'s dialog down; an unanswered question is denied.
fn close<R: Runtime>(app: &AppHandle<R>, questions: &Questions, id: &str) {
    questions.answer(id, false);
    if let Some(window) = app.get_webview_window(&label_of(id))
        && let Err(e) = window.destroy()
    {
        tracing::warn!(error = %e, "a dialog could not be closed");
    }
}

/// The dialog's content.
#[tauri::command]
pub fn question(id: String, questions: tauri::State<'_, Arc<Questions>>) -> Result<View, AskError> {
    questions.view(&id, None)
}

/// Changes question `id` with `change` when the person's mouse made the
/// click that asks; else nothing changes and the dialog says why.
async fn on_real_click(
    questions: &Questions,
    id: &str,
    change: impl FnOnce(&mut Open),
) -> Result<View, AskError> {
    let _turn = questions.turn.lock().await;
    let real = questions.engine.person_clicked().await;
    tracing::debug!(question = id, real, "a click on the dialog");
    let mut open = questions.open();
    let o = open.get_mut(id).ok_or(AskError::Over)?;
    if !real {
        return Ok(o.view(Some(NOT_A_MOUSE)));
    }
    change(o);
    Ok(o.view(None))
}

/// A click on a box: ticks or unticks it, if the person's mouse made it.
#[tauri::command]
pub async fn tick(
    id: String,
    key: String,
    questions: tauri::State<'_, Arc<Questions>>,
) -> Result<View, AskError> {
    on_real_click(&questions, &id, |o| {
        if let Some(key) = o.boxes().into_iter().find(|k| *k == key)
            && !o.ticked.remove(key)
        {
            o.ticked.insert(key);
        }
    })
    .await
}

/// A click on a lease, if the person's mouse made it.
#[tauri::command]
pub async fn lease(
    id: String,
    key: String,
    questions: tauri::State<'_, Arc<Questions>>,
) -> Result<View, AskError> {
    on_real_click(&questions, &id, |o| {
        if let Some((k, _, _)) = LEASES.iter().find(|l| l.0 == key) {
            o.lease = k;
        }
    })
    .await
}

/// A click on Allow: answers with what is ticked, if the person's mouse
/// made it.
#[tauri::command]
pub async fn allow<R: Runtime>(
    id: String,
    app: AppHandle<R>,
    questions: tauri::State<'_, Arc<Questions>>,
) -> Result<View, AskError> {
    let _turn = questions.turn.lock().await;
    if !questions.engine.person_clicked().await {
        return questions.view(&id, Some(NOT_A_MOUSE));
    }
    let view = questions.view(&id, None)?;
    questions.answer(&id, true);
    tracing::info!(question = %id, "the person allowed");
    close(&app, &questions, &id);
    Ok(view)
}

/// Deny (a click, Escape or the window closed): always counts.
#[tauri::command]
pub fn deny<R: Runtime>(
    id: String,
    app: AppHandle<R>,
    questions: tauri::State<'_, Arc<Questions>>,
) {
    if questions.answer(&id, false) {
        tracing::info!(question = %id, "the person denied");
    }
    close(&app, &questions, &id);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_consent_dialog_says_what_allow_adds_and_how_to_stop() {
        let ask = ConsentAsk {
            id: "consent-1".into(),
            session: "mcp-1".into(),
            protocol: "mcp",
            client: "\u{201c}claude-code\u{201d}".into(),
            wants: deskhand_engine::ConsentWants {
                takeover: true,
                ..Default::default()
            },
            timeout_s: 60,
        };
        let text =
            consent_lines(&ask, &stop_ways(Some("ctrl+alt+Escape"), "in the tray")).join("\n");
        for said in [
            "its own claim",
            "can already see your screen",
            "Allow lets it work with the whole desktop, and do what you tick below",
            "Stop agents on the red frame then ends it), press ctrl+alt+Escape, or choose Stop all agents in the tray.",
        ] {
            assert!(text.contains(said), "{said:?} in {text}");
        }
    }

    #[test]
    fn a_chord_that_does_nothing_is_not_named() {
        let said = stop_ways(None, "in deskhand's menu in the top bar");
        assert!(!said.contains("press ctrl"), "{said}");
        assert!(
            said.ends_with(
                "ends it), or choose Stop all agents in deskhand's menu in the top bar."
            ),
            "{said}"
        );
    }

    #[test]
    fn a_client_named_after_its_protocol_is_said_to_have_no_name() {
        let ask = ConsentAsk {
            id: "consent-2".into(),
            session: "mcp-2".into(),
            protocol: "mcp",
            client: "mcp".into(),
            wants: deskhand_engine::ConsentWants::default(),
            timeout_s: 60,
        };
        let first = &consent_lines(&ask, "")[0];
        assert_eq!(
            first,
            "An MCP client that gave no name of its own asks to work with the whole desktop."
        );
    }

    #[test]
    fn labels_are_window_labels() {
        assert_eq!(label_of("consent-7"), "ask-consent-7");
        assert_eq!(label_of("a/b c"), "ask-a-b-c");
    }
}
