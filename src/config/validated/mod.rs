//! The validated config: [`Config`], built only by `TryFrom<RawConfig>`,
//! whose fields are private, so an unvalidated one cannot exist; and the
//! [`Transport`] it serves.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::allowlist::{Approval, Approvals, TerminalLifetime, allowlist};
use super::error::{ConfigError, Invalid, invalid};
use super::file;
use super::http::{self, HttpConfig};
use super::machines::MachineScope;
use super::numbers::{self, in_range};
use super::raw::{GuardShown, OmittedParam, RawConfig, RawHcVersion, RawTransport};
use super::send_mode::SendMode;

mod restart;
use crate::hc::{Acceptance, AcceptedVersion, CoreId, HcClient};

/// Longest version string `hcVersions` takes.
const MAX_VERSION_CHARS: usize = 64;

/// The transport `serve` speaks; only HTTP has settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// MCP over stdin and stdout: the host starts `serve`.
    Stdio,
    /// MCP over HTTP on the loopback, with the `http` block's settings.
    Http(HttpConfig),
}

/// A validated configuration: only [`TryFrom<RawConfig>`] builds one.
#[derive(Debug, Clone)]
pub struct Config {
    socket_path: PathBuf,
    transport: Transport,
    core_id: Option<CoreId>,
    send_mode: SendMode,
    send_allowlist: HashMap<TerminalLifetime, Approval>,
    /// The machine core each approval of a machine's terminal is bound to.
    machine_cores: HashMap<TerminalLifetime, CoreId>,
    machines: MachineScope,
    hc_versions: Vec<RawHcVersion>,
    timeout: Duration,
    send_timeout: Duration,
    wait_max: Duration,
    confirm_timeout: Duration,
    confirm_call_timeout: Duration,
    audit_log: Option<PathBuf>,
    /// ` --config PATH` for the commands hints name, empty for the default.
    operator_flag: String,
}

