//! A config opened for editing by `allow`, `revoke` and `inspect-core
//! --accept`: read and validated from one text, edited as a JSON document
//! so every other key keeps its value and place, and replaced atomically.
//! The approvals are edited as typed lifetimes ([`RawLifetime`]), never
//! as raw JSON keys, and written back in place of the array they came
//! from.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::config::{self, Config, ConfigError, RawConfig, RawLifetime};

/// The key of the approvals in the config.
pub(super) const ALLOWLIST_KEY: &str = "sendAllowlist";

/// A config opened for editing: its JSON document (checked to load and
/// validate from this same text, so what is edited is what was checked),
/// the validated config, and the real file behind any symlink, which is
/// the one rewritten (the link stays a link).
pub(super) struct Editing {
    pub doc: Value,
    pub config: Config,
    pub resolved: PathBuf,
}

pub(super) fn load(path: &Path) -> Result<Editing, ConfigError> {
    let checked = config::read_checked(path)?;
    let config = Config::validate(path, RawConfig::parse(path, &checked.text)?)?;
    let doc: Value = serde_json::from_str(&checked.text).map_err(|e| ConfigError::Parse {
        path: path.to_path_buf(),
        detail: e.to_string(),
    })?;
    Ok(Editing {
        doc,
        config,
        resolved: checked.resolved,
    })
}

/// The array at `key`, made one (empty) when absent or of another type.
pub(super) fn array_at<'a>(object: &'a mut Map<String, Value>, key: &str) -> &'a mut Vec<Value> {
    let slot = object.entry(key).or_insert_with(|| json!([]));
    if !slot.is_array() {
        *slot = json!([]);
    }
    slot.as_array_mut().expect("just made an array")
}

/// The approvals of a loaded config's document, typed. A document that
/// loaded validated, so every entry reads; an entry that somehow does not
/// is kept out (and so dropped on the next write) rather than guessed at.
pub(super) fn approvals(object: &Map<String, Value>) -> Vec<RawLifetime> {
    object
        .get(ALLOWLIST_KEY)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|entry| serde_json::from_value(entry.clone()).ok())
        .collect()
}

/// Writes `entries` as the document's approvals, in their order.
pub(super) fn set_approvals(object: &mut Map<String, Value>, entries: &[RawLifetime]) {
    let entries = entries
        .iter()
        .map(|entry| serde_json::to_value(entry).expect("a lifetime encodes"))
        .collect();
    object.insert(ALLOWLIST_KEY.to_owned(), Value::Array(entries));
}

/// The config file's text.
pub(super) fn document(doc: &Value) -> String {
    let mut text = serde_json::to_string_pretty(doc).expect("a JSON document encodes");
    text.push('\n');
    text
}

/// Writing the new file failed; the old one is unchanged.
#[derive(Debug, thiserror::Error)]
#[error("cannot {what} {path}: {source}; the config is unchanged", path = path.display())]
pub struct WriteError {
    what: &'static str,
    path: PathBuf,
    #[source]
    source: std::io::Error,
}

/// Replaces the config at `path` with `doc` (see `config::replace`).
pub(super) fn write_atomically(path: &Path, doc: &Value) -> Result<(), WriteError> {
    config::replace(path, &document(doc)).map_err(|(what, source)| WriteError {
        what,
        path: path.to_path_buf(),
        source,
    })
}
