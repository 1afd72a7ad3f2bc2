//! The backend's own async runtime: the portals and GNOME Shell are
//! spoken to over D-Bus with zbus, while the engine calls the capability
//! traits from its own threads and waits for each answer, bounded.

use std::future::Future;
use std::time::Duration;

use deskhand_backend::BackendError;

/// One worker thread for every D-Bus call and signal of the backend.
pub(crate) struct Rt {
    /// Always `Some` until dropped.
    rt: Option<tokio::runtime::Runtime>,
}

impl Rt {
    pub(crate) fn new() -> Result<Self, BackendError> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("deskhand-wayland")
            .enable_all()
            .build()
            .map_err(|e| BackendError::Failed(format!("the Wayland backend's runtime: {e}")))?;
        Ok(Self { rt: Some(rt) })
    }

    /// Runs `fut` on the runtime and waits for it, at most `total`.
    pub(crate) fn run<R, F>(&self, total: Duration, what: &str, fut: F) -> Result<R, BackendError>
    where
        R: Send + 'static,
        F: Future<Output = Result<R, BackendError>> + Send + 'static,
    {
        let (tx, rx) = std::sync::mpsc::channel();
        let Some(rt) = self.rt.as_ref() else {
            return Err(BackendError::Failed(format!(
                "{what}: the backend is shut down"
            )));
        };
        rt.spawn(async move {
            let result = tokio::time::timeout(total, fut).await;
            let _ = tx.send(result);
        });
        let late = || BackendError::Failed(format!("{what}: no answer in {total:?}"));
        match rx.recv_timeout(total + Duration::from_secs(1)) {
            Ok(Ok(result)) => result,
            Ok(Err(_)) | Err(_) => Err(late()),
        }
    }

    /// Starts `fut` on the runtime, not waiting for it.
    pub(crate) fn spawn<F>(&self, fut: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        if let Some(rt) = self.rt.as_ref() {
            rt.spawn(fut);
        }
    }
}

impl Drop for Rt {
    fn drop(&mut self) {
        // Without blocking: a drop may happen inside another runtime.
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}
