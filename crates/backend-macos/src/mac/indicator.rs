//! The red frame through the `deskhand-overlay` process, as on Windows and
//! X11 ([`OverlayIndicator`]), with what macOS adds: the overlay places
//! its windows in points, so it is started with the displays' pixel and
//! point rectangles ([`crate::overlay::displays_env`]) and started again
//! when they change; and the frame check reads the overlay's windows from
//! `CGWindowListCopyWindowInfo`. Another process's windows cannot be put
//! back from here: a frame another program moved, faded or lowered stops
//! the act.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use deskhand_backend::overlay_process::{FrameInspector, OverlayIndicator};
use deskhand_backend::{BackendError, FrameCheck, Indicator, IndicatorEvent, IndicatorShown, Rect};

use super::SharedLayout;
use super::window_list::one;
use crate::overlay::{DISPLAYS_ENV, Verdict, displays_env, verdict, wanted_bounds};

type Sink = Arc<dyn Fn(IndicatorEvent) + Send + Sync>;

/// The frame check on macOS (see the module's notes).
struct MacFrameInspector {
    layout: SharedLayout,
}

impl FrameInspector for MacFrameInspector {
    fn inspect(
        &mut self,
        windows: &[u64],
        monitors: &[Rect],
        _covered: &[Rect],
    ) -> Result<Option<FrameCheck>, BackendError> {
        let layout = self.layout.current()?;
        let wanted = wanted_bounds(&layout, monitors).ok_or_else(|| {
            BackendError::Stale("the displays changed since the frame was shown".into())
        })?;
        let seen: Vec<_> = windows
            .iter()
            .map(|&id| u32::try_from(id).ok().and_then(one))
            .collect();
        match verdict(&seen, &wanted) {
            Verdict::Intact => Ok(Some(FrameCheck::Intact)),
            Verdict::Gone => Ok(None),
            Verdict::Changed(what) => Err(BackendError::Failed(format!(
                "the takeover frame was {what} by another program; it cannot be put back from here"
            ))),
        }
    }
}

/// The overlay process for the displays as they are.
pub(crate) struct MacIndicator {
    program: PathBuf,
    layout: SharedLayout,
    sink: Option<Sink>,
    /// The running overlay and the displays it was started with.
    current: Option<(String, OverlayIndicator)>,
}

impl MacIndicator {
    pub(crate) fn new(program: &Path, layout: SharedLayout) -> Self {
        Self {
            program: program.to_owned(),
            layout,
            sink: None,
            current: None,
        }
    }

    /// The overlay for `displays`, started anew when they changed (the
    /// old one quits; its exit is no lost frame).
    fn overlay_for(&mut self, displays: String) -> &mut OverlayIndicator {
        if self.current.as_ref().is_some_and(|(d, _)| *d != displays)
            && let Some((_, mut old)) = self.current.take()
        {
            old.set_events(Arc::new(|_| {}));
            tracing::info!("the displays changed: the overlay starts again");
        }
        let (_, overlay) = self.current.get_or_insert_with(|| {
            let mut overlay = OverlayIndicator::new(
                &self.program,
                vec![(DISPLAYS_ENV.to_owned(), displays.clone())],
                Box::new(MacFrameInspector {
                    layout: self.layout.clone(),
                }),
            );
            if let Some(sink) = &self.sink {
                overlay.set_events(sink.clone());
            }
            (displays, overlay)
        });
        overlay
    }

    fn shown(&mut self) -> Result<&mut OverlayIndicator, BackendError> {
        self.current
            .as_mut()
            .map(|(_, o)| o)
            .ok_or_else(|| BackendError::Failed("the takeover frame is not shown".into()))
    }
}

impl Indicator for MacIndicator {
    fn set_events(&mut self, sink: Sink) {
        if let Some((_, overlay)) = self.current.as_mut() {
            overlay.set_events(sink.clone());
        }
        self.sink = Some(sink);
    }

    fn show(&mut self, monitors: &[Rect], paused: bool) -> Result<IndicatorShown, BackendError> {
        let displays = displays_env(&self.layout.refresh()?);
        self.overlay_for(displays).show(monitors, paused)
    }

    fn set_paused(&mut self, paused: bool) -> Result<IndicatorShown, BackendError> {
        self.shown()?.set_paused(paused)
    }

    fn verify(&mut self) -> Result<FrameCheck, BackendError> {
        self.shown()?.verify()
    }

    fn hide(&mut self) -> Result<(), BackendError> {
        match self.current.as_mut() {
            Some((_, overlay)) => overlay.hide(),
            None => Ok(()),
        }
    }
}
