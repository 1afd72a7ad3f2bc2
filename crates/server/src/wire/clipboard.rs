//! The clipboard on the wire: CLIPBOARD_READ and CLIPBOARD_WRITE, bounded by
//! the client's `HELLO_ACK.max_file_size_bytes`. The sandbox policy itself
//! lives in the engine.

use deskhand_engine::EngineError;
use deskhand_protocol::MessageType;
use deskhand_protocol::messages::{
    AckPayload, ClipboardFormat, ClipboardReadRequest, ClipboardReadResponse, ClipboardWriteRequest,
};
use serde_json::Value;

use super::{Handler, Reply, to_value};

/// Only text moves through the clipboard today.
fn text_only(format: ClipboardFormat) -> Result<(), EngineError> {
    match format {
        ClipboardFormat::Text => Ok(()),
        ClipboardFormat::Image => Err(EngineError::NotSupported {
            feature: "clipboard.image",
        }),
    }
}

impl Handler {
    pub(super) async fn clipboard_read(&self, req: ClipboardReadRequest) -> Reply {
        if let Err(e) = text_only(req.format) {
            return self.refuse("clipboard.read", e);
        }
        let engine = &self.state.engine;
        match engine
            .clipboard_read(&self.session, self.max_file_bytes)
            .await
        {
            Ok(content) => Reply::Message(
                MessageType::ClipboardReadResponse,
                to_value(&ClipboardReadResponse {
                    format: ClipboardFormat::Text,
                    size_bytes: content.len() as u64,
                    content,
                }),
            ),
            Err(e) => self.engine_error(&e),
        }
    }

    pub(super) async fn clipboard_write(&self, payload: Value) -> Reply {
        if payload.is_null() {
            let e = EngineError::required("content");
            return self.refuse("clipboard.write", e);
        }
        let req: ClipboardWriteRequest = match self.payload("clipboard.write", payload) {
            Ok(r) => r,
            Err(reply) => return reply,
        };
        if let Err(e) = text_only(req.format) {
            return self.refuse("clipboard.write", e);
        }
        let engine = &self.state.engine;
        match engine
            .clipboard_write(&self.session, req.content, self.max_file_bytes)
            .await
        {
            Ok(()) => Reply::Message(MessageType::Ack, to_value(&AckPayload { ok: true })),
            Err(e) => self.engine_error(&e),
        }
    }
}
