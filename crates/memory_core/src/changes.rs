//! The change feed's cursor (memory_changes, docs/api.md "Change feed").
//!
//! A cursor names a place in the feed: the database's feed epoch, then the transaction id and
//! the sequence number of the last change read, as `<epoch>.<xid>.<seq>`. The feed is ordered
//! by (xid, seq) and a reader sees only transactions older than its snapshot's xmin: every
//! transaction below that line has ended, and every transaction still to write gets a higher
//! id, so the part of the feed below it never changes again and a cursor into it never skips
//! or repeats a change (sql/changes.sql says more).
//!
//! # Why an epoch
//! Transaction ids belong to one cluster. After a dump and restore into another, new changes
//! may carry lower ids than a cursor taken before, and reading on would skip them silently; the
//! epoch is made afresh by every CREATE EXTENSION, so such a cursor is refused instead.

use crate::validate::ArgError;

/// A place in the feed: after the change (xid, seq) of the feed whose epoch is `epoch`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    pub epoch: String,
    pub xid: u64,
    pub seq: i64,
}

/// Most changes one call returns, and the default.
pub const MAX_LIMIT: i64 = 1000;
pub const DEFAULT_LIMIT: i64 = 100;

impl Cursor {
    /// The start of the feed of `epoch`.
    pub fn start(epoch: &str) -> Cursor {
        Cursor {
            epoch: epoch.to_string(),
            xid: 0,
            seq: 0,
        }
    }

    /// Reads a cursor given back by memory_changes, checking it belongs to this feed.
    pub fn parse(text: &str, epoch: &str) -> Result<Cursor, ArgError> {
        let bad = |reason: &str| ArgError::Invalid {
            arg: "since",
            reason: reason.to_string(),
        };
        let mut parts = text.trim().split('.');
        let (Some(e), Some(x), Some(s), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad("not a cursor memory_changes returned"));
        };
        let xid = x
            .parse::<u64>()
            .map_err(|_| bad("not a cursor memory_changes returned"))?;
        let seq = s
            .parse::<i64>()
            .map_err(|_| bad("not a cursor memory_changes returned"))?;
        if seq < 0 || e.is_empty() || !e.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad("not a cursor memory_changes returned"));
        }
        if e != epoch {
            return Err(bad(
                "the cursor is from another database or from before a restore: read the state again and start over with since => NULL",
            ));
        }
        Ok(Cursor {
            epoch: e.to_string(),
            xid,
            seq,
        })
    }

    /// The cursor as memory_changes hands it out.
    pub fn text(&self) -> String {
        format!("{}.{}.{}", self.epoch, self.xid, self.seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_reads_back_what_it_wrote() {
        let c = Cursor {
            epoch: "0a1b2c3d".into(),
            xid: 7_000_000_123,
            seq: 42,
        };
        assert_eq!(Cursor::parse(&c.text(), "0a1b2c3d"), Ok(c));
        assert_eq!(Cursor::start("ff").text(), "ff.0.0");
    }

    #[test]
    fn a_cursor_of_another_feed_or_no_cursor_is_refused() {
        let e = Cursor::parse("0a1b2c3d.5.1", "99999999").unwrap_err();
        assert!(e.to_string().contains("before a restore"), "{e}");
        for bad in [
            "", "x", "0a.1", "0a.1.2.3", "zz.1.2", "0a.-1.2", "0a.1.-2", "0a.1.x", ".1.2",
        ] {
            let e = Cursor::parse(bad, "0a").unwrap_err();
            assert!(e.to_string().contains("not a cursor"), "{bad}: {e}");
        }
    }
}
