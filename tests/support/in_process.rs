//! The adapter served inside the test process, through the same library
//! entry point the binary uses (`serve::run` with an injected endpoint):
//! over an in-memory duplex for stdio, or on a listener bound to port 0 for
//! HTTP. Faster than spawning the binary and free of port races; the tests
//! that need a real process (signals, exit codes, stdout, memory) spawn it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use herdr_core_mcp::App;
use herdr_core_mcp::Audit;
use herdr_core_mcp::BearerToken;
use herdr_core_mcp::Endpoint;
use herdr_core_mcp::Pipes;
use herdr_core_mcp::ResourceServer;
use herdr_core_mcp::{Authenticator, HttpEndpoint};
use herdr_core_mcp::{Config, HttpAuth, Transport};
use herdr_core_mcp::{Pace, run_server};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use tokio::sync::oneshot;

use super::mcp::{Client, READ_TEST_TOKEN, TEST_TOKEN};

/// Bytes buffered in each direction of the in-memory stdio pipe.
const PIPE_BYTES: usize = 256 * 1024;

/// The audit lines an in-process adapter wrote (its always-on stream).
#[derive(Clone, Default)]
pub struct AuditLines(Arc<Mutex<Vec<u8>>>);

impl AuditLines {
    pub fn lines(&self) -> Vec<String> {
        let bytes = self.0.lock().unwrap();
        String::from_utf8_lossy(&bytes)
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

impl Write for AuditLines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The app `serve` would build from `config`, its audit stream captured.
fn app(config: Config) -> (Arc<App>, AuditLines) {
    let lines = AuditLines::default();
    let audit =
        Audit::open(Box::new(lines.clone()), config.audit_log()).expect("the audit log opens");
    (Arc::new(App::new(config, audit)), lines)
}

/// An in-process adapter over stdio.
pub struct Served<H: rmcp::ClientHandler> {
    pub client: RunningService<RoleClient, H>,
    /// The app served (to reload its config as SIGHUP would).
    pub app: Arc<App>,
    pub audit: AuditLines,
}

/// Loads `config` as `serve` does and serves it over a duplex; returns an
/// rmcp client session on the other end.
pub async fn stdio(config: &Path) -> Client {
    stdio_with((), config).await.client
}

/// The clock the in-process adapters run at unless a test asks for
/// another: every period of `serve`'s a tenth (the rules are the same;
/// only the time is shorter). A few tests run at the real pace, to show
/// it.
pub fn test_pace() -> Pace {
    Pace::divided(10)
}

/// [`stdio`] with a client handler of the test's own, the app and its
/// audit lines.
pub async fn stdio_with<H: rmcp::ClientHandler>(handler: H, config: &Path) -> Served<H> {
    stdio_paced(handler, config, test_pace()).await
}

/// [`stdio_with`] at `pace` (a test's clock, or the real one).
pub async fn stdio_paced<H: rmcp::ClientHandler>(
    handler: H,
    config: &Path,
    pace: Pace,
) -> Served<H> {
    let (app, audit) = app(Config::load(config).expect("a valid config"));
    let (ours, theirs) = tokio::io::duplex(PIPE_BYTES);
    let (read, write) = tokio::io::split(theirs);
    let endpoint = Endpoint::Stdio(Pipes::new(read, write));
    tokio::spawn(run_server(
        Arc::clone(&app),
        pace,
        endpoint,
        std::future::pending(),
    ));
    let client = handler
        .serve(ours)
        .await
        .expect("MCP initialize in-process");
    Served { client, app, audit }
}

/// An in-process adapter over HTTP on 127.0.0.1 and a port the kernel
/// picked; stops when dropped.
pub struct HttpAdapter {
    pub port: u16,
    pub app: Arc<App>,
    pub audit: AuditLines,
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
/// and serves it there with [`TEST_TOKEN`] (and [`READ_TEST_TOKEN`] for the
/// read tools), or as an OAuth resource server when the config says so.
pub async fn http(write_config: impl FnOnce(u16) -> PathBuf) -> HttpAdapter {
    let listener = herdr_core_mcp::listen(([127, 0, 0, 1], 0).into()).expect("bind 127.0.0.1:0");
    let port = listener.local_addr().expect("bound address").port();
    http_on(listener, &write_config(port)).await
}

/// [`http`] over `sim` with `config` (JSON), served on the port picked.
pub async fn http_for(sim: &super::Sim, config: &serde_json::Value) -> HttpAdapter {
    http_for_paced(sim, config, test_pace()).await
}

/// [`http_for`] at `pace` (a test's clock, or the real one).
pub async fn http_for_paced(
    sim: &super::Sim,
    config: &serde_json::Value,
    pace: Pace,
) -> HttpAdapter {
    let listener = herdr_core_mcp::listen(([127, 0, 0, 1], 0).into()).expect("bind 127.0.0.1:0");
    let port = listener.local_addr().expect("bound address").port();
    let path = {
        let mut config = config.clone();
        super::merge(
            &mut config,
            serde_json::json!({"transport": "http", "http": {"port": port}}),
        );
        sim.config(config)
    };
    http_served(listener, &path, pace).await
}

/// [`http`] on a listener the test bound itself (so it knows the port
/// before it writes the config).
pub async fn http_on(listener: tokio::net::TcpListener, config: &Path) -> HttpAdapter {
    http_served(listener, config, test_pace()).await
}

async fn http_served(listener: tokio::net::TcpListener, config: &Path, pace: Pace) -> HttpAdapter {
    let port = listener.local_addr().expect("bound address").port();
    let config = Config::load(config).expect("a valid config");
    let Transport::Http(http) = config.transport().clone() else {
        panic!("in_process::http needs an http config")
    };
    let auth = match http.auth() {
        HttpAuth::Token => Authenticator::Tokens {
            full: BearerToken::new(TEST_TOKEN).expect("the test token passes"),
            read: Some(BearerToken::new(READ_TEST_TOKEN).expect("the read token passes")),
        },
        HttpAuth::OAuth(oauth) => Authenticator::OAuth(Arc::new(
            ResourceServer::new(oauth.as_ref().clone()).expect("an OAuth resource server"),
        )),
    };
    let endpoint = Endpoint::Http(HttpEndpoint {
        listener,
        config: http,
        auth,
    });
    let (app, audit) = app(config);
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(run_server(Arc::clone(&app), pace, endpoint, async move {
        let _ = stopped.await;
    }));
    HttpAdapter {
        port,
        app,
        audit,
        _stop: stop,
    }
}
