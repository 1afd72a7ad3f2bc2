//! The doctor report (`deskhand doctor --json`, later MCP's
//! `health_report`): schema v2 of the driver contract §6.4, as data. Every
//! status and reason is an enum; the report's JSON schema is generated
//! from these types; [`DoctorReport::assemble`] derives `ready` and the
//! next steps from the entries, so every host reports the same way.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

mod advice;
pub use advice::Reader;

/// `schema` of the report.
pub const DOCTOR_SCHEMA_NAME: &str = "deskhand/doctor";
/// `schema_version` of the report.
pub const DOCTOR_SCHEMA_VERSION: u32 = 2;
/// The contract version deskhand implements.
pub const CONTRACT_VERSION: &str = "0.8.0";

/// Status of a backend or capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Availability {
    /// Works here.
    Available,
    /// Could work here, but something is missing (see the reason).
    Unavailable,
    /// This platform has no way to do it.
    Unsupported,
    /// Not built yet.
    Planned,
}

/// Why something is not available: one code per cause, each with its
/// fixed advice for the person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReasonCode {
    /// No display to connect to, or it refused.
    DisplayUnreachable,
    /// A Wayland session deskhand drives through XWayland only (not
    /// GNOME's).
    WaylandSessionUnsupported,
    /// The XTEST extension is off.
    XtestMissing,
    /// XInput 2.1 is missing.
    #[serde(rename = "xinput2_missing")]
    Xinput2Missing,
    /// The Composite extension is off.
    CompositeMissing,
    /// The indicator program is not found.
    IndicatorNotFound,
    /// Nothing advertises the accessibility bus: no session bus, or no
    /// `org.a11y.Bus` on it (assistive technologies are off).
    AtspiBusNotAdvertised,
    /// The accessibility bus is advertised but does not answer.
    AtspiBusUnreachable,
    /// The platform has no API for it.
    NoPlatformApi,
    /// This part of deskhand is not built yet.
    NotBuilt,
    /// The Wayland portal backend is not built yet.
    WaylandPortalNotBuilt,
    /// Available with a limit: X11 gives another program's XTEST event
    /// sent through a real device (`XTestFakeDeviceButtonEvent`) that
    /// device's id, so such a click on Continue or in the consent dialog
    /// passes for the person's (other platforms mark injected input).
    XtestDeviceEventsLookReal,
    /// The desktop portal is not running, or lacks the interface.
    PortalUnavailable,
    /// The portal's dialog is up and the person has not answered yet.
    PortalPending,
    /// The person denied screen sharing in the portal's dialog.
    PortalScreencastDenied,
    /// The person denied remote interaction in the portal's dialog.
    PortalRemoteDesktopDenied,
    /// The person denied screenshots in the desktop's dialog (the
    /// Screenshot portal, where there is no ScreenCast).
    PortalScreenshotDenied,
    /// This Wayland compositor offers no way to do it.
    CompositorUnsupported,
    /// deskhand's GNOME Shell extension is not enabled.
    ShellExtensionMissing,
    /// The person turned the clipboard off in deskhand's settings (their
    /// choice: no step to do).
    ClipboardOff,
}

/// What a status entry says: its status, and why not with advice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    /// The status.
    pub status: Availability,
    /// Why it is not available.
    pub reason: Option<ReasonCode>,
}

impl Verdict {
    /// Available.
    pub const AVAILABLE: Self = Self {
        status: Availability::Available,
        reason: None,
    };

    /// `status` because of `reason`.
    pub const fn because(status: Availability, reason: ReasonCode) -> Self {
        Self {
            status,
            reason: Some(reason),
        }
    }

    /// Unavailable because of `reason`.
    pub const fn unavailable(reason: ReasonCode) -> Self {
        Self::because(Availability::Unavailable, reason)
    }

    /// Whether it is available.
    pub fn is_available(&self) -> bool {
        self.status == Availability::Available
    }
}

/// Where a capability's consent comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConsentKind {
    /// The session's own grant.
    Session,
    /// A takeover, with its indicator.
    Takeover,
    /// A grant of its own.
    Separate,
    /// The host's approval of each call.
    HostApproval,
}

/// One backend of the registry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BackendEntry {
    /// `x11`, `atspi`, `wayland-portal`.
    pub id: String,
    /// Its status.
    pub status: Availability,
    /// Whether `ready` needs it.
    pub required: bool,
    /// Why it is not available.
    pub reason_code: Option<ReasonCode>,
    /// What the person can do, in plain words.
    pub action: Option<String>,
}

