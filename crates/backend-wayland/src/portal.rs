//! The desktop portals: a ScreenCast session for frames (its restore token
//! kept, so the person is asked once) and a RemoteDesktop session for
//! input (asked at every start: restoring one needs RemoteDesktop
//! version 2, xdg-desktop-portal 1.17, and is not asked for yet). The portal's
//! own dialog is the person's grant; until they answer, capture and input
//! wait, and a denial is kept and said.

use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ashpd::desktop::clipboard::Clipboard;
use ashpd::desktop::remote_desktop::{DeviceType, KeyState, RemoteDesktop, SelectDevicesOptions};
use ashpd::desktop::screencast::{
    CursorMode, Screencast, SelectSourcesOptions, SourceType, Stream,
};
use ashpd::desktop::{PersistMode, ResponseError, Session};
use ashpd::enumflags2::BitFlags;
use deskhand_backend::BackendError;
use futures_util::StreamExt;

use crate::eis::Eis;
use crate::frames::{Frame, Frames};
use crate::watcher::LastInput;

/// Where a portal's grant stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Grant {
    /// Asked; the person has not answered (or it is being set up).
    Pending,
    /// Granted.
    Granted,
    /// The person said no (or closed the dialog).
    Denied,
    /// The portal is not there (no xdg-desktop-portal, or no such
    /// interface in the desktop's portal).
    Unavailable(String),
    /// It failed for another reason.
    Failed(String),
}

impl Grant {
    /// Its name in the doctor and the log.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Granted => "granted",
            Self::Denied => "denied",
            Self::Unavailable(_) => "unavailable",
            Self::Failed(_) => "failed",
        }
    }
}

pub(crate) fn grant_of(e: &ashpd::Error) -> Grant {
    match e {
        ashpd::Error::Response(ResponseError::Cancelled) => Grant::Denied,
        ashpd::Error::PortalNotFound(_) => Grant::Unavailable(e.to_string()),
        e => Grant::Failed(e.to_string()),
    }
}

/// A monitor's stream as the portal describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StreamPlace {
    /// Its PipeWire node.
    pub(crate) node: u32,
    /// Top-left in desktop (logical) pixels.
    pub(crate) position: (i32, i32),
    /// Size in logical pixels.
    pub(crate) size: (u32, u32),
}

fn place(s: &Stream) -> StreamPlace {
    let (w, h) = s.size().unwrap_or((0, 0));
    StreamPlace {
        node: s.pipe_wire_node_id(),
        position: s.position().unwrap_or((0, 0)),
        size: (w.max(0) as u32, h.max(0) as u32),
    }
}

/// The input session, once granted.
pub(crate) struct RemoteSession {
    proxy: RemoteDesktop,
    pub(crate) session: Session<RemoteDesktop>,
    /// The stream pointer positions are given in.
    pub(crate) stream: StreamPlace,
    /// The session's clipboard, where the portal offers one and the
    /// person left it on.
    pub(crate) clipboard: Option<Clipboard>,
    /// libei, where the portal connected the session to the compositor's
    /// EIS server: then every event goes there, not through `Notify*`.
    pub(crate) eis: EisInput,
}

fn state(down: bool) -> KeyState {
    if down {
        KeyState::Pressed
    } else {
        KeyState::Released
    }
}

fn sent(e: ashpd::Error) -> BackendError {
    BackendError::Failed(format!("the RemoteDesktop portal refused an event: {e}"))
}

impl RemoteSession {
    /// The pointer to desktop pixel (`x`, `y`).
    pub(crate) async fn motion(&self, x: f64, y: f64) -> Result<(), BackendError> {
        if let Some(eis) = self.eis.get()? {
            return eis.motion(x, y);
        }
        // Notify takes a position in the stream.
        let (x0, y0) = self.stream.position;
        let (x, y) = (x - f64::from(x0), y - f64::from(y0));
        let node = self.stream.node;
        self.proxy
            .notify_pointer_motion_absolute(&self.session, node, x, y, Default::default())
            .await
            .map_err(sent)
    }

    /// A button by its evdev code (`BTN_LEFT` 0x110).
    pub(crate) async fn button(&self, code: u32, down: bool) -> Result<(), BackendError> {
        if let Some(eis) = self.eis.get()? {
            return eis.button(code, down);
        }
        let code = i32::try_from(code)
            .map_err(|_| BackendError::InvalidTarget(format!("button {code}")))?;
        self.proxy
            .notify_pointer_button(&self.session, code, state(down), Default::default())
            .await
            .map_err(sent)
    }

