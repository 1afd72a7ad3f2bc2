//! What every deskhand host shares (`deskhand serve`, `deskhand mcp`, the
//! tray app): the display and the engine on it, the secrets and private
//! files, the settings file, and the served port with its connection
//! file. Hosts only add how they are started and stopped, and their UI.

pub mod audit_file;
pub mod daemon;
pub mod desktop;
pub mod display_claim;
pub mod doctor;
pub mod endpoint;
mod error;
pub mod files;
pub mod kill_switch_state;
pub mod port_token;
pub mod secrets;
pub mod settings;
pub mod settings_form;
pub mod shutdown;
pub mod vault;

pub use error::HostError;

/// The log filter of every host unless `DESKHAND_LOG` names another:
/// `info`, less zbus's warning at every portal request that a request
/// object has no properties yet (ashpd watches it before the portal makes
/// it: noise, not a fault).
pub const DEFAULT_LOG_FILTER: &str = "info,zbus::proxy=error";