impl BackendEntry {
    /// The entry of backend `id` with `verdict`.
    pub fn new(id: &str, required: bool, verdict: Verdict) -> Self {
        Self {
            id: id.into(),
            status: verdict.status,
            required,
            reason_code: verdict.reason,
            action: advice(verdict.reason),
        }
    }
}

/// The capabilities of the driver contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CapabilityName {
    /// Reading the accessibility tree.
    ReadTree,
    /// Acting on elements.
    ActSemantic,
    /// Screenshots of windows and displays.
    CaptureWindow,
    /// Synthetic input during a takeover.
    InputTakeover,
    /// The takeover indicator.
    TakeoverIndicator,
    /// The person's hand-back.
    TakeoverHandback,
    /// Listing notifications.
    ListNotifications,
    /// Dismissing notifications.
    DismissNotification,
    /// Invoking a notification's action.
    InvokeNotificationAction,
    /// Reading the clipboard.
    ClipboardRead,
    /// Writing the clipboard.
    ClipboardWrite,
}

impl CapabilityName {
    /// Whether deskhand is not ready without it: what every takeover
    /// needs (seeing the screen, input, the frame, the hand-back).
    pub fn needed_for_ready(self) -> bool {
        matches!(
            self,
            Self::CaptureWindow
                | Self::InputTakeover
                | Self::TakeoverIndicator
                | Self::TakeoverHandback
        )
    }
}

/// One capability.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CapabilityEntry {
    /// Capability name.
    pub name: CapabilityName,
    /// Its status.
    pub status: Availability,
    /// Why it is not available, or the limit of an available one.
    pub reason_code: Option<ReasonCode>,
    /// What the person can do.
    pub action: Option<String>,
    /// Which consent it needs.
    pub consent: ConsentKind,
}

impl CapabilityEntry {
    /// The entry of capability `name` with `verdict`.
    pub fn new(name: CapabilityName, verdict: Verdict, consent: ConsentKind) -> Self {
        Self {
            name,
            status: verdict.status,
            reason_code: verdict.reason,
            action: advice(verdict.reason),
            consent,
        }
    }
}

/// State of an OS permission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GrantStatus {
    /// Granted.
    Granted,
    /// Missing: see the reason.
    Missing,
    /// This platform does not ask for it.
    NotApplicable,
    /// Cannot be told here.
    Unknown,
}

/// One OS permission.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PermissionEntry {
    /// Permission name.
    pub name: String,
    /// Its state.
    pub status: GrantStatus,
    /// Why it is missing.
    pub reason_code: Option<ReasonCode>,
    /// What the person can do.
    pub action: Option<String>,
}

impl PermissionEntry {
    /// The entry of permission `name`, missing because of `reason`.
    pub fn new(name: &str, status: GrantStatus, reason: Option<ReasonCode>) -> Self {
        Self {
            name: name.into(),
            status,
            reason_code: reason,
            action: advice(reason),
        }
    }
}

/// One thing to fix, per distinct reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NextStep {
    /// The reason.
    pub reason_code: ReasonCode,
    /// The unavailable backend it explains, if any.
    pub backend: Option<String>,
    /// The missing permission it explains, if any.
    pub permission: Option<String>,
    /// The unavailable capabilities it explains.
    #[serde(default)]
    pub capabilities: Vec<CapabilityName>,
    /// Whether `ready` depends on it (a required backend or a capability
    /// every takeover needs).
    pub required: bool,
    /// What to do, in plain words.
    pub action: String,
}

/// What deskhand does on the network.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkBlock {
    /// Always `none`: no code path reaches the network.
    pub code_paths: String,
    /// Always false.
    pub telemetry: bool,
    /// Always false.
    pub update_check: bool,
}

impl Default for NetworkBlock {
    fn default() -> Self {
        Self {
            code_paths: "none".into(),
            telemetry: false,
            update_check: false,
        }
    }
}

/// How a human-readable probe went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProbeStatus {
    /// Fine.
    Ok,
    /// Works, with something to look at.
    Warn,
    /// Does not work.
    Fail,
}

/// One human-readable probe (the 0.6 fields, kept for older readers).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Probe {
    /// What was probed.
    pub label: String,
    /// How it went.
    pub status: ProbeStatus,
    /// What was found.
    pub message: String,
}

