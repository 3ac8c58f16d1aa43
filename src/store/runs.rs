//! A publisher's runs: recorded in the catalog, begun and ended, closed when
//! interrupted, with their findings and what the next run's conditional GET sends.

use super::StoreError;
use super::catalog::Catalog;
use super::records::{RunCounts, StoredFinding};
use super::sql::{DbError, params, sql};
use super::stage::insert_findings;
use super::state::{Outcome, Timestamp};

impl Catalog {
    /// Records (or updates) a configured publisher.
    pub fn upsert_publisher(&self, id: &str, name: &str, feed: &str) -> Result<(), StoreError> {
        self.db()
            .execute(
                "INSERT INTO publishers (id, name, feed) VALUES (?1, ?2, ?3)
                 ON CONFLICT (id) DO UPDATE SET name = ?2, feed = ?3,
                   etag = CASE WHEN publishers.feed = ?3 THEN publishers.etag END,
                   last_modified = CASE WHEN publishers.feed = ?3 THEN publishers.last_modified END",
                params![id, name, feed],
            )
            .map_err(sql("recording the publisher"))?;
        Ok(())
    }

    /// Marks runs left `running` by a crash as interrupted. Call while holding the data
    /// folder's lock.
    pub fn close_interrupted_runs(&self, now: Timestamp) -> Result<usize, StoreError> {
        self.db()
            .execute(
                "UPDATE runs SET outcome = ?2, ended_at = ?1,
                   message = 'plikt stopped before the run ended; the next run completes it'
                 WHERE outcome = ?3",
                params![now, Outcome::Interrupted, Outcome::Running],
            )
            .map_err(sql("closing interrupted runs"))
    }

    /// Starts a run.
    pub fn begin_run(&self, publisher: &str, now: Timestamp) -> Result<i64, StoreError> {
        self.db()
            .one(
                "INSERT INTO runs (publisher, started_at, outcome) VALUES (?1, ?2, ?3) RETURNING id",
                params![publisher, now, Outcome::Running],
            )
            .map_err(sql("starting a run"))
    }

    /// Ends a run.
    pub fn end_run(
        &self,
        run: i64,
        outcome: Outcome,
        message: Option<&str>,
        counts: &RunCounts,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        let n = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        self.db()
            .execute(
                "UPDATE runs SET ended_at = ?2, outcome = ?3, message = ?4, items = ?5,
                   new_versions = ?6, rejected = ?7, deposited = ?8, files_stored = ?9,
                   files_failed = ?10, bytes = ?11 WHERE id = ?1",
                params![
                    run,
                    now,
                    outcome,
                    message,
                    n(counts.items),
                    n(counts.new_versions),
                    n(counts.rejected),
                    n(counts.deposited),
                    n(counts.files_stored),
                    n(counts.files_failed),
                    n(counts.bytes)
                ],
            )
            .map_err(sql("ending a run"))?;
        Ok(())
    }

    /// The feed's validators from the last run that processed it.
    pub fn feed_validators(
        &self,
        publisher: &str,
    ) -> Result<(Option<String>, Option<String>), StoreError> {
        self.db()
            .query_opt(
                "SELECT etag, last_modified FROM publishers WHERE id = ?1",
                params![publisher],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map(Option::unwrap_or_default)
            .map_err(sql("reading the feed's validators"))
    }

    /// Start of the last run of `publisher`, whatever its outcome (schedule catch-up).
    /// A publisher's runs follow one another (one at a time, by lease), so the last by
    /// id is the last to start: read at the end of `runs_publisher`.
    pub fn last_run_start(&self, publisher: &str) -> Result<Option<Timestamp>, StoreError> {
        self.db()
            .query_opt(
                "SELECT started_at FROM runs WHERE publisher = ?1 ORDER BY id DESC LIMIT 1",
                params![publisher],
                |r| r.get(0),
            )
            .map_err(sql("reading the last run"))
    }

    /// Start of the last run that read the feed successfully (H-COVERAGE).
    pub fn last_successful_run(&self, publisher: &str) -> Result<Option<Timestamp>, StoreError> {
        let last = self
            .last_run_of(publisher, &[Outcome::Ok, Outcome::NotModified])
            .map_err(sql("reading the last successful run"))?;
        match last {
            Some(id) => self
                .db()
                .one("SELECT started_at FROM runs WHERE id = ?1", params![id])
                .map_err(sql("reading the last successful run")),
            None => Ok(None),
        }
    }

    /// The id of `publisher`'s last run with one of `outcomes`: for each outcome, the
    /// end of its range of `runs_outcome` (migration 14), not every run of the
    /// publisher.
    pub(super) fn last_run_of(
        &self,
        publisher: &str,
        outcomes: &[Outcome],
    ) -> Result<Option<i64>, DbError> {
        let mut last = None;
        for outcome in outcomes {
            let id: Option<i64> = self.db().query_opt(
                "SELECT id FROM runs WHERE publisher = ?1 AND outcome = ?2 ORDER BY id DESC LIMIT 1",
                params![publisher, outcome],
                |r| r.get(0),
            )?;
            last = last.max(id);
        }
        Ok(last)
    }

    /// Records findings of a run outside a feed transaction (fatal findings,
    /// harvest-time findings).
    pub fn add_findings(&mut self, run: i64, findings: &[StoredFinding]) -> Result<(), StoreError> {
        let tx = self
            .db_mut()
            .transaction()
            .map_err(sql("recording findings"))?;
        insert_findings(&tx, run, findings)?;
        tx.commit().map_err(sql("recording findings"))
    }
}
