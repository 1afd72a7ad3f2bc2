//! The wire ops as one table: each request type with its audit name, the
//! feature the connection's HELLO must list for it, and its handler. Every
//! op goes through [`Handler::request`], which parses the payload into the
//! handler's type and checks the feature before the handler runs, so a new
//! op is one row and cannot forget either.

use std::future::Future;
use std::pin::Pin;

use deskhand_engine::EngineError;
use deskhand_protocol::{Feature, MessageType};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{Handler, Reply};

type Answer<'a> = Pin<Box<dyn Future<Output = Reply> + Send + 'a>>;

/// One wire op.
pub(super) struct Op {
    /// The request message it answers.
    pub kind: MessageType,
    /// Its name in the audit log.
    pub name: &'static str,
    /// What the backend must offer for it (checked before it runs).
    pub feature: Option<Feature>,
    /// Parses the payload and answers.
    pub run: for<'a> fn(&'a Handler, &'static Op, Value) -> Answer<'a>,
}

/// A table row: the payload is parsed into the type `$handler` takes.
macro_rules! op {
    ($kind:ident, $name:literal, $feature:expr, $handler:ident) => {
        Op {
            kind: MessageType::$kind,
            name: $name,
            feature: $feature,
            run: |h, op, payload| {
                Box::pin(async move {
                    match h.request(op, payload) {
                        Ok(req) => h.$handler(req).await,
                        Err(refused) => refused,
                    }
                })
            },
        }
    };
}

/// Every request of the wire protocol.
pub(super) static OPS: &[Op] = &[
    op!(ScreenshotRequest, "screenshot", None, screenshot),
    op!(InputAction, "input", None, input),
    op!(CursorPositionRequest, "cursor_position", None, cursor),
    op!(DisplayInfoRequest, "display_info", None, display_info),
    op!(
        WindowListRequest,
        "window.list",
        Some(Feature::WindowList),
        window_list
    ),
    op!(
        WindowFocus,
        "window.focus",
        Some(Feature::WindowFocus),
        window_focus
    ),
    op!(AppListRequest, "app.list", Some(Feature::AppList), app_list),
    op!(
        AppLaunch,
        "app.launch",
        Some(Feature::AppLaunch),
        app_launch
    ),
    op!(
        PermissionsCheckRequest,
        "permissions.check",
        Some(Feature::PermissionsCheck),
        permissions_check
    ),
    op!(ClipboardRead, "clipboard.read", None, clipboard_read),
    op!(ClipboardWrite, "clipboard.write", None, clipboard_write),
    op!(TakeoverRequest, "takeover.request", None, takeover_request),
    op!(
        A11yTreeRequest,
        "a11y.tree",
        Some(Feature::A11yTree),
        a11y_tree
    ),
];

/// The op answering `kind`, if it is a request.
pub(super) fn find(kind: MessageType) -> Option<&'static Op> {
    OPS.iter().find(|op| op.kind == kind)
}

impl Handler {
    /// `payload` as `op`'s request type, once this connection's HELLO
    /// listed `op`'s feature; otherwise the error reply (recorded in the
    /// audit log).
    fn request<T: DeserializeOwned + Default>(&self, op: &Op, payload: Value) -> Result<T, Reply> {
        let req = self.payload(op.name, payload)?;
        match op.feature {
            Some(feature) if !self.offered.contains(&feature) => Err(self.refuse(
                op.name,
                EngineError::NotSupported {
                    feature: feature.name(),
                },
            )),
            _ => Ok(req),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_request_has_one_row() {
        for (i, op) in OPS.iter().enumerate() {
            assert!(
                OPS[i + 1..]
                    .iter()
                    .all(|o| o.kind != op.kind && o.name != op.name),
                "{} twice",
                op.name
            );
        }
        assert!(find(MessageType::Hello).is_none());
        assert!(find(MessageType::Ack).is_none());
    }
}
