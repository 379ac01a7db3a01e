//! One simulator from start to end, wherever it runs: bind its sockets (the
//! hc socket, and the control socket if asked for), start its initial
//! terminals, serve both sockets until told to end, then end as a stop
//! (programs killed, socket files removed) or as a crash (socket files left
//! behind, stale). Signals and stdout are the binary's (`lib`); a test that
//! runs the simulator in its own process ends it through `testing`.

use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::net::UnixListener;
use tokio::runtime::Runtime;
use tokio::sync::watch;

use crate::cli::ServeConfig;
use crate::sim::{Sim, TerminalKind};
use crate::{control, server};

/// Worker threads of a simulator's runtime (PTY I/O has its own threads).
const WORKER_THREADS: usize = 2;

/// The runtime a simulator runs on: its own, so it never depends on (or
/// starves) a caller's.
pub(crate) fn runtime() -> io::Result<Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKER_THREADS)
        .thread_name("hc-sim")
        .enable_all()
        .build()
}

/// How a simulator ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// As on SIGTERM: its programs are killed and reaped, its socket files
    /// removed.
    Stop,
    /// As far as a client can tell, as on SIGKILL: connections drop and the
    /// socket files stay behind, stale. (Its programs are still killed, as
    /// the hang-up of their PTYs would do, so none is left behind.)
    Crash,
}

/// A simulator whose sockets are bound and whose initial terminals exist:
/// ready to serve, until [`Service::serve_until`] ends it.
pub(crate) struct Service {
    sim: Arc<Sim>,
    socket: PathBuf,
    listener: UnixListener,
    control_listener: Option<UnixListener>,
    files: SocketFiles,
}

impl Service {
    /// Binds the sockets and starts the initial terminals in the order the
    /// README gives: agents, shells, readers, idle records.
    pub(crate) async fn start(config: ServeConfig) -> io::Result<Service> {
        let sim = Arc::new(Sim::new(config.sim.clone())?);
        let mut files = SocketFiles::default();
        let listener = server::bind(&config.socket)?;
        files.0.push(config.socket.clone());
        let control_listener = match &config.control {
            Some(path) => {
                let listener = server::bind(path)?;
                files.0.push(path.clone());
                Some(listener)
            }
            None => None,
        };
        let started = async {
            sim.spawn_many(TerminalKind::Agent, config.agents).await?;
            sim.spawn_many(TerminalKind::Shell, config.shells).await?;
            sim.spawn_many(TerminalKind::Reader, config.readers).await?;
            sim.spawn_many(TerminalKind::Idle, config.idle_records)
                .await?;
            if sim.evidence {
                crate::evidence::add_terminals(&sim).await?;
            }
            for machine in &config.sim.machines {
                sim.machines
                    .add(machine)
                    .await
                    .map_err(|error| io::Error::other(error.to_value().to_string()))?;
            }
            Ok::<(), io::Error>(())
        };
        if let Err(error) = started.await {
            sim.shutdown().await;
            return Err(error);
        }
        Ok(Service {
            sim,
            socket: config.socket,
            listener,
            control_listener,
            files,
        })
    }

    /// The core_id of this simulator (new on every start).
    pub(crate) fn core_id(&self) -> &str {
        &self.sim.identity.core_id
    }

    /// The line the binary prints once it serves, newline included.
    pub(crate) fn ready_line(&self) -> String {
        ready_line(self.core_id(), &self.socket)
    }

    /// Serves both sockets until `ending` completes, then ends as it says.
    /// Connection tasks still running are left to the runtime's shutdown.
    pub(crate) async fn serve_until(self, ending: impl Future<Output = Ending>) {
        let Service {
            sim,
            listener,
            control_listener,
            mut files,
            ..
        } = self;
        let (stop, stopped) = watch::channel(false);
        let until_stopped = |mut stopped: watch::Receiver<bool>| async move {
            let _ = stopped.wait_for(|&stop| stop).await;
        };
        tokio::spawn(server::serve(
            Arc::clone(&sim),
            listener,
            until_stopped(stopped.clone()),
        ));
        if let Some(listener) = control_listener {
            tokio::spawn(control::serve(
                Arc::clone(&sim),
                listener,
                until_stopped(stopped),
            ));
        }
        let ending = ending.await;
        let _ = stop.send(true);
        sim.shutdown().await;
        if ending == Ending::Crash {
            files.0.clear();
        }
    }
}

/// `ready core_id=<uuid> socket=<path as given>` and a newline.
pub(crate) fn ready_line(core_id: &str, socket: &Path) -> String {
    format!("ready core_id={core_id} socket={}\n", socket.display())
}

/// Socket files this simulator created, removed when it ends (on every
/// path out of [`Service`], a crash aside).
#[derive(Default)]
struct SocketFiles(Vec<PathBuf>);

impl Drop for SocketFiles {
    fn drop(&mut self) {
        for path in &self.0 {
            let _ = std::fs::remove_file(path);
        }
    }
}
