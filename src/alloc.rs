//! Allocator tuning for a long-running server.
//!
//! Every Argon2id hash or verify allocates a 19 MiB block. glibc serves the
//! first from `mmap`, then raises its mmap threshold to that size, so later
//! blocks come from per-thread heaps and stay resident after they are freed:
//! a server that handled a few logins on a few threads idled at 70 MiB
//! instead of 25 MiB. A fixed threshold keeps large blocks on `mmap`, so
//! they go back to the system when freed (at the cost of a fresh mapping
//! per hash, small beside the hash itself).

/// Allocations from this size up are mapped on their own and unmapped on free.
pub const MMAP_THRESHOLD: usize = 1 << 20;

/// Makes the allocator return large freed blocks to the system. Call once,
/// at start, before the server's threads exist. Does nothing where the C
/// library is not glibc.
pub fn return_large_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let threshold = libc::c_int::try_from(MMAP_THRESHOLD).unwrap_or(libc::c_int::MAX);
        // SAFETY: mallopt only changes an allocator parameter; glibc takes
        // its own lock, and this runs before the server starts its threads.
        let changed = unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, threshold) };
        if changed != 1 {
            tracing::warn!("could not set the allocator's mmap threshold");
        }
    }
}
