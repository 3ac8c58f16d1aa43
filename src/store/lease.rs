//! Run leases (issue 17 §3): which worker carries out each publisher's next run.
//!
//! Each publisher has one row: when its next run is due (`due_at`, from its schedule),
//! which worker holds it (`worker`) and until when (`expires_at`; a held row is due
//! again then, so that claims read only rows they can take). A worker claims due
//! rows in one transaction (`FOR UPDATE SKIP LOCKED` on PostgreSQL, so workers claiming
//! at the same instant take different publishers and never wait for each other; SQLite
//! has one writer at a time anyway), renews the expiry of what it holds while it works,
//! and releases each row with its next due time when the run ends. A worker killed
//! mid-run stops renewing: once its lease has expired, another worker claims the row,
//! closes the dead worker's run as interrupted (any run of the publisher still
//! `running` at a claim is such a run: only the lease's holder runs it) (the catalog is consistent at every
//! instant, so the new run simply completes what is pending) and carries on.
//!
//! Two runs of one publisher never overlap while leases hold; if a worker loses its
//! lease anyway (it could not reach the catalog for longer than a lease), the catalog's
//! guarded state transitions still deposit each version exactly once.

use super::StoreError;
use super::catalog::Catalog;
use super::sql::sql;
use super::sql::{Backend, Db, DbError, Param, chunks, in_list, params};
use super::state::{Outcome, Timestamp};

/// A publisher's lease row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// The publisher.
    pub publisher: String,
    /// When its next run is due (`None`: no worker schedules it).
    pub due_at: Option<Timestamp>,
    /// When its last run was claimed: the base of its schedule.
    pub last_claimed: Timestamp,
    /// The worker holding it, if any, and until when.
    pub holder: Option<(String, Timestamp)>,
}

/// A run a worker has claimed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// The publisher to harvest.
    pub publisher: String,
    /// The worker whose expired lease this claim took over (its run was closed as
    /// interrupted), if any.
    pub took_over_from: Option<String>,
}

/// Why a run could not be claimed now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Busy {
    /// Another live worker holds the publisher's lease until then.
    HeldBy(String, Timestamp),
}

