//! What this process may use: a memory budget is lowered to half the address-space limit
//! (`ulimit -v`, `prlimit --as`) when that is lower, so that work the process could not hold is
//! refused in one line before it starts instead of aborting half-way on a failed allocation.

/// `budget`, or half the process's address-space limit when that is lower (the other half is
/// for the program, the inputs and what the allocator keeps).
pub fn memory_budget(budget: u64) -> u64 {
    address_space_limit().map_or(budget, |limit| budget.min(limit / 2))
}

/// The soft limit on this process's address space, if it has one.
#[cfg(unix)]
#[allow(unsafe_code)]
pub(crate) fn address_space_limit() -> Option<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit, which lives in this frame; nothing else is touched.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_AS, &raw mut lim) };
    #[allow(clippy::unnecessary_cast, reason = "rlim_t is u64 on Linux, not on every unix")]
    let current = lim.rlim_cur as u64;
    (rc == 0 && lim.rlim_cur != libc::RLIM_INFINITY).then_some(current)
}

#[cfg(not(unix))]
pub(crate) fn address_space_limit() -> Option<u64> {
    None
}

/// A budget in GiB as messages print it: `4`, or `0.5` under a lower address-space limit.
pub fn gib_text(bytes: u64) -> String {
    if bytes.is_multiple_of(1 << 30) {
        (bytes >> 30).to_string()
    } else {
        format!("{:.2}", bytes as f64 / (1u64 << 30) as f64)
    }
}
