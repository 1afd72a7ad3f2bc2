//! Which local process made an X resource, as the server knows it
//! (X-Resource 1.2 `QueryClientIds`): unlike `_NET_WM_PID`, no client can
//! set it.

use x11rb::connection::Connection;
use x11rb::cookie::Cookie;
use x11rb::errors::ConnectionError;
use x11rb::protocol::res::{
    self, ClientIdMask, ClientIdSpec, ConnectionExt as _, QueryClientIdsReply,
};

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

/// Asks for the pid of the local client that made `resource` (a window
/// id); [`pid_in`] reads the answer.
pub(crate) fn ask_pid<C: Connection>(
    conn: &C,
    resource: u32,
) -> Result<Cookie<'_, C, QueryClientIdsReply>, ConnectionError> {
    let spec = ClientIdSpec {
        client: resource,
        mask: ClientIdMask::LOCAL_CLIENT_PID,
    };
    conn.res_query_client_ids(&[spec])
}

/// The pid an answer of [`ask_pid`] holds; none for a remote client or a
/// resource gone.
pub(crate) fn pid_in(reply: &QueryClientIdsReply) -> Option<u32> {
    reply
        .ids
        .iter()
        .find(|id| id.spec.mask == ClientIdMask::LOCAL_CLIENT_PID)
        .and_then(|id| id.value.first().copied())
}

/// The pid of the local client that made `resource`; none for a remote
/// client, a resource gone, or a server without X-Resource.
pub(crate) fn pid_of(conn: &impl Connection, resource: u32) -> Option<u32> {
    pid_in(&ask_pid(conn, resource).ok()?.reply().ok()?)
}