impl Config {
    /// Loads and validates the config at `path`.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        Config::validate(path, RawConfig::load(path)?)
    }

    /// Validates a raw config; `path` labels messages, and the operator's
    /// commands the hints name (`--config` unless it is the default).
    pub fn validate(path: &Path, raw: RawConfig) -> Result<Config, ConfigError> {
        let flag = file::config_flag(path);
        Config::try_from(raw)
            .map(|config| Config {
                operator_flag: flag,
                ..config
            })
            .map_err(|invalid| ConfigError::Invalid {
                path: path.to_path_buf(),
                invalid,
            })
    }

    /// hc's socket (`socketPath`).
    pub fn socket_path(&self) -> &Path {
        &self.socket_path
    }

    /// The transport `serve` speaks (`transport`).
    pub fn transport(&self) -> &Transport {
        &self.transport
    }

    /// The core sends are approved for; without one nothing can be sent.
    pub fn core_id(&self) -> Option<&CoreId> {
        self.core_id.as_ref()
    }

    /// ` --config PATH` to add to an operator's command a hint names (such
    /// as `herdr-core-mcp allow`), or empty when this is the default config.
    pub fn operator_flag(&self) -> &str {
        &self.operator_flag
    }

    /// The top-level `sendMode`: the mode of every approval that names none.
    pub fn send_mode(&self) -> SendMode {
        self.send_mode
    }

    /// How many terminal lifetimes are approved.
    pub fn approved_count(&self) -> usize {
        self.send_allowlist.len()
    }

    /// Approved lifetimes by the mode sends to them use: (`idle-only`,
    /// `normal`), each entry's own mode or else the top-level one.
    pub fn approved_by_mode(&self) -> (usize, usize) {
        let normal = self
            .send_allowlist
            .values()
            .filter(|a| a.mode(self.send_mode) == SendMode::Normal)
            .count();
        (self.send_allowlist.len() - normal, normal)
    }

    /// Bound of each core call.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Bound of one `terminal.send` (`sendTimeoutMs`).
    pub fn send_timeout(&self) -> Duration {
        self.send_timeout
    }

    /// The hc versions accepted beyond the built-in one (`hcVersions`),
    /// with when each was checked.
    pub fn hc_versions(&self) -> &[RawHcVersion] {
        &self.hc_versions
    }

    /// What the core client speaks: the built-in version and `hcVersions`,
    /// its refusals naming this config.
    pub fn acceptance(&self) -> Acceptance {
        Acceptance {
            versions: self
                .hc_versions
                .iter()
                .map(|v| AcceptedVersion {
                    version: v.version.clone(),
                    document_sha256: v.document_sha256.clone(),
                    // An entry without `guard` was written when a document
                    // was only accepted if it declared the guard.
                    guard_shown: match v.guard {
                        Some(GuardShown::LiveCheck | GuardShown::Document) => true,
                        None => v.document_sha256.is_some(),
                    },
                    omits_force: v.params_omitted.contains(&OmittedParam::Force),
                })
                .collect(),
            operator_flag: self.operator_flag.clone(),
        }
    }

    /// A client of this config's core: its socket, timeouts and accepted
    /// versions.
    pub fn hc_client(&self) -> HcClient {
        HcClient::with(
            &self.socket_path,
            self.timeout,
            self.send_timeout,
            self.acceptance(),
        )
    }

    /// Longest one wait call may wait.
    pub fn wait_max(&self) -> Duration {
        self.wait_max
    }

    /// How long a 2026-07-28 confirmation (its sealed request state) stays
    /// valid.
    pub fn confirm_timeout(&self) -> Duration {
        self.confirm_timeout
    }

    /// How long a question asked inside the tool call waits for the human.
    pub fn confirm_call_timeout(&self) -> Duration {
        self.confirm_call_timeout
    }

    /// Where each send attempt is also recorded, if anywhere.
    pub fn audit_log(&self) -> Option<&Path> {
        self.audit_log.as_deref()
    }

    /// The approval of `lifetime` on core `core_id`: none unless `coreId`
    /// names that core and the exact lifetime is listed.
    pub fn approval(&self, core_id: &CoreId, lifetime: &TerminalLifetime) -> Option<Approval> {
        if self.core_id.as_ref() != Some(core_id) {
            return None;
        }
        self.send_allowlist.get(lifetime).copied()
    }

    /// The machine core the approval of `lifetime` (a machine's terminal)
    /// was bound to, when `allow` could see one.
    pub fn approved_machine_core(&self, lifetime: &TerminalLifetime) -> Option<&CoreId> {
        self.machine_cores.get(lifetime)
    }

    /// The machines whose terminals this adapter shows (`machines`).
    pub fn machines(&self) -> &MachineScope {
        &self.machines
    }

    /// Whether `(core_id, lifetime)` may receive input.
    pub fn is_send_approved(&self, core_id: &CoreId, lifetime: &TerminalLifetime) -> bool {
        self.approval(core_id, lifetime).is_some()
    }

    /// Every approved lifetime, in no particular order.
    pub fn approvals(&self) -> impl Iterator<Item = (&TerminalLifetime, Approval)> {
        self.send_allowlist.iter().map(|(l, a)| (l, *a))
    }

    /// Whether any approved lifetime at `address` takes multi-line prompts
    /// (before the live lifetime is known, this decides whether a prompt
    /// with TAB or LF is refused at once).
    pub fn multiline_possible(&self, address: &str) -> bool {
        self.send_allowlist
            .iter()
            .any(|(lifetime, approval)| approval.multiline && lifetime.address == address)
    }
}

impl TryFrom<RawConfig> for Config {
    type Error = Invalid;

