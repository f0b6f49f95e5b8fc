//! The MCP server: `tools/list` is `memory_tools(agent, 'mcp')`, `tools/call` is
//! `memory_tool_call`, and the prompt `memory` is `memory_prompt`. Nothing is kept between
//! requests; the tenant is fixed for a stdio process and comes from the bearer token for HTTP
//! (src/http.rs puts it in the request's extensions).

use crate::config::Tenant;
use crate::db::{Db, DbError};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, DiscoverResult,
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation,
    InitializeRequestParams, InitializeResult, ListPromptsResult, ListToolsResult,
    PaginatedRequestParams, Prompt, PromptMessage, Role, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::Value;
use std::sync::Arc;

pub const PROMPT: &str = "memory";

#[derive(Clone)]
pub struct Gateway {
    db: Arc<Db>,
    /// The stdio process's tenant; None over HTTP, where each request brings its own.
    tenant: Option<Tenant>,
}

impl Gateway {
    pub fn new(db: Arc<Db>, tenant: Option<Tenant>) -> Self {
        Gateway { db, tenant }
    }

    /// The agent's memory section (its core blocks and memory instructions, src/db.rs), sent as
    /// the server's `instructions` when a client connects (hosts put them in the model's system
    /// prompt) and served as the prompt `memory`.
    async fn instructions(&self, ctx: &RequestContext<RoleServer>) -> Result<String, McpError> {
        self.db.prompt(&self.tenant(ctx)?).await.map_err(refused)
    }

    fn tenant(&self, ctx: &RequestContext<RoleServer>) -> Result<Tenant, McpError> {
        if let Some(t) = &self.tenant {
            return Ok(t.clone());
        }
        ctx.extensions
            .get::<http::request::Parts>()
            .and_then(|p| p.extensions.get::<Tenant>())
            .cloned()
            // src/http.rs refuses a request without a known token before it gets here.
            .ok_or_else(|| McpError::invalid_request("no tenant for this request", None))
    }
}

/// A failure to reach the database is the server's; a SQL error is shown to the model.
fn unavailable(e: DbError) -> McpError {
    McpError::internal_error(e.to_string(), None)
}

/// Listing tools or reading the instructions: a SQL error (an unknown agent, say) refuses the
/// request with the database's message; an unreachable database is the server's failure.
fn refused(e: DbError) -> McpError {
    match e {
        DbError::Sql { message, .. } => McpError::invalid_request(message, None),
        e => unavailable(e),
    }
}

impl ServerHandler for Gateway {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .build(),
        )
        .with_server_info(Implementation::new("memory-mcp", env!("CARGO_PKG_VERSION")))
    }

    // The two ways a client meets the server (the initialize handshake, and `server/discover`
    // from protocol 2026-07-28 on) both carry the tenant's instructions.
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        ctx.peer.set_peer_info(request.clone());
        let mut result = self.negotiate_initialize(&request)?;
        result.instructions = Some(self.instructions(&ctx).await?);
        Ok(result)
    }

    async fn discover(&self, ctx: RequestContext<RoleServer>) -> Result<DiscoverResult, McpError> {
        let info = self
            .get_info()
            .with_instructions(self.instructions(&ctx).await?);
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            info,
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let tenant = self.tenant(&ctx)?;
        let defs = self.db.tools(&tenant).await.map_err(refused)?;
        let tools = defs
            .into_iter()
            .map(serde_json::from_value::<Tool>)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| McpError::internal_error(format!("memory_tools: {e}"), None))?;
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let tenant = self.tenant(&ctx)?;
        // A tool left out of the tenant's configured set is not callable through it either.
        if let Some(tools) = &tenant.tools {
            if !tools.iter().any(|t| *t == request.name) {
                return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                    "Error: tool \"{}\" is not offered here; the tools are: {}",
                    request.name,
                    tools.join(", ")
                ))])
                .into());
            }
        }
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let result = match self.db.call(&tenant, &request.name, &args).await {
            Ok((text, false)) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Ok((text, true)) => CallToolResult::error(vec![ContentBlock::text(text)]),
            // An unknown agent or a thread of another user: the configuration's mistake, shown
            // where the host will display it.
            Err(e @ DbError::Sql { .. }) => {
                CallToolResult::error(vec![ContentBlock::text(format!("Error: {e}"))])
            }
            Err(e) => return Err(unavailable(e)),
        };
        Ok(result.into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new(
            PROMPT,
            Some("This agent's core memory and how to use its memory tools (compile_core_blocks, memory_prompt)"),
            None,
        )]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if request.name != PROMPT {
            return Err(McpError::invalid_params(
                format!(
                    "unknown prompt \"{}\"; the prompt is \"{PROMPT}\"",
                    request.name
                ),
                None,
            ));
        }
        let text = self.instructions(&ctx).await?;
        Ok(
            GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
                .with_description("memory_ext memory instructions")
                .into(),
        )
    }
}
