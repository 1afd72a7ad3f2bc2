//! The monitor from the ScreenCast stream (its place from the portal, its
//! size in pixels from the frames), or else the compositor's outputs, and
//! the pointer from the shell extension.

use std::sync::Arc;
use std::time::Duration;

use deskhand_backend::{BackendError, Displays, Monitor, Point, Rect};

use crate::portal::Portals;
use crate::rt::Rt;
use crate::shell::ShellExt;

pub(crate) struct PortalDisplays {
    pub(crate) rt: Arc<Rt>,
    pub(crate) portals: Arc<Portals>,
    pub(crate) shell: ShellExt,
}

/// The monitor of a stream at `position` whose frames are `pixels` and
/// whose logical size is `logical`.
pub(crate) fn monitor(position: (i32, i32), pixels: (u32, u32), logical: (u32, u32)) -> Monitor {
    let scale = if logical.0 > 0 {
        f64::from(pixels.0) / f64::from(logical.0)
    } else {
        1.0
    };
    Monitor {
        index: 0,
        name: "screencast".into(),
        primary: true,
        rect: Rect::new(position.0, position.1, pixels.0, pixels.1),
        scale,
    }
}

/// The monitors where no screencast stream gives them: the compositor's
/// outputs (nothing is asked of the person for them).
fn output_monitors() -> Result<Vec<Monitor>, BackendError> {
    let outputs = crate::outputs::read().map_err(BackendError::Failed)?;
    let monitors: Vec<Monitor> = outputs.iter().zip(0..).map(|(o, i)| o.monitor(i)).collect();
    if monitors.is_empty() {
        return Err(BackendError::Failed("the compositor has no output".into()));
    }
    Ok(monitors)
}

impl Displays for PortalDisplays {
    fn monitors(&mut self) -> Result<Vec<Monitor>, BackendError> {
        // Without a stream (none granted yet, or no ScreenCast at all),
        // the compositor's outputs: listing monitors needs no grant.
        let Some(cast) = self.portals.cast() else {
            return output_monitors();
        };
        let pixels = cast
            .frames
            .latest
            .read(None, Duration::from_secs(3), |f| (f.width, f.height))
            .ok_or_else(|| BackendError::Failed("the screencast sent no frame".into()))?;
        Ok(vec![monitor(
            cast.stream.position,
            pixels,
            cast.stream.size,
        )])
    }

    fn cursor_position(&mut self) -> Result<Point, BackendError> {
        let shell = self.shell.clone();
        let (x, y, _) = self
            .rt
            .run(Duration::from_secs(2), "the pointer", async move {
                shell.pointer().await
            })?;
        Ok(Point::new(x, y))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_monitor_is_the_streams_frames_at_its_place_with_their_scale() {
        let m = monitor((0, 0), (2560, 1600), (1280, 800));
        assert_eq!(m.rect, Rect::new(0, 0, 2560, 1600));
        assert_eq!(m.scale, 2.0);
        assert_eq!(m.logical_size(), [1280, 800]);
        assert_eq!(monitor((10, 0), (1280, 800), (0, 0)).scale, 1.0);
    }
}