impl Probe {
    /// `ok` when `ok`, else `warn`.
    pub fn new(label: &str, ok: bool, message: impl Into<String>) -> Self {
        Self {
            label: label.into(),
            status: if ok {
                ProbeStatus::Ok
            } else {
                ProbeStatus::Warn
            },
            message: message.into(),
        }
    }

    /// A failed probe.
    pub fn failed(label: &str, message: impl Into<String>) -> Self {
        Self {
            label: label.into(),
            status: ProbeStatus::Fail,
            message: message.into(),
        }
    }
}

/// The platform deskhand runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Platform {
    /// Linux.
    Linux,
    /// macOS.
    Macos,
    /// Windows.
    Windows,
}

/// The kind of desktop session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SessionType {
    /// X11.
    X11,
    /// Wayland.
    Wayland,
    /// No desktop session found.
    None,
    /// The mock backend (tests).
    Mock,
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DoctorReport {
    /// [`DOCTOR_SCHEMA_NAME`].
    pub schema: String,
    /// [`DOCTOR_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// deskhand's version.
    pub driver_version: String,
    /// [`CONTRACT_VERSION`].
    pub contract_version: String,
    /// Where it runs.
    pub platform: Platform,
    /// Which session it found.
    pub session_type: SessionType,
    /// Every required backend, and every capability a takeover needs, is
    /// available.
    pub ready: bool,
    /// The backend registry.
    pub backends: Vec<BackendEntry>,
    /// Capabilities.
    pub capabilities: Vec<CapabilityEntry>,
    /// OS permissions.
    pub permissions: Vec<PermissionEntry>,
    /// What to fix.
    pub next_steps: Vec<NextStep>,
    /// Network use.
    pub network: NetworkBlock,
    /// Equals `ready`.
    pub ok: bool,
    /// Human-readable probes.
    pub probes: Vec<Probe>,
}

/// The step of `reason`, added (not required) when there is none yet.
fn step_for<'a>(
    steps: &'a mut Vec<NextStep>,
    reason: ReasonCode,
    action: &str,
) -> &'a mut NextStep {
    let at = match steps.iter().position(|s| s.reason_code == reason) {
        Some(at) => at,
        None => {
            steps.push(NextStep {
                reason_code: reason,
                backend: None,
                permission: None,
                capabilities: Vec::new(),
                required: false,
                action: action.to_owned(),
            });
            steps.len() - 1
        }
    };
    &mut steps[at]
}

/// A reason's advice as the entries carry it.
fn advice(reason: Option<ReasonCode>) -> Option<String> {
    reason.and_then(ReasonCode::action).map(str::to_owned)
}

/// Whether every required backend of `backends` is available: the
/// backend half of a report's `ready`, and of the human doctor's answer for
/// screenshots and windows.
pub fn backends_ready(backends: &[BackendEntry]) -> bool {
    backends
        .iter()
        .filter(|b| b.required)
        .all(|b| b.status == Availability::Available)
}

/// Whether each of `names` that `capabilities` lists is available (one not
/// listed does not count against it, as in a report's `ready`).
pub fn listed_available(capabilities: &[CapabilityEntry], names: &[CapabilityName]) -> bool {
    capabilities
        .iter()
        .filter(|c| names.contains(&c.name))
        .all(|c| c.status == Availability::Available)
}

/// What a host found: the parts of a report it measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Findings {
    /// Where it runs.
    pub platform: Platform,
    /// Which session it found.
    pub session_type: SessionType,
    /// The backends.
    pub backends: Vec<BackendEntry>,
    /// The capabilities.
    pub capabilities: Vec<CapabilityEntry>,
    /// The OS permissions.
    pub permissions: Vec<PermissionEntry>,
    /// The human-readable probes.
    pub probes: Vec<Probe>,
}

impl Findings {
    /// These findings with the clipboard as the person's settings have it:
    /// a clipboard the desktop offers is off while `on` is false (a
    /// clipboard the desktop does not offer stays said as such, since
    /// turning it on would not help).
    #[must_use]
    pub fn with_clipboard_setting(mut self, on: bool) -> Self {
        if !on {
            for c in self.capabilities.iter_mut().filter(|c| {
                matches!(
                    c.name,
                    CapabilityName::ClipboardRead | CapabilityName::ClipboardWrite
                ) && c.status == Availability::Available
            }) {
                *c = CapabilityEntry::new(
                    c.name,
                    Verdict::unavailable(ReasonCode::ClipboardOff),
                    c.consent,
                );
            }
        }
        self
    }
}