    fn try_from(raw: RawConfig) -> Result<Config, Invalid> {
        if !raw.socket_path.is_absolute() {
            return Err(invalid(
                "socketPath",
                format!("must be an absolute path, got {:?}", raw.socket_path),
            ));
        }
        if has_nul(&raw.socket_path) {
            return Err(invalid(
                "socketPath",
                "contains a NUL character (\\u0000), which no path can hold: write the socket's path as it is",
            ));
        }
        let core_id = raw
            .core_id
            .map(CoreId::try_from)
            .transpose()
            .map_err(|e| invalid("coreId", e.to_string()))?;
        for (number, value) in [
            (&numbers::TIMEOUT_MS, raw.timeout_ms),
            (&numbers::WAIT_MAX_MS, raw.wait_max_ms),
            (&numbers::CONFIRM_TIMEOUT_MS, raw.confirm_timeout_ms),
            (
                &numbers::CONFIRM_CALL_TIMEOUT_MS,
                raw.confirm_call_timeout_ms,
            ),
            (&numbers::SEND_TIMEOUT_MS, raw.send_timeout_ms),
        ] {
            in_range(number, value)?;
        }
        check_hc_versions(&raw.hc_versions)?;
        let Approvals {
            approvals: send_allowlist,
            machine_cores,
        } = allowlist(raw.send_allowlist)?;
        let machines = super::machines::scope(raw.machines)?;
        if let Some(path) = raw.audit_log.as_ref().filter(|p| !p.is_absolute()) {
            return Err(invalid(
                "auditLog",
                format!("must be an absolute path, got {path:?}"),
            ));
        }
        if raw.audit_log.as_deref().is_some_and(has_nul) {
            return Err(invalid(
                "auditLog",
                "contains a NUL character (\\u0000), which no path can hold",
            ));
        }
        // The http block is checked even for stdio, so a mistake in it shows
        // now rather than on the day the transport is switched.
        let http = http::validate(raw.http.unwrap_or_default())?;
        let transport = match raw.transport {
            RawTransport::Stdio => Transport::Stdio,
            RawTransport::Http => Transport::Http(http),
        };
        Ok(Config {
            socket_path: raw.socket_path,
            transport,
            core_id,
            send_mode: raw.send_mode,
            send_allowlist,
            machine_cores,
            machines,
            hc_versions: raw.hc_versions,
            timeout: Duration::from_millis(raw.timeout_ms),
            send_timeout: Duration::from_millis(raw.send_timeout_ms),
            wait_max: Duration::from_millis(raw.wait_max_ms),
            confirm_timeout: Duration::from_millis(raw.confirm_timeout_ms),
            confirm_call_timeout: Duration::from_millis(raw.confirm_call_timeout_ms),
            audit_log: raw.audit_log,
            operator_flag: String::new(),
        })
    }
}

/// Whether `version` can be listed in `hcVersions`: 1 to 64 printable
/// ASCII characters.
pub(crate) fn is_acceptable_version(version: &str) -> bool {
    !version.is_empty()
        && version.len() <= MAX_VERSION_CHARS
        && version.bytes().all(|b| b.is_ascii_graphic())
}

/// Each `hcVersions` entry names one version once, in printable words, with
/// a SHA-256 in hex or null.
fn check_hc_versions(versions: &[RawHcVersion]) -> Result<(), Invalid> {
    for (i, entry) in versions.iter().enumerate() {
        let key = format!("hcVersions[{i}]");
        let version = &entry.version;
        if !is_acceptable_version(version) {
            return Err(invalid(
                format!("{key}.version"),
                format!(
                    "must be hc's version as its hello reports it (1 to {MAX_VERSION_CHARS} printable ASCII characters), got {}",
                    crate::escape::bounded(&format!("{version:?}"), 80)
                ),
            ));
        }
        if versions[..i].iter().any(|e| e.version == *version) {
            return Err(invalid(
                format!("{key}.version"),
                format!("{version} is listed twice: keep one entry per version"),
            ));
        }
        if entry.guard == Some(GuardShown::Document) && entry.document_sha256.is_none() {
            return Err(invalid(
                format!("{key}.guard"),
                "is \"document\", but no document_sha256 binds that document: let inspect-core --check-contract --accept write the entry",
            ));
        }
        if !entry.params_omitted.is_empty() && entry.document_sha256.is_none() {
            return Err(invalid(
                format!("{key}.params_omitted"),
                "names params the core's document does not declare, but no document_sha256 binds that document: let inspect-core --check-contract --accept write the entry",
            ));
        }
        if let Some(sha) = &entry.document_sha256
            && !(sha.len() == 64
                && sha
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
        {
            return Err(invalid(
                format!("{key}.document_sha256"),
                "must be 64 lowercase hex digits, or null: let inspect-core --check-contract --accept write it",
            ));
        }
    }
    Ok(())
}

/// A path with a NUL byte: the kernel would read it cut short there, so it
/// would name another file than the one written.
fn has_nul(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    path.as_os_str().as_bytes().contains(&0)
}
