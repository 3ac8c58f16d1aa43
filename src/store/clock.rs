//! The catalog's clock (issue 17 §3): the time workers on many machines agree on.
//!
//! A lease is a time in the catalog: a worker holds a run until `expires_at`, and another
//! worker takes it over once that has passed. Were each worker to read its own clock,
//! a machine whose clock runs ten minutes ahead would find every live worker's lease
//! expired and take its run over (two runs of one publisher at once), and one running
//! behind would hold leases that others find expired while it works. So the times of
//! leases (claim, renewal, expiry) are read from the catalog's clock: PostgreSQL's
//! `clock_timestamp()` on the database server, one round trip per claim or renewal.
//!
//! Deposit times come from the worker's own clock (they are written in the same
//! transactions as everything else, and order the Change Lists a Destination syncs
//! from); a worker whose clock is further from the catalog's than
//! `[catalog] max_clock_offset_secs` therefore does not start, and stops claiming runs
//! while it is off (CockroachDB's `--max-offset` is the same rule: a node whose clock
//! is too far from the others' does not take part). With SQLite there is one machine
//! and one clock: the reading is this machine's and costs nothing.

use chrono::{DateTime, Duration, Utc};

use super::StoreError;
use super::catalog::Catalog;
use super::sql::sql;
use super::sql::{Backend, params};
use super::state::Timestamp;

/// One reading of the catalog's clock against this machine's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockReading {
    /// The catalog's time at the reading: the time of leases.
    pub catalog_now: Timestamp,
    /// The catalog's clock minus this machine's, at the middle of the round trip
    /// (positive: this machine's clock is behind).
    pub offset: Duration,
    /// Half the round trip: how far the offset itself may be off.
    pub uncertainty: Duration,
}

impl ClockReading {
    /// This machine's reading of its own clock as the catalog's (SQLite: one clock).
    fn local() -> Self {
        Self {
            catalog_now: Timestamp::now(),
            offset: Duration::zero(),
            uncertainty: Duration::zero(),
        }
    }

    /// Whether this machine's clock is surely further than `max` from the catalog's
    /// (beyond the reading's own uncertainty).
    pub fn beyond(&self, max: Duration) -> bool {
        self.offset.abs() > max + self.uncertainty
    }

    /// This reading, or `StoreError::ClockOff` when it is [`ClockReading::beyond`] `max`.
    pub fn within(self, max: Duration) -> Result<Self, StoreError> {
        if self.beyond(max) {
            return Err(StoreError::ClockOff {
                offset_ms: self.offset.num_milliseconds(),
                max_secs: max.num_seconds(),
            });
        }
        Ok(self)
    }
}

impl Catalog {
    /// Reads the catalog's clock (PostgreSQL: the database server's; SQLite: this
    /// machine's, with no query).
    pub fn read_clock(&self) -> Result<ClockReading, StoreError> {
        if self.backend() == Backend::Sqlite {
            return Ok(ClockReading::local());
        }
        let before = Utc::now();
        // The round trip by the monotonic clock: a step of the wall clock meanwhile
        // (NTP) does not make it negative.
        let started = std::time::Instant::now();
        let micros: i64 = self
            .db()
            .one(
                "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint",
                params![],
            )
            .map_err(sql("reading the catalog's clock"))?;
        let half = Duration::from_std(started.elapsed() / 2).unwrap_or(Duration::zero());
        let theirs = DateTime::from_timestamp_micros(micros)
            .ok_or(StoreError::ClockUnreadable { micros })?;
        Ok(ClockReading {
            catalog_now: Timestamp::from(theirs),
            offset: theirs - (before + half),
            uncertainty: half,
        })
    }

    /// Reads the catalog's clock, and refuses (`StoreError::ClockOff`) when this
    /// machine's is surely further than `max` from it.
    pub fn check_clock(&self, max: Duration) -> Result<ClockReading, StoreError> {
        self.read_clock()?.within(max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(offset_ms: i64, uncertainty_ms: i64) -> ClockReading {
        ClockReading {
            catalog_now: Timestamp::now(),
            offset: Duration::milliseconds(offset_ms),
            uncertainty: Duration::milliseconds(uncertainty_ms),
        }
    }

    #[test]
    fn an_offset_counts_only_beyond_the_readings_own_uncertainty() {
        let max = Duration::seconds(2);
        assert!(!reading(1_999, 0).beyond(max));
        assert!(!reading(-2_000, 0).beyond(max));
        assert!(reading(2_001, 0).beyond(max));
        assert!(reading(-2_001, 0).beyond(max));
        // A slow round trip: the offset may be 400 ms smaller than it reads.
        assert!(!reading(2_300, 400).beyond(max));
        assert!(reading(-2_500, 400).beyond(max));
    }

    #[test]
    fn sqlite_reads_this_machines_clock() {
        let tmp = tempfile::Builder::new()
            .prefix("plikt-clock-")
            .tempdir()
            .unwrap();
        let dir = tmp.path();
        let catalog = Catalog::open_sqlite(&dir.join("c.sqlite")).unwrap();
        let before = Timestamp::now();
        let r = catalog.check_clock(Duration::seconds(1)).unwrap();
        assert_eq!(r.offset, Duration::zero());
        assert!(r.catalog_now >= before && r.catalog_now <= Timestamp::now());
    }

    #[test]
    fn postgresql_on_this_machine_reads_the_same_time() {
        let Some(server) = super::super::sql::tests::postgres_server() else {
            return;
        };
        let url = super::super::sql::tests::fresh_database(&server, "clock");
        let catalog = Catalog::open(&super::super::Location::plain_postgres(url)).unwrap();
        let before = Timestamp::now();
        let r = catalog.check_clock(Duration::seconds(1)).unwrap();
        let after = Timestamp::now();
        // One machine, one clock: the server's reading falls within the round trip.
        assert!(
            r.offset.abs() <= r.uncertainty + Duration::milliseconds(2),
            "{r:?}"
        );
        assert!(
            r.catalog_now.plus(Duration::milliseconds(1)) >= before
                && r.catalog_now <= after.plus(Duration::milliseconds(1)),
            "{r:?} not within {before}..{after}"
        );
    }
}
