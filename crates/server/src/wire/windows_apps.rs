//! Windows, apps and permissions on the wire: WINDOW_LIST_REQUEST,
//! WINDOW_FOCUS, APP_LIST_REQUEST, APP_LAUNCH and PERMISSIONS_CHECK_REQUEST.

use deskhand_engine::{EngineError, LaunchTarget, WindowFilter};
use deskhand_protocol::MessageType;
use deskhand_protocol::messages::{
    AckPayload, AppInfo, AppLaunchRequest, AppListRequest, AppListResponse, LaunchAck,
    PermissionsCheckRequest, PermissionsCheckResponse, WindowFocusRequest, WindowInfo,
    WindowListRequest, WindowListResponse,
};

use super::{Handler, Reply, to_value};

impl Handler {
    /// The error reply of a request refused before the engine saw it.
    pub(super) fn refuse(&self, op: &str, e: EngineError) -> Reply {
        self.state.engine.record_refused(&self.session, op, &e);
        self.engine_error(&e)
    }

    pub(super) async fn window_list(&self, req: WindowListRequest) -> Reply {
        let engine = &self.state.engine;
        let filter = WindowFilter {
            app: req.app_bundle_id,
            include_minimized: req.include_minimized.unwrap_or(false),
            include_offscreen: req.include_offscreen.unwrap_or(false),
        };
        match engine.list_windows(&self.session, filter).await {
            Ok(list) => {
                let windows = list
                    .into_iter()
                    .map(|l| WindowInfo {
                        window_id: l.handle,
                        pid: l.window.pid,
                        app_name: l.window.class,
                        app_bundle_id: Some(l.window.instance).filter(|i| !i.is_empty()),
                        title: l.window.title,
                        bounds: l.window.rect.corners(),
                        monitor: l.monitor,
                        is_focused: l.window.focused,
                        is_minimized: l.window.minimized,
                        is_fullscreen: l.window.fullscreen,
                    })
                    .collect();
                let resp = WindowListResponse {
                    windows,
                    truncated: false,
                };
                Reply::Message(MessageType::WindowListResponse, to_value(&resp))
            }
            Err(e) => self.engine_error(&e),
        }
    }

    pub(super) async fn window_focus(&self, req: WindowFocusRequest) -> Reply {
        let Some(handle) = req.window_id else {
            return self.refuse("window.focus", EngineError::required("window_id"));
        };
        match self
            .state
            .engine
            .focus_window(&self.session, handle, req.raise.unwrap_or(true))
            .await
        {
            Ok(()) => Reply::Message(MessageType::Ack, to_value(&AckPayload { ok: true })),
            Err(e) => self.engine_error(&e),
        }
    }

    pub(super) async fn app_list(&self, req: AppListRequest) -> Reply {
        let include_background = req.include_background.unwrap_or(false);
        match self
            .state
            .engine
            .list_apps(&self.session, include_background)
            .await
        {
            Ok(apps) => {
                let apps = apps
                    .into_iter()
                    .map(|a| AppInfo {
                        pid: a.pid,
                        name: a.name,
                        bundle_id: a.app_id,
                        executable_path: a.exe,
                        is_frontmost: a.frontmost,
                        window_count: a.window_count,
                    })
                    .collect();
                Reply::Message(
                    MessageType::AppListResponse,
                    to_value(&AppListResponse { apps }),
                )
            }
            Err(e) => self.engine_error(&e),
        }
    }

    pub(super) async fn app_launch(&self, req: AppLaunchRequest) -> Reply {
        let target = match (req.executable_path, req.bundle_id) {
            (Some(path), None) => LaunchTarget::Executable(path),
            (None, Some(id)) => LaunchTarget::AppId(id),
            (Some(_), Some(_)) => {
                let e = EngineError::invalid(
                    "bundle_id",
                    "give bundle_id or executable_path, not both",
                );
                return self.refuse("app.launch", e);
            }
            (None, None) => {
                let e = EngineError::invalid(
                    "executable_path",
                    "bundle_id or executable_path is required",
                );
                return self.refuse("app.launch", e);
            }
        };
        let args = req.args.unwrap_or_default();
        let activate = req.activate.unwrap_or(true);
        match self
            .state
            .engine
            .launch_app(&self.session, target, args, activate)
            .await
        {
            Ok(pid) => Reply::Message(MessageType::Ack, to_value(&LaunchAck { ok: true, pid })),
            Err(e) => self.engine_error(&e),
        }
    }

    pub(super) async fn permissions_check(&self, req: PermissionsCheckRequest) -> Reply {
        let names = req.permissions.unwrap_or_default();
        if let Some(bad) = names.iter().find(|n| n.is_empty() || n.len() > 64) {
            let e = EngineError::invalid("permissions", format!("bad permission name {bad:?}"));
            return self.refuse("permissions.check", e);
        }
        match self
            .state
            .engine
            .check_permissions(&self.session, names)
            .await
        {
            Ok(permissions) => Reply::Message(
                MessageType::PermissionsCheckResponse,
                to_value(&PermissionsCheckResponse { permissions }),
            ),
            Err(e) => self.engine_error(&e),
        }
    }
}
