//! What can stop a host from starting or serving.

use deskhand_engine::{BackendError, EngineError};

/// Why a host could not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// A file or directory deskhand keeps could not be used.
    #[error("{what}: {source}")]
    Io {
        /// What was being done, with the path.
        what: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Something deskhand refuses to use or do, and why.
    #[error("{0}")]
    Refused(String),
    /// The settings file is not valid.
    #[error("{path} is not valid: {reason}")]
    Settings {
        /// The file.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The desktop could not be attached to, started or driven.
    #[error(transparent)]
    Platform(#[from] deskhand_platform::PlatformError),
    /// The kill switch is not valid or could not be grabbed.
    #[error(transparent)]
    KillSwitch(#[from] deskhand_platform::kill_switch::ChordError),
    /// A backend failed.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// The consent file is not valid.
    #[error(transparent)]
    Consent(#[from] deskhand_engine::consent::ConsentError),
    /// The engine refused.
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// Maps an I/O error to [`HostError::Io`] saying what was being done.
pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> HostError {
    let what = what.into();
    move |source| HostError::Io { what, source }
}

/// A refusal, formatted.
macro_rules! refuse {
    ($($arg:tt)*) => {
        return Err($crate::HostError::Refused(format!($($arg)*)))
    };
}
pub(crate) use refuse;
