//! Resource limits for a child the tests start, set between fork and exec:
//! the tests' one `unsafe` (std has no other way to limit a child before it
//! runs, and a limit set after the spawn would race its start).

/// The limits to put on a child.
#[derive(Debug, Default, Clone, Copy)]
pub struct ChildLimits {
    /// `RLIMIT_NOFILE`, soft and hard: the descriptors it may open.
    pub open_files: Option<u64>,
    /// `RLIMIT_FSIZE`, soft and hard: the largest file it may write. A
    /// write past it then fails with `EFBIG` (`SIGXFSZ` is ignored).
    pub file_bytes: Option<u64>,
}

/// Sets `limits` on the child `command` will start.
pub fn limit_child(command: &mut tokio::process::Command, limits: ChildLimits) {
    let set = |resource, value: u64| {
        let limit = libc::rlimit {
            rlim_cur: value,
            rlim_max: value,
        };
        // SAFETY (called in the child): setrlimit reads a valid struct.
        #[expect(unsafe_code, reason = "setrlimit in the child")]
        if unsafe { libc::setrlimit(resource, &limit) } == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    };
    // SAFETY: between fork and exec the closure makes only
    // async-signal-safe calls (signal, setrlimit) and allocates nothing.
    #[expect(unsafe_code, reason = "pre_exec between fork and exec")]
    unsafe {
        command.pre_exec(move || {
            if let Some(bytes) = limits.file_bytes {
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                set(libc::RLIMIT_FSIZE, bytes)?;
            }
            if let Some(files) = limits.open_files {
                set(libc::RLIMIT_NOFILE, files)?;
            }
            Ok(())
        });
    }
}
