//! The backend's own errors, and how they cross the trait boundary as the
//! engine's [`BackendError`].

use std::time::Duration;

use deskhand_backend::BackendError;
use deskhand_backend::accessibility::BusProblem;
use thiserror::Error;

/// What went wrong talking to AT-SPI.
#[derive(Debug, Error)]
pub(crate) enum AtspiError {
    /// The accessibility bus cannot be used.
    #[error("{}: {detail}", problem.reason_code())]
    Bus {
        /// Why, as the doctor's reason.
        problem: BusProblem,
        /// What failed.
        detail: String,
    },
    /// An app (or the bus) did not answer in time.
    #[error("{what} did not answer within {} ms", after.as_millis())]
    Timeout {
        /// The call.
        what: &'static str,
        /// The bound it exceeded.
        after: Duration,
    },
    /// A D-Bus call failed.
    #[error("{what} failed: {source}")]
    Call {
        /// The call.
        what: &'static str,
        /// The D-Bus error (boxed: it is large).
        #[source]
        source: Box<zbus::Error>,
    },
    /// The window, app or element asked for is not there.
    #[error("{0}")]
    NotFound(String),
    /// The element cannot do what was asked (no such action, not editable).
    #[error("{0}")]
    Unable(String),
}

impl AtspiError {
    /// A failed call of `what`.
    pub(crate) fn call(what: &'static str) -> impl FnOnce(zbus::Error) -> AtspiError {
        move |source| AtspiError::Call {
            what,
            source: Box::new(source),
        }
    }

    /// Whether the connection may be gone, so it is opened again for the
    /// next call: a bus problem, a broken socket, or no answer in time (a
    /// dead peer can look like a silent one; opening again costs a few
    /// round trips).
    pub(crate) fn connection_suspect(&self) -> bool {
        match self {
            AtspiError::Bus { .. } | AtspiError::Timeout { .. } => true,
            AtspiError::Call { source, .. } => matches!(**source, zbus::Error::InputOutput(_)),
            _ => false,
        }
    }
}

impl From<AtspiError> for BackendError {
    /// Bus problems are `Unsupported` (the capability is not there), a
    /// missing or changed element `Stale`, an element unable to do it
    /// `InvalidTarget`, the rest `Failed`.
    fn from(e: AtspiError) -> Self {
        match e {
            AtspiError::Bus { .. } => BackendError::Unsupported(e.to_string()),
            AtspiError::NotFound(_) => BackendError::Stale(e.to_string()),
            AtspiError::Unable(_) => BackendError::InvalidTarget(e.to_string()),
            AtspiError::Timeout { .. } | AtspiError::Call { .. } => {
                BackendError::Failed(e.to_string())
            }
        }
    }
}
