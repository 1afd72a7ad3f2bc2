//! The MCP adapter (driver contract §1–§8): the tools over the engine, on
//! stdio (`deskhand mcp`) and on Streamable HTTP at `/mcp` behind the same
//! guard as `/v1/ws`. Revisions 2025-06-18 and 2025-11-25 (initialize and
//! `Mcp-Session-Id`) and 2026-07-28 (`server/discover`, stateless).

mod absent;
mod acts;
mod computer_tool;
mod elements;
mod envelope;
mod images;
mod owners;
mod reads;
mod session_tools;
mod sessions;
mod targets;

use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use deskhand_engine::Engine;
use deskhand_protocol::doctor::DoctorReport;
use deskhand_protocol::mcp::{self as contract, ToolSpec};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use absent::serve_stdio_absent;
use envelope::Fail;
pub use sessions::Caller;
use sessions::{DriverSession, Sessions};

/// Reads the doctor registry: `health_report` and `doctor --json` give the
/// same report.
pub type HealthSource = Arc<dyn Fn() -> DoctorReport + Send + Sync>;

/// What every MCP connection of this daemon shares.
pub struct McpShared {
    engine: Arc<Engine>,
    sessions: Arc<Sessions>,
    health: HealthSource,
    /// Which desktop this engine drives, told to every client in the
    /// instructions when the process serves one client of its own.
    desktop_note: Option<String>,
}

impl McpShared {
    /// The adapter's state over `engine`; ends expired and idle sessions
    /// in the background.
    pub fn new(engine: Arc<Engine>, health: HealthSource) -> Arc<Self> {
        Self::build(engine, health, None)
    }

    /// [`McpShared::new`] whose instructions end with `desktop_note`:
    /// which desktop this engine drives (`deskhand mcp`'s own engine).
    pub fn naming_desktop(
        engine: Arc<Engine>,
        health: HealthSource,
        desktop_note: String,
    ) -> Arc<Self> {
        Self::build(engine, health, Some(desktop_note))
    }

    fn build(engine: Arc<Engine>, health: HealthSource, desktop_note: Option<String>) -> Arc<Self> {
        let sessions = Arc::new(Sessions::default());
        sessions::start_reaper(sessions.clone(), engine.clone());
        Arc::new(Self {
            engine,
            sessions,
            health,
            desktop_note,
        })
    }
}

/// The token a request passed the guard with (its index in the server's
/// list), put in the request's extensions by the guard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenIndex(pub usize);

/// One MCP connection: a stdio process, an HTTP session, or one stateless
/// HTTP request. Dropped when it ends; a session bound to it ends with it.
struct Conn {
    shared: Arc<McpShared>,
    bound: Mutex<Option<String>>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        let bound = self.bound.lock().unwrap_or_else(|e| e.into_inner()).take();
        let Some(id) = bound else { return };
        let Some(session) = self.shared.sessions.remove(&id) else {
            return;
        };
        let engine = self.shared.engine.clone();
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move { engine.close_session(&session.engine).await });
        }
    }
}

/// What every client is told first.
const INSTRUCTIONS: &str = "deskhand drives this desktop for you while the person stays in charge. \
     Call start_session first (input \"takeover\" to use mouse and keyboard), \
     then list_windows and screenshot; coordinates are desktop pixels.";

/// The MCP server handler rmcp drives.
#[derive(Clone)]
pub struct McpServer {
    conn: Arc<Conn>,
}

impl McpServer {
    /// A handler for one connection.
    pub fn new(shared: Arc<McpShared>) -> Self {
        Self {
            conn: Arc::new(Conn {
                shared,
                bound: Mutex::new(None),
            }),
        }
    }

    fn shared(&self) -> &McpShared {
        &self.conn.shared
    }

    fn engine(&self) -> &Arc<Engine> {
        &self.conn.shared.engine
    }
}

