//! The capability traits the engine drives and the types they exchange,
//! from `deskhand-backend` (one definition for the engine and every
//! backend).

pub use deskhand_backend::capabilities::*;
pub use deskhand_backend::policy::*;
pub use deskhand_backend::status_place::*;
