//! The desktop an engine drives, shared by every host: attach to a
//! desktop (or start a virtual one), read the consent, open the audit log
//! and the backend the platform picks.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use deskhand_engine::approval::ApprovalMode;
use deskhand_engine::settings::{DisplayChoice, Settings};
use deskhand_engine::{AuditLog, ClipboardPolicy, Consent, Engine};
use deskhand_platform::{BackendKind, DesktopId, KillSwitchHotkey, Site, SiteOptions};

use crate::display_claim::{self, DisplayClaim};
use crate::error::{io, refuse};
use crate::secrets::{self, Secret};
use crate::{HostError, files, settings};

/// The desktop flags of `serve` and `mcp`.
#[derive(Debug, Clone, Args)]
pub struct DesktopArgs {
    /// X display to drive, e.g. `:0` (default: $DISPLAY).
    #[arg(long, conflicts_with = "virtual_size")]
    pub display: Option<String>,
    /// The backend (x11; default: the one for this session).
    #[arg(long, value_parser = str::parse::<BackendKind>)]
    pub backend: Option<BackendKind>,
    /// Start a virtual desktop (Xvfb + window manager) of this size.
    #[arg(long = "virtual", value_name = "WxH", num_args = 0..=1, default_missing_value = "1280x800")]
    pub virtual_size: Option<String>,
    /// Consent policy file, e.g. `{"takeover": true, "apps": ["XTerm"]}`.
    #[arg(long)]
    pub consent: Option<PathBuf>,
    /// Audit log (JSON lines; default: the settings file's, else
    /// `$XDG_STATE_HOME/deskhand/audit.jsonl`).
    #[arg(long)]
    pub audit_log: Option<PathBuf>,
    /// Let agents write the clipboard, paste, and read back what deskhand
    /// itself wrote in the last 30 s.
    #[arg(long)]
    pub enable_clipboard: bool,
    /// Also let agents read what others copied (never concealed or
    /// credential-looking text).
    #[arg(long, requires = "enable_clipboard")]
    pub enable_clipboard_read_foreign: bool,
    /// Approve every foreign clipboard read in advance (headless: there is
    /// no one to ask per read).
    #[arg(long, requires = "enable_clipboard_read_foreign")]
    pub approve_clipboard_reads: bool,
    /// How computer-endpoint calls are approved: `allow`, `write` (input
    /// asks the person through the control pipe), `prompt` (every call
    /// asks) or `deny` (default: the consent file's `approval`, else allow).
    #[arg(long, value_parser = str::parse::<ApprovalMode>)]
    pub approval: Option<ApprovalMode>,
    /// The hotkey that ends every takeover and releases everything
    /// (default: the settings file's, else ctrl+alt+Escape).
    #[arg(long)]
    pub kill_switch: Option<String>,
    /// The settings file, re-read whenever it changes (default:
    /// `$XDG_CONFIG_HOME/deskhand/settings.toml`).
    #[arg(long)]
    pub settings: Option<PathBuf>,
}

/// An engine on a display.
pub struct Desktop {
    /// The engine.
    pub engine: Arc<Engine>,
    /// The desktop it drives, and the virtual desktop when deskhand
    /// started it.
    pub site: Site,
    /// This engine's lock on the display: no second engine drives it.
    pub claim: DisplayClaim,
    /// The settings file and what the command line fixed.
    pub settings: SettingsFile,
    /// The settings it started with.
    pub started_with: settings::FileSettings,
}

/// The settings file a host's UI edits, and what its changes apply to.
#[derive(Clone)]
pub struct SettingsFile {
    /// Where it is.
    pub path: PathBuf,
    /// What the command line set, which the file may not change.
    pub fixed: settings::Fixed,
    /// What a change applies to while running.
    pub live: settings::Live,
}

impl Desktop {
    /// Releases everything held and stops the virtual desktop.
    pub async fn stop(mut self) {
        let engine = self.engine.clone();
        let _ = tokio::task::spawn_blocking(move || engine.shutdown()).await;
        self.site.stop();
    }

    /// Which desktop it drives.
    pub fn id(&self) -> &DesktopId {
        self.site.id()
    }
}

fn parse_size(s: &str) -> Result<(u32, u32), HostError> {
    let parsed = s
        .split_once(['x', 'X'])
        .and_then(|(w, h)| Some((w.parse::<u32>().ok()?, h.parse::<u32>().ok()?)));
    let Some((w, h)) = parsed else {
        refuse!("virtual size {s:?} must look like 1920x1080");
    };
    if !(64..=16384).contains(&w) || !(64..=16384).contains(&h) {
        refuse!("virtual size {w}x{h} is out of range (64..=16384)");
    }
    Ok((w, h))
}