/// Who sent the request, and whether its connection keeps a session of
/// its own (stdio, or HTTP with `Mcp-Session-Id`, each such HTTP session a
/// client of its own) or is stateless.
fn caller_of(ctx: &RequestContext<RoleServer>) -> (Caller, bool) {
    match ctx.extensions.get::<axum::http::request::Parts>() {
        None => (Caller::Stdio, true),
        Some(parts) => {
            let token = parts
                .extensions
                .get::<TokenIndex>()
                .map_or(usize::MAX, |t| t.0);
            let mcp_session = parts
                .headers
                .get(owners::SESSION_HEADER)
                .and_then(|v| v.to_str().ok());
            match mcp_session {
                Some(id) => (Caller::Connection(token, Arc::from(id)), true),
                None => (Caller::Token(token), false),
            }
        }
    }
}

/// How often a call waiting for the person tells the client so.
const WAITING_PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// A tool call in progress: the handler, its caller and the request.
pub(crate) struct Call<'a> {
    server: &'a McpServer,
    ctx: &'a RequestContext<RoleServer>,
    caller: Caller,
    keeps_session: bool,
    started: Instant,
}

impl Call<'_> {
    fn engine(&self) -> &Arc<Engine> {
        self.server.engine()
    }

    fn sessions(&self) -> &Sessions {
        &self.server.shared().sessions
    }

    /// The session `asked` names (one of this client's), else the
    /// connection's own, else a new headless one. A stateless request's new
    /// session lasts only for the request: it inherits no other session.
    async fn session(&self, asked: Option<&str>) -> Result<DriverSession, Fail> {
        self.resolve(asked, false)
    }

    /// [`Call::session`] for `start_session`: a stateless request's new
    /// session is kept, for later requests to name by its `session_id`.
    fn session_to_keep(&self, asked: Option<&str>) -> Result<DriverSession, Fail> {
        self.resolve(asked, true)
    }

    fn resolve(&self, asked: Option<&str>, keep: bool) -> Result<DriverSession, Fail> {
        let found = match asked {
            Some(id) => Some(self.sessions().get(id, &self.caller).ok_or_else(|| {
                Fail::new(
                    deskhand_protocol::ErrorCode::SessionNotFound,
                    "no live session of this client has that session_id",
                )
            })?),
            None => self
                .bound()
                .and_then(|id| self.sessions().get(&id, &self.caller)),
        };
        let s = match found {
            Some(s) => s,
            None => self.new_session(self.keeps_session || !keep)?,
        };
        self.note_takeover_end(&s);
        Ok(s)
    }

    /// Tells the engine when `s`'s takeover ends unless it calls again
    /// (for the `BUSY` others get).
    fn note_takeover_end(&self, s: &DriverSession) {
        self.engine()
            .set_takeover_until(&s.engine, s.takeover_until());
    }

    fn bound(&self) -> Option<String> {
        self.server
            .conn
            .bound
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// A new headless session with the consent's apps; bound to the
    /// connection (and ended with it) when `bind`. Refused when this
    /// client's token or the daemon keeps as many sessions as they may.
    fn new_session(&self, bind: bool) -> Result<DriverSession, Fail> {
        let engine = self.engine();
        let session = DriverSession {
            engine: engine.open_session("mcp"),
            caller: self.caller.clone(),
            apps: engine.consent().apps.clone(),
            input: contract::InputMode::Headless,
            clipboard_read: false,
            expires: None,
            takeover_refused: None,
            last_used: Instant::now(),
            last_plan: Default::default(),
        };
        if !self.sessions().insert_new(session.clone()) {
            let engine = engine.clone();
            let closing = session.engine.clone();
            tokio::spawn(async move { engine.close_session(&closing).await });
            return Err(Fail::new(
                deskhand_protocol::ErrorCode::Busy,
                format!(
                    "too many MCP sessions are open (at most {} per token, {} in all): \
                     end yours with end_session, or wait until idle ones are closed",
                    sessions::MAX_PER_TOKEN,
                    sessions::MAX_SESSIONS
                ),
            ));
        }
        if bind {
            *self
                .server
                .conn
                .bound
                .lock()
                .unwrap_or_else(|e| e.into_inner()) = Some(session.engine.id.clone());
        }
        Ok(session)
    }

    /// A session that may act: its lease has not ended.
    async fn live_session(&self, asked: Option<&str>) -> Result<DriverSession, Fail> {
        let s = self.session(asked).await?;
        if s.expired() {
            return Err(Fail::new(
                deskhand_protocol::ErrorCode::ConsentExpired,
                "the session's lease has ended",
            ));
        }
        Ok(s)
    }

    /// The progress token the client gave, if any.
    fn progress(&self) -> Option<rmcp::model::ProgressToken> {
        self.ctx.meta.get_progress_token()
    }

    /// Tells the client how far a long act got (when it asked).
    async fn notify_progress(&self, done: f64, total: f64) {
        if let Some(token) = self.progress() {
            let param = rmcp::model::ProgressNotificationParam::new(token, done).with_total(total);
            let _ = self.ctx.peer.notify_progress(param).await;
        }
    }

    /// Waits for `question` (the person's answer), telling a client that
    /// follows progress every few seconds that the call still waits, so
    /// that it does not give up on it.
    async fn while_waiting<T>(&self, question: impl std::future::Future<Output = T>) -> T {
        let Some(token) = self.progress() else {
            return question.await;
        };
        tokio::pin!(question);
        let started = Instant::now();
        loop {
            tokio::select! {
                answer = &mut question => return answer,
                () = tokio::time::sleep(WAITING_PROGRESS_EVERY) => {
                    let waited = started.elapsed().as_secs_f64().floor();
                    let param = rmcp::model::ProgressNotificationParam::new(token.clone(), waited)
                        .with_message("waiting for the person's answer");
                    let _ = self.ctx.peer.notify_progress(param).await;
                }
            }
        }
    }

    /// The name the client gave in `initialize`, if it did (stateless
    /// calls have none).
    fn client_name(&self) -> Option<String> {
        self.ctx
            .peer
            .peer_info()
            .map(|i| i.client_info.name.clone())
    }

    fn elapsed_ms(&self) -> f64 {
        self.started.elapsed().as_secs_f64() * 1000.0
    }
}