    pub(crate) async fn axis(&self, vertical: bool, steps: i32) -> Result<(), BackendError> {
        if let Some(eis) = self.eis.get()? {
            return eis.scroll(vertical, steps);
        }
        use ashpd::desktop::remote_desktop::Axis;
        let axis = if vertical {
            Axis::Vertical
        } else {
            Axis::Horizontal
        };
        self.proxy
            .notify_pointer_axis_discrete(&self.session, axis, steps, Default::default())
            .await
            .map_err(sent)
    }

    pub(crate) async fn keysym(&self, sym: u32, down: bool) -> Result<(), BackendError> {
        if let Some(eis) = self.eis.get()? {
            return eis.keysym(sym, down);
        }
        self.proxy
            .notify_keyboard_keysym(&self.session, sym as i32, state(down), Default::default())
            .await
            .map_err(sent)
    }
}

/// Whether input goes through libei.
pub(crate) enum EisInput {
    /// The portal offers no `ConnectToEIS` (or refused it): `Notify*`.
    NotOffered,
    Connected(Eis),
    /// The portal gave the session to EIS, but libei failed: the portal
    /// refuses `Notify*` on it, so input is refused with this reason.
    Failed(String),
}

impl EisInput {
    /// The connection, or why there is none where the session needs one;
    /// `Ok(None)` when input goes through `Notify*`.
    fn get(&self) -> Result<Option<&Eis>, BackendError> {
        match self {
            Self::NotOffered => Ok(None),
            Self::Connected(eis) => Ok(Some(eis)),
            Self::Failed(why) => Err(BackendError::Failed(format!(
                "the desktop's libei input failed ({why}); restart deskhand"
            ))),
        }
    }

    /// The connection, where there is one.
    pub(crate) fn connected(&self) -> Option<&Eis> {
        match self {
            Self::Connected(eis) => Some(eis),
            _ => None,
        }
    }
}

/// The capture session, once granted.
pub(crate) struct CastSession {
    pub(crate) session: Session<Screencast>,
    pub(crate) stream: StreamPlace,
    pub(crate) frames: Frames,
}

/// Both portals' sessions and grants, shared by the capabilities.
#[derive(Default)]
pub(crate) struct Portals {
    pub(crate) screencast: Mutex<Option<Grant>>,
    pub(crate) remote: Mutex<Option<Grant>>,
    pub(crate) cast: Mutex<Option<Arc<CastSession>>>,
    pub(crate) input: Mutex<Option<Arc<RemoteSession>>>,
    /// deskhand's last input, which priming the keyboard is too.
    pub(crate) last: Arc<LastInput>,
    /// The kill switch's global shortcut.
    pub(crate) kill: Mutex<crate::shortcuts::KillChord>,
    /// What is known of the clipboard.
    pub(crate) clip: Arc<Mutex<crate::clipboard::ClipState>>,
    /// The Screenshot portal's grant, once asked (only where there is no
    /// ScreenCast).
    pub(crate) shots: Mutex<Option<Grant>>,
}

fn set(slot: &Mutex<Option<Grant>>, g: Grant) {
    tracing::info!(grant = g.name(), detail = ?g, "portal");
    if let Ok(mut s) = slot.lock() {
        *s = Some(g);
    }
}

impl Portals {
    pub(crate) fn screencast_grant(&self) -> Grant {
        self.screencast
            .lock()
            .ok()
            .and_then(|g| g.clone())
            .unwrap_or(Grant::Pending)
    }

    pub(crate) fn remote_grant(&self) -> Grant {
        self.remote
            .lock()
            .ok()
            .and_then(|g| g.clone())
            .unwrap_or(Grant::Pending)
    }

    /// Whether screenshots come from the Screenshot portal: the desktop's
    /// portal has no ScreenCast.
    pub(crate) fn shots_instead(&self) -> bool {
        matches!(self.screencast_grant(), Grant::Unavailable(_))
    }

    pub(crate) fn shots_grant(&self) -> Grant {
        self.shots
            .lock()
            .ok()
            .and_then(|g| g.clone())
            .unwrap_or(Grant::Pending)
    }

    /// One shot from the Screenshot portal, on a task of its own: if the
    /// caller stops waiting (the person has not answered yet), the shot
    /// still ends, its file read and deleted.
    pub(crate) async fn shoot(self: Arc<Self>) -> Result<Frame, BackendError> {
        tokio::spawn(self.shoot_now())
            .await
            .map_err(|e| BackendError::Failed(format!("the screenshot task: {e}")))?
    }

