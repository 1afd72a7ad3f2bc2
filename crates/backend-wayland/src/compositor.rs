//! What the compositor offers deskhand as a plain Wayland client, read
//! from its registry: the wlr layer shell (KDE Plasma, sway and the
//! wlroots desktops), on which the overlay draws the red frame where
//! GNOME's extension is missing, and ext-idle-notify (KDE Plasma 5.27 on,
//! sway 1.8 on), which says when any input last came.

use wayland_client::globals::{GlobalListContents, registry_queue_init};
use wayland_client::protocol::{wl_output, wl_registry};
use wayland_client::{Connection, Dispatch, QueueHandle};

use wayland_protocols::xdg::xdg_output::zv1::client::zxdg_output_manager_v1::ZxdgOutputManagerV1;

use crate::outputs::Output;

/// The layer shell's global.
pub(crate) const LAYER_SHELL: &str = "zwlr_layer_shell_v1";
/// ext-idle-notify's global.
pub(crate) const IDLE_NOTIFIER: &str = "ext_idle_notifier_v1";

/// What deskhand can use of the compositor's globals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Offers {
    /// A frame can be drawn on the layer shell.
    pub(crate) layer_shell: bool,
    /// Input can be watched through ext-idle-notify.
    pub(crate) idle_notifier: bool,
}

/// The offers among the globals' interface names.
pub(crate) fn offers_from<'a>(interfaces: impl IntoIterator<Item = &'a str>) -> Offers {
    let mut o = Offers::default();
    for name in interfaces {
        o.layer_shell |= name == LAYER_SHELL;
        o.idle_notifier |= name == IDLE_NOTIFIER;
    }
    o
}

/// A registry read's state: the outputs, where they are bound.
#[derive(Default)]
pub(crate) struct Listing(pub(crate) Vec<Output>);

impl Dispatch<wl_registry::WlRegistry, GlobalListContents> for Listing {
    fn event(
        _: &mut Self,
        _: &wl_registry::WlRegistry,
        _: wl_registry::Event,
        _: &GlobalListContents,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
    }
}

/// What this session's compositor offers (`WAYLAND_DISPLAY`), and its
/// outputs where `outputs`.
pub(crate) fn read(outputs: bool) -> Result<(Offers, Vec<Output>), String> {
    let conn = Connection::connect_to_env().map_err(|e| format!("the compositor: {e}"))?;
    let (globals, mut queue) =
        registry_queue_init::<Listing>(&conn).map_err(|e| format!("its globals: {e}"))?;
    let list = globals.contents().clone_list();
    let offers = offers_from(list.iter().map(|g| g.interface.as_str()));
    let mut state = Listing::default();
    if outputs {
        let qh = queue.handle();
        // Each output's logical place and size, where xdg-output says them
        // (a fractional scale's are not the mode over wl_output's scale).
        let xdg: Option<ZxdgOutputManagerV1> = globals.bind(&qh, 1..=3, ()).ok();
        for g in list.iter().filter(|g| g.interface == "wl_output") {
            let index = state.0.len();
            state.0.push(Output::default());
            let output: wl_output::WlOutput =
                globals
                    .registry()
                    .bind(g.name, g.version.min(4), &qh, index);
            if let Some(xdg) = &xdg {
                xdg.get_xdg_output(&output, &qh, index);
            }
        }
        queue
            .roundtrip(&mut state)
            .map_err(|e| format!("its outputs: {e}"))?;
    }
    Ok((offers, state.0))
}

/// What this session's compositor offers (`WAYLAND_DISPLAY`).
pub(crate) fn probe() -> Result<Offers, String> {
    read(false).map(|(offers, _)| offers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kde_offers_both_and_mutter_neither() {
        let kwin = [
            "wl_compositor",
            "zwlr_layer_shell_v1",
            "ext_idle_notifier_v1",
        ];
        assert_eq!(
            offers_from(kwin),
            Offers {
                layer_shell: true,
                idle_notifier: true
            }
        );
        let sway_1_7 = ["wl_compositor", "zwlr_layer_shell_v1", "org_kde_kwin_idle"];
        assert!(offers_from(sway_1_7).layer_shell && !offers_from(sway_1_7).idle_notifier);
        assert_eq!(
            offers_from(["wl_compositor", "gtk_shell1"]),
            Offers::default()
        );
    }
}
