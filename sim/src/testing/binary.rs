//! Where the `hc-sim` binary is: `$HC_SIM_BIN`, or the `examples/hc-sim`
//! that cargo built into the profile directory of the running executable.
//! Building it is left to the caller (`cargo build --example hc-sim`).

use std::path::{Path, PathBuf};

use super::{BINARY_ENV, Error};

/// The simulator binary's file name (a `cargo build --example hc-sim`).
const BINARY_NAME: &str = "hc-sim";

/// The `hc-sim` binary: `$HC_SIM_BIN` if set, else `examples/hc-sim` in
/// the cargo profile directory the running executable was built into (a
/// test runs from `target/<profile>/deps/`, an example from
/// `target/<profile>/examples/`, a binary from `target/<profile>/`).
pub fn locate_binary() -> Result<PathBuf, Error> {
    let path = match std::env::var_os(BINARY_ENV) {
        Some(path) => PathBuf::from(path),
        None => {
            let exe =
                std::env::current_exe().map_err(Error::io("locate the running executable"))?;
            binary_beside(&exe)
        }
    };
    if path.is_file() {
        Ok(path)
    } else {
        Err(Error::BinaryMissing(path))
    }
}

/// Where `hc-sim` is built for the executable at `exe`.
fn binary_beside(exe: &Path) -> PathBuf {
    let dir = exe.parent().unwrap_or(Path::new("."));
    let profile = match dir.file_name() {
        Some(name) if name == "deps" || name == "examples" => dir.parent().unwrap_or(dir),
        _ => dir,
    };
    profile.join("examples").join(BINARY_NAME)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_binary_is_found_in_the_profile_dir_of_tests_examples_and_binaries() {
        for exe in [
            "/w/target/debug/deps/sim-0123abcd",
            "/w/target/debug/examples/loadgen",
            "/w/target/debug/herdr-core-mcp",
        ] {
            assert_eq!(
                binary_beside(Path::new(exe)),
                Path::new("/w/target/debug/examples/hc-sim"),
                "from {exe}"
            );
        }
    }
}
