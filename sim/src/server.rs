//! The hc socket: binding it (refusing a live one, replacing a stale one),
//! the accept loop, and one task per connection serving requests in
//! lockstep (read a line, answer it, read the next). What a call means is
//! `methods`' business; how its reply is faulted is `faults`'.

use std::future::Future;
use std::io;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::sync::Arc;

use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};

use crate::faults::{self, Delivery, Flow};
use crate::framing::{self, Incoming, MAX_REQUEST_BYTES};
use crate::methods::{self, Session};
use crate::sim::Sim;
use crate::wire::{self, Method};

/// Binds a Unix socket at `path`. A socket file nobody answers on is
/// replaced; a live socket or any other file is left alone and refused.
pub(crate) fn bind(path: &Path) -> io::Result<UnixListener> {
    if let Ok(metadata) = std::fs::symlink_metadata(path) {
        if !metadata.file_type().is_socket() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!(
                    "{} exists and is not a socket; remove it or choose another path",
                    path.display()
                ),
            ));
        }
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(io::Error::new(
                io::ErrorKind::AddrInUse,
                format!(
                    "something is already listening at {}; stop it or choose another path",
                    path.display()
                ),
            ));
        }
        std::fs::remove_file(path)?;
    }
    UnixListener::bind(path).map_err(|error| {
        io::Error::new(
            error.kind(),
            format!("cannot bind {}: {error}", path.display()),
        )
    })
}

/// Serves the hc socket until `shutdown` completes.
pub(crate) async fn serve(
    sim: Arc<Sim>,
    listener: UnixListener,
    shutdown: impl Future<Output = ()>,
) {
    accept_loop(sim, listener, shutdown, "hc", connection).await;
}

/// Accepts connections on `listener`, one task each running `serve_one`,
/// until `shutdown` completes. Shared by the hc and control sockets.
pub(crate) async fn accept_loop<F, Fut>(
    sim: Arc<Sim>,
    listener: UnixListener,
    shutdown: impl Future<Output = ()>,
    socket: &str,
    serve_one: F,
) where
    F: Fn(Arc<Sim>, UnixStream) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    tokio::spawn(serve_one(Arc::clone(&sim), stream));
                }
                Err(error) => eprintln!("hc-sim: {socket} socket accept failed: {error}"),
            },
        }
    }
}

/// One connection, until the peer leaves or a fault closes it.
async fn connection(sim: Arc<Sim>, stream: UnixStream) {
    let _counted = sim.stats.connection_opened();
    let (reader, mut writer) = stream.into_split();
    let mut reader = BufReader::new(reader);
    let mut session = Session::default();
    while let Ok(Some(line)) = framing::read_line(&mut reader, MAX_REQUEST_BYTES).await {
        let flow = match framing::parse(&line) {
            Incoming::Invalid { id, error } => {
                let reply = wire::response_line(&id, &Err(error));
                writer
                    .write_all(reply.as_bytes())
                    .await
                    .map(|()| Flow::Continue)
            }
            Incoming::Call(call) => {
                sim.stats.record_call(&call.method);
                let method = Method::from_name(&call.method);
                let mut reply = methods::answer(&sim, &mut session, method, &call).await;
                if sim.evidence {
                    crate::evidence::reshape(&sim, method, &mut reply);
                }
                let plan = sim.faults.plan(method);
                let mut id = call.id;
                plan.rewrite(method, &mut id, &mut reply);
                let notification = || sim.status_notification();
                let context = Delivery {
                    slow_reply: sim.slow_reply,
                    notification: &notification,
                };
                faults::deliver(&mut writer, plan.delivery, &id, &reply, &context).await
            }
        };
        match flow {
            Ok(Flow::Continue) => {}
            Ok(Flow::Close) | Err(_) => return,
        }
    }
}
