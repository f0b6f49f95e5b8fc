//! A value remembered for the rest of the running statement: the tenant's grants that every
//! row policy asks for (src/pg/spaces.rs), the query's vector that each space's search uses
//! (src/embed/mod.rs), the tenant's language that a query reads for its time words and its
//! lexemes (src/pg/fulltext.rs).
//!
//! # Why per statement
//! The statement's start time and the transaction's local id key it: a later statement (in the
//! same transaction or not) reads afresh, so a revoke, a settings change or a new write is
//! seen at the next statement, and nothing is kept across a transaction that rolled back.

use pgrx::pg_sys;
use std::cell::RefCell;

/// One remembered value and the key it was made for. Kept in a `thread_local!` by its user.
pub struct Memo<K, V> {
    last: RefCell<Option<(K, u32, pg_sys::TimestampTz, V)>>,
}

impl<K: PartialEq, V> Memo<K, V> {
    pub const fn new() -> Self {
        Memo {
            last: RefCell::new(None),
        }
    }

    /// `f` of the value remembered for `key` in this statement, made by `make` first when
    /// there is none. `make` runs with nothing borrowed, so it may run SQL that asks for the
    /// same memo.
    pub fn with<R>(&self, key: K, make: impl FnOnce(&K) -> V, f: impl FnOnce(&V) -> R) -> R {
        let lxid = super::version::local_xid();
        // SAFETY: reads the backend's statement start time, set before any statement runs.
        let statement = unsafe { pg_sys::GetCurrentStatementStartTimestamp() };
        let fresh = self
            .last
            .borrow()
            .as_ref()
            .is_some_and(|(k, x, t, _)| *k == key && *x == lxid && *t == statement);
        if !fresh {
            let v = make(&key);
            *self.last.borrow_mut() = Some((key, lxid, statement, v));
        }
        let last = self.last.borrow();
        let (_, _, _, v) = last.as_ref().expect("set above");
        f(v)
    }

    /// Forgets the value, so that the next `with` in this statement makes it again (a grant
    /// the statement itself wrote).
    pub fn forget(&self) {
        *self.last.borrow_mut() = None;
    }
}
