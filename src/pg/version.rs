//! What differs between the PostgreSQL major versions memory_ext builds for (15, 17, 18; the
//! `pgNN` features in Cargo.toml). This is the one module with `#[cfg(feature = "pgNN")]`:
//! everything else reads the same on every version and calls through here.

use pgrx::pg_sys;

/// The backend's local transaction id: a new one per top-level transaction, so a per-transaction
/// cache can tell a stale entry without a callback.
pub fn local_xid() -> u32 {
    // SAFETY: MyProc is the backend's own PGPROC, set before any SQL function can run.
    // PostgreSQL 17 moved the id into PGPROC's `vxid` (with the backend's ProcNumber).
    #[cfg(feature = "pg15")]
    let lxid = unsafe { (*pg_sys::MyProc).lxid };
    #[cfg(any(feature = "pg17", feature = "pg18"))]
    let lxid = unsafe { (*pg_sys::MyProc).vxid.lxid };
    lxid
}

/// Installs `handler` for signal `signo` in this process, as a background worker does before it
/// unblocks signals.
///
/// # Safety
/// `handler` must be async-signal-safe (it runs inside a signal handler).
pub unsafe fn set_signal_handler(signo: u32, handler: pg_sys::pqsigfunc) {
    // PostgreSQL 18 named the backend's function pqsignal_be (`pqsignal` became a macro over it).
    #[cfg(any(feature = "pg15", feature = "pg17"))]
    unsafe {
        pg_sys::pqsignal(signo as i32, handler);
    }
    #[cfg(feature = "pg18")]
    unsafe {
        pg_sys::pqsignal_be(signo as i32, handler);
    }
}

/// A copy of `s` in the memory GUC string values live in (the memory the GUC machinery frees a
/// replaced value and a check hook's `extra` with); NULL when out of memory.
///
/// # Safety
/// `s` must be a valid NUL-terminated string.
pub unsafe fn guc_strdup(s: *const std::ffi::c_char) -> *mut std::ffi::c_char {
    // PostgreSQL 15 keeps GUC strings in malloc'd memory; 16 and later in its own GUC memory
    // context, freed with guc_free (libc's free on such a chunk aborts the backend).
    #[cfg(feature = "pg15")]
    unsafe {
        libc::strdup(s)
    }
    #[cfg(any(feature = "pg17", feature = "pg18"))]
    unsafe {
        pg_sys::guc_strdup(pg_sys::LOG as i32, s)
    }
}

/// Frees a GUC string value (one the machinery handed to a check hook, or one of [`guc_strdup`]).
///
/// # Safety
/// `p` must be such a value, not used afterwards.
pub unsafe fn guc_free(p: *mut std::ffi::c_char) {
    #[cfg(feature = "pg15")]
    unsafe {
        libc::free(p as *mut std::ffi::c_void)
    }
    #[cfg(any(feature = "pg17", feature = "pg18"))]
    unsafe {
        pg_sys::guc_free(p as *mut std::ffi::c_void)
    }
}
