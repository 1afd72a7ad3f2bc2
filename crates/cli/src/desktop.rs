//! The desktop an engine drives, shared by `deskhand serve` and
//! `deskhand mcp`: attach to a display (or start a virtual one), read the
//! consent, open the audit log and the X11 backend.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::Args;
use deskhand_backend_x11::VirtualDesktop;
use deskhand_engine::approval::ApprovalMode;
use deskhand_engine::{AuditLog, ClipboardPolicy, Consent, Engine};

use crate::files;
use crate::secrets::{self, Secret};

/// The desktop flags of `serve` and `mcp`.
#[derive(Debug, Clone, Args)]
pub struct DesktopArgs {
    /// X display to drive, e.g. `:0` (default: $DISPLAY).
    #[arg(long, conflicts_with = "virtual_size")]
    pub display: Option<String>,
    /// Start a virtual desktop (Xvfb + window manager) of this size.
    #[arg(long = "virtual", value_name = "WxH", num_args = 0..=1, default_missing_value = "1280x800")]
    pub virtual_size: Option<String>,
    /// Consent policy file, e.g. `{"takeover": true, "apps": ["XTerm"]}`.
    #[arg(long)]
    pub consent: Option<PathBuf>,
    /// Audit log (JSON lines).
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
    /// The hotkey that ends every takeover and releases everything.
    #[arg(long, default_value = "ctrl+alt+Escape")]
    pub kill_switch: String,
}

/// An engine on a display.
pub struct Desktop {
    /// The engine.
    pub engine: Arc<Engine>,
    /// The X display it drives.
    pub x_display: String,
    /// The virtual desktop, when deskhand started it.
    pub virtual_desktop: Option<VirtualDesktop>,
}

impl Desktop {
    /// Releases everything held and stops the virtual desktop.
    pub async fn stop(mut self) {
        let engine = self.engine.clone();
        let _ = tokio::task::spawn_blocking(move || engine.shutdown()).await;
        if let Some(vd) = self.virtual_desktop.as_mut() {
            vd.stop();
        }
    }
}

fn parse_size(s: &str) -> anyhow::Result<(u32, u32)> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .context("virtual size must look like 1920x1080")?;
    let (w, h): (u32, u32) = (w.parse()?, h.parse()?);
    if !(64..=16384).contains(&w) || !(64..=16384).contains(&h) {
        bail!("virtual size {w}x{h} is out of range (64..=16384)");
    }
    Ok((w, h))
}

/// Whether these flags start a virtual desktop (asked for, or no display).
pub fn wants_virtual(display: Option<&str>, virtual_size: Option<&str>) -> bool {
    virtual_size.is_some()
        || (display.is_none() && std::env::var("DISPLAY").map_or(true, |d| d.is_empty()))
}

/// The display to drive and, when deskhand started it, the virtual desktop.
pub fn open_display(
    display: Option<String>,
    virtual_size: Option<&str>,
) -> anyhow::Result<(String, Option<VirtualDesktop>)> {
    if wants_virtual(display.as_deref(), virtual_size) {
        if virtual_size.is_none() {
            tracing::info!("no DISPLAY set: starting a virtual desktop");
        }
        let (w, h) = parse_size(virtual_size.unwrap_or("1280x800"))?;
        let vd = VirtualDesktop::start(w, h)?;
        return Ok((vd.display().to_owned(), Some(vd)));
    }
    let name = display
        .or_else(|| std::env::var("DISPLAY").ok())
        .context("no display")?;
    Ok((name, None))
}

/// Opens the display, the consent, the audit log and the engine, and
/// adopts the held-input ledger of this display.
pub async fn open(args: &DesktopArgs) -> anyhow::Result<Desktop> {
    let (x_display, virtual_desktop) =
        open_display(args.display.clone(), args.virtual_size.as_deref())?;
    let mut consent = match (&args.consent, &virtual_desktop) {
        (Some(path), _) => Consent::from_file(path)?,
        (None, Some(_)) => Consent::sandbox(),
        (None, None) => Consent::none(),
    };
    if let Some(mode) = args.approval {
        consent.approval = mode;
    }
    let consent = consent.with_clipboard(ClipboardPolicy {
        enabled: args.enable_clipboard,
        read_foreign: args.enable_clipboard_read_foreign,
        foreign_reads_approved: args.approve_clipboard_reads,
    });
    let (audit_key, _) = secrets::load_or_create(Secret::AuditKey, None)?;
    deskhand_engine::audit::set_text_key(secrets::secret_bytes(&audit_key)?);
    let audit_path = args
        .audit_log
        .clone()
        .unwrap_or_else(|| files::state_dir().join("audit.jsonl"));
    let audit = AuditLog::open(&audit_path)
        .with_context(|| format!("opening audit log {}", audit_path.display()))?;

    // Held input and remapped keycodes survive a crash: a copy of each
    // list per display.
    let display_tag: String = x_display
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let state = files::state_dir();
    files::private_dir(&state)?;
    let options = deskhand_backend_x11::X11Options {
        kill_switch: Some(args.kill_switch.clone()),
        remap_file: Some(state.join(format!("remapped-keys-{display_tag}.json"))),
    };
    let backend = deskhand_backend_x11::open_with(Some(&x_display), &options)?;
    let engine = Arc::new(Engine::new(backend, consent, audit));
    let ledger = state.join(format!("held-input-{display_tag}.json"));
    engine.keep_held_input_in(ledger).await?;
    Ok(Desktop {
        engine,
        x_display,
        virtual_desktop,
    })
}

/// The health report of `x_display`: the doctor's registry.
pub fn health_source(x_display: &str) -> deskhand_server::mcp::HealthSource {
    let display = x_display.to_owned();
    Arc::new(move || crate::doctor::report(Some(&display)))
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
