//! The [`ServerHandler`]: each MCP request of a session, answered from the shared
//! [`State`](super::State).

use std::collections::BTreeSet;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams,
    CompleteResult, GetPromptRequestParams, GetPromptResponse, GetSkillRequestParams,
    GetSkillResult, GetTaskParams, GetTaskResult, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceDirectoryRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    SubscriptionFilter, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::Value;
use tokio::sync::broadcast;
use toolbind::{CallOptions, CancelToken};

use crate::serve::logging::log;
use crate::serve::{ids, logging, progressive, spills, surface};

use super::Server;
use super::call::can_be_asked;
use super::resources::{SPILL_URI_PREFIX, read_spill, spill_not_found};
use super::round::input_responses;
use super::watch::{Changed, notify_changes};

impl ServerHandler for Server {
    #[allow(deprecated)] // the logging capability: rmcp marks it deprecated (SEP-2577)
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_completions()
            .enable_logging()
            .enable_prompts()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_tasks();
        let mut capabilities = if self.state.offer.skills() {
            capabilities.enable_skills_with_directory_read().build()
        } else {
            capabilities.build()
        };
        if self.state.subscriptions
            && let Some(resources) = capabilities.resources.as_mut()
        {
            resources.subscribe = Some(true);
        }
        let mut server_info = Implementation::new("toolbind", env!("CARGO_PKG_VERSION"));
        server_info.title = Some("toolbind: TOOL.md tools".into());
        ServerConfig::new(capabilities)
            .with_server_info(server_info)
            .with_instructions(self.state.current().docs.instructions().to_owned())
    }

    #[allow(deprecated)] // MCP logging: see `logging`
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.logger.set_level(request.level);
        Ok(())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if !self.state.subscriptions {
            return Err(McpError::method_not_found::<
                rmcp::model::SubscribeRequestMethod,
            >());
        }
        self.subscriptions.add(request.uri)
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if !self.state.subscriptions {
            return Err(McpError::method_not_found::<
                rmcp::model::UnsubscribeRequestMethod,
            >());
        }
        self.subscriptions.remove(&request.uri);
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        Ok(CompleteResult::new(
            self.state.current().docs.complete(&request),
        ))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let current = self.state.current();
        let mut resources = current.docs.resources();
        resources.extend(current.skills.resources());
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(
            surface::Docs::templates(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if let Some(name) = request.uri.strip_prefix(SPILL_URI_PREFIX) {
            // Only a file this server wrote and handed to this session: any other name is
            // not found, whether or not a file has it.
            let owner = spills::owner(&context);
            if !self.state.spills.may_read(name, owner.as_deref()) {
                return Err(spill_not_found(
                    &request.uri,
                    toolbind::spill::ReadError::NotFound,
                ));
            }
            return read_spill(&self.state.spill_dir, name, &request.uri).await;
        }
        let current = self.state.current();
        if let Some(read) = current.skills.read(&request.uri) {
            return Ok(read.into());
        }
        current
            .docs
            .read(&request.uri)
            .map(ReadResourceResponse::from)
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, McpError> {
        Ok(self.state.current().skills.list())
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let children = self.state.current().skills.read_dir(&request.uri)?;
        Ok(ListResourcesResult::with_all_items(children))
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, McpError> {
        self.state.current().skills.get(&request.uri)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(surface::Docs::prompts()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        self.state
            .current()
            .docs
            .prompt(&request.name)
            .map(GetPromptResponse::from)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(
            self.state.current().tools.clone(),
        ))
    }

    async fn call_tool(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let current = self.state.current();
        let runtime = current.runtime.clone();
        if let Some(core) = &self.state.offer.progressive
            && let Some(answer) =
                progressive::intercept(&current.runtime, &current.all_tools, core, &mut request)
        {
            return Ok(answer.into());
        }
        let name = request.name.to_string();
        if runtime.registry().get(&name).is_none() {
            // MCP: an unknown tool is a protocol error (-32602), not a tool result.
            let result = runtime.check(&name, Value::Null).err().unwrap_or_default();
            return Err(McpError::invalid_params(result.text_content(), None));
        }
        let args = request.arguments.take().map_or(Value::Null, Value::Object);
        let input_responses_sent = request.input_responses.take();
        // rmcp hands the request's `_meta` over in the context.
        let meta = match &request.meta {
            Some(m) if context.meta.get_traceparent().is_none() => m,
            _ => &context.meta,
        };
        // MCP 2026-07-28: a call's questions go out in an InputRequiredResult; a retry
        // carries the requestState it got, and resumes its waiting call.
        let in_rounds = context
            .protocol_version()
            .is_some_and(|v| !v.has_initialize());
        let responses = if in_rounds {
            input_responses(input_responses_sent)?
        } else {
            Default::default()
        };
        if in_rounds && let Some(sealed) = request.request_state.as_deref() {
            return self
                .resume(sealed, &name, &args, responses, meta, &context)
                .await;
        }
        can_be_asked(&runtime, &name, &context)?;
        if let Some(response) = self.as_task(&runtime, &name, &args, meta, &context)? {
            return Ok(response);
        }
        let slot = self.slot(&name, &context)?;
        let cancel = CancelToken::new();
        // The tool gets the request's id as its call id: shortened, it is the client's.
        let opts = CallOptions::new()
            .id(format!(
                "mcp-{}",
                toolbind::untrusted::echo(&context.id.to_string())
            ))
            .cancel(cancel.clone());
        // 2026-07-28: only a request that names a log level gets messages (the spec: a
        // server MUST NOT send any otherwise); earlier revisions: the session's level, or
        // the request's own.
        #[allow(deprecated)]
        let request_level = logging::RequestLevel {
            level: context.meta.log_level(),
            per_request: context
                .protocol_version()
                .is_some_and(|v| !v.has_initialize()),
        };
        if in_rounds {
            return self
                .first_round(
                    runtime,
                    &name,
                    args,
                    responses,
                    slot,
                    opts,
                    request_level,
                    meta,
                    &context,
                )
                .await;
        }
        Ok(self
            .plain_call(
                runtime,
                &name,
                args,
                slot,
                opts,
                request_level,
                meta,
                &context,
            )
            .await
            .into())
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        self.state
            .tasks
            .get(&request.task_id)
            .map(GetTaskResult::new)
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.state.tasks.update(
            &request.task_id,
            self.owner(&context),
            request.input_responses,
        )
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.state.tasks.cancel(&request.task_id)?;
        log(&format!(
            "task {}: cancelled by the client (request {})",
            ids::short(&request.task_id),
            context.id
        ));
        Ok(())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        tokio::spawn(notify_changes(
            self.state.changed.subscribe(),
            context.peer,
            self.subscriptions.clone(),
        ));
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        accepted.tools_list_changed = requested.tools_list_changed.filter(|on| *on);
        accepted.resources_list_changed = requested.resources_list_changed.filter(|on| *on);
        // As `resources/subscribe`: any URI (the wire check has bounded them).
        accepted.resource_subscriptions = requested
            .resource_subscriptions
            .clone()
            .filter(|uris| self.state.subscriptions && !uris.is_empty());
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let mut changes = self.state.changed.subscribe();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                r = changes.recv() => {
                    let changed = match r {
                        Ok(changed) => changed,
                        // Missed changes: anything may have changed.
                        Err(broadcast::error::RecvError::Lagged(_)) => Changed::missed(),
                        Err(broadcast::error::RecvError::Closed) => return Ok(()),
                    };
                    let accepted = context.accepted();
                    if changed.tools && accepted.tools_list_changed == Some(true) {
                        let _ = context.sink().notify_tool_list_changed().await;
                    }
                    if changed.resources && accepted.resources_list_changed == Some(true) {
                        let _ = context.sink().notify_resource_list_changed().await;
                    }
                    // Once per URI, however often the request named it.
                    let uris: BTreeSet<&String> =
                        accepted.resource_subscriptions.iter().flatten().collect();
                    for uri in uris {
                        if changed.touches(uri) {
                            let _ = context.sink().notify_resource_updated(uri.clone()).await;
                        }
                    }
                }
            }
        }
    }
}
