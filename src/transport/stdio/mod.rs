//! MCP over stdio: what an MCP host launches. Only protocol reaches stdout.
//! The pipes are injected, so the same code serves the process's stdin and
//! stdout or an in-process duplex; `lines` frames them and answers
//! malformed lines itself.

mod lines;

use std::pin::Pin;

use rmcp::ServiceExt;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::mcp::HerdrServer;

type Reader = Pin<Box<dyn AsyncRead + Send>>;
type Writer = Pin<Box<dyn AsyncWrite + Send>>;

/// The two byte streams of one stdio session.
pub struct Pipes {
    reader: Reader,
    writer: Writer,
}

impl Pipes {
    /// The process's own stdin and stdout: through tokio's non-blocking
    /// pipe driver when both are pipes (as an MCP host launches us), which
    /// saves a thread hand-off per message; else the blocking handles.
    /// Needs a running tokio runtime.
    pub fn process() -> Pipes {
        let (reader, writer) = rmcp::transport::stdio_pipes();
        Pipes::new(reader, writer)
    }

    /// Pipes over `reader` (the client's messages) and `writer` (the answers).
    pub fn new(
        reader: impl AsyncRead + Send + 'static,
        writer: impl AsyncWrite + Send + 'static,
    ) -> Pipes {
        Pipes {
            reader: Box::pin(reader),
            writer: Box::pin(writer),
        }
    }
}

/// Why a stdio session failed: the task serving it ended abnormally.
#[derive(Debug, thiserror::Error)]
#[error("the stdio session failed: {0}")]
pub struct SessionError(#[from] tokio::task::JoinError);

/// Serves one session until the input closes, the client ends the session,
/// or `shutdown`.
pub(crate) async fn serve(
    server: HerdrServer,
    pipes: Pipes,
    shutdown: impl Future<Output = ()>,
) -> Result<(), SessionError> {
    tracing::info!("serving MCP over stdio");
    tokio::pin!(shutdown);
    let running = tokio::select! {
        running = server.clone().serve(lines::Lines::new(pipes.reader, pipes.writer, server)) => running,
        () = &mut shutdown => return Ok(()),
    };
    let running = match running {
        Ok(running) => running,
        // The client left (or spoke no MCP) before the session began.
        Err(e) => {
            tracing::info!("stdio session ended before it began: {e}");
            return Ok(());
        }
    };
    let token = running.cancellation_token();
    tokio::select! {
        quit = running.waiting() => {
            if let Err(e) = quit {
                return Err(SessionError(e));
            }
        }
        () = &mut shutdown => token.cancel(),
    }
    tracing::info!("stdio session closed");
    Ok(())
}
