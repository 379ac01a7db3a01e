//! Reading a request body before it is routed, so a slow, oversized or
//! broken body is answered here (408 / 413 / 400) rather than failing
//! inside the MCP service as a 500. A JSON body for `/mcp` then passes the
//! transport's `guard` (400 with a JSON-RPC `-32700`/`-32600` error and
//! `"id": null` for what is not one valid message; repeated keys refused)
//! and the protocol-revision header is checked against the revisions
//! offered. A JSON-RPC error rmcp answers without an `id` (it knows none,
//! as for a response posted to it) gets `"id": null`, so every error
//! carries one. Only authenticated requests get here.
//!
//! The 64 KiB cap is applied here too: a declared length over it is refused
//! before anything is read, and a chunked body is cut off while streaming
//! (`http_body_util::Limited`), both 413. The deadline bounds the whole
//! body, not each frame, so a client dripping a byte at a time meets it.

use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use http::request::Parts;
use http::{HeaderMap, HeaderValue, Method, StatusCode};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde_json::Value;
use std::sync::Arc;

use super::challenges::Challenges;
use super::gate::Denial;
use crate::caller::Caller;
use crate::escape::printable;
use crate::mcp::access::{self, Refused};
use crate::mcp::{HerdrServer, PROTOCOL_VERSIONS};
use crate::transport::MAX_MESSAGE_BYTES;
use crate::transport::guard::{self, Reply, Screened};

/// The one MCP endpoint.
pub(crate) const MCP_PATH: &str = "/mcp";
/// The header naming the revision a request speaks.
const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";

/// Reads the whole body within `body_read` and under
/// [`MAX_MESSAGE_BYTES`], then routes. A declared length over the cap is
/// refused before anything is read; a chunked body is cut off while it
/// streams.
pub(super) async fn buffer<F: Future<Output = Response>>(
    server: &HerdrServer,
    body_read: Duration,
    request: Request,
    next: impl FnOnce(Request) -> F,
) -> Response {
    let (mut parts, body) = request.into_parts();
    let limit = match declared_length(&parts.headers) {
        Some(length) if length > MAX_MESSAGE_BYTES => {
            return Denial::PayloadTooLarge.into_response();
        }
        Some(length) => length,
        None => MAX_MESSAGE_BYTES,
    };
    let body = Limited::new(body, limit);
    let bytes = match tokio::time::timeout(body_read, body.collect()).await {
        Err(_) => return Denial::RequestTimeout.into_response(),
        Ok(Err(e)) if over_limit(&*e) => return Denial::PayloadTooLarge.into_response(),
        Ok(Err(_)) => return Denial::BadRequest.into_response(),
        Ok(Ok(collected)) => collected.to_bytes(),
    };
    let json_rpc =
        parts.method == Method::POST && parts.uri.path() == MCP_PATH && is_json(&parts.headers);
    if json_rpc && let Some(refused) = precheck(server, &mut parts, &bytes) {
        return refused;
    }
    let response = next(Request::from_parts(parts, Body::from(bytes.clone()))).await;
    // rmcp answers a body it cannot read as a message with 415; the guard
    // knows the JSON-RPC answer (it reads the message only here, so a
    // valid one is parsed once).
    if json_rpc && response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return match guard::check(&bytes) {
            Screened::Reply(answer) => answered(answer),
            // A notification nobody could read: accepted, never answered.
            Screened::Ignore => StatusCode::ACCEPTED.into_response(),
            Screened::Message(_) => response,
        };
    }
    if json_rpc && response.status().is_client_error() {
        return with_null_id(response).await;
    }
    response
}

/// rmcp's JSON-RPC error answers leave `id` out when it knows none (a
/// response or a notification posted to it); JSON-RPC 2.0 wants `null`
/// there. Only 4xx answers are looked at: an error answering a request
/// (HTTP 200) has the request's id.
async fn with_null_id(response: Response) -> Response {
    if !is_json(response.headers()) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    // rmcp's own error answer, built in memory: never a stream, never big.
    let Ok(bytes) = axum::body::to_bytes(body, MAX_MESSAGE_BYTES).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let Ok(mut message) = serde_json::from_slice::<serde_json::Map<String, Value>>(&bytes) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    if !message.contains_key("error") || message.contains_key("id") {
        return Response::from_parts(parts, Body::from(bytes));
    }
    message.insert("id".to_owned(), Value::Null);
    parts.headers.remove(CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(Value::Object(message).to_string()))
}

/// The guard's answer for a JSON-RPC POST to `/mcp` that must not reach
/// rmcp: not JSON, a repeated key, a batch, not an object, or a revision
/// not offered. Other methods, paths and content types keep rmcp's own
/// answers (405, 404, 415).
fn precheck(server: &HerdrServer, parts: &mut Parts, body: &[u8]) -> Option<Response> {
    if let Err(answer) = guard::precheck(body) {
        if let Some(call) = answer.refused_call() {
            let unproven = Caller::unproven();
            let caller = parts.extensions.get::<Caller>().unwrap_or(&unproven);
            server.refused(
                &call.tool,
                Some(&call.arguments),
                Refused::Arguments {
                    argument: &call.argument,
                },
                caller,
            );
        }
        return Some(answered(answer));
    }
    if let Some(refused) = send_without_scope(server, parts, body) {
        return Some(refused);
    }
    if let Some(refused) = unoffered_revision(&parts.headers, body) {
        return Some(answered(refused));
    }
    admitted(server, parts, body).map(answered)
}

