//! Key names and chords, from `deskhand-backend`.

pub use deskhand_backend::keys::*;