/// Parses a tool's arguments; a listed argument of the wrong type is
/// `invalid_arguments`.
fn args<T: DeserializeOwned>(arguments: Option<rmcp::model::JsonObject>) -> Result<T, Fail> {
    let value = Value::Object(arguments.unwrap_or_default());
    serde_json::from_value(value).map_err(|e| Fail::invalid(format!("invalid arguments: {e}")))
}

/// Every tool's definition, built once: rmcp asks for a tool's schema on
/// every stateless call (to check `Mcp-Param-*` headers).
/// What `initialize` answers: deskhand, its tools, these instructions.
fn server_config(instructions: String) -> ServerConfig {
    ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
        .with_server_info(Implementation::new("deskhand", env!("CARGO_PKG_VERSION")))
        .with_instructions(instructions)
}

/// The MCP revisions deskhand speaks.
fn protocol_versions() -> Cow<'static, [ProtocolVersion]> {
    Cow::Borrowed(&[
        ProtocolVersion::V_2026_07_28,
        ProtocolVersion::V_2025_11_25,
        ProtocolVersion::V_2025_06_18,
    ])
}

/// Every tool, as `tools/list` answers.
fn tool_list() -> ListToolsResult {
    ListToolsResult::with_all_items(tools().to_vec())
}

/// The tool called `name`.
fn tool_named(name: &str) -> Option<Tool> {
    tools().iter().find(|t| t.name == name).cloned()
}

fn tools() -> &'static [Tool] {
    static TOOLS: std::sync::OnceLock<Vec<Tool>> = std::sync::OnceLock::new();
    TOOLS.get_or_init(|| contract::TOOLS.iter().map(tool_of).collect())
}

fn tool_of(spec: &ToolSpec) -> Tool {
    let schema = match (spec.input)() {
        Value::Object(map) => map,
        _ => Default::default(),
    };
    let mut tool = Tool::new(spec.name, spec.description, Arc::new(schema));
    let mut notes = ToolAnnotations::default();
    notes.read_only_hint = Some(spec.read_only);
    notes.destructive_hint = Some(false);
    tool.annotations = Some(notes);
    tool
}

