//! The MCP handler of [`HerdrServer`]: the tool list a caller may see,
//! prompts and their completion, terminal resources and subscriptions, and
//! the server's identity. The tools themselves are routed in `server`.
//!
//! Every method here that waits on hc boxes that wait (`Box::pin`): rmcp
//! runs each request as one task holding `handle_request`'s future, which
//! is as large as the largest of these methods' futures, and that future
//! is copied whole as the task is built and run, for every request and
//! every method alike (a `tools/call` too). Boxed, each costs one
//! allocation when it runs instead.

use std::borrow::Cow;

use rmcp::model::{
    CacheScope, CompleteRequestParams, CompleteResult, Implementation, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, Reference, ResultType, ServerCapabilities,
    ServerConfig, SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, prompt_handler, tool_handler};

use super::resources::watcher::Seat;
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
        Box::pin(super::prompts::completion::complete(
            &self.surface.app,
            prompt,
            &request.argument.name,
            &request.argument.value,
        ))
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
        Box::pin(resources::list(&self.surface.app, cache_hints(&context))).await
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
        Box::pin(resources::read(
            &self.surface.app,
            &self.surface.seal,
            &request.uri,
            cache_hints(&context),
        ))
        .await
        .map(ReadResourceResponse::from)
    }

    /// A legacy session's subscription: only over stdio, where the session
    /// outlives the request and notifications have a way back.
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
        Box::pin(self.surface.watcher.subscribe(
            &self.surface.app,
            self.session,
            &caller(&context),
            context.peer.clone(),
            &request.uri,
        ))
        .await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.surface.watcher.unsubscribe(self.session, &request.uri);
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
        let _listening = match Seat::of(context.request_context()) {
            Some(seat) if !uris.is_empty() => Some(
                Box::pin(self.surface.watcher.listen(
                    &self.surface.app,
                    seat,
                    uris,
                    context.sink().clone(),
                ))
                .await?,
            ),
            // Nothing to watch; or no seat taken, which the transports
            // always do before a listen reaches rmcp (`HerdrServer::admit`).
            _ => None,
        };
        // A listen ends when its client cancels it, or when `serve`
        // begins to stop (its final result then says it ended).
        tokio::select! {
            () = context.cancelled() => {}
            () = self.surface.stopping.cancelled() => {}
        }
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
mod tests {
    //! `list_tools` as each caller sees it: through the handler itself, with
    //! the request context the transports give it (stdio: no HTTP parts; HTTP:
    //! the parts, carrying the caller the gate proved, or none).

    use std::path::Path;
    use std::sync::Arc;

    use rmcp::model::NumberOrString;

    use super::*;
    use crate::app::App;
    use crate::audit::Audit;
    use crate::caller::Caller;
    use crate::config::{Config, RawConfig};

    /// Every tool the server has; `send_prompt` is the only one that writes.
    const READ_TOOLS: [&str; 5] = [
        "list_machines",
        "list_sessions",
        "read_output",
        "wait_for_output",
        "wait_for_status",
    ];

    fn server() -> HerdrServer {
        let path = Path::new("/test/config.json");
        let raw = RawConfig::parse(path, r#"{"socketPath": "/run/hc.sock"}"#).unwrap();
        let config = Config::validate(path, raw).unwrap();
        let audit = Audit::open(Box::new(std::io::sink()), None).unwrap();
        HerdrServer::over(Arc::new(App::new(config, audit)), Default::default())
    }

    /// The names `list_tools` answers for a request with `http` (the HTTP
    /// request's parts, as the transport attaches them), sorted.
    async fn listed(http: Option<http::request::Parts>) -> Vec<String> {
        let server = server();
        // A peer to build the context with: nothing is sent through it.
        let (ours, _theirs) = tokio::io::duplex(4096);
        let running = rmcp::service::serve_directly(server.clone(), ours, None);
        let mut context = RequestContext::new(NumberOrString::Number(1), running.peer().clone());
        if let Some(parts) = http {
            context.extensions.insert(parts);
        }
        let result = ServerHandler::list_tools(&server, None, context)
            .await
            .unwrap();
        let mut names: Vec<String> = result.tools.iter().map(|t| t.name.to_string()).collect();
        names.sort();
        names
    }

    /// An HTTP request's parts, carrying `caller` when the gate proved one.
    fn http_request(caller: Option<Caller>) -> Option<http::request::Parts> {
        let mut request = http::Request::post("/mcp").body(()).unwrap();
        if let Some(caller) = caller {
            request.extensions_mut().insert(caller);
        }
        Some(request.into_parts().0)
    }

    fn all_tools() -> Vec<&'static str> {
        let mut all = READ_TOOLS.to_vec();
        all.push("send_prompt");
        all.sort_unstable();
        all
    }

    #[tokio::test]
    async fn a_caller_that_may_send_sees_every_tool() {
        let senders = [
            ("stdio", None),
            ("full token", http_request(Some(Caller::token()))),
            (
                "oauth with the send scope",
                http_request(Some(Caller::oauth(Some("u"), None, true))),
            ),
        ];
        for (who, http) in senders {
            assert_eq!(listed(http).await, all_tools(), "{who}");
        }
    }

    #[tokio::test]
    async fn a_caller_that_may_only_read_sees_the_read_tools_and_not_send_prompt() {
        let readers = [
            ("read token", http_request(Some(Caller::read_token()))),
            (
                "oauth without the send scope",
                http_request(Some(Caller::oauth(Some("u"), None, false))),
            ),
            ("HTTP without a proven caller", http_request(None)),
        ];
        for (who, http) in readers {
            let names = listed(http).await;
            assert_eq!(names, READ_TOOLS, "{who}");
            assert!(!names.iter().any(|n| n == "send_prompt"), "{who}");
        }
    }

    #[tokio::test]
    async fn the_read_tools_are_the_ones_marked_read_only() {
        // What a reader is shown is exactly what cannot write: every listed
        // tool but send_prompt says read_only_hint.
        let server = server();
        for tool in server.tool_router.list_all() {
            let read_only = tool.annotations.as_ref().and_then(|a| a.read_only_hint);
            let is_read = READ_TOOLS.contains(&tool.name.as_ref());
            assert_eq!(read_only, Some(is_read), "{}", tool.name);
        }
    }
}
