//! The engine's error type and its mapping to the protocol's error table.

use deskhand_protocol::ErrorCode;
use thiserror::Error;

use crate::backend::BackendError;
use crate::geometry::{Monitor, Point};

/// Everything an engine call can fail with.
#[derive(Debug, Error)]
pub enum EngineError {
    /// A field of the request is wrong; nothing was done.
    #[error("{message}")]
    InvalidArguments {
        /// The field at fault.
        field: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// A coordinate lies outside every display; nothing was done.
    #[error("coordinate ({}, {}) is outside the union of connected display bounds", point.x, point.y)]
    OutOfBounds {
        /// The offending coordinate.
        point: Point,
        /// The displays, for the caller to correct itself.
        displays: Vec<Monitor>,
    },
    /// The session lacks a grant (input without consent); nothing was done.
    #[error("capability {capability} is not granted to this session")]
    NotGranted {
        /// Which capability.
        capability: &'static str,
        /// Where the grant must come from.
        needed: &'static str,
    },
    /// The person's answer gave this session less than it asked (Allow
    /// with the takeover box left unticked); nothing was done.
    #[error("the person allowed this session {granted}, not {missing}; {again}")]
    ConsentShort {
        /// What they allowed, in words.
        granted: String,
        /// What they did not.
        missing: String,
        /// How to ask them again.
        again: &'static str,
    },
    /// The backend cannot do this here; nothing was done.
    #[error("feature {feature} is not supported here")]
    NotSupported {
        /// The feature name.
        feature: &'static str,
    },
    /// The window handle no longer names a live window; nothing was done.
    #[error("window_id {window_id} no longer maps to a live window")]
    WindowStale {
        /// The handle.
        window_id: String,
    },
    /// The window's content cannot be captured; nothing was done.
    #[error("window {window_id} is not visible ({reason})")]
    WindowNotVisible {
        /// The handle.
        window_id: String,
        /// `minimized`, `offscreen` or `covered`.
        reason: &'static str,
    },
    /// The clipboard holds something this session may not read; nothing
    /// was returned.
    #[error("{}", reason.message())]
    ClipboardConcealed {
        /// Why.
        reason: crate::clipboard::ConcealReason,
        /// Seconds since deskhand last wrote the clipboard, if it did.
        writeback_age_seconds: Option<f64>,
    },
    /// More data than the client accepts; nothing was done.
    #[error("{what} is larger than max_file_size_bytes ({max_bytes})")]
    TooLarge {
        /// What was too large.
        what: &'static str,
        /// Its size, when known.
        bytes: Option<u64>,
        /// The limit.
        max_bytes: u64,
    },
    /// The person took control: the act stopped part-way (`stopped`) or
    /// was refused before anything was sent (`refused`).
    #[error("{}", took_over_words(effect, *reason, *typed_characters))]
    UserTookOver {
        /// `stopped` or `refused`.
        effect: &'static str,
        /// What the person did.
        reason: crate::handback::PausedReason,
        /// For typing: how many characters were sent before it stopped.
        typed_characters: Option<usize>,
    },
    /// The launch would run a command or a program that is not an
    /// installed app; nothing was started.
    #[error(
        "deskhand launches installed apps, not commands: {program} was refused because {why}; \
         the person can allow this executable by naming it in \"launch_allow\" in the consent file"
    )]
    LaunchRefused {
        /// The program asked for.
        program: String,
        /// Why it was refused.
        why: &'static str,
    },
    /// The act would touch a window of an app the session was not
    /// granted; nothing was sent.
    #[error("{what}")]
    OutOfScope {
        /// What would have been touched.
        what: &'static str,
    },
    /// The person's refusal policy refuses the app the act would touch;
    /// nothing was sent.
    #[error("the person's policy refuses {class} as a target: {what}")]
    Refused {
        /// The refused class of app (`terminals`, `system_settings`, ...).
        class: &'static str,
        /// Which window made it refused.
        what: &'static str,
    },
    /// The call was not approved (by the person, or by the approval mode
    /// when there is no one to ask); nothing was sent.
    #[error("not approved: {why}")]
    ApprovalDenied {
        /// Why.
        why: &'static str,
    },
    /// An element token from a snapshot that is stale now (the window's
    /// structure changed, or the session resumed since); nothing was done.
    #[error("element token {token} is stale: the window changed since it was read")]
    StaleElementToken {
        /// The token.
        token: String,
    },
    /// The element is a password or secure field: deskhand never writes
    /// or reads one; nothing was done.
    #[error("the element is a secure field (a password entry): it is never written or read")]
    SecureField,
    /// Another session holds the desktop (one takeover at a time): which
    /// client, and until when.
    #[error("{0}")]
    Busy(Box<crate::holder::Holder>),
    /// Another program moved or resized the takeover frame; deskhand put
    /// it back and sent nothing: the act may be sent again.
    #[error(
        "the takeover frame was {what} by another program; deskhand put it back and sent nothing: send the act again"
    )]
    FrameDisturbed {
        /// `moved` or `resized`.
        what: &'static str,
    },
    /// The backend failed; something may have happened.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// The frame could not be encoded.
    #[error(transparent)]
    Encode(#[from] crate::encode::EncodeError),
    /// The engine is shutting down.
    #[error("deskhand is shutting down")]
    ShuttingDown,
    /// A screenshot pixel that no display is under; nothing was done.
    #[error("({}, {}) is not on a display of the {}x{} screenshot: {why}", point[0], point[1], shot_size[0], shot_size[1])]
    CoordinateOutOfBounds {
        /// The point, in screenshot pixels.
        point: [i64; 2],
        /// The screenshot's size.
        shot_size: [u32; 2],
        /// Negative, past an edge, or in a gap.
        why: &'static str,
    },
    /// The displays changed since the screenshot the coordinates refer to;
    /// its plan is void and nothing was done.
    #[error("the display layout changed since the last screenshot; take a new one")]
    LayoutChanged,
    /// A coordinate action came before any screenshot of its session;
    /// nothing was done.
    #[error(
        "no screenshot yet in session {session}: coordinates are pixels of the last screenshot \
         this session was sent, so take one first in it"
    )]
    NoShot {
        /// The session that has none.
        session: String,
    },
    /// The display layout cannot be shown as one screenshot (overlapping
    /// displays, duplicate ids, invalid scales); nothing was done.
    #[error("the display layout cannot be shown in one screenshot: {why}")]
    LayoutUnusable {
        /// What is wrong with it.
        why: String,
    },
}