impl From<DoctorReport> for Findings {
    fn from(r: DoctorReport) -> Self {
        Self {
            platform: r.platform,
            session_type: r.session_type,
            backends: r.backends,
            capabilities: r.capabilities,
            permissions: r.permissions,
            probes: r.probes,
        }
    }
}

/// The entry's advice worded for `reader`, where it comes from its reason
/// (an advice of the backend's own, without a reason, stays).
fn reword(action: &mut Option<String>, reason: Option<ReasonCode>, reader: Reader) {
    if let Some(reason) = reason {
        *action = reason.advice(reader).map(str::to_owned);
    }
}

impl DoctorReport {
    /// The report of `found` at deskhand version `driver_version`, worded
    /// for the command line ([`Reader::Command`]).
    pub fn assemble(found: Findings, driver_version: &str) -> Self {
        Self::assemble_for(found, driver_version, Reader::Command)
    }

    /// This report as the app's Doctor window shows it: its advice worded
    /// for the person ([`Reader::Window`]), and the clipboard as the
    /// person's settings have it (`clipboard_on`).
    #[must_use]
    pub fn for_window(self, clipboard_on: bool) -> Self {
        self.for_reader(clipboard_on, Reader::Window)
    }

    /// This report worded for `reader`, with the clipboard as the
    /// person's settings have it (`clipboard_on`): MCP's `health_report`
    /// says it with [`Reader::Command`].
    #[must_use]
    pub fn for_reader(self, clipboard_on: bool, reader: Reader) -> Self {
        let version = self.driver_version.clone();
        let found = Findings::from(self).with_clipboard_setting(clipboard_on);
        Self::assemble_for(found, &version, reader)
    }

    /// The report of `found` at deskhand version `driver_version`, its
    /// advice worded for `reader`: ready when every required backend is
    /// available, and one next step per distinct reason of an unavailable
    /// backend or a missing permission (none for the person's own
    /// choices, such as the clipboard off).
    pub fn assemble_for(mut found: Findings, driver_version: &str, reader: Reader) -> Self {
        for b in &mut found.backends {
            reword(&mut b.action, b.reason_code, reader);
        }
        for c in &mut found.capabilities {
            reword(&mut c.action, c.reason_code, reader);
        }
        for p in &mut found.permissions {
            reword(&mut p.action, p.reason_code, reader);
        }
        let mut next_steps: Vec<NextStep> = Vec::new();
        for b in found
            .backends
            .iter()
            .filter(|b| b.status == Availability::Unavailable)
        {
            if let (Some(reason), Some(action)) = (b.reason_code, &b.action) {
                next_steps.push(NextStep {
                    reason_code: reason,
                    backend: Some(b.id.clone()),
                    permission: None,
                    capabilities: Vec::new(),
                    required: b.required,
                    action: action.clone(),
                });
            }
        }
        for c in found
            .capabilities
            .iter()
            .filter(|c| c.status == Availability::Unavailable)
        {
            let (Some(reason), Some(action)) = (c.reason_code, &c.action) else {
                continue;
            };
            if reason.is_choice() {
                continue;
            }
            let step = step_for(&mut next_steps, reason, action);
            step.capabilities.push(c.name);
            step.required |= c.name.needed_for_ready();
        }
        for p in found
            .permissions
            .iter()
            .filter(|p| p.status == GrantStatus::Missing)
        {
            if let (Some(reason), Some(action)) = (p.reason_code, &p.action) {
                step_for(&mut next_steps, reason, action).permission = Some(p.name.clone());
            }
        }
        let needed: Vec<CapabilityName> = found
            .capabilities
            .iter()
            .map(|c| c.name)
            .filter(|n| n.needed_for_ready())
            .collect();
        let ready =
            backends_ready(&found.backends) && listed_available(&found.capabilities, &needed);
        Self {
            schema: DOCTOR_SCHEMA_NAME.into(),
            schema_version: DOCTOR_SCHEMA_VERSION,
            driver_version: driver_version.into(),
            contract_version: CONTRACT_VERSION.into(),
            platform: found.platform,
            session_type: found.session_type,
            ready,
            backends: found.backends,
            capabilities: found.capabilities,
            permissions: found.permissions,
            next_steps,
            network: NetworkBlock::default(),
            ok: ready,
            probes: found.probes,
        }
    }

    /// The status of capability `name`, if reported.
    pub fn capability(&self, name: CapabilityName) -> Option<Availability> {
        self.capabilities
            .iter()
            .find(|c| c.name == name)
            .map(|c| c.status)
    }
}

