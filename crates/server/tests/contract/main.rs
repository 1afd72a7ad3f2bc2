//! Contract tests of the server: every wire op through a real WebSocket
//! connection to the real server, against the mock desktop. One test
//! binary with a module per concern (one link instead of one per file).

mod actions;
mod approvals;
mod clipboard;
mod common;
mod consent_ask;
mod http;
mod mcp;
mod mcp_client;
mod mcp_computer;
mod mcp_elements;
mod port;
mod sessions;
mod takeover;
mod vendors;
mod windows_apps;
mod wire_a11y;
mod wire_ops;
