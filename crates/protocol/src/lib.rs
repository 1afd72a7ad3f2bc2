//! deskhand's wire protocol: plain serde types for the WebSocket wire ops and
//! the one error table every adapter maps its errors through.
//!
//! No OS code lives here. The engine depends on this crate; the server
//! adapters serialize these types.

pub mod doctor;
pub mod envelope;
pub mod errors;
pub mod features;
pub mod geometry;
pub mod mcp;
pub mod messages;
pub mod overlay;
pub mod overlay_layout;
pub mod tree;

pub use envelope::{Envelope, MessageType};
pub use errors::{Adapters, Disposition, ErrorCode, ErrorInfo, ErrorPayload, echo};
pub use features::{CoarseFeature, Feature};

/// Version of the wire protocol spoken on `/v1/ws`, sent in HELLO.
pub const PROTOCOL_VERSION: u32 = 1;
