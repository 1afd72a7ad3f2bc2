//! MCP on stdio where `deskhand mcp` has no deskhand to relay to and was not
//! asked for an engine of its own: the tools are listed as usual, and every
//! call answers `display_unavailable` saying why and how to start deskhand.
//! Nothing is opened: no desktop is started that nobody would see.

use std::borrow::Cow;

use deskhand_protocol::ErrorCode;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::envelope::Fail;
use super::{INSTRUCTIONS, server_config, tool_list, tool_named};

/// The server that answers every call with `why`.
struct Absent {
    why: String,
}

impl ServerHandler for Absent {
    fn get_info(&self) -> ServerConfig {
        server_config(format!("{INSTRUCTIONS}\n\nNot connected: {}", self.why))
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        super::protocol_versions()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(tool_list())
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tool_named(name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        tracing::info!(tool = %request.name, "no deskhand to relay to: the call is refused");
        let fail = Fail::new(ErrorCode::DisplayUnavailable, self.why.clone());
        Ok(CallToolResponse::Complete(fail.into_result()))
    }
}

/// Serves MCP on stdin and stdout, every call answered with `why`, until
/// the client closes them.
pub async fn serve_stdio_absent(why: String) -> Result<(), std::io::Error> {
    use rmcp::ServiceExt;
    let running = Absent { why }
        .serve(rmcp::transport::io::stdio_pipes())
        .await
        .map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}
