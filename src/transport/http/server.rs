//! The accept loop: one hyper HTTP/1 connection per accepted socket, each
//! holding a `slots` place (so a flood of unauthenticated sockets cannot
//! starve an authorised client), a header read deadline that is also the
//! keep-alive idle timeout, a header size cap, and a graceful stop that lets
//! in-flight requests finish. An accept that fails for want of descriptors
//! pushes out an idle unauthenticated connection and pauses, rather than
//! spin and fill the log.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpStream;
use tokio::time::Instant;

use axum::body::Body;
use http::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio_util::sync::CancellationToken;
use tower::service_fn;

use super::admission::slots::{Bounds, Slot, Slots, UNPROVEN_HARD_LIMIT};
use super::admission::socket::Shared;
use super::auth::Authenticator;
use super::body::MCP_PATH;
use super::endpoint::HttpEndpoint;
use super::front::Front;
use super::gate::PeerAddr;
use crate::escape::printable;
use crate::mcp::HerdrServer;
use crate::pace::Pace;

/// Largest request head; a bigger one gets 431 and the connection closes.
const MAX_HEADER_BYTES: usize = 16 * 1024;
/// In-flight requests get this long to finish after a shutdown signal.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);
/// The open-file limit asked for (up to the hard limit): every HTTP
/// connection holds one descriptor.
const WANTED_FDS: u64 = 1 << 20;
/// Assumed when the limit cannot be read.
const USUAL_FDS: u64 = 1024;
/// After an accept failed for want of descriptors or memory.
const ACCEPT_PAUSE: Duration = Duration::from_millis(10);
/// A failing accept is logged at most this often.
const ACCEPT_WARN_EVERY: Duration = Duration::from_secs(10);

/// A changed port with `allowedHosts` still naming the old one makes every
/// request a 403: say so at start.
fn warn_unless_port_allowed(allowed_hosts: &[String], port: u16) {
    let suffix = format!(":{port}");
    if !allowed_hosts.iter().any(|h| h.ends_with(&suffix)) {
        tracing::warn!(
            "no http.allowedHosts entry ({}) names the listening port {port}: clients sending Host 127.0.0.1:{port} get 403; add \"127.0.0.1:{port}\" (and the Host your proxy sends)",
            printable(&allowed_hosts.join(", "))
        );
    }
}

/// Raises the open-file limit and derives the unauthenticated connections'
/// share from it (a flood must meet that bound before the kernel's EMFILE,
/// which would stop every accept); says so when the share is smaller than
/// usual.
fn connection_limits() -> Bounds {
    let fd_limit = rlimit::increase_nofile_limit(WANTED_FDS).unwrap_or(USUAL_FDS);
    let limits = Bounds::for_descriptors(fd_limit);
    if limits.hard < UNPROVEN_HARD_LIMIT {
        tracing::info!(
            "the open-file limit is {fd_limit}: at most {} unauthenticated connections at once (raise LimitNOFILE / ulimit -n for more)",
            limits.hard
        );
    }
    limits
}

/// An accept that failed. Out of descriptors (or kernel memory), the oldest
/// idle unauthenticated connection is pushed out and the loop pauses, so it
/// neither spins nor floods the log; other failures concern one connection.
async fn accept_failed(e: &std::io::Error, slots: &Slots, warned: &mut Option<Instant>) {
    let exhausted = matches!(
        e.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
    );
    let now = Instant::now();
    if warned.is_none_or(|at| now - at >= ACCEPT_WARN_EVERY) {
        *warned = Some(now);
        tracing::warn!(
            "accept failed: {e}{}",
            if exhausted {
                "; pushing out idle unauthenticated connections (logged at most every 10 s)"
            } else {
                " (logged at most every 10 s)"
            }
        );
    }
    if exhausted {
        slots.shed_idle();
        tokio::time::sleep(ACCEPT_PAUSE).await;
    }
}

