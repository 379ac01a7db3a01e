//! MCP over stdio: what an MCP host launches. Only protocol reaches stdout.

use std::sync::Arc;

use rmcp::ServiceExt;

use crate::app::App;
use crate::cli::Failure;
use crate::tools::HerdrServer;

/// Serves until stdin closes, the client ends the session, or `shutdown`.
pub async fn serve(app: Arc<App>, shutdown: impl Future<Output = ()>) -> Result<(), Failure> {
    tracing::info!("serving MCP over stdio");
    let server = HerdrServer::new(app);
    tokio::pin!(shutdown);
    let running = tokio::select! {
        running = server.serve(rmcp::transport::stdio_pipes()) => running,
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
                return Err(Failure::Runtime(format!("the stdio session failed: {e}")));
            }
        }
        () = &mut shutdown => token.cancel(),
    }
    tracing::info!("stdio session closed");
    Ok(())
}
