//! Takeover on the wire: TAKEOVER_REQUEST answered with TAKEOVER_STATE, and
//! TAKEOVER_STATE pushed whenever the session's takeover changes (the
//! person took over, Continue, the kill switch, a lost indicator).

use deskhand_engine::{EngineError, TakeoverState};
use deskhand_protocol::MessageType;
use deskhand_protocol::messages::TakeoverRequest;
use serde_json::Value;

use super::{Handler, Reply, to_value};

/// The wire form of a takeover state.
pub(super) fn state_payload(state: &TakeoverState) -> Value {
    to_value(&state.payload())
}

impl Handler {
    pub(super) async fn takeover_request(&self, payload: Value) -> Reply {
        if payload.get("on").is_none_or(|v| !v.is_boolean()) {
            let e = EngineError::invalid("on", "required: true or false");
            return self.refuse("takeover.request", e);
        }
        let req: TakeoverRequest = match self.payload("takeover.request", payload) {
            Ok(r) => r,
            Err(reply) => return reply,
        };
        match self.state.engine.takeover(&self.session, req.on).await {
            Ok(state) => Reply::Message(MessageType::TakeoverState, state_payload(&state)),
            Err(e) => self.engine_error(&e),
        }
    }
}