/// Serves one accepted connection in its own task, until it ends or its
/// slot is pushed out; `slot` marks it busy from the moment a request
/// arrives until it is answered (the gate clears it at once on a refusal).
/// A refused connection that `slot` parks stays open, idle, after its
/// answer, until pushed out or `header_read` passes; the slot's
/// handle on the socket keeps it open once hyper is done with it.
fn spawn_connection(
    stream: Arc<TcpStream>,
    slot: Arc<Slot>,
    front: Arc<Front>,
    graceful: &GracefulShutdown,
    header_read: Duration,
) {
    let placed = Arc::clone(&slot);
    let peer = stream.peer_addr().ok().map(|a| PeerAddr(a.ip()));
    let service = service_fn(move |mut request: Request<Incoming>| {
        let slot = Arc::clone(&placed);
        request.extensions_mut().insert(Arc::clone(&slot));
        if let Some(peer) = peer {
            request.extensions_mut().insert(peer);
        }
        slot.set_busy(true);
        let front = Arc::clone(&front);
        async move {
            let response = front.serve(request.map(Body::new)).await;
            slot.set_busy(false);
            Ok::<_, Infallible>(response)
        }
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(header_read)
        .max_header_size(MAX_HEADER_BYTES)
        .serve_connection(
            TokioIo::new(Shared(stream)),
            TowerToHyperService::new(service),
        );
    let connection = graceful.watch(connection);
    tokio::spawn(async move {
        tokio::select! {
            _ = connection => {}
            () = slot.evicted() => return,
        }
        if slot.park() {
            let _ = tokio::time::timeout(header_read, slot.evicted()).await;
        }
    });
}

/// Serves on the endpoint's bound listener until `shutdown`, giving a
/// client `pace`'s time for its request head and its body.
pub(crate) async fn serve(
    server: HerdrServer,
    endpoint: HttpEndpoint,
    pace: Pace,
    shutdown: impl Future<Output = ()>,
) {
    if let Ok(address) = endpoint.listener.local_addr() {
        tracing::info!(%address, path = MCP_PATH, "serving MCP over HTTP");
        warn_unless_port_allowed(endpoint.config.allowed_hosts(), address.port());
    }
    let stop = CancellationToken::new();
    // The identity provider's keys are discovered and kept in the
    // background: an IdP that is down never stops the server.
    let upkeep = match &endpoint.auth {
        Authenticator::OAuth(server) => {
            let config = server.config();
            tracing::info!(issuer = %printable(config.issuer()), resource = %config.resource(), "HTTP callers authenticate with OAuth access tokens");
            Some(AbortOnDrop(tokio::spawn(server.upkeep())))
        }
        Authenticator::Tokens { read, .. } => {
            if read.is_some() {
                tracing::info!(
                    "HTTP callers authenticate with HERDR_MCP_TOKEN (every tool) or HERDR_MCP_READ_TOKEN (read tools)"
                );
            }
            None
        }
    };
    let front = Arc::new(Front::new(
        server,
        &endpoint,
        pace.body_read,
        stop.child_token(),
    ));
    let listener = endpoint.listener;
    let slots = Arc::new(Slots::new(connection_limits()));
    let mut accept_warned = None;
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        slots.room().await;
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    accept_failed(&e, &slots, &mut accept_warned).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let stream = Arc::new(stream);
        let Some(slot) = slots.admit(&stream) else {
            continue;
        };
        spawn_connection(
            stream,
            slot,
            Arc::clone(&front),
            &graceful,
            pace.header_read,
        );
        // Let the new connection read its headers before the next accept.
        tokio::task::yield_now().await;
    }
    // The calls still running were told first (the surface's stopping
    // token): they answer now, and only what is left after the grace is
    // cut by rmcp's own stop.
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("some HTTP requests were still running at shutdown");
    }
    stop.cancel();
    drop(upkeep);
    tracing::info!("HTTP server stopped");
}

/// A background task that ends with its owner.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