/// What the agent is told when the person took control: what happened to
/// its act (typed characters counted) and what it waits for.
fn took_over_words(
    effect: &str,
    reason: crate::handback::PausedReason,
    typed: Option<usize>,
) -> String {
    use crate::handback::PausedReason;
    let act = match (effect, typed) {
        (_, Some(n)) => format!("the typing stopped after {n} characters"),
        ("stopped", None) => "the act stopped part-way".to_owned(),
        _ => "nothing of the act was sent".to_owned(),
    };
    let next = match reason {
        PausedReason::KillSwitch => {
            "the person stopped every agent: the takeover ended, and a new one asks the person again"
        }
        _ => {
            "the desktop is theirs until they click Continue on the red frame; then take a screenshot and act again"
        }
    };
    format!(
        "the person took control ({}): {act}; {next}",
        reason.as_str()
    )
}

impl EngineError {
    /// Shorthand for [`EngineError::InvalidArguments`].
    pub fn invalid(field: &'static str, message: impl Into<String>) -> Self {
        Self::InvalidArguments {
            field,
            message: message.into(),
        }
    }

    /// A field that must be given and was not.
    pub fn required(field: &'static str) -> Self {
        Self::invalid(field, format!("{field} is required"))
    }

    /// The canonical code of this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::InvalidArguments { .. } => ErrorCode::InvalidArguments,
            Self::OutOfBounds { .. } => ErrorCode::InputOutOfBounds,
            Self::NotGranted { .. } | Self::LaunchRefused { .. } | Self::ConsentShort { .. } => {
                ErrorCode::CapabilityNotGranted
            }
            Self::NotSupported { .. } => ErrorCode::FeatureNotSupported,
            Self::WindowStale { .. } => ErrorCode::WindowStale,
            Self::WindowNotVisible { .. } => ErrorCode::WindowNotVisible,
            Self::ClipboardConcealed { .. } => ErrorCode::ClipboardConcealed,
            Self::TooLarge { .. } => ErrorCode::FileTooLarge,
            Self::UserTookOver { .. } => ErrorCode::UserTookOver,
            Self::OutOfScope { .. } => ErrorCode::CapabilityNotConsented,
            Self::Refused { .. } => ErrorCode::PermissionDenied,
            Self::ApprovalDenied { .. } => ErrorCode::ApprovalDenied,
            Self::Busy(_) | Self::FrameDisturbed { .. } => ErrorCode::Busy,
            Self::SecureField => ErrorCode::SecureField,
            Self::StaleElementToken { .. } | Self::Backend(BackendError::Stale(_)) => {
                ErrorCode::StaleElementToken
            }
            Self::Backend(BackendError::DisplayUnavailable(_)) => ErrorCode::DisplayUnavailable,
            Self::Backend(BackendError::Unsupported(_)) => ErrorCode::FeatureNotSupported,
            Self::Backend(BackendError::Pending(_)) => ErrorCode::PermissionPending,
            Self::Backend(BackendError::InvalidTarget(_)) => ErrorCode::InvalidArguments,
            Self::Backend(BackendError::Untypable { .. }) => ErrorCode::InvalidArguments,
            Self::Backend(BackendError::Failed(_)) | Self::Encode(_) => ErrorCode::BackendFailure,
            Self::ShuttingDown => ErrorCode::DisplayUnavailable,
            Self::CoordinateOutOfBounds { .. } => ErrorCode::DesktopCoordinateOutOfBounds,
            Self::LayoutChanged => ErrorCode::DesktopLayoutChanged,
            Self::NoShot { .. } => ErrorCode::InvalidArguments,
            Self::LayoutUnusable { .. } => ErrorCode::FeatureNotSupported,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handback::PausedReason;

    #[test]
    fn the_agent_is_told_what_became_of_its_act_and_what_it_waits_for() {
        let typed = EngineError::UserTookOver {
            effect: "stopped",
            reason: PausedReason::KeyPressed,
            typed_characters: Some(12),
        };
        assert_eq!(
            typed.to_string(),
            "the person took control (key_pressed): the typing stopped after 12 characters; \
             the desktop is theirs until they click Continue on the red frame; then take a \
             screenshot and act again"
        );
        let stopped = EngineError::UserTookOver {
            effect: "refused",
            reason: PausedReason::KillSwitch,
            typed_characters: None,
        };
        let said = stopped.to_string();
        assert!(said.contains("nothing of the act was sent"), "{said}");
        assert!(!said.contains("Continue"), "no Continue after Stop: {said}");
    }
}
