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
use crate::tools::Tools;

/// Every tool the server has; `send_prompt` is the only one that writes.
const READ_TOOLS: [&str; 4] = [
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
    HerdrServer::new(Arc::new(Tools::new(Arc::new(App::new(config, audit)))))
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
