//! The floor of the adapter's own stack: the smallest MCP server built on
//! the same crates (rmcp, tokio, axum, hyper) and the same release profile,
//! with one tool, `read_output`, that sends one `terminal.read` to hc over
//! one of N persistent, handshaken connections and returns the screen. No
//! checks, no bounds, no audit, no deadline: whatever the adapter costs
//! beyond this server is what its promises cost (`loadgen bench --only
//! floor` runs the two side by side).
//!
//! `floor --socket PATH [--conns N] stdio` serves stdio;
//! `floor --socket PATH [--conns N] http` serves stateless Streamable HTTP
//! (JSON responses) on the listener passed as systemd passes it
//! (`LISTEN_FDS`), like the adapter in the bench.

// An example binary has no API to fence.
#![allow(
    unreachable_pub,
    missing_docs,
    reason = "a bench binary has no API to fence"
)]

mod hc;

use std::path::PathBuf;
use std::sync::Arc;

use clap::{Parser, ValueEnum};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Parser)]
struct Cli {
    /// hc's socket.
    #[arg(long)]
    socket: PathBuf,
    /// Persistent hc connections, used in turn.
    #[arg(long, default_value_t = 1)]
    conns: usize,
    transport: Transport,
}

#[derive(Clone, Copy, ValueEnum)]
enum Transport {
    Stdio,
    Http,
}

#[derive(Deserialize, JsonSchema)]
struct ReadArgs {
    /// Terminal address.
    address: String,
    /// Accepted for the bench's arguments, not applied.
    #[expect(dead_code, reason = "accepted, not applied")]
    max_chars: Option<u32>,
}

#[derive(Clone)]
struct Floor {
    hc: Arc<hc::Conns>,
    tool_router: Arc<ToolRouter<Floor>>,
}

#[tool_router]
impl Floor {
    /// The current screen of one terminal.
    #[tool]
    async fn read_output(
        &self,
        Parameters(args): Parameters<ReadArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let screen = self
            .hc
            .read(&args.address)
            .await
            .map_err(|e| ErrorData::internal_error(e, None))?;
        // The same two copies of the screen the adapter answers with: a
        // rendering for the model and the structured result.
        let mut result = CallToolResult::success(vec![ContentBlock::text(screen.text.clone())]);
        result.structured_content = Some(serde_json::json!({
            "address": screen.address,
            "text": screen.text,
        }));
        Ok(result)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Floor {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let cli = Cli::parse();
    let hc = Arc::new(hc::Conns::open(&cli.socket, cli.conns.max(1)).await?);
    let floor = Floor {
        hc,
        tool_router: Arc::new(Floor::tool_router()),
    };
    match cli.transport {
        Transport::Stdio => {
            let running = floor
                .serve(rmcp::transport::stdio_pipes())
                .await
                .map_err(|e| e.to_string())?;
            running.waiting().await.map_err(|e| e.to_string())?;
        }
        Transport::Http => {
            let listener = listenfd::ListenFd::from_env()
                .take_tcp_listener(0)
                .map_err(|e| e.to_string())?
                .ok_or("no listener on descriptor 3 (LISTEN_FDS)")?;
            listener.set_nonblocking(true).map_err(|e| e.to_string())?;
            let listener =
                tokio::net::TcpListener::from_std(listener).map_err(|e| e.to_string())?;
            let config = StreamableHttpServerConfig::default()
                .with_legacy_session_mode(false)
                .with_json_response(true)
                .with_sse_keep_alive(None)
                .disable_allowed_hosts()
                .disable_allowed_origins();
            let service = StreamableHttpService::new(
                move || Ok(floor.clone()),
                Arc::new(LocalSessionManager::default()),
                config,
            );
            let router = axum::Router::new().route_service("/mcp", service);
            axum::serve(listener, router)
                .await
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}
