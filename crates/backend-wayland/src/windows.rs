//! Windows and focus on GNOME, from deskhand's GNOME Shell extension
//! (Wayland gives clients no window list): stacking order, desktop bounds,
//! pids from the compositor.

use std::sync::Arc;
use std::time::Duration;

use deskhand_backend::{BackendError, NativeWindow, Windows};

use crate::rt::Rt;
use crate::shell::ShellExt;

const CALL: Duration = Duration::from_secs(3);

pub(crate) struct ShellWindows {
    pub(crate) rt: Arc<Rt>,
    pub(crate) shell: ShellExt,
}

impl Windows for ShellWindows {
    fn list(&mut self) -> Result<Vec<NativeWindow>, BackendError> {
        let shell = self.shell.clone();
        let rows = self.rt.run(
            CALL,
            "the window list",
            async move { shell.windows().await },
        )?;
        Ok(rows.iter().filter_map(|w| w.native()).collect())
    }

    fn focus(&mut self, id: u64, raise: bool) -> Result<(), BackendError> {
        let shell = self.shell.clone();
        let focused = self
            .rt
            .run(CALL, "focus", async move { shell.focus(id, raise).await })?;
        if focused {
            Ok(())
        } else {
            Err(BackendError::Failed(format!(
                "GNOME Shell did not give window {id} the focus (it is gone, or the shell refused)"
            )))
        }
    }
}
