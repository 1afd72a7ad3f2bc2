//! The error envelope of the driver contract §2: every failed tool call is
//! a result with `isError: true`, `structuredContent` `{ok: false, error}`
//! and the text `<code>: <message> [retry: <disposition>] <suggestion>`.
//! Engine errors are mapped here, to the MCP rows of the one error table.

use deskhand_engine::{BackendError, EngineError};
use deskhand_protocol::ErrorCode;
use deskhand_protocol::mcp::{ErrorEnvelope, ErrorObject};
use rmcp::model::{CallToolResult, ContentBlock};

/// A successful result whose `structuredContent` is `value`.
pub fn structured<T: serde::Serialize>(value: &T) -> CallToolResult {
    CallToolResult::structured(serde_json::to_value(value).unwrap_or_default())
}

/// A tool call that failed, with its error object.
#[derive(Debug)]
pub struct Fail(pub Box<ErrorObject>);

impl Fail {
    /// A failure of `code` saying `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self(Box::new(ErrorObject::new(code, message)))
    }

    /// `invalid_arguments` about `message`.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidArguments, message)
    }

    /// The MCP result of this failure.
    pub fn into_result(self) -> CallToolResult {
        let text = self.0.text();
        let envelope = ErrorEnvelope {
            ok: false,
            error: *self.0,
        };
        let mut result =
            CallToolResult::structured_error(serde_json::to_value(envelope).unwrap_or_default());
        result.content = vec![ContentBlock::text(text)];
        result
    }
}

/// The MCP code of an engine error: the wire-only codes become their
/// driver-contract counterparts.
fn code_of(e: &EngineError) -> ErrorCode {
    match e {
        EngineError::NotGranted { needed, .. } if *needed == "takeover" => {
            ErrorCode::RequiresTakeover
        }
        EngineError::NotGranted { .. }
        | EngineError::LaunchRefused { .. }
        | EngineError::ConsentShort { .. } => ErrorCode::CapabilityNotConsented,
        EngineError::NotSupported { feature } if feature.starts_with("clipboard") => {
            ErrorCode::CapabilityNotConsented
        }
        EngineError::NotSupported { .. } | EngineError::Backend(BackendError::Unsupported(_)) => {
            ErrorCode::Unsupported
        }
        // The contract has no pending code: busy is "nothing done, retry".
        EngineError::Backend(BackendError::Pending(_)) => ErrorCode::Busy,
        other => other.code(),
    }
}

impl From<EngineError> for Fail {
    fn from(e: EngineError) -> Self {
        let code = code_of(&e);
        let message = match &e {
            EngineError::NotGranted { needed, .. } if *needed == "takeover" => {
                "this act needs a takeover session (start_session with input \"takeover\")"
                    .to_owned()
            }
            EngineError::NotSupported { feature } if feature.starts_with("clipboard") => {
                "the person has not enabled the clipboard for agents".to_owned()
            }
            other => other.to_string(),
        };
        let mut object = ErrorObject::new(code, message);
        if let EngineError::UserTookOver {
            effect,
            reason,
            typed_characters,
        } = &e
        {
            object.effect = Some((*effect).to_owned());
            object.paused_reason = Some(reason.as_str().to_owned());
            object.typed_characters = *typed_characters;
        }
        Self(Box::new(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_errors_become_contract_codes() {
        let takeover = Fail::from(EngineError::NotGranted {
            capability: "input",
            needed: "takeover",
        });
        assert_eq!(takeover.0.code, "requires_takeover");
        let consent = Fail::from(EngineError::NotGranted {
            capability: "input",
            needed: "consent",
        });
        assert_eq!(consent.0.code, "capability_not_consented");
        let result = Fail::invalid("x is missing").into_result();
        assert_eq!(result.is_error, Some(true));
        let s = result.structured_content.expect("structured");
        assert_eq!(s["ok"], false);
        assert_eq!(s["error"]["disposition"]["retry"], "never");
    }
}
