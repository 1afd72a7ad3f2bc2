//! Which local process made an X resource, as the server knows it
//! (X-Resource 1.2 `QueryClientIds`): unlike `_NET_WM_PID`, no client can
//! set it.

use x11rb::connection::Connection;
use x11rb::protocol::res::{self, ClientIdMask, ClientIdSpec, ConnectionExt as _};

/// Whether the server offers X-Resource 1.2.
pub(crate) fn pids_offered(conn: &impl Connection) -> bool {
    let present = conn
        .extension_information(res::X11_EXTENSION_NAME)
        .ok()
        .flatten()
        .is_some();
    present
        && conn
            .res_query_version(1, 2)
            .ok()
            .and_then(|c| c.reply().ok())
            .is_some_and(|v| (v.server_major, v.server_minor) >= (1, 2))
}

/// The pid of the local client that made `resource` (a window id); none
/// for a remote client, a resource gone, or a server without X-Resource.
pub(crate) fn pid_of(conn: &impl Connection, resource: u32) -> Option<u32> {
    let spec = ClientIdSpec {
        client: resource,
        mask: ClientIdMask::LOCAL_CLIENT_PID,
    };
    let reply = conn.res_query_client_ids(&[spec]).ok()?.reply().ok()?;
    reply
        .ids
        .iter()
        .find(|id| id.spec.mask == ClientIdMask::LOCAL_CLIENT_PID)
        .and_then(|id| id.value.first().copied())
}