impl McpServer {
    async fn dispatch(&self, call: &Call<'_>, params: CallToolRequestParams) -> CallToolResult {
        let a = params.arguments;
        let result = match params.name.as_ref() {
            "start_session" => session_tools::start(call, args(a)).await,
            "get_session_state" => session_tools::state(call, args(a)).await,
            "end_session" => session_tools::end(call, args(a)).await,
            "health_report" => reads::health(call, &self.shared().health),
            "computer" => computer_tool::computer(call, args(a)).await,
            "list_windows" => reads::list_windows(call, args(a)).await,
            "get_window_state" => reads::window_state(call, args(a)).await,
            "screenshot" => reads::screenshot(call, args(a)).await,
            "clipboard_read" => reads::clipboard_read(call, args(a)).await,
            "clipboard_write" => acts::clipboard_write(call, args(a)).await,
            "list_notifications" | "dismiss_notification" | "invoke_notification_action" => {
                Err(reads::no_notifications(call.engine().backend_name()))
            }
            "click" => acts::click(call, args(a), 1, deskhand_engine::Button::Left).await,
            "double_click" => acts::click(call, args(a), 2, deskhand_engine::Button::Left).await,
            "right_click" => acts::click(call, args(a), 1, deskhand_engine::Button::Right).await,
            "type_text" => acts::type_text(call, args(a)).await,
            "set_value" => elements::set_value(call, args(a)).await,
            "press_key" => acts::press_key(call, args(a)).await,
            "hotkey" => acts::hotkey(call, args(a)).await,
            "scroll" => acts::scroll(call, args(a)).await,
            "drag" => acts::drag(call, args(a)).await,
            "move_cursor" => acts::move_cursor(call, args(a)).await,
            "bring_to_front" => acts::bring_to_front(call, args(a)).await,
            other => Err(Fail::invalid(format!(
                "no tool named {:?}",
                contract::app_text(other, 64)
            ))),
        };
        result.unwrap_or_else(Fail::into_result)
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        server_config(match &self.shared().desktop_note {
            Some(note) => format!("{INSTRUCTIONS}\n\n{note}"),
            None => INSTRUCTIONS.to_owned(),
        })
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        protocol_versions()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(tool_list())
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tool_named(name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let (caller, keeps_session) = caller_of(&context);
        let call = Call {
            server: self,
            ctx: &context,
            caller,
            keeps_session,
            started: Instant::now(),
        };
        let name = request.name.clone();
        let result = self.dispatch(&call, request).await;
        tracing::debug!(tool = %name, error = result.is_error == Some(true), "mcp call");
        Ok(CallToolResponse::Complete(result))
    }
}

/// The Streamable HTTP service at `/mcp`. rmcp's own checks are set
/// explicitly: Host only loopback with our port (its default takes any
/// port), Origin checked (its default checks none), our body limit. An
/// HTTP session unused for the configured time is closed (its driver
/// session with it), and how many may be open is bounded (`owners.rs`).
pub(crate) fn http_service(state: &crate::AppState) -> axum::Router {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    };
    let port = state.port;
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts([
            format!("127.0.0.1:{port}"),
            format!("localhost:{port}"),
            format!("[::1]:{port}"),
        ])
        .with_allowed_origins(state.config.allowed_origins.clone())
        .enforce_origin_validation()
        .with_json_response(true)
        .with_max_request_body_bytes(state.config.max_message_bytes);
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(state.config.mcp_session_idle);
    let sessions = Arc::new(sessions);
    let shared = state.mcp.clone();
    let service = StreamableHttpService::new(
        move || Ok(McpServer::new(shared.clone())),
        sessions.clone(),
        config,
    );
    let owners = Arc::new(owners::Owners::new(
        sessions,
        owners::Limits {
            per_token: state.config.mcp_sessions_per_token,
            total: state.config.mcp_sessions_max,
            max_body: state.config.max_message_bytes,
        },
    ));
    axum::Router::new()
        .fallback_service(service)
        .layer(axum::middleware::from_fn(images::fill))
        .layer(axum::middleware::from_fn_with_state(owners, owners::check))
}

/// Serves MCP on this process's stdin and stdout until the client closes
/// them.
pub async fn serve_stdio(shared: Arc<McpShared>) -> Result<(), std::io::Error> {
    use rmcp::ServiceExt;
    let server = McpServer::new(shared);
    let running = server
        .serve(rmcp::transport::io::stdio_pipes())
        .await
        .map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}
