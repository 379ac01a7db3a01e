//! The open-file limit. Every HTTP connection holds two descriptors (its
//! socket and the duplicate its slot peeks at), so a flood must meet the
//! adapter's own bound on unauthenticated connections (`slots`) before the
//! kernel's EMFILE, which would stop every accept, an authorised client's
//! included. At start the soft limit is raised to the hard one, and the
//! bound is derived from what is then in effect.

/// Highest soft limit asked for when the hard limit is unlimited.
const CEILING: u64 = 1 << 20;

/// Raises the soft `RLIMIT_NOFILE` to the hard limit (at most [`CEILING`]);
/// returns the soft limit in effect afterwards.
pub fn raise_to_hard_limit() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the valid struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        // Unknown: assume the common default.
        return 1024;
    }
    let wanted = limit.rlim_max.min(CEILING);
    if limit.rlim_cur < wanted {
        let raised = libc::rlimit {
            rlim_cur: wanted,
            rlim_max: limit.rlim_max,
        };
        // SAFETY: setrlimit reads the valid struct it is given; raising the
        // soft limit up to the hard one needs no privilege.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            return wanted;
        }
    }
    limit.rlim_cur
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_soft_limit_ends_at_the_hard_one() {
        let raised = raise_to_hard_limit();
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: as above.
        assert_eq!(
            unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) },
            0
        );
        assert_eq!(raised, limit.rlim_cur);
        assert_eq!(limit.rlim_cur, limit.rlim_max.min(CEILING));
    }
}
