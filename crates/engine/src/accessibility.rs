//! The accessibility capability, from `deskhand-backend`.

pub use deskhand_backend::accessibility::*;
