//! What a reload cannot change: the settings a serve keeps from its start
//! (socket, transport and HTTP, timeouts, audit log), as comparable text,
//! and a new config as a running serve applies it.

use super::{Config, Transport};

impl Config {
    /// The settings fixed at start, which a reload cannot change, each as
    /// comparable text (the HTTP settings as a digest: no value of theirs
    /// is kept in the clear).
    pub fn restart_settings(&self) -> std::collections::BTreeMap<&'static str, String> {
        use sha2::Digest;
        let http = match &self.transport {
            Transport::Stdio => String::new(),
            Transport::Http(http) => sha2::Sha256::digest(format!("{http:?}").as_bytes())
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect(),
        };
        [
            ("socketPath", self.socket_path.display().to_string()),
            (
                "transport",
                match self.transport {
                    Transport::Stdio => "stdio".to_owned(),
                    Transport::Http(_) => "http".to_owned(),
                },
            ),
            ("http", http),
            ("timeoutMs", self.timeout.as_millis().to_string()),
            ("sendTimeoutMs", self.send_timeout.as_millis().to_string()),
            (
                "auditLog",
                self.audit_log
                    .as_ref()
                    .map_or(String::new(), |p| p.display().to_string()),
            ),
        ]
        .into_iter()
        .collect()
    }

    /// `new` as a running server applies it on reload: the settings fixed at
    /// start (socket, transport, timeout) keep this config's values. Also
    /// names the settings that changed but need a restart.
    pub fn reloaded(&self, new: Config) -> (Config, Vec<&'static str>) {
        let (before, after) = (self.restart_settings(), new.restart_settings());
        let needs_restart: Vec<&'static str> = after
            .iter()
            .filter(|(key, value)| before.get(*key) != Some(*value))
            .map(|(key, _)| *key)
            .collect();
        let applied = Config {
            socket_path: self.socket_path.clone(),
            transport: self.transport.clone(),
            timeout: self.timeout,
            send_timeout: self.send_timeout,
            audit_log: self.audit_log.clone(),
            ..new
        };
        (applied, needs_restart)
    }
}