    /// One shot; a denial is kept and said, not asked again while the
    /// desktop's permission store still says no.
    async fn shoot_now(self: Arc<Self>) -> Result<Frame, BackendError> {
        if self.shots_grant() == Grant::Denied && crate::screenshot::denied().await {
            return Err(crate::screenshot::refused(&Grant::Denied));
        }
        match crate::screenshot::shoot().await {
            Ok(frame) => {
                if self.shots_grant() != Grant::Granted {
                    set(&self.shots, Grant::Granted);
                }
                Ok(frame)
            }
            Err(e) => {
                let grant = match grant_of(&e) {
                    Grant::Failed(_) if crate::screenshot::denied().await => Grant::Denied,
                    grant => grant,
                };
                set(&self.shots, grant.clone());
                Err(crate::screenshot::refused(&grant))
            }
        }
    }

    pub(crate) fn cast(&self) -> Option<Arc<CastSession>> {
        self.cast.lock().ok().and_then(|c| c.clone())
    }

    pub(crate) fn input(&self) -> Option<Arc<RemoteSession>> {
        self.input.lock().ok().and_then(|c| c.clone())
    }

    /// Asks for both sessions, one after the other (one dialog at a
    /// time), each with the grant kept from an earlier start (the
    /// screencast from portal version 4, input from version 2).
    pub(crate) async fn start(self: Arc<Self>, kept: Option<KeptGrants>) {
        let token = load(&kept, SCREENCAST).await;
        match start_screencast(token.as_deref()).await {
            Ok((cast, new_token)) => {
                keep(&kept, SCREENCAST, new_token).await;
                let cast = Arc::new(cast);
                if let Ok(mut c) = self.cast.lock() {
                    *c = Some(cast.clone());
                }
                set(&self.screencast, Grant::Granted);
                let me = self.clone();
                tokio::spawn(async move {
                    forget_when_closed(&cast.session, &me.cast, &me.screencast).await;
                });
            }
            Err(e) => set(&self.screencast, grant_of(&e)),
        }
        let token = load(&kept, REMOTE).await;
        match start_remote(token.as_deref()).await {
            Ok((rs, new_token)) => {
                keep(&kept, REMOTE, new_token).await;
                self.last.unpaced();
                prime_keyboard(&rs).await;
                self.last.unpaced();
                let rs = Arc::new(rs);
                if let Ok(mut i) = self.input.lock() {
                    *i = Some(rs.clone());
                }
                set(&self.remote, Grant::Granted);
                let me = self.clone();
                tokio::spawn(crate::clipboard::follow(rs.clone(), self.clip.clone()));
                tokio::spawn(async move {
                    forget_when_closed(&rs.session, &me.input, &me.remote).await;
                });
            }
            Err(e) => set(&self.remote, grant_of(&e)),
        }
    }
}

/// Waits until the desktop closes `session` (the person stopped it from
/// GNOME's menu), then forgets it: nothing stale is used after.
async fn forget_when_closed<P: ashpd::desktop::SessionPortal, T>(
    session: &Session<P>,
    held: &Mutex<Option<Arc<T>>>,
    grant: &Mutex<Option<Grant>>,
) {
    if let Ok(closed) = session.receive_closed().await {
        futures_util::pin_mut!(closed);
        closed.next().await;
        if let Ok(mut h) = held.lock() {
            *h = None;
        }
        set(grant, Grant::Failed(STOPPED.into()));
    }
}

/// Why a session is gone that was granted.
const STOPPED: &str =
    "the desktop ended the session (stopped from its menu); restart deskhand to be asked again";

/// Where the portals' restore tokens are kept: the host's vault, and the
/// desktop's tag their names end with.
pub(crate) type KeptGrants = (Arc<dyn deskhand_backend::Vault>, String);

/// The two grants kept, by the start of their names in the vault.
const SCREENCAST: &str = "screencast-grant";
const REMOTE: &str = "remote-grant";

/// The restore token kept for `which` grant (the vault may wait on the
/// keychain: off the runtime's threads).
async fn load(kept: &Option<KeptGrants>, which: &str) -> Option<String> {
    let (vault, tag) = kept.clone()?;
    let name = format!("{which}-{tag}");
    tokio::task::spawn_blocking(move || vault.load(&name))
        .await
        .ok()
        .flatten()
}

/// Keeps the portal's new restore token for `which` grant, if it gave one.
async fn keep(kept: &Option<KeptGrants>, which: &str, token: Option<String>) {
    let (Some((vault, tag)), Some(token)) = (kept.clone(), token) else {
        return;
    };
    let name = format!("{which}-{tag}");
    let kept = tokio::task::spawn_blocking(move || vault.store(&name, &token)).await;
    match kept {
        Ok(Ok(())) => {}
        Ok(Err(why)) => {
            tracing::warn!(reason = %why, which, "a portal's restore token was not kept")
        }
        Err(e) => tracing::warn!(error = %e, which, "a portal's restore token was not kept"),
    }
}

