//! Writing input to a terminal the way hc 0.1.15 does (contract §4): under
//! the terminal's input lock, check the `if` guard and the blocked refusal,
//! wait for the keyboard to be quiet, paste (bracketed when the program asked
//! for it), press the submit key, log the write, and report the status seen
//! right after. Turning the outcome into wire errors is left to `methods`.
//!
//! Current cores add draft protection (model from public clients,
//! unverified): while the user's draft sits in the terminal's input, a send
//! waits, under the lock, until the draft is submitted or cleared; if it is
//! still there after the protection's time, the send is accepted but not
//! started, and nothing is written.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::input_log::InputLog;
use crate::terminal::{Backend, Terminal};
use crate::wire::{ENTER_BYTES, PASTE_END, PASTE_START, Status};

/// hc waits until the keyboard has been quiet this long before pasting:
/// about 3 s on current cores, per a public client of hc ("once nobody has
/// typed for ~3 s"); this model said 100 ms until 2026-12. `--quiet-ms`
/// shortens it (tests do, so that a suite of sends does not wait seconds
/// on a keyboard nobody types at).
pub(crate) const DEFAULT_KEYBOARD_QUIET_MS: u64 = 3_000;
/// A keyboard that is not quiet within this long of the send's turn makes
/// the send `busy`: hc gives up on a user who keeps typing rather than hold
/// the terminal's input lock for ever. It stays above any quiet period
/// `--quiet-ms` takes, so a keyboard that does go quiet is always waited
/// for; with hc's 3 s, a user may keep typing 7 s into the wait.
pub(crate) const QUIET_WAIT_LIMIT_MS: u64 = 10_000;

/// One `terminal.send`, validated.
#[derive(Debug, Clone)]
pub(crate) struct Input {
    pub text: String,
    pub submit: bool,
    pub guard: Option<Status>,
    /// `force` as sent; false when the request left it out (hc's default).
    pub force: bool,
    /// Whether the request carried `force` at all (the input log says).
    pub force_present: bool,
}

/// What a send observed right after its input was written, or, when
/// `started` is false, when draft protection gave up and wrote nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Accepted {
    pub status: Status,
    pub status_seq: u64,
    pub started: bool,
}

/// Why a send did not complete. Only `Failed` may have written anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    Finished {
        finished_ms: u64,
    },
    Mismatch {
        expected: Status,
        actual: Status,
        status_seq: u64,
    },
    Blocked,
    Busy,
    Failed(String),
}

/// How long a send waits on the user: the draft protection and the
/// keyboard-quiet wait.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Patience {
    /// A draft holds a send at most this long (`--draft-protect-ms`).
    pub draft_protect: Duration,
    /// The keyboard must have been quiet this long (`--quiet-ms`).
    pub keyboard_quiet: Duration,
}

/// Sends `input` to `terminal`, logging the write to `log`, as patient with
/// the user as `patience` says.
pub(crate) async fn send(
    terminal: &Arc<Terminal>,
    input: &Input,
    log: Option<&InputLog>,
    patience: Patience,
) -> Result<Accepted, Refusal> {
    check_live(terminal)?;
    let _lock = terminal.input_lock.lock().await;
    if !terminal
        .wait_for(patience.draft_protect, |state| state.draft == 0)
        .await
    {
        let state = terminal.state();
        return Ok(Accepted {
            status: state.status,
            status_seq: state.status_seq,
            started: false,
        });
    }
    check_guards(terminal, input)?;
    if !input.force && wait_for_quiet_keyboard(terminal, patience.keyboard_quiet).await? {
        // The status may have moved while waiting; the guard holds at the write.
        check_guards(terminal, input)?;
    }
    let mut payload = Vec::with_capacity(input.text.len() + 16);
    if terminal.bracketed_paste() {
        payload.extend_from_slice(PASTE_START);
        payload.extend_from_slice(input.text.as_bytes());
        payload.extend_from_slice(PASTE_END);
    } else {
        payload.extend_from_slice(input.text.as_bytes());
    }
    if input.submit {
        payload.extend_from_slice(ENTER_BYTES);
    }
    // What hc reports is the status at enqueueing: taken before the program
    // can read (and react to) the input, so the caller's `status_seq` never
    // already includes the reaction.
    let (status, status_seq) = {
        let state = terminal.state();
        (state.status, state.status_seq)
    };
    write(terminal, payload).await?;
    if let Some(log) = log {
        log.append(
            &terminal.address,
            terminal.created_ms,
            &input.text,
            input.force_present,
        )
        .map_err(|error| {
            Refusal::Failed(format!("input written, but the input log failed: {error}"))
        })?;
    }
    Ok(Accepted {
        status,
        status_seq,
        started: true,
    })
}

/// Writes raw keystrokes outside the input lock, as a person typing at the
/// terminal would; they count for the keyboard-quiet wait. Not logged.
pub(crate) async fn type_keys(terminal: &Arc<Terminal>, text: &str) -> Result<(), Refusal> {
    check_live(terminal)?;
    write(terminal, text.as_bytes().to_vec()).await?;
    terminal.typed(text);
    Ok(())
}

fn check_live(terminal: &Terminal) -> Result<(), Refusal> {
    match terminal.exit() {
        Some(exit) => Err(Refusal::Finished {
            finished_ms: exit.finished_ms,
        }),
        None => Ok(()),
    }
}

fn check_guards(terminal: &Terminal, input: &Input) -> Result<(), Refusal> {
    check_live(terminal)?;
    let state = terminal.state();
    if let Some(expected) = input.guard
        && expected != state.status
    {
        return Err(Refusal::Mismatch {
            expected,
            actual: state.status,
            status_seq: state.status_seq,
        });
    }
    if state.status == Status::Blocked && !input.force {
        return Err(Refusal::Blocked);
    }
    Ok(())
}

/// Waits until no input has been written for `quiet`; returns whether it
/// had to wait at all. `busy` once [`QUIET_WAIT_LIMIT_MS`] has passed.
async fn wait_for_quiet_keyboard(terminal: &Terminal, quiet: Duration) -> Result<bool, Refusal> {
    let deadline = Instant::now() + Duration::from_millis(QUIET_WAIT_LIMIT_MS);
    let mut waited = false;
    loop {
        let Some(last_input) = terminal.state().last_input else {
            return Ok(waited);
        };
        let quiet_at = last_input + quiet;
        let now = Instant::now();
        if now >= quiet_at {
            return Ok(waited);
        }
        if now >= deadline {
            return Err(Refusal::Busy);
        }
        tokio::time::sleep_until(quiet_at.min(deadline).into()).await;
        waited = true;
    }
}

/// One write of the whole payload; stamps the keyboard's last-input time.
async fn write(terminal: &Arc<Terminal>, payload: Vec<u8>) -> Result<(), Refusal> {
    if let Backend::Pty(_) = terminal.backend {
        let writer = Arc::clone(terminal);
        let written = tokio::task::spawn_blocking(move || match &writer.backend {
            Backend::Pty(program) => program.write_all(&payload),
            Backend::Sink => Ok(()),
        })
        .await
        .map_err(|error| Refusal::Failed(format!("input writer stopped: {error}")))?;
        written.map_err(|error| Refusal::Failed(format!("writing input failed: {error}")))?;
    }
    terminal.state().last_input = Some(Instant::now());
    Ok(())
}
