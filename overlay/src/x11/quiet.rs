//! Keeps the overlay from waking on every input event of the desktop.
//!
//! When its event loop starts, winit 0.30 selects raw input events
//! (`XI_RawMotion`, raw key and button presses and releases) on the root
//! window for every master device, whatever `DeviceEvents` says; it
//! re-reads that setting only when one of its windows gains or loses focus,
//! which the indicator's windows never do. Every pointer motion and key
//! anywhere on the desktop, the person's and deskhand's own, then woke this
//! process. The overlay needs only
//! its own windows' events (the Continue click), so the selection is
//! cleared on winit's own connection.

use anyhow::Context;
use raw_window_handle::{HasDisplayHandle, RawDisplayHandle};
use winit::event_loop::{DeviceEvents, EventLoop};
use x11rb::connection::Connection;
use x11rb::protocol::xinput::{ConnectionExt as _, EventMask};
use x11rb::xcb_ffi::XCBConnection;

/// The device id XInput 2 uses for "every master device".
const ALL_MASTER_DEVICES: u16 = 1;

/// Turns winit's device events off for good.
pub fn stop_device_events<T>(event_loop: &EventLoop<T>) -> anyhow::Result<()> {
    // Should a window of ours ever gain focus, winit reselects per this.
    event_loop.listen_device_events(DeviceEvents::Never);
    let RawDisplayHandle::Xlib(handle) = event_loop.display_handle()?.as_raw() else {
        anyhow::bail!("winit is not on Xlib");
    };
    let display = handle.display.context("winit has no X display")?;
    let xlib_xcb = x11_dl::xlib_xcb::Xlib_xcb::open().context("libX11-xcb")?;
    // SAFETY: `display` is winit's open Xlib display, which lives as long
    // as the event loop, and so longer than this function.
    let xcb = unsafe { (xlib_xcb.XGetXCBConnection)(display.as_ptr().cast()) };
    anyhow::ensure!(!xcb.is_null(), "no XCB connection under winit's display");
    // SAFETY: the XCB connection is winit's and outlives `conn`, which is
    // dropped at the end of this function without closing it
    // (`should_drop` false). XCB connections may be shared.
    let conn = unsafe { XCBConnection::from_raw_xcb_connection(xcb, false)? };
    let root = conn
        .setup()
        .roots
        .get(handle.screen.try_into().unwrap_or(0))
        .context("no such screen")?
        .root;
    // An empty mask removes this client's selection for those devices.
    let none = EventMask {
        deviceid: ALL_MASTER_DEVICES,
        mask: vec![0u32.into()],
    };
    conn.xinput_xi_select_events(root, &[none])?.check()?;
    Ok(())
}
