//! The MCP handler of [`HerdrServer`]: the tool list a caller may see,
//! prompts and their completion, terminal resources and subscriptions, and
//! the server's identity. The tools themselves are routed in `server`.

use std::borrow::Cow;

use rmcp::model::{
    CacheScope, CompleteRequestParams, CompleteResult, Implementation, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, Reference, ResultType, ServerCapabilities,
    ServerConfig, SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, prompt_handler, tool_handler};

use super::server::{HerdrServer, INSTRUCTIONS, PROTOCOL_VERSIONS, cache_hints, caller};
use super::{access, resources};

#[tool_handler(router = self.tool_router)]
#[prompt_handler(router = self.prompt_router)]
impl ServerHandler for HerdrServer {
    /// Live approved addresses for `dispatch`'s `address`; nothing else.
    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let prompt = match &request.r#ref {
            Reference::Prompt(prompt) => prompt.name.as_str(),
            _ => "",
        };
        super::completion::complete(
            &self.tools,
            prompt,
            &request.argument.name,
            &request.argument.value,
        )
        .await
    }

    /// The tools this caller may use: `send_prompt` only for a caller
    /// that may send. The list depends on the caller, so it is private.
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let caller = caller(&context);
        let supports_cache_hints = context
            .protocol_version()
            .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28);
        let tools = self
            .tool_router
            .list_all()
            .into_iter()
            .filter(|tool| access::may_call(&caller, &tool.name))
            .collect();
        Ok(ListToolsResult {
            result_type: Some(ResultType::COMPLETE),
            tools,
            meta: None,
            next_cursor: None,
            ttl_ms: supports_cache_hints.then_some(0),
            cache_scope: supports_cache_hints.then_some(CacheScope::Private),
        })
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        resources::list(&self.tools, cache_hints(&context)).await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(resources::templates(cache_hints(&context)))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        resources::read(&self.tools, &request.uri, cache_hints(&context))
            .await
            .map(ReadResourceResponse::from)
    }

    /// A legacy session's subscription: only over stdio, where the session
    /// outlives the request and notifications have a way back.
    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if context.extensions.get::<http::request::Parts>().is_some() {
            return Err(ErrorData::invalid_request(
                "resources/subscribe needs a session, and stateless HTTP has none: subscribe over stdio, or with subscriptions/listen (MCP 2026-07-28)",
                None,
            ));
        }
        if resources::address(&request.uri).is_none() {
            return Err(ErrorData::resource_not_found(
                format!(
                    "{} is not a terminal resource ({})",
                    crate::escape::printable(&request.uri),
                    resources::URI_TEMPLATE
                ),
                None,
            ));
        }
        self.tools
            .watcher()
            .subscribe(
                self.tools.shared_app(),
                self.session,
                context.peer.clone(),
                &request.uri,
            )
            .await
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tools.watcher().unsubscribe(self.session, &request.uri);
        Ok(())
    }

    /// `subscriptions/listen`: terminal resources only, at most 256.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let uris: Vec<String> = requested
            .resource_subscriptions
            .iter()
            .flatten()
            .filter(|uri| resources::address(uri).is_some())
            .take(256)
            .cloned()
            .collect();
        Some(
            SubscriptionFilter::builder()
                .resource_subscriptions(uris)
                .build(),
        )
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let uris = context
            .accepted()
            .resource_subscriptions
            .clone()
            .unwrap_or_default();
        let _listening = if uris.is_empty() {
            None
        } else {
            Some(
                self.tools
                    .watcher()
                    .listen(self.tools.shared_app(), uris, context.sink().clone())
                    .await?,
            )
        };
        context.cancelled().await;
        Ok(())
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .enable_completions()
                .enable_resources()
                .enable_resources_subscribe()
                .build(),
        )
        .with_server_info(Implementation::new(
            env!("CARGO_PKG_NAME"),
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions(INSTRUCTIONS)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(PROTOCOL_VERSIONS)
    }
}

#[cfg(test)]
#[path = "handler_tests.rs"]
mod tests;
