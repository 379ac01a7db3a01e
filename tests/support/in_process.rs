//! The adapter served inside the test process, through the same library
//! entry point the binary uses (`serve::run` with an injected endpoint):
//! over an in-memory duplex for stdio, or on a listener bound to port 0 for
//! HTTP. Faster than spawning the binary and free of port races; the tests
//! that need a real process (signals, exit codes, stdout, memory) spawn it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use herdr_core_mcp::app::App;
use herdr_core_mcp::config::{Config, Transport};
use herdr_core_mcp::serve;
use herdr_core_mcp::transport::auth::BearerToken;
use herdr_core_mcp::transport::stdio::Pipes;
use herdr_core_mcp::transport::{Endpoint, HttpEndpoint};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use tokio::sync::oneshot;

use super::mcp::{Client, TEST_TOKEN};

/// Bytes buffered in each direction of the in-memory stdio pipe.
const PIPE_BYTES: usize = 256 * 1024;

/// Loads `config` as `serve` does and serves it over a duplex; returns an
/// rmcp client session on the other end.
pub async fn stdio(config: &Path) -> Client {
    stdio_with((), config).await.0
}

/// [`stdio`] with a client handler of the test's own, and the app served
/// (to reload its config as SIGHUP would).
pub async fn stdio_with<H: rmcp::ClientHandler>(
    handler: H,
    config: &Path,
) -> (RunningService<RoleClient, H>, Arc<App>) {
    let app = Arc::new(App::new(Config::load(config).expect("a valid config")));
    let (ours, theirs) = tokio::io::duplex(PIPE_BYTES);
    let (read, write) = tokio::io::split(theirs);
    let endpoint = Endpoint::Stdio(Pipes::new(read, write));
    tokio::spawn(serve::run(
        Arc::clone(&app),
        endpoint,
        std::future::pending(),
    ));
    let client = handler
        .serve(ours)
        .await
        .expect("MCP initialize in-process");
    (client, app)
}

/// An in-process adapter over HTTP on 127.0.0.1 and a port the kernel
/// picked; stops when dropped.
pub struct HttpAdapter {
    pub port: u16,
    pub app: Arc<App>,
    _stop: oneshot::Sender<()>,
}

impl HttpAdapter {
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// An rmcp Streamable HTTP client session with the token.
    pub async fn client(&self) -> Client {
        super::mcp::http_client(&self.url()).await
    }
}

/// Binds a loopback port the kernel picks, asks `write_config` for the
/// config file of that port (an HTTP transport), loads it as `serve` does
/// and serves it there with [`TEST_TOKEN`].
pub async fn http(write_config: impl FnOnce(u16) -> PathBuf) -> HttpAdapter {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1:0");
    let port = listener.local_addr().expect("bound address").port();
    let config = Config::load(&write_config(port)).expect("a valid config");
    let Transport::Http(http) = config.transport().clone() else {
        panic!("in_process::http needs an http config")
    };
    let endpoint = Endpoint::Http(HttpEndpoint {
        listener,
        config: http,
        token: BearerToken::new(TEST_TOKEN).expect("the test token passes"),
    });
    let app = Arc::new(App::new(config));
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(serve::run(Arc::clone(&app), endpoint, async move {
        let _ = stopped.await;
    }));
    HttpAdapter {
        port,
        app,
        _stop: stop,
    }
}
