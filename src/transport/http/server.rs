//! The accept loop: one hyper HTTP/1 connection per accepted socket, at
//! most [`MAX_CONNECTIONS`] at once, each with a header read deadline, and
//! a graceful stop that lets in-flight requests finish.

use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::{MCP_PATH, router};
use crate::tools::Tools;
use crate::transport::HttpEndpoint;

/// Open connections accepted at once; more wait in the listen backlog.
/// Bounds memory under a flood whatever the requests carry.
const MAX_CONNECTIONS: usize = 512;
/// A client gets this long to send its request headers (slowloris guard).
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// In-flight requests get this long to finish after a shutdown signal.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Serves on the endpoint's bound listener until `shutdown`.
pub async fn serve(tools: Arc<Tools>, endpoint: HttpEndpoint, shutdown: impl Future<Output = ()>) {
    if let Ok(address) = endpoint.listener.local_addr() {
        tracing::info!(%address, path = MCP_PATH, "serving MCP over HTTP");
    }
    let stop = CancellationToken::new();
    let router = router(tools, &endpoint, stop.child_token());
    let listener = endpoint.listener;
    let connections = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(&connections).acquire_owned() => permit.expect("never closed"),
            () = &mut shutdown => break,
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::warn!("accept failed: {e}");
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let service = TowerToHyperService::new(router.clone());
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(HEADER_READ_TIMEOUT)
            .serve_connection(TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            let _ = connection.await;
            drop(permit);
        });
    }
    stop.cancel();
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("some HTTP requests were still running at shutdown");
    }
    tracing::info!("HTTP server stopped");
}
