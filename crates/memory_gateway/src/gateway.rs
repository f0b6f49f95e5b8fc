//! The MCP server: `tools/list` is `memory_tools(agent, 'mcp')`, `tools/call` is
//! `memory_tool_call`, and the prompt `memory` is `memory_prompt`. Nothing is kept between
//! requests; the tenant is fixed for a stdio process and comes from the bearer token for HTTP
//! (src/http.rs puts it in the request's extensions).

use crate::config::Tenant;
use crate::db::{Db, DbError};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, DiscoverResult,
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation,
    InitializeRequestParams, InitializeResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, Prompt, PromptMessage,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, Role, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, SubscriptionFilter, Tool, UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::Value;
use std::sync::{Arc, Mutex};

pub const PROMPT: &str = "memory";
/// The agent's compiled core blocks as a resource: a host re-reads it after the model edits a
/// block (the server's instructions are fixed when the client connects).
pub const BLOCKS_URI: &str = "memory://core-blocks";
/// A thread's context: `memory://threads/<thread_id>` (the template below).
const THREAD_PREFIX: &str = "memory://threads/";
const THREAD_TEMPLATE: &str = "memory://threads/{thread_id}";

/// The thread a `memory://threads/<thread_id>` URI names.
pub fn thread_of(uri: &str) -> Option<&str> {
    uri.strip_prefix(THREAD_PREFIX).filter(|t| !t.is_empty())
}

#[derive(Clone)]
pub struct Gateway {
    db: Arc<Db>,
    /// The stdio process's tenant; None over HTTP, where each request brings its own.
    tenant: Option<Tenant>,
    /// This client's `resources/subscribe` subscriptions (uri, id in src/watch.rs): one
    /// Gateway per client session, stdio or HTTP.
    subscribed: Arc<Mutex<Vec<(String, u64)>>>,
}

impl Gateway {
    pub fn new(db: Arc<Db>, tenant: Option<Tenant>) -> Self {
        Gateway {
            db,
            tenant,
            subscribed: Arc::new(Mutex::new(vec![])),
        }
    }

