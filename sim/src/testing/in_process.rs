//! A simulator served inside the caller's process: the command line a
//! process would get, parsed the same way, served on a thread of its own
//! with a runtime of its own (so it neither needs nor disturbs the caller's,
//! a `#[tokio::test]`'s current-thread runtime included), and ended on
//! request or on drop. Its programs are still real processes in real PTYs:
//! the `hc-sim` binary runs its agents and readers.

use std::ffi::OsString;
use std::path::Path;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use clap::Parser;
use tokio::sync::oneshot;

use super::Error;
use crate::cli::{Cli, Invocation, ServeConfig};
use crate::service::{self, Ending, Service};

/// How long connection tasks and PTY writes still running when the
/// simulator ends may take to wind down before its runtime abandons them.
const WIND_DOWN: Duration = Duration::from_secs(1);

/// A simulator on a thread of this process; stopped on drop.
#[derive(Debug)]
pub(super) struct InProcess {
    ending: Option<oneshot::Sender<Ending>>,
    thread: Option<JoinHandle<()>>,
}

impl InProcess {
    /// Starts a simulator from the arguments a process would get, running
    /// `binary` for its agents and readers; returns once it serves, with
    /// its core_id.
    pub(super) fn start(binary: &Path, args: Vec<OsString>) -> Result<(InProcess, String), Error> {
        let config = serve_config(binary, args)?;
        let runtime = service::runtime().map_err(Error::io("build the simulator's runtime"))?;
        let (ready, started) = mpsc::channel();
        let (ending, ended) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("hc-sim".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let service = match Service::start(config).await {
                        Ok(service) => service,
                        Err(error) => {
                            let _ = ready.send(Err(error));
                            return;
                        }
                    };
                    let _ = ready.send(Ok(service.core_id().to_owned()));
                    // A handle dropped without a word ends it as a stop.
                    let ending = async { ended.await.unwrap_or(Ending::Stop) };
                    service.serve_until(ending).await;
                });
                runtime.shutdown_timeout(WIND_DOWN);
            })
            .map_err(Error::io("start the simulator's thread"))?;
        let mut simulator = InProcess {
            ending: Some(ending),
            thread: Some(thread),
        };
        match started.recv() {
            Ok(Ok(core_id)) => Ok((simulator, core_id)),
            Ok(Err(error)) => {
                simulator.end(Ending::Stop);
                Err(Error::NotReady(error.to_string()))
            }
            Err(_) => {
                simulator.end(Ending::Stop);
                Err(Error::NotReady("its thread ended first".into()))
            }
        }
    }

    /// Ends the simulator as `ending` says and waits until it has ended
    /// (its programs reaped, its runtime shut down). Ending it twice is a
    /// no-op.
    pub(super) fn end(&mut self, ending: Ending) {
        if let Some(sender) = self.ending.take() {
            let _ = sender.send(ending);
        }
        if let Some(thread) = self.thread.take() {
            // A panic on the simulator's thread was already reported there.
            let _ = thread.join();
        }
    }

    /// Whether the simulator has ended (or its thread died).
    pub(super) fn has_ended(&self) -> bool {
        self.thread
            .as_ref()
            .is_none_or(|thread| thread.is_finished())
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        self.end(Ending::Stop);
    }
}

/// The configuration `hc-sim ARGS` would serve, with `binary` as the
/// program its agents and readers run (this process is not `hc-sim`).
fn serve_config(binary: &Path, args: Vec<OsString>) -> Result<ServeConfig, Error> {
    let command_line = std::iter::once(OsString::from("hc-sim")).chain(args);
    let cli = Cli::try_parse_from(command_line)
        .map_err(|error| Error::Options(error.render().to_string()))?;
    match Invocation::try_from(cli) {
        Ok(Invocation::Serve(config)) => {
            let mut config = *config;
            config.sim.own_program = binary.to_path_buf();
            Ok(config)
        }
        Ok(_) => Err(Error::Options("not a command line that serves".into())),
        Err(error) => Err(Error::Options(error.to_string())),
    }
}