/// mutter drops the first keys of a fresh virtual keyboard: a Shift tap
/// and a pause, so that none of an agent's are.
async fn prime_keyboard(rs: &RemoteSession) {
    const SHIFT: u32 = 0xffe1;
    let _ = rs.keysym(SHIFT, true).await;
    let _ = rs.keysym(SHIFT, false).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
}

fn monitor_sources() -> SelectSourcesOptions {
    SelectSourcesOptions::default()
        .set_sources(BitFlags::from_flag(SourceType::Monitor))
        .set_multiple(false)
        .set_cursor_mode(CursorMode::Hidden)
}

fn no_stream() -> ashpd::Error {
    ashpd::Error::NoResponse
}

async fn start_screencast(
    token: Option<&str>,
) -> Result<(CastSession, Option<String>), ashpd::Error> {
    let sc = Screencast::new().await?;
    let session = sc.create_session(Default::default()).await?;
    let mut opts = monitor_sources();
    if sc.version() >= 4 {
        opts = opts
            .set_persist_mode(PersistMode::ExplicitlyRevoked)
            .set_restore_token(token);
    }
    sc.select_sources(&session, opts).await?.response()?;
    let started = sc
        .start(&session, None, Default::default())
        .await?
        .response()?;
    let stream = started.streams().first().map(place).ok_or_else(no_stream)?;
    let token = started.restore_token().map(str::to_owned);
    let fd: OwnedFd = sc
        .open_pipe_wire_remote(&session, Default::default())
        .await?;
    let frames = Frames::start(fd, stream.node).map_err(ashpd::Error::IO)?;
    Ok((
        CastSession {
            session,
            stream,
            frames,
        },
        token,
    ))
}

/// The input session, restored from `token` where the portal keeps
/// grants (version 2: GNOME 46, KDE 6), with the token to keep.
async fn start_remote(
    token: Option<&str>,
) -> Result<(RemoteSession, Option<String>), ashpd::Error> {
    let proxy = RemoteDesktop::new().await?;
    let sc = Screencast::new().await?;
    let session = proxy.create_session(Default::default()).await?;
    let mut devices =
        SelectDevicesOptions::default().set_devices(DeviceType::Keyboard | DeviceType::Pointer);
    if proxy.version() >= 2 {
        devices = devices
            .set_persist_mode(PersistMode::ExplicitlyRevoked)
            .set_restore_token(token);
    }
    proxy.select_devices(&session, devices).await?.response()?;
    let clipboard = request_clipboard(&session).await;
    // Absolute pointer positions are given in a stream of the session.
    sc.select_sources(&session, monitor_sources())
        .await?
        .response()?;
    let started = proxy
        .start(&session, None, Default::default())
        .await?
        .response()?;
    if !started
        .devices()
        .contains(DeviceType::Pointer | DeviceType::Keyboard)
    {
        return Err(ashpd::Error::Response(ResponseError::Cancelled));
    }
    let stream = started.streams().first().map(place).ok_or_else(no_stream)?;
    let token = started.restore_token().map(str::to_owned);
    let clipboard = clipboard.filter(|_| started.is_clipboard_enabled());
    let eis = connect_eis(&proxy, &session).await;
    Ok((
        RemoteSession {
            proxy,
            session,
            stream,
            clipboard,
            eis,
        },
        token,
    ))
}

/// libei for the session where the portal offers it (version 2); the
/// `Notify*` calls otherwise.
async fn connect_eis(proxy: &RemoteDesktop, session: &Session<RemoteDesktop>) -> EisInput {
    if proxy.version() < 2 {
        return EisInput::NotOffered;
    }
    let socket = match proxy.connect_to_eis(session, Default::default()).await {
        Ok(socket) => socket,
        Err(e) => {
            tracing::info!(error = %e, "no libei: input through the portal's calls");
            return EisInput::NotOffered;
        }
    };
    match Eis::connect(socket).await {
        Ok(eis) => {
            tracing::info!("input through libei");
            EisInput::Connected(eis)
        }
        Err(why) => {
            tracing::warn!(reason = %why, "libei failed: input is refused");
            EisInput::Failed(why)
        }
    }
}

/// The portal's clipboard for this session, asked for before it starts;
/// none where the desktop has no Clipboard portal.
async fn request_clipboard(session: &Session<RemoteDesktop>) -> Option<Clipboard> {
    let clipboard = Clipboard::new().await.ok()?;
    match clipboard.request(session, Default::default()).await {
        Ok(()) => Some(clipboard),
        Err(e) => {
            tracing::info!(error = %e, "no clipboard through the portal");
            None
        }
    }
}
