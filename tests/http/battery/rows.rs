//! The battery's rows, one per line and grouped by what they change (kept
//! as tables on purpose): built from a valid authenticated `initialize`
//! and its variations.

use super::{Check, Expect, Row, row};
use crate::support::http::request::Req;
use crate::support::http::{INITIALIZE, MAX_BODY, OK_ORIGIN};
use crate::support::mcp::TEST_TOKEN;

/// The protected-resource metadata path.
const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";
/// The protected-resource metadata path of `/mcp`.
const WELL_KNOWN_MCP: &str = "/.well-known/oauth-protected-resource/mcp";

/// What the rows are built from: the valid request, and the same without
/// credentials.
struct Kit {
    port: u16,
    ok: Req,
    unauthenticated: Req,
}

impl Kit {
    /// The valid request with `name: value` in place of its own.
    fn with(&self, name: &str, value: &str) -> Vec<u8> {
        self.ok.clone().set(name, value).bytes()
    }

    /// A bare `GET` of `path`.
    fn get(&self, path: &str) -> Vec<u8> {
        Req::bare(self.port, "GET", path).bytes()
    }
}

/// Every row, in order: the controls first, the alive checks after the
/// bombs and at the end.
pub(super) fn battery(port: u16) -> Vec<Row> {
    let ok = Req::mcp(port);
    let kit = Kit {
        port,
        unauthenticated: ok.clone().remove("Authorization"),
        ok,
    };
    [
        control_rows(&kit),
        host_rows(&kit),
        origin_rows(&kit),
        well_known_rows(&kit),
        near_miss_rows(&kit),
        auth_rows(&kit),
        route_rows(&kit),
        body_rows(&kit),
        framing_rows(&kit),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The controls: the valid request passes, also in its allowed variants.
#[rustfmt::skip]
fn control_rows(kit: &Kit) -> Vec<Row> {
    use Check::*;
    use Expect::*;
    let port = kit.port;
    let ok = &kit.ok;
    let host = |h: &str| kit.with("Host", h);
    let origin = |o: &str| kit.with("Origin", o);
    vec![
        // Controls: the valid request passes, so every refusal below is due
        // to the one thing its row changes.
        row("control_valid_initialize", ok.bytes(), Status(200), &[Initialized, NoChallenge]),
        row("control_localhost_host", host(&format!("localhost:{port}")), Status(200), &[Initialized]),
        row("control_allowed_origin", origin(OK_ORIGIN), Status(200), &[Initialized]),
        row("control_absolute_form_same_authority", ok.clone().target(&format!("http://127.0.0.1:{port}/mcp")).bytes(), Status(200), &[Initialized]),
        row("control_json_charset", ok.clone().set("Content-Type", "application/json; charset=utf-8").bytes(), Status(200), &[Initialized]),
    ]
}

/// `Host` (DNS rebinding and friends) and absolute-form targets: 403.
#[rustfmt::skip]
fn host_rows(kit: &Kit) -> Vec<Row> {
    use Check::*;
    use Expect::*;
    let port = kit.port;
    let ok = &kit.ok;
    let unauthenticated = &kit.unauthenticated;
    let host = |h: &str| kit.with("Host", h);
    let wk = WELL_KNOWN;
    let other_port = if kit.port == 65_535 { 1 } else { kit.port + 1 };
    vec![
        // Host (DNS rebinding and friends) -> 403.
        row("host_other_port", host(&format!("127.0.0.1:{other_port}")), Status(403), &[NoChallenge]),
        row("host_without_port", host("127.0.0.1"), Status(403), &[]),
        row("host_ip_trailing_dot", host(&format!("127.0.0.1.:{port}")), Status(403), &[]),
        row("host_localhost_trailing_dot", host(&format!("localhost.:{port}")), Status(403), &[]),
        row("host_localhost_dot_no_port", host("localhost."), Status(403), &[]),
        row("host_nip_io", host(&format!("127.0.0.1.nip.io:{port}")), Status(403), &[]),
        row("host_decimal_ip", host(&format!("2130706433:{port}")), Status(403), &[]),
        row("host_hex_ip", host(&format!("0x7f.0.0.1:{port}")), Status(403), &[]),
        row("host_octal_ip", host(&format!("0177.0.0.1:{port}")), Status(403), &[]),
        row("host_short_ip", host(&format!("127.1:{port}")), Status(403), &[]),
        row("host_ipv6_loopback", host(&format!("[::1]:{port}")), Status(403), &[]),
        row("host_ipv4_mapped_ipv6", host(&format!("[::ffff:127.0.0.1]:{port}")), Status(403), &[]),
        row("host_zero_padded_port", host(&format!("127.0.0.1:0{port}")), Status(403), &[]),
        row("host_upper_case", host(&format!("LOCALHOST:{port}")), Status(403), &[]),
        row("host_userinfo", host(&format!("user@127.0.0.1:{port}")), Status(403), &[]),
        row("host_any_address", host(&format!("0.0.0.0:{port}")), Status(403), &[]),
        row("host_foreign_name", host("evil.example"), Status(403), &[]),
        row("host_empty", host(""), Status(403), &[]),
        row("host_missing", ok.clone().remove("Host").bytes(), Status(403), &[]),
        row("host_duplicated_both_valid", ok.clone().add("Host", &format!("127.0.0.1:{port}")).bytes(), Status(403), &[]),
        row("host_duplicated_one_foreign", ok.clone().add("Host", "evil.example").bytes(), Status(403), &[]),
        row("absolute_form_other_authority", ok.clone().target("http://evil.example/mcp").bytes(), Status(403), &[]),
        row("absolute_form_other_port", ok.clone().target("http://127.0.0.1:1/mcp").bytes(), Status(403), &[]),
        row("host_bad_without_token", unauthenticated.clone().set("Host", "evil.example").bytes(), Status(403), &[NoChallenge]),
        row("host_bad_on_well_known", Req::bare(port, "GET", wk).set("Host", "evil.example").bytes(), Status(403), &[NoChallenge]),
    ]
}

/// `Origin`, with valid credentials: 403.
#[rustfmt::skip]
fn origin_rows(kit: &Kit) -> Vec<Row> {
    use Check::*;
    use Expect::*;
    let port = kit.port;
    let ok = &kit.ok;
    let unauthenticated = &kit.unauthenticated;
    let origin = |o: &str| kit.with("Origin", o);
    let wk = WELL_KNOWN;
    vec![
        // Origin (with valid auth) -> 403.
        row("origin_foreign", origin("https://evil.example"), Status(403), &[NoChallenge]),
        row("origin_null", origin("null"), Status(403), &[]),
        row("origin_duplicated_both_allowed", ok.clone().set("Origin", OK_ORIGIN).add("Origin", OK_ORIGIN).bytes(), Status(403), &[]),
        row("origin_duplicated_one_foreign", ok.clone().set("Origin", OK_ORIGIN).add("Origin", "https://evil.example").bytes(), Status(403), &[]),
        row("origin_allowed_trailing_slash", origin(&format!("{OK_ORIGIN}/")), Status(403), &[]),
        row("origin_allowed_other_scheme", origin("http://ok.example"), Status(403), &[]),
        row("origin_allowed_explicit_port", origin("https://ok.example:443"), Status(403), &[]),
        row("origin_allowed_suffix", origin("https://ok.example.evil.example"), Status(403), &[]),
        row("origin_self_not_listed", origin(&format!("http://127.0.0.1:{port}")), Status(403), &[]),
        row("origin_empty", origin(""), Status(403), &[]),
        row("origin_foreign_without_token", unauthenticated.clone().set("Origin", "https://evil.example").bytes(), Status(403), &[NoChallenge]),
        row("origin_foreign_on_well_known", Req::bare(port, "GET", wk).set("Origin", "https://evil.example").bytes(), Status(403), &[]),
    ]
}

/// The well-known paths, the only unauthenticated answers.
#[rustfmt::skip]
fn well_known_rows(kit: &Kit) -> Vec<Row> {
    use Check::*;
    use Expect::*;
    let port = kit.port;
    let get = |path: &str| kit.get(path);
    let wk = WELL_KNOWN;
    let wk_mcp = WELL_KNOWN_MCP;
    vec![
        // The only unauthenticated answers: 404 without a challenge.
        row("well_known_mcp_get", get(wk_mcp), Status(404), &[NoChallenge]),
        row("well_known_mcp_head", Req::bare(port, "HEAD", wk_mcp).bytes(), Status(404), &[NoChallenge]),
        row("well_known_root_get", get(wk), Status(404), &[NoChallenge]),
        row("well_known_root_head", Req::bare(port, "HEAD", wk).bytes(), Status(404), &[NoChallenge]),
        row("well_known_root_get_with_query", get(&format!("{wk}?resource=x")), Status(404), &[NoChallenge]),
        row("well_known_get_with_token", Req::bare(port, "GET", wk_mcp).set("Authorization", &format!("Bearer {TEST_TOKEN}")).bytes(), Status(404), &[NoChallenge]),
    ]
}

/// Near misses of the well-known paths, where authentication applies.
#[rustfmt::skip]
fn near_miss_rows(kit: &Kit) -> Vec<Row> {
    use Check::*;
    use Expect::*;
    let port = kit.port;
    let get = |path: &str| kit.get(path);
    let wk = WELL_KNOWN;
    let wk_mcp = WELL_KNOWN_MCP;
    vec![
        // Near misses: authentication applies -> 401 + challenge.
        row("well_known_trailing_slash", get(&format!("{wk}/")), Status(401), &[Challenge]),
        row("well_known_mcp_trailing_slash", get(&format!("{wk_mcp}/")), Status(401), &[Challenge]),
        row("well_known_other_case", get("/.well-known/OAuth-Protected-Resource"), Status(401), &[Challenge]),
        row("well_known_mcp_other_case", get("/.well-known/oauth-protected-resource/MCP"), Status(401), &[Challenge]),
        row("well_known_extra_segment", get(&format!("{wk_mcp}/x")), Status(401), &[Challenge]),
        row("well_known_percent_encoded_slash", get("/.well-known/oauth-protected-resource%2Fmcp"), Status(401), &[Challenge]),
        row("well_known_dot_segment", get(&format!("/mcp/..{wk}")), Status(401), &[Challenge]),
        row("well_known_double_slash", get(&format!("/{wk}")), Status(401), &[Challenge]),
        row("well_known_authorization_server", get("/.well-known/oauth-authorization-server"), Status(401), &[Challenge]),
        row("well_known_root_post", Req::bare(port, "POST", wk).body("{}").bytes(), Status(401), &[Challenge]),
        row("well_known_mcp_post", Req::bare(port, "POST", wk_mcp).body("{}").bytes(), Status(401), &[Challenge]),
        row("well_known_root_delete", Req::bare(port, "DELETE", wk).bytes(), Status(401), &[Challenge]),
        row("well_known_mcp_delete", Req::bare(port, "DELETE", wk_mcp).bytes(), Status(401), &[Challenge]),
        row("well_known_options", Req::bare(port, "OPTIONS", wk).bytes(), Status(401), &[Challenge]),
    ]
}

/// Authentication mistakes: 401 with a challenge.
#[rustfmt::skip]
fn auth_rows(kit: &Kit) -> Vec<Row> {
    use Check::*;
    use Expect::*;
    let ok = &kit.ok;
    let unauthenticated = &kit.unauthenticated;
    let auth = |a: &str| kit.with("Authorization", a);
    let token_len = TEST_TOKEN.len();
    let one_off = one_byte_off(TEST_TOKEN);
    let big_token = "A".repeat(16 * 1024);
    vec![
        // Authentication mistakes -> 401 + challenge.
        row("auth_missing", unauthenticated.bytes(), Status(401), &[Challenge]),
        row("auth_empty_value", auth(""), Status(401), &[Challenge]),
        row("auth_basic_scheme", auth("Basic dXNlcjpadThOMnhSNXRCN3dLMW1QNHNEOWZIM2pMNmNWMGdZ"), Status(401), &[Challenge]),
        row("auth_basic_with_token", auth(&format!("Basic {TEST_TOKEN}")), Status(401), &[Challenge]),
        row("auth_bearer_alone", auth("Bearer"), Status(401), &[Challenge]),
        row("auth_bearer_trailing_space", auth("Bearer "), Status(401), &[Challenge]),
        row("auth_token_without_scheme", auth(TEST_TOKEN), Status(401), &[Challenge]),
        row("auth_other_scheme_name", auth(&format!("Token {TEST_TOKEN}")), Status(401), &[Challenge]),
        row("auth_token_prefix", auth(&format!("Bearer {}", &TEST_TOKEN[..16])), Status(401), &[Challenge]),
        row("auth_token_one_byte_short", auth(&format!("Bearer {}", &TEST_TOKEN[..token_len - 1])), Status(401), &[Challenge]),
        row("auth_token_one_byte_off", auth(&format!("Bearer {one_off}")), Status(401), &[Challenge]),
        row("auth_token_one_extra_byte", auth(&format!("Bearer {TEST_TOKEN}x")), Status(401), &[Challenge]),
        row("auth_token_upper_cased", auth(&format!("Bearer {}", TEST_TOKEN.to_ascii_uppercase())), Status(401), &[Challenge]),
        row("auth_head_over_16_kib", auth(&format!("Bearer {big_token}")), Status(431), &[ParserRefusal, Closes]),
        row("auth_token_quoted", auth(&format!("Bearer \"{TEST_TOKEN}\"")), Status(401), &[Challenge]),
        row("auth_double_space", auth(&format!("Bearer  {TEST_TOKEN}")), Status(401), &[Challenge]),
        row("auth_tab_separator", auth(&format!("Bearer\t{TEST_TOKEN}")), Status(401), &[Challenge]),
        row("auth_token_listed_twice", auth(&format!("Bearer {TEST_TOKEN}, Bearer {TEST_TOKEN}")), Status(401), &[Challenge]),
        row("auth_duplicated_both_correct", ok.clone().add("Authorization", &format!("Bearer {TEST_TOKEN}")).bytes(), Status(401), &[Challenge]),
        row("auth_token_in_query", unauthenticated.clone().target(&format!("/mcp?access_token={TEST_TOKEN}")).bytes(), Status(401), &[Challenge]),
        row("auth_token_in_cookie", unauthenticated.clone().set("Cookie", &format!("access_token={TEST_TOKEN}")).bytes(), Status(401), &[Challenge]),
        row("auth_token_in_other_header", unauthenticated.clone().set("X-Api-Key", TEST_TOKEN).bytes(), Status(401), &[Challenge]),
        row("auth_missing_with_session_id", unauthenticated.clone().set("Mcp-Session-Id", "abc").bytes(), Status(401), &[Challenge]),
        row("auth_lower_case_scheme_accepted", auth(&format!("bearer {TEST_TOKEN}")), Status(200), &[Initialized]),
        row("auth_upper_case_scheme_accepted", auth(&format!("BEARER {TEST_TOKEN}")), Status(200), &[Initialized]),
    ]
}

/// Authenticated, wrong path or method.
#[rustfmt::skip]
fn route_rows(kit: &Kit) -> Vec<Row> {
    use Check::*;
    use Expect::*;
    let ok = &kit.ok;
    let preflight = kit.ok.clone().method("OPTIONS").no_body()
        .set("Access-Control-Request-Method", "POST")
        .set("Access-Control-Request-Headers", "authorization, content-type");
    vec![
        // Authenticated, wrong path or method: the 4xx observed, never CORS.
        row("route_upper_case_path", ok.clone().target("/MCP").bytes(), Status(404), &[]),
        row("route_trailing_slash", ok.clone().target("/mcp/").bytes(), Status(404), &[]),
        row("route_root", ok.clone().target("/").bytes(), Status(404), &[]),
        row("route_sub_path", ok.clone().target("/mcp/x").bytes(), Status(404), &[]),
        row("route_asterisk_form", ok.clone().method("OPTIONS").target("*").no_body().bytes(), Status(404), &[]),
        row("method_get", ok.clone().method("GET").no_body().bytes(), Status(405), &[AllowPost]),
        row("method_get_event_stream", ok.clone().method("GET").no_body().set("Accept", "text/event-stream").bytes(), Status(405), &[AllowPost]),
        row("method_delete", ok.clone().method("DELETE").no_body().bytes(), Status(405), &[AllowPost]),
        row("method_put", ok.clone().method("PUT").bytes(), Status(405), &[AllowPost]),
        row("method_trace", ok.clone().method("TRACE").no_body().bytes(), Status(405), &[AllowPost]),
        row("method_options_preflight", preflight.bytes(), Status(405), &[AllowPost]),
        row("method_options_preflight_allowed_origin", preflight.clone().set("Origin", OK_ORIGIN).bytes(), Status(405), &[AllowPost]),
        row("method_options_preflight_without_token", preflight.clone().remove("Authorization").set("Origin", OK_ORIGIN).bytes(), Status(401), &[Challenge]),
    ]
}

/// Bodies, content types and JSON-RPC conformance.
#[rustfmt::skip]
fn body_rows(kit: &Kit) -> Vec<Row> {
    use Check::*;
    use Expect::*;
    let ok = &kit.ok;
    let unauthenticated = &kit.unauthenticated;
    let bomb = "[".repeat(20_000);
    let object_bomb = r#"{"a":"#.repeat(10_000);
    vec![
        // Bodies: the cap is 65,536 bytes, also when chunked.
        row("body_65536_content_length", ok.clone().body(padded_initialize(MAX_BODY)).bytes(), Status(200), &[Initialized]),
        row("body_65537_content_length", ok.clone().body(padded_initialize(MAX_BODY + 1)).bytes(), Status(413), &[]),
        row("body_65536_chunked_one_chunk", ok.clone().chunked(padded_initialize(MAX_BODY), MAX_BODY).bytes(), Status(200), &[Initialized]),
        row("body_65536_chunked_4_kib_chunks", ok.clone().chunked(padded_initialize(MAX_BODY), 4096).bytes(), Status(200), &[Initialized]),
        row("body_65537_chunked_one_chunk", ok.clone().chunked(padded_initialize(MAX_BODY + 1), MAX_BODY + 1).bytes(), Status(413), &[]),
        row("body_65537_chunked_4_kib_chunks", ok.clone().chunked(padded_initialize(MAX_BODY + 1), 4096).bytes(), Status(413), &[]),
        row("body_1_mib_chunked", ok.clone().chunked(padded_initialize(1 << 20), 16 * 1024).bytes(), Status(413), &[]),
        row("body_declared_10e12_not_sent", ok.clone().remove("Connection").declared(1_000_000_000_000).bytes(), Status(413), &[Closes]),
        row("body_declared_10e12_without_token", unauthenticated.clone().remove("Connection").declared(1_000_000_000_000).bytes(), Status(401), &[Challenge, Closes]),
        row("content_type_text_plain", ok.clone().set("Content-Type", "text/plain").bytes(), Status(415), &[]),
        row("content_type_form", ok.clone().set("Content-Type", "application/x-www-form-urlencoded").bytes(), Status(415), &[]),
        row("content_type_missing", ok.clone().remove("Content-Type").bytes(), Status(415), &[]),
        row("accept_missing", ok.clone().remove("Accept").bytes(), Status(406), &[]),
        row("body_empty", ok.clone().body("").bytes(), Status(400), &[RpcError(-32700)]),
        row("body_invalid_json", ok.clone().body("{not json").bytes(), Status(400), &[RpcError(-32700)]),
        row("body_json_batch", ok.clone().body(format!("[{INITIALIZE}]")).bytes(), Status(400), &[RpcError(-32600)]),
        row("body_not_a_message", ok.clone().body(r#"{"foo":1}"#).bytes(), Status(400), &[RpcError(-32600)]),
        row("body_repeated_id", ok.clone().body(r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#).bytes(), Status(400), &[RpcError(-32600)]),
        row("body_repeated_tool_argument", ok.clone().body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_output","arguments":{"address":"t1","address":"t2"}}}"#).bytes(), Status(200), &[ToolError]),
        row("initialize_asking_2025_03_26", ok.clone().body(INITIALIZE.replace("2025-06-18", "2025-03-26")).bytes(), Status(200), &[Negotiated("2025-11-25")]),
        row("version_header_2025_03_26_on_ping", ok.clone().set("MCP-Protocol-Version", "2025-03-26").body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).bytes(), Status(400), &[RpcError(-32600)]),
        row("version_header_2025_06_18_on_ping", ok.clone().set("MCP-Protocol-Version", "2025-06-18").body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).bytes(), Status(200), &[]),
        row("body_nesting_bomb_20000", ok.clone().body(bomb).bytes(), Rejected, &[]),
        row("alive_after_array_bomb", ok.bytes(), Status(200), &[Initialized]),
        row("body_object_bomb_10000", ok.clone().body(object_bomb).bytes(), Rejected, &[]),
        row("alive_after_object_bomb", ok.bytes(), Status(200), &[Initialized]),
    ]
}

/// Framing tricks.
#[rustfmt::skip]
fn framing_rows(kit: &Kit) -> Vec<Row> {
    use Check::*;
    use Expect::*;
    let ok = kit.ok.clone();
    vec![
        // Framing tricks: refused, connection closed.
        row("smuggle_content_length_and_chunked", ok.clone().add("Transfer-Encoding", "chunked").bytes(), NotSuccessAndClosed, &[]),
        row("smuggle_duplicate_content_length", ok.clone().add("Content-Length", "5").bytes(), Status(400), &[ParserRefusal, Closes]),
        row("smuggle_obs_fold", obs_folded(&ok), Status(400), &[ParserRefusal, Closes]),
        row("alive_at_the_end", ok.bytes(), Status(200), &[Initialized]),
    ]
}

/// `token` with its last byte's low bit flipped.
fn one_byte_off(token: &str) -> String {
    let mut one_off = token.as_bytes().to_vec();
    let last = one_off.len() - 1;
    one_off[last] ^= 0x01;
    String::from_utf8(one_off).unwrap()
}

/// `initialize` padded with JSON whitespace to exactly `len` bytes.
fn padded_initialize(len: usize) -> Vec<u8> {
    let mut body = INITIALIZE.as_bytes().to_vec();
    body.resize(len, b' ');
    body
}

/// `Authorization` folded onto a continuation line (obsolete line folding).
fn obs_folded(request: &Req) -> Vec<u8> {
    String::from_utf8(request.bytes())
        .unwrap()
        .replacen("Authorization: Bearer ", "Authorization: Bearer\r\n ", 1)
        .into_bytes()
}
