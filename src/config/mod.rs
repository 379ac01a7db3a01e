//! The operator's JSON config: parsed by figment into a [`RawConfig`] that
//! refuses unknown keys (`raw`), read only after its permissions are checked
//! (`file`), then validated by `TryFrom` into a [`Config`] whose fields are
//! private, so an unvalidated one cannot be built. The bearer token is not
//! here: it comes only from the environment (see `transport::http::auth::tokens`).

mod allowlist;
mod auth;
mod error;
mod file;
mod http;
mod lock;
mod machines;
mod numbers;
mod parse_detail;
mod raw;
mod send_mode;
mod validated;

pub use allowlist::Approval;
pub(crate) use allowlist::TerminalLifetime;
pub use auth::HttpAuth;
pub(crate) use auth::{Introspection, OAuthConfig, is_loopback};
pub(crate) use error::ConfigError;
#[cfg(test)]
pub(crate) use error::Invalid;
pub(crate) use file::{check_directories, current_uid, default_path, read_checked, replace};
pub(crate) use http::HttpConfig;
pub(crate) use lock::{LockError, lock};
pub(crate) use machines::{Hidden, MachineScope};
pub(crate) use raw::{GuardShown, OmittedParam};
pub use raw::{RawConfig, RawHcVersion};
pub(crate) use raw::{RawHttp, RawLifetime, RawTransport};
pub(crate) use send_mode::SendMode;
pub(crate) use validated::is_acceptable_version;
pub use validated::{Config, Transport};

#[cfg(test)]
mod tests;
