//! The person's port token while deskhand serves: shown and replaced from
//! the tray app's Settings window. A replaced token is stored where the
//! old one was (keychain or file), written to the connection file, and
//! every agent still using the old one is cut off.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use deskhand_engine::Engine;
use deskhand_server::{PersonToken, Token};

use crate::secrets::{self, KeptIn, Secret};
use crate::{HostError, files};

/// The token of a running [`Daemon`](crate::daemon::Daemon).
#[derive(Clone)]
pub struct PortToken {
    pub(crate) token: PersonToken,
    pub(crate) kept_in: KeptIn,
    pub(crate) connection_file: PathBuf,
    pub(crate) addr: SocketAddr,
    pub(crate) desktop: String,
    pub(crate) engine: Arc<Engine>,
}

impl std::fmt::Debug for PortToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PortToken")
            .field("kept_in", &self.kept_in)
            .field("connection_file", &self.connection_file)
            .finish_non_exhaustive()
    }
}

impl PortToken {
    /// The token now (for the person to copy).
    pub fn current(&self) -> String {
        self.token.current().expose().to_owned()
    }

    /// Where it is kept.
    pub fn kept_in(&self) -> &KeptIn {
        &self.kept_in
    }

    /// Replaces the token: a new one is stored, served and written to the
    /// connection file; connections opened with the old one close and
    /// every takeover ends, as "Stop all agents" does. When the new one
    /// cannot be stored, nothing changes; when the connection file cannot
    /// be written, the old one goes on being served (the new one is kept
    /// for the next start, which writes the file anew).
    pub async fn rotate(&self) -> Result<(), HostError> {
        let kept_in = self.kept_in.clone();
        let secret = tokio::task::spawn_blocking(move || secrets::replace(Secret::Token, &kept_in))
            .await
            .map_err(|e| HostError::Refused(format!("the token could not be replaced: {e}")))??;
        let token = Token::new(secret);
        let line = crate::daemon::ready_line(self.addr, &token, &self.kept_in, &self.desktop);
        files::write_private_atomic(&self.connection_file, format!("{line}\n").as_bytes())?;
        self.token.replace(token);
        self.engine.kill_switch().await;
        Ok(())
    }
}