/// The platform's options for these flags.
pub fn site_options(args: &DesktopArgs) -> Result<SiteOptions, HostError> {
    Ok(SiteOptions {
        desktop: args.display.clone(),
        virtual_size: args.virtual_size.as_deref().map(parse_size).transpose()?,
        backend: args.backend,
    })
}

/// The consent (the file's, the sandbox default on a virtual desktop, or
/// none) and the command line's settings, which the settings file may add
/// to.
fn consent_and_fixed(
    args: &DesktopArgs,
    listen: Option<std::net::SocketAddr>,
    is_virtual: bool,
) -> Result<(Consent, settings::Fixed), HostError> {
    let mut consent = match (&args.consent, is_virtual) {
        (Some(path), _) => Consent::from_file(path)?,
        (None, true) => Consent::sandbox(),
        (None, false) => Consent::none(),
    };
    if let Some(mode) = args.approval {
        consent.approval = mode;
    }
    let defaults = settings::FileSettings::default();
    let fixed = settings::Fixed {
        base: settings::FileSettings {
            live: Settings {
                clipboard: ClipboardPolicy {
                    enabled: args.enable_clipboard,
                    read_foreign: args.enable_clipboard_read_foreign,
                    foreign_reads_approved: args.approve_clipboard_reads,
                },
                approval: consent.approval,
                refuse: consent.refuse.clone(),
                displays: DisplayChoice::All,
                ..Settings::default()
            },
            kill_switch: args.kill_switch.clone().unwrap_or(defaults.kill_switch),
            listen_port: listen.map_or(defaults.listen_port, |a| a.port()),
            audit_log: args.audit_log.clone().unwrap_or(defaults.audit_log),
        },
        approval: args.approval.is_some(),
        clipboard: args.enable_clipboard,
        kill_switch: args.kill_switch.is_some(),
        listen: listen.is_some(),
        audit_log: args.audit_log.is_some(),
    };
    Ok((consent, fixed))
}

/// Opens the display, the consent, the settings, the audit log and the
/// engine, and adopts the held-input ledger of this display. `listen` is
/// the port's address when the command line gave one.
pub async fn open(
    args: &DesktopArgs,
    listen: Option<std::net::SocketAddr>,
) -> Result<Desktop, HostError> {
    let mut site = Site::attach(&site_options(args)?)?;
    let claim = display_claim::claim(site.id())?;
    let (mut consent, fixed) = consent_and_fixed(args, listen, site.is_virtual())?;
    let settings_path = args.settings.clone().unwrap_or_else(settings::default_path);
    let started_with = settings::initial(&settings_path, &fixed)?;
    consent.approval = started_with.live.approval;
    let consent = consent.with_clipboard(started_with.live.clipboard);
    let (audit_key, _) = secrets::load_or_create(Secret::AuditKey, None)?;
    deskhand_engine::audit::set_text_key(secrets::secret_bytes(&audit_key)?);
    let audit_path = &started_with.audit_log;
    let audit = AuditLog::open(audit_path)
        .map_err(io(format!("opening audit log {}", audit_path.display())))?;

    // Held input and remapped keycodes survive a crash: a copy of each
    // list per desktop.
    let state = files::state_dir();
    files::private_dir(&state)?;
    let hotkey = KillSwitchHotkey::new(&started_with.kill_switch)?;
    let backend = site.open(&deskhand_platform::OpenOptions {
        kill_switch: hotkey.clone(),
        state_dir: state.clone(),
        vault: crate::vault::HostVault::shared(),
    })?;
    let engine = Arc::new(Engine::new(backend, consent, audit));
    engine.apply_settings(started_with.live.clone()).await;
    let live = settings::Live {
        engine: engine.clone(),
        hotkey,
    };
    tokio::spawn(settings::watch(
        settings_path.clone(),
        fixed.clone(),
        live.clone(),
        started_with.clone(),
    ));
    let ledger = deskhand_platform::state_file(&state, "held-input", site.id());
    engine.keep_held_input_in(ledger).await?;
    Ok(Desktop {
        engine,
        site,
        claim,
        settings: SettingsFile {
            path: settings_path,
            fixed,
            live,
        },
        started_with,
    })
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1920x1080").expect("size"), (1920, 1080));
        assert!(parse_size("10x10").is_err());
        assert!(parse_size("wide").is_err());
    }
}
