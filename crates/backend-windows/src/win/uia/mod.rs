//! Accessibility through UI Automation's COM client ([`client`]): the
//! thread that owns it and chooses between it and MSAA is
//! `win/a11y.rs`.
//!
//! Written against the documented API and type-checked; not run yet:
//! Wine 8 has no UI Automation client object, and there MSAA answers.

mod client;

pub(crate) use client::{Cached, Client, Live, hwnd_of};