/// The JSON schema the report validates against, generated from the
/// types above.
pub fn json_schema() -> serde_json::Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(DoctorReport))
        .unwrap_or(serde_json::Value::Null);
    if let Some(obj) = schema.as_object_mut() {
        obj.insert(
            "$id".into(),
            format!("{DOCTOR_SCHEMA_NAME}/{DOCTOR_SCHEMA_VERSION}").into(),
        );
        if let Some(props) = obj.get_mut("properties").and_then(|p| p.as_object_mut()) {
            props.insert(
                "schema".into(),
                serde_json::json!({"const": DOCTOR_SCHEMA_NAME}),
            );
            props.insert(
                "schema_version".into(),
                serde_json::json!({"const": DOCTOR_SCHEMA_VERSION}),
            );
        }
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found() -> Findings {
        Findings {
            platform: Platform::Linux,
            session_type: SessionType::None,
            backends: vec![
                BackendEntry::new(
                    "x11",
                    true,
                    Verdict::unavailable(ReasonCode::DisplayUnreachable),
                ),
                BackendEntry::new(
                    "atspi",
                    false,
                    Verdict::because(Availability::Planned, ReasonCode::NotBuilt),
                ),
            ],
            capabilities: vec![CapabilityEntry::new(
                CapabilityName::ListNotifications,
                Verdict::because(Availability::Unsupported, ReasonCode::NoPlatformApi),
                ConsentKind::Session,
            )],
            permissions: vec![PermissionEntry::new(
                "accessibility",
                GrantStatus::Missing,
                Some(ReasonCode::AtspiBusNotAdvertised),
            )],
            probes: vec![Probe::failed("display server", "no DISPLAY")],
        }
    }

    #[test]
    fn a_required_backend_unavailable_is_not_ready_with_one_step_per_reason() {
        let r = DoctorReport::assemble(found(), "1.2.3");
        assert!(!r.ready && !r.ok);
        let reasons: Vec<_> = r.next_steps.iter().map(|s| s.reason_code).collect();
        assert_eq!(
            reasons,
            [
                ReasonCode::DisplayUnreachable,
                ReasonCode::AtspiBusNotAdvertised
            ]
        );
        assert!(r.next_steps[0].required);
        assert_eq!(
            r.capabilities[0].action, None,
            "no advice where no API exists"
        );
    }

    #[test]
    fn a_capability_a_takeover_needs_makes_the_report_not_ready_with_its_step() {
        let mut f = found();
        f.backends[0] = BackendEntry::new("x11", true, Verdict::AVAILABLE);
        f.permissions.clear();
        let missing = Verdict::unavailable(ReasonCode::IndicatorNotFound);
        f.capabilities.push(CapabilityEntry::new(
            CapabilityName::TakeoverIndicator,
            missing,
            ConsentKind::Takeover,
        ));
        f.capabilities.push(CapabilityEntry::new(
            CapabilityName::InputTakeover,
            missing,
            ConsentKind::Takeover,
        ));
        let r = DoctorReport::assemble(f.clone(), "1");
        assert!(!r.ready, "no frame, no takeover: not ready");
        assert_eq!(r.next_steps.len(), 1, "one step per reason");
        let step = &r.next_steps[0];
        assert!(step.required && step.reason_code == ReasonCode::IndicatorNotFound);
        assert_eq!(
            step.capabilities,
            [
                CapabilityName::TakeoverIndicator,
                CapabilityName::InputTakeover
            ]
        );
        assert!(
            !step.action.contains("cargo"),
            "no advice to build from source"
        );
        f.capabilities.truncate(1);
        assert!(
            DoctorReport::assemble(f, "1").ready,
            "a capability no takeover needs (notifications) does not block ready"
        );
    }

    #[test]
    fn the_schema_is_generated_with_enums_and_names_itself() {
        let v = json_schema();
        assert_eq!(v["properties"]["schema"]["const"], DOCTOR_SCHEMA_NAME);
        assert_eq!(
            v["properties"]["schema_version"]["const"],
            DOCTOR_SCHEMA_VERSION
        );
        let text = v.to_string();
        for name in [
            "xinput2_missing",
            "display_unreachable",
            "atspi_bus_unreachable",
            "host_approval",
            "not_applicable",
        ] {
            assert!(text.contains(name), "{name} missing from the schema");
        }
        let json = serde_json::to_value(DoctorReport::assemble(found(), "1")).expect("json");
        assert_eq!(json["next_steps"][0]["reason_code"], "display_unreachable");
        assert_eq!(json["platform"], "linux");
    }
}