impl Catalog {
    /// Records the publishers a worker schedules: a new row is due at `due(None)` (the
    /// schedule's first slot), an existing row nobody holds gets its due time again from
    /// its last claim (`due(Some(last_claimed))`: a changed schedule takes effect), and
    /// a row of a publisher not in `publishers` that nobody holds stops being due (it was
    /// removed from the configuration). The time beside each publisher is a new row's
    /// `last_claimed`.
    pub fn schedule_leases(
        &mut self,
        publishers: &[(&str, Timestamp)],
        due: &dyn Fn(&str, Timestamp) -> Option<Timestamp>,
    ) -> Result<(), StoreError> {
        let ctx = "scheduling runs";
        let tx = self.db_mut().transaction().map_err(sql(ctx))?;
        for (publisher, first_base) in publishers {
            tx.execute(
                "INSERT INTO leases (publisher, due_at, last_claimed) VALUES (?1, ?2, ?3)
                 ON CONFLICT (publisher) DO NOTHING",
                params![publisher, due(publisher, *first_base), first_base],
            )
            .map_err(sql(ctx))?;
        }
        let rows: Vec<(String, Timestamp)> = tx
            .query(
                "SELECT publisher, last_claimed FROM leases WHERE worker IS NULL",
                params![],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(sql(ctx))?;
        for (publisher, base) in rows {
            let known = publishers.iter().any(|(p, _)| *p == publisher);
            let due_at = if known { due(&publisher, base) } else { None };
            tx.execute(
                "UPDATE leases SET due_at = ?2 WHERE publisher = ?1 AND worker IS NULL",
                params![publisher, due_at],
            )
            .map_err(sql(ctx))?;
        }
        tx.commit().map_err(sql(ctx))
    }

    /// Claims up to `limit` runs that are due at `now` for `worker`, each until
    /// `until` (renew with [`Catalog::renew_leases`]): rows nobody holds, and rows
    /// whose holder's lease has expired (that worker's run is closed as interrupted).
    pub fn claim_due(
        &mut self,
        worker: &str,
        now: Timestamp,
        until: Timestamp,
        limit: usize,
    ) -> Result<Vec<Claim>, StoreError> {
        let ctx = "claiming runs";
        let skip_locked = match self.backend() {
            // Workers claiming at once take different rows, without waiting.
            Backend::Postgres => " FOR UPDATE SKIP LOCKED",
            Backend::Sqlite => "",
        };
        let tx = self.db_mut().transaction().map_err(sql(ctx))?;
        let due: Vec<(String, Option<String>)> = tx
            .query(
                &format!(
                    "SELECT publisher, worker FROM leases
                     WHERE due_at <= ?1 AND (worker IS NULL OR expires_at <= ?1)
                     ORDER BY due_at LIMIT ?2{skip_locked}"
                ),
                params![now, i64::try_from(limit).unwrap_or(i64::MAX)],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(sql(ctx))?;
        let mut claims = Vec::with_capacity(due.len());
        for (publisher, dead) in due {
            take(&tx, &publisher, worker, now, until).map_err(sql(ctx))?;
            claims.push(Claim {
                publisher,
                took_over_from: dead,
            });
        }
        tx.commit().map_err(sql(ctx))?;
        Ok(claims)
    }

    /// Claims `publisher`'s run now, due or not (`plikt harvest`), unless another live
    /// worker holds it. A publisher without a row gets one, its first scheduled run due
    /// at `due`; an existing row's schedule is left as it is.
    pub fn claim_now(
        &mut self,
        publisher: &str,
        worker: &str,
        (now, until): (Timestamp, Timestamp),
        due: Option<Timestamp>,
    ) -> Result<Result<Claim, Busy>, StoreError> {
        let ctx = "claiming a run";
        let for_update = match self.backend() {
            Backend::Postgres => " FOR UPDATE",
            Backend::Sqlite => "",
        };
        let tx = self.db_mut().transaction().map_err(sql(ctx))?;
        tx.execute(
            "INSERT INTO leases (publisher, due_at, last_claimed) VALUES (?1, ?2, ?3)
             ON CONFLICT (publisher) DO NOTHING",
            params![publisher, due, now],
        )
        .map_err(sql(ctx))?;
        let (holder, expires): (Option<String>, Option<Timestamp>) = tx
            .query_row(
                &format!("SELECT worker, expires_at FROM leases WHERE publisher = ?1{for_update}"),
                params![publisher],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(sql(ctx))?;
        if let (Some(holder), Some(expires)) = (&holder, expires)
            && holder != worker
            && expires > now
        {
            return Ok(Err(Busy::HeldBy(holder.clone(), expires)));
        }
        let dead = holder.filter(|h| h != worker);
        // A forced run does not move the schedule: keep `due_at` and `last_claimed`.
        tx.execute(
            "UPDATE leases SET worker = ?2, expires_at = ?3 WHERE publisher = ?1",
            params![publisher, worker, until],
        )
        .map_err(sql(ctx))?;
        close_runs(&tx, publisher, now).map_err(sql(ctx))?;
        tx.commit().map_err(sql(ctx))?;
        Ok(Ok(Claim {
            publisher: publisher.to_owned(),
            took_over_from: dead,
        }))
    }

    /// Frees every lease: called by the process holding the data folder's lock (SQLite,
    /// or PostgreSQL with local files: one writer), so no other worker can be alive and
    /// any lease held is a dead process's (a `plikt harvest` killed mid-run).
    pub fn free_leases(&self) -> Result<usize, StoreError> {
        self.db()
            .execute(
                "UPDATE leases SET worker = NULL, expires_at = NULL WHERE worker IS NOT NULL",
                params![],
            )
            .map_err(sql("freeing the leases of stopped processes"))
    }

    /// Renews the leases `worker` holds of `publishers` (the runs it is carrying out)
    /// until `until`. A lease of this worker whose run has ended but whose release
    /// could not be recorded (the catalog was away at that instant) is not renewed: it
    /// expires and the publisher's next run is claimed as usual, instead of being held
    /// for as long as this worker lives.
    pub fn renew_leases(
        &self,
        worker: &str,
        publishers: &[String],
        until: Timestamp,
    ) -> Result<usize, StoreError> {
        let mut renewed = 0;
        for piece in chunks(publishers) {
            let mut p: Vec<&dyn Param> = vec![&worker, &until];
            p.extend(piece.iter().map(|id| id as &dyn Param));
            renewed += self
                .db()
                .execute(
                    // A claimed run is due again when its lease ends; a scheduled slot
                    // that falls inside a lease (a run by hand) moves to its end.
                    &format!(
                        "UPDATE leases SET expires_at = ?2,
                           due_at = CASE WHEN due_at IS NOT NULL AND due_at < ?2 THEN ?2 ELSE due_at END
                         WHERE worker = ?1 AND publisher IN ({})",
                        in_list(piece.len(), 3)
                    ),
                    &p,
                )
                .map_err(sql("renewing leases"))?;
        }
        Ok(renewed)
    }

    /// Releases `publisher`'s lease held by `worker`, its next run due at `next` (`None`:
    /// no worker schedules it). False when `worker` no longer held it (it expired and
    /// another worker took the run over).
    pub fn release_lease(
        &self,
        publisher: &str,
        worker: &str,
        next: Option<Timestamp>,
    ) -> Result<bool, StoreError> {
        let n = self
            .db()
            .execute(
                "UPDATE leases SET worker = NULL, expires_at = NULL, due_at = ?3
                 WHERE publisher = ?1 AND worker = ?2",
                params![publisher, worker, next],
            )
            .map_err(sql("releasing a lease"))?;
        Ok(n > 0)
    }

    /// The earliest due time of a run nobody holds.
    pub fn next_due(&self) -> Result<Option<Timestamp>, StoreError> {
        self.db()
            .one(
                "SELECT min(due_at) FROM leases WHERE worker IS NULL",
                params![],
            )
            .map_err(sql("reading the next due run"))
    }

    /// Takes slot `slot` of `host`'s connections if nobody holds it (PostgreSQL: a
    /// session advisory lock on this connection, given back by
    /// [`Catalog::leave_host_slot`] or when the connection ends, also when the worker
    /// dies). Always true on SQLite, whose one process keeps its limits itself.
    pub fn try_host_slot(&self, host: &str, slot: u32) -> Result<bool, StoreError> {
        if self.backend() == Backend::Sqlite {
            return Ok(true);
        }
        self.db()
            .one(
                "SELECT pg_try_advisory_lock(?1::bigint::integer, ?2::bigint::integer)::integer::bigint",
                params![host_key(host), i64::from(slot)],
            )
            .map(|taken: i64| taken == 1)
            .map_err(sql("taking a host slot"))
    }

    /// Whether this connection holds every one of `slots` (host, slot) taken with
    /// [`Catalog::try_host_slot`]: PostgreSQL releases them when the session ends (an
    /// `Err` is a connection that is gone). Always on SQLite.
    pub fn holds_host_slots(&self, slots: &[(String, u32)]) -> Result<bool, StoreError> {
        if self.backend() == Backend::Sqlite {
            return Ok(true);
        }
        // Two integer keys: pg_locks' classid and objid, objsubid 2 (PostgreSQL 15
        // documentation §54.12); host keys are below 2^31, so classid is the key.
        let held: std::collections::HashSet<(i64, i64)> = self
            .db()
            .query(
                "SELECT classid::bigint, objid::bigint FROM pg_locks
                 WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
                   AND objsubid = 2",
                params![],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(sql("checking the host slots held"))?
            .into_iter()
            .collect();
        Ok(slots
            .iter()
            .all(|(host, slot)| held.contains(&(host_key(host), i64::from(*slot)))))
    }

    /// Gives back a slot taken with [`Catalog::try_host_slot`].
    pub fn leave_host_slot(&self, host: &str, slot: u32) -> Result<(), StoreError> {
        if self.backend() == Backend::Sqlite {
            return Ok(());
        }
        self.db()
            .query_row(
                "SELECT pg_advisory_unlock(?1::bigint::integer, ?2::bigint::integer)::text",
                params![host_key(host), i64::from(slot)],
                |_| Ok(()),
            )
            .map_err(sql("giving back a host slot"))
    }

    /// Every lease row, by publisher.
    pub fn leases(&self) -> Result<Vec<Lease>, StoreError> {
        self.db()
            .query(
                "SELECT publisher, due_at, last_claimed, worker, expires_at FROM leases
                 ORDER BY publisher",
                params![],
                |r| {
                    let worker: Option<String> = r.get(3)?;
                    let expires: Option<Timestamp> = r.get(4)?;
                    Ok(Lease {
                        publisher: r.get(0)?,
                        due_at: r.get(1)?,
                        last_claimed: r.get(2)?,
                        holder: worker.zip(expires),
                    })
                },
            )
            .map_err(sql("reading leases"))
    }
}

/// Gives `publisher`'s row to `worker` until `until`, its run claimed at `now`; a run
/// of it left `running` is closed as interrupted.
fn take(
    tx: &Db,
    publisher: &str,
    worker: &str,
    now: Timestamp,
    until: Timestamp,
) -> Result<(), DbError> {
    tx.execute(
        // Due again when the lease ends: should this worker die, the row is due for
        // the next one then; renewals move both. Held rows are not due, so a claim
        // reads only rows it can take (the index on `due_at`).
        "UPDATE leases SET worker = ?2, expires_at = ?3, last_claimed = ?4, due_at = ?3
         WHERE publisher = ?1",
        params![publisher, worker, until, now],
    )?;
    close_runs(tx, publisher, now)?;
    Ok(())
}

/// Closes `publisher`'s runs left `running`: only the holder of a publisher's lease
/// runs it, so at a claim any such run is one whose worker died or lost the catalog
/// before it could record the run's end.
fn close_runs(tx: &Db, publisher: &str, now: Timestamp) -> Result<usize, DbError> {
    tx.execute(
        "UPDATE runs SET outcome = ?2, ended_at = ?1,
           message = 'the run was cut short (its worker stopped, or lost the catalog, and its lease expired or was given back); the next run took it over'
         WHERE publisher = ?3 AND outcome = ?4",
        params![now, Outcome::Interrupted, publisher, Outcome::Running],
    )
}

/// A host's key in the advisory locks of host slots: the first 31 bits of the SHA-256
/// of its name, the same in every worker (two-key advisory locks are a space of their
/// own, apart from the one-key locks of `sql::Lock`).
fn host_key(host: &str) -> i64 {
    use sha2::Digest;
    let d = sha2::Sha256::digest(host.as_bytes());
    i64::from(u32::from_be_bytes([d[0], d[1], d[2], d[3]]) >> 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A worker renews the leases of the runs it carries out, and only those: a lease
    /// whose release could not be recorded (the catalog away when the run ended) expires
    /// and another worker claims the publisher's next run (issue 17 §3). Renewing every
    /// lease the worker's name held kept such a publisher from being harvested by anyone
    /// for as long as that worker lived.
    #[test]
    fn a_worker_renews_only_the_leases_of_runs_it_carries_out() {
        let tmp = tempfile::Builder::new()
            .prefix("plikt-lease-")
            .tempdir()
            .unwrap();
        let dir = tmp.path();
        let mut c = Catalog::open_sqlite(&dir.join("catalog.sqlite")).unwrap();
        let t0 = Timestamp::now();
        let s = |n: i64| chrono::Duration::seconds(n);
        c.schedule_leases(&[("a", t0), ("b", t0)], &|_, _| Some(t0))
            .unwrap();
        let claimed = c.claim_due("w", t0, t0.plus(s(3)), 10).unwrap();
        assert_eq!(claimed.len(), 2);
        // `a` is still being harvested; `b`'s run ended, its release not recorded.
        assert_eq!(
            c.renew_leases("w", &["a".to_owned()], t0.plus(s(60)))
                .unwrap(),
            1
        );
        let later = t0.plus(s(10));
        let taken: Vec<(String, Option<String>)> = c
            .claim_due("v", later, later.plus(s(3)), 10)
            .unwrap()
            .into_iter()
            .map(|c| (c.publisher, c.took_over_from))
            .collect();
        assert_eq!(taken, [("b".to_owned(), Some("w".to_owned()))]);
    }
}
