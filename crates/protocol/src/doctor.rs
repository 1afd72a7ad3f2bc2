//! The doctor report (`deskhand doctor --json`): schema v2 of the driver
//! contract §6.4, and its JSON schema.

use serde::{Deserialize, Serialize};

/// `schema` of the report.
pub const DOCTOR_SCHEMA_NAME: &str = "deskhand/doctor";
/// `schema_version` of the report.
pub const DOCTOR_SCHEMA_VERSION: u32 = 2;
/// The contract version deskhand implements.
pub const CONTRACT_VERSION: &str = "0.8.0";

/// Status of a backend or capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)]
pub enum Availability {
    Available,
    Unavailable,
    Unsupported,
    Planned,
}

/// One backend of the registry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BackendEntry {
    /// `x11`, `atspi`, `wayland-portal`.
    pub id: String,
    /// Its status.
    pub status: Availability,
    /// Whether `ready` needs it.
    pub required: bool,
    /// Why it is not available.
    pub reason_code: Option<String>,
    /// What the person can do, in plain words.
    pub action: Option<String>,
}

/// One capability.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapabilityEntry {
    /// Capability name (`capture_window`, `input_takeover`, …).
    pub name: String,
    /// Its status.
    pub status: Availability,
    /// Why it is not available.
    pub reason_code: Option<String>,
    /// What the person can do.
    pub action: Option<String>,
    /// Which consent it needs: `session`, `takeover`, `separate`, `host_approval`.
    pub consent: String,
}

/// One OS permission.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionEntry {
    /// Permission name.
    pub name: String,
    /// `granted`, `missing`, `not_applicable`, `unknown`.
    pub status: String,
    /// Why it is missing.
    pub reason_code: Option<String>,
    /// What the person can do.
    pub action: Option<String>,
}

/// One thing to fix, per distinct reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NextStep {
    /// The reason.
    pub reason_code: String,
    /// The unavailable backend it explains, if any.
    pub backend: Option<String>,
    /// The missing permission it explains, if any.
    pub permission: Option<String>,
    /// Whether a required backend depends on it.
    pub required: bool,
    /// What to do, in plain words.
    pub action: String,
}

/// What deskhand does on the network.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetworkBlock {
    /// Always `none`: no code path reaches the network.
    pub code_paths: String,
    /// Always false.
    pub telemetry: bool,
    /// Always false.
    pub update_check: bool,
}

/// One human-readable probe (the 0.6 fields, kept for older readers).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// What was probed.
    pub label: String,
    /// `ok`, `warn` or `fail`.
    pub status: String,
    /// What was found.
    pub message: String,
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DoctorReport {
    /// [`DOCTOR_SCHEMA_NAME`].
    pub schema: String,
    /// [`DOCTOR_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// deskhand's version.
    pub driver_version: String,
    /// [`CONTRACT_VERSION`].
    pub contract_version: String,
    /// `linux`, `macos`, `windows`.
    pub platform: String,
    /// `x11`, `wayland`, `none`.
    pub session_type: String,
    /// Every required backend is available.
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

/// The JSON schema the report validates against.
pub const DOCTOR_JSON_SCHEMA: &str = r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "deskhand/doctor/2",
  "type": "object",
  "additionalProperties": false,
  "required": ["schema", "schema_version", "driver_version", "contract_version", "platform",
               "session_type", "ready", "backends", "capabilities", "permissions", "next_steps",
               "network", "ok", "probes"],
  "properties": {
    "schema": {"const": "deskhand/doctor"},
    "schema_version": {"const": 2},
    "driver_version": {"type": "string", "minLength": 1},
    "contract_version": {"type": "string", "pattern": "^[0-9]+\\.[0-9]+\\.[0-9]+$"},
    "platform": {"enum": ["linux", "macos", "windows"]},
    "session_type": {"enum": ["x11", "wayland", "none", "mock", "aqua", "desktop"]},
    "ready": {"type": "boolean"},
    "ok": {"type": "boolean"},
    "backends": {"type": "array", "items": {
      "type": "object", "additionalProperties": false,
      "required": ["id", "status", "required", "reason_code", "action"],
      "properties": {
        "id": {"type": "string"},
        "status": {"$ref": "#/$defs/status"},
        "required": {"type": "boolean"},
        "reason_code": {"$ref": "#/$defs/reason"},
        "action": {"type": ["string", "null"]}}}},
    "capabilities": {"type": "array", "items": {
      "type": "object", "additionalProperties": false,
      "required": ["name", "status", "reason_code", "action", "consent"],
      "properties": {
        "name": {"enum": ["read_tree", "act_semantic", "capture_window", "input_takeover",
                          "takeover_indicator", "takeover_handback", "list_notifications",
                          "dismiss_notification", "invoke_notification_action",
                          "clipboard_read", "clipboard_write"]},
        "status": {"$ref": "#/$defs/status"},
        "reason_code": {"$ref": "#/$defs/reason"},
        "action": {"type": ["string", "null"]},
        "consent": {"enum": ["session", "takeover", "separate", "host_approval"]}}}},
    "permissions": {"type": "array", "items": {
      "type": "object", "additionalProperties": false,
      "required": ["name", "status", "reason_code", "action"],
      "properties": {
        "name": {"type": "string"},
        "status": {"enum": ["granted", "missing", "not_applicable", "unknown"]},
        "reason_code": {"$ref": "#/$defs/reason"},
        "action": {"type": ["string", "null"]}}}},
    "next_steps": {"type": "array", "items": {
      "type": "object", "additionalProperties": false,
      "required": ["reason_code", "backend", "permission", "required", "action"],
      "properties": {
        "reason_code": {"$ref": "#/$defs/reason_code"},
        "backend": {"type": ["string", "null"]},
        "permission": {"type": ["string", "null"]},
        "required": {"type": "boolean"},
        "action": {"type": "string", "minLength": 1}}}},
    "network": {
      "type": "object", "additionalProperties": false,
      "required": ["code_paths", "telemetry", "update_check"],
      "properties": {
        "code_paths": {"const": "none"},
        "telemetry": {"const": false},
        "update_check": {"const": false}}},
    "probes": {"type": "array", "items": {
      "type": "object", "additionalProperties": false,
      "required": ["label", "status", "message"],
      "properties": {
        "label": {"type": "string"},
        "status": {"enum": ["ok", "warn", "fail"]},
        "message": {"type": "string"}}}}
  },
  "$defs": {
    "status": {"enum": ["available", "unavailable", "unsupported", "planned"]},
    "reason_code": {"enum": ["display_unreachable", "display_not_local", "x11_extension_missing",
      "atspi_bus_unreachable", "atspi_bus_not_advertised", "xres_missing", "composite_missing",
      "xtest_missing", "xinput2_missing", "no_platform_api", "not_built",
      "wayland_session_unsupported", "wayland_portal_not_built", "portal_unavailable",
      "portal_screencast_denied", "portal_remote_desktop_denied",
      "portal_global_shortcuts_denied", "compositor_unsupported"]},
    "reason": {"oneOf": [{"type": "null"}, {"$ref": "#/$defs/reason_code"}]}
  }
}"##;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_is_json_and_names_itself() {
        let v: serde_json::Value = serde_json::from_str(DOCTOR_JSON_SCHEMA).expect("schema JSON");
        assert_eq!(v["properties"]["schema"]["const"], DOCTOR_SCHEMA_NAME);
        assert_eq!(
            v["properties"]["schema_version"]["const"],
            DOCTOR_SCHEMA_VERSION
        );
    }
}
