//! Where HTTP is served: the [`HttpEndpoint`] `serve` is handed, the
//! loopback listener it binds ([`listen`]) or the one its parent passed it
//! (socket activation, [`inherited`]).

use super::auth::Authenticator;
use crate::config::HttpConfig;

/// Everything the HTTP transport needs; only this transport authenticates.
pub struct HttpEndpoint {
    /// The bound loopback listener.
    pub listener: tokio::net::TcpListener,
    /// The validated `http` section.
    pub config: HttpConfig,
    /// How callers are told apart.
    pub auth: Authenticator,
}

/// Connections the kernel may queue for `accept` (capped by
/// `net.core.somaxconn`). While a flood fills the queue, an authorised
/// client's connection is dropped and retried a second later, so it is
/// larger than the usual 128; each queued one waits its turn, so it is not
/// much larger (measured: docs/performance.md, "Starvation").
const LISTEN_BACKLOG: u32 = 1024;

/// The listening socket `serve` was handed by its parent, when there is
/// one: socket activation, and how tests hand over a bound port. systemd's
/// rules (sd_listen_fds(3)): `LISTEN_FDS` counts the sockets from
/// descriptor 3, and they are this process's only when `LISTEN_PID` names
/// it; otherwise they were meant for another process, and are ignored with
/// a warning. Only the first is served (more: a warning); the descriptor
/// must be a TCP stream socket that listens (`SO_ACCEPTCONN`: a bound one
/// that does not would fail every accept) on `address` (loopback and
/// `http.port`: there is no other address to serve on). The non-standard
/// `LISTEN_FDS_FIRST_FD` (another first descriptor) is not honoured: set to
/// anything but 3, the start is refused.
pub(crate) fn inherited(
    address: std::net::SocketAddr,
) -> Result<Option<tokio::net::TcpListener>, InheritError> {
    let Some(count) = std::env::var_os(LISTEN_FDS) else {
        return Ok(None);
    };
    let count = count
        .to_str()
        .and_then(|c| c.parse::<u32>().ok())
        .ok_or_else(|| InheritError::Count(count.to_string_lossy().into_owned()))?;
    if count == 0 {
        return Ok(None);
    }
    let pid = std::env::var(LISTEN_PID).ok();
    if pid.as_deref().and_then(|p| p.parse::<u32>().ok()) != Some(std::process::id()) {
        tracing::warn!(
            listen_pid = %crate::escape::bounded(pid.as_deref().unwrap_or("(unset)"), 32),
            pid = std::process::id(),
            "LISTEN_FDS is set, but LISTEN_PID does not name this process: the sockets were passed to another one, and are ignored (systemd's rule); serve binds {address} itself"
        );
        return Ok(None);
    }
    if let Some(first) = std::env::var_os(LISTEN_FDS_FIRST_FD).filter(|f| f != "3") {
        return Err(InheritError::FirstFd(first.to_string_lossy().into_owned()));
    }
    if count > 1 {
        tracing::warn!(
            "LISTEN_FDS={count}: serve uses the first socket (descriptor 3) and ignores the other {}",
            count - 1
        );
    }
    let mut passed = listenfd::ListenFd::from_env();
    let listener = passed
        .take_tcp_listener(0)
        .map_err(InheritError::NotTcp)?
        .ok_or_else(|| {
            InheritError::NotTcp(std::io::Error::other("descriptor 3 was already taken"))
        })?;
    match socket2::SockRef::from(&listener).is_listener() {
        Ok(true) => {}
        Ok(false) => return Err(InheritError::NotListening),
        Err(e) => return Err(InheritError::NotTcp(e)),
    }
    let bound = listener.local_addr().map_err(InheritError::NotTcp)?;
    if bound != address {
        return Err(InheritError::Elsewhere { bound, address });
    }
    listener
        .set_nonblocking(true)
        .map_err(InheritError::NotTcp)?;
    let listener = tokio::net::TcpListener::from_std(listener).map_err(InheritError::NotTcp)?;
    Ok(Some(listener))
}

const LISTEN_FDS: &str = "LISTEN_FDS";
const LISTEN_PID: &str = "LISTEN_PID";
const LISTEN_FDS_FIRST_FD: &str = "LISTEN_FDS_FIRST_FD";

/// Why an inherited socket cannot be served on.
#[derive(Debug, thiserror::Error)]
pub enum InheritError {
    /// `LISTEN_FDS` is not a number.
    #[error("LISTEN_FDS is {0:?}, not a number of sockets: unset it, or let systemd set it")]
    Count(String),
    /// `LISTEN_FDS_FIRST_FD` names another descriptor than 3.
    #[error(
        "LISTEN_FDS_FIRST_FD is {0:?}: that variable is not part of systemd's protocol and serve does not honour it (the first socket is always descriptor 3): unset it and pass the socket on descriptor 3"
    )]
    FirstFd(String),
    /// Descriptor 3 is not a TCP stream socket.
    #[error(
        "the socket passed in LISTEN_FDS is not a listening TCP socket: {0}; pass a stream socket (ListenStream=) or none"
    )]
    NotTcp(#[source] std::io::Error),
    /// Descriptor 3 is a TCP socket that was bound but never listened on.
    #[error(
        "the socket passed in LISTEN_FDS is bound but not listening (listen(2) was never called on it), so every accept would fail: pass a listening socket (a .socket unit does), or none"
    )]
    NotListening,
    /// It listens on another address than `127.0.0.1:<http.port>`.
    #[error(
        "the socket passed in LISTEN_FDS listens on {bound}, but serve listens only on {address} (loopback and http.port): set ListenStream={address} in the .socket unit"
    )]
    Elsewhere {
        /// Where the passed socket listens.
        bound: std::net::SocketAddr,
        /// Where `serve` listens: `127.0.0.1:<http.port>`.
        address: std::net::SocketAddr,
    },
}

/// Listens on `address` (the loopback port `serve` binds).
pub fn listen(address: std::net::SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = tokio::net::TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    socket.listen(LISTEN_BACKLOG)
}