/// What the surface takes before rmcp sees the request (`HerdrServer::admit`: a
/// listen's place among the subscribers), carried in its extensions; or
/// the refusal, answered under the request's id.
fn admitted(server: &HerdrServer, parts: &mut Parts, body: &[u8]) -> Option<Reply> {
    #[derive(serde::Deserialize)]
    struct Head<'a> {
        #[serde(borrow)]
        method: Option<std::borrow::Cow<'a, str>>,
        id: Option<Value>,
    }
    let head = serde_json::from_slice::<Head<'_>>(body).ok()?;
    let unproven = Caller::unproven();
    let caller = parts.extensions.get::<Caller>().unwrap_or(&unproven);
    match server.admit(head.method.as_deref()?, caller) {
        Ok(Some(seat)) => {
            parts.extensions.insert(seat);
            None
        }
        Ok(None) => None,
        Err(why) => Some(Reply::refused_request(head.id.unwrap_or(Value::Null), &why)),
    }
}

/// A call to the writer tool from a caller that may only read: answered 403
/// `insufficient_scope` (the step-up challenge) before it reaches a tool,
/// and audited as the send attempt it is. The tool refuses such a caller
/// too, should one ever get that far.
fn send_without_scope(server: &HerdrServer, parts: &Parts, body: &[u8]) -> Option<Response> {
    #[derive(serde::Deserialize)]
    struct Call<'a> {
        #[serde(borrow)]
        method: Option<std::borrow::Cow<'a, str>>,
        params: Option<Named<'a>>,
    }
    #[derive(serde::Deserialize)]
    struct Named<'a> {
        #[serde(borrow)]
        name: Option<std::borrow::Cow<'a, str>>,
        arguments: Option<Value>,
    }
    let caller = parts.extensions.get::<Caller>()?;
    if caller.may_send() {
        return None;
    }
    let call = serde_json::from_slice::<Call<'_>>(body).ok()?;
    let params = call.params?;
    let name = params.name.as_deref()?;
    if call.method.as_deref() != Some("tools/call") || !access::refused_for_scope(caller, name) {
        return None;
    }
    let challenges = parts.extensions.get::<Arc<Challenges>>()?;
    let arguments = params.arguments.as_ref().and_then(Value::as_object);
    server.refused(name, arguments, Refused::Scope, caller);
    Some(challenges.insufficient_send())
}

/// A request other than `initialize` naming a revision this server does
/// not offer in `MCP-Protocol-Version` (initialize negotiates instead).
fn unoffered_revision(headers: &HeaderMap, body: &[u8]) -> Option<Reply> {
    /// Only the member that tells an `initialize` from the rest.
    #[derive(serde::Deserialize)]
    struct Method<'a> {
        #[serde(borrow)]
        method: Option<std::borrow::Cow<'a, str>>,
    }
    let revision = headers
        .get(PROTOCOL_VERSION_HEADER)?
        .to_str()
        .unwrap_or("?");
    if PROTOCOL_VERSIONS.iter().any(|v| v.as_str() == revision) {
        return None;
    }
    let initialize = serde_json::from_slice::<Method<'_>>(body)
        .ok()
        .and_then(|m| m.method)
        .is_some_and(|m| m == "initialize");
    if initialize {
        return None;
    }
    let offered: Vec<&str> = PROTOCOL_VERSIONS.iter().map(|v| v.as_str()).collect();
    Some(Reply::invalid_request(&format!(
        "MCP-Protocol-Version {} is not offered here; offered: {}",
        printable(revision),
        offered.join(", ")
    )))
}

/// Same rule as rmcp's: the media type before any `;` is application/json.
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .unwrap_or(v)
                .trim()
                .eq_ignore_ascii_case("application/json")
        })
}

/// An error answer is a 400; a tool result (a repeated argument) a 200.
fn answered(answer: Reply) -> Response {
    let status = if answer.answers_a_request() {
        StatusCode::OK
    } else {
        StatusCode::BAD_REQUEST
    };
    (
        status,
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        answer.to_json(),
    )
        .into_response()
}

/// Whether a body error is the length limit somewhere in its chain.
fn over_limit(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut source = Some(error);
    while let Some(e) = source {
        if e.is::<LengthLimitError>() {
            return true;
        }
        source = e.source();
    }
    false
}

/// `Content-Length`, when it is one number.
fn declared_length(headers: &HeaderMap) -> Option<usize> {
    headers.get(CONTENT_LENGTH)?.to_str().ok()?.parse().ok()
}