    fn subscribable(uri: &str) -> Result<(), McpError> {
        if uri == BLOCKS_URI || thread_of(uri).is_some() {
            Ok(())
        } else {
            Err(McpError::resource_not_found(
                format!("no resource {uri}; the resources are {BLOCKS_URI} and {THREAD_TEMPLATE}"),
                None,
            ))
        }
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
                .enable_resources()
                .enable_resources_subscribe()
                .build(),
        )
        .with_server_info(Implementation::new("memory-mcp", env!("CARGO_PKG_VERSION")))
    }

    // Subscriptions (src/watch.rs): `memory://core-blocks`, by `resources/subscribe` before
    // protocol 2026-07-28 and by `subscriptions/listen` from it on.
    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        Self::subscribable(&request.uri)?;
        if self.tenant.is_none() {
            // Over HTTP each request is served on its own (src/http.rs): after the answer to
            // resources/subscribe there is no stream left to notify on.
            return Err(McpError::invalid_request(
                "resources/subscribe needs a session, which this HTTP server does not keep: \
                 subscribe with subscriptions/listen (protocol 2026-07-28), or use the stdio server",
                None,
            ));
        }
        let tenant = self.tenant(&ctx)?;
        let id = crate::watch::global(&self.db)
            .add(
                &tenant,
                &request.uri,
                crate::watch::Target::Legacy(ctx.peer.clone()),
            )
            .await
            .map_err(|e| McpError::internal_error(e, None))?;
        self.subscribed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((request.uri.clone(), id));
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let watch = crate::watch::global(&self.db);
        self.subscribed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|(uri, id)| {
                if *uri == request.uri {
                    watch.remove(*id);
                    false
                } else {
                    true
                }
            });
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        accepted.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
            uris.iter()
                .filter(|u| Self::subscribable(u).is_ok())
                .cloned()
                .collect()
        });
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let tenant = self.tenant(context.request_context())?;
        let watch = crate::watch::global(&self.db);
        let mut ids = vec![];
        for uri in context
            .accepted()
            .resource_subscriptions
            .clone()
            .unwrap_or_default()
        {
            let target = crate::watch::Target::Listen(context.sink().clone());
            match watch.add(&tenant, &uri, target).await {
                Ok(id) => ids.push(id),
                Err(e) => {
                    ids.iter().for_each(|id| watch.remove(*id));
                    return Err(McpError::internal_error(e, None));
                }
            }
        }
        context.cancelled().await;
        ids.iter().for_each(|id| watch.remove(*id));
        Ok(())
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
        // A tool that is not listed (not one of the tenant's configured set, or of the default
        // set when none is configured) is unknown: the protocol error the MCP specification
        // gives for unknown tools (-32602), not a tool result.
        let offered: Vec<&str> = match &tenant.tools {
            Some(t) => t.iter().map(String::as_str).collect(),
            None => memory_core::tools::DEFAULT_TOOLS.to_vec(),
        };
        if !offered.contains(&request.name.as_ref()) {
            crate::metrics::global().inc("memory_mcp_errors_total", &[("kind", "unknown_tool")]);
            return Err(McpError::invalid_params(
                format!(
                    "Unknown tool: {}; the tools are: {}",
                    request.name,
                    offered.join(", ")
                ),
                None,
            ));
        }
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let m = crate::metrics::global();
        let result = match self.db.call(&tenant, &request.name, &args).await {
            Ok((text, false)) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Ok((text, true)) => {
                m.inc("memory_mcp_errors_total", &[("kind", "tool_error")]);
                CallToolResult::error(vec![ContentBlock::text(text)])
            }
            // Refused by the database before the tool ran (a NUL character in the arguments,
            // the call's time limit, an unknown agent): told in the model's terms, as the
            // extension tells a tool's own errors (memory_core::tools::error_text).
            Err(DbError::Sql { code, message }) => {
                m.inc("memory_mcp_errors_total", &[("kind", "sql_error")]);
                CallToolResult::error(vec![ContentBlock::text(memory_core::tools::error_text(
                    &code, &message,
                ))])
            }
            Err(e) => {
                m.inc("memory_mcp_errors_total", &[("kind", "unavailable")]);
                return Err(unavailable(e));
            }
        };
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(vec![Resource::new(
            BLOCKS_URI,
            "core-blocks",
        )
        .with_title("Core memory blocks")
        .with_description(
            "This agent's core memory blocks as its system prompt shows them (compile_core_blocks); read it again after the model edits a block",
        )
        .with_mime_type("text/plain")]))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(THREAD_TEMPLATE, "thread")
                .with_title("A conversation's context")
                .with_description(
                    "A thread's messages as its prompt holds them (context_messages): the summary of what compaction folded, then the rest, one `[seq] role: content` line each; subscribe to hear of new messages",
                )
                .with_mime_type("text/plain"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let tenant = self.tenant(&ctx)?;
        let text = if request.uri == BLOCKS_URI {
            self.db.blocks(&tenant).await.map_err(refused)?
        } else if let Some(thread) = thread_of(&request.uri) {
            self.db.thread(&tenant, thread).await.map_err(|e| match e {
                // No such thread for this tenant: the resource is not there.
                DbError::Sql { code, message } if code == "P0002" => {
                    McpError::resource_not_found(message, None)
                }
                e => refused(e),
            })?
        } else {
            return Err(McpError::resource_not_found(
                format!(
                    "no resource {}; the resources are {BLOCKS_URI} and {THREAD_TEMPLATE}",
                    request.uri
                ),
                None,
            ));
        };
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, request.uri)]).into())
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

/// The server a stdio process runs when it cannot serve (no database, a role that bypasses
/// row-level security, an unknown agent): it answers the client's `initialize` with the reason,
/// so a host shows why the server failed instead of "Connection closed", then exits.
pub struct Refusal(pub String);

impl ServerHandler for Refusal {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().build())
            .with_server_info(Implementation::new("memory-mcp", env!("CARGO_PKG_VERSION")))
    }

    async fn initialize(
        &self,
        _request: InitializeRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        Err(self.reason())
    }

    // Clients of protocol 2026-07-28 meet a server by `server/discover`, not `initialize`, and
    // may go straight to listing: each answers with the reason too.
    async fn discover(&self, _ctx: RequestContext<RoleServer>) -> Result<DiscoverResult, McpError> {
        Err(self.reason())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Err(self.reason())
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        Err(self.reason())
    }
}

impl Refusal {
    fn reason(&self) -> McpError {
        McpError::internal_error(format!("memory-mcp cannot start: {}", self.0), None)
    }
}
