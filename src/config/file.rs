//! Reading the config file: it holds send authority, so it is opened once,
//! checked on the open descriptor (a regular file of sane size that nobody
//! but its owner can write), and only then read.

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::ConfigError;

/// Config files bigger than this are not configs; refuse before parsing.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// The text of `path`, after checking it is a regular file of sane size
/// that nobody but its owner can write.
pub fn read_checked(path: &Path) -> Result<String, ConfigError> {
    let read_error = |source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(read_error)?;
    let meta = file.metadata().map_err(read_error)?;
    if !meta.is_file() {
        return Err(ConfigError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o022 != 0 {
        return Err(ConfigError::Permissions {
            path: path.to_path_buf(),
            mode,
        });
    }
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(ConfigError::TooLarge {
            path: path.to_path_buf(),
        });
    }
    let mut text = String::new();
    file.read_to_string(&mut text).map_err(read_error)?;
    Ok(text)
}
