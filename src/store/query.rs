//! Read-only questions to the catalog: `plikt status`, `/status` and the operators'
//! dashboard (`plikt audit`'s are in [`super::audit`]).

use super::migrations::{FAILED_VERSION, PENDING_VERSION};
use super::sql::params;
use super::sql::sql;
use serde::Serialize;

use super::StoreError;
use super::catalog::Catalog;
use super::records::{RunCounts, StoredFinding};
use super::state::{FileState, Outcome, Timestamp, VersionState};
use crate::profile::Severity;

/// The last run of a publisher.
#[derive(Debug, Clone, Serialize)]
pub struct LastRun {
    /// Run number.
    pub id: i64,
    /// Start.
    pub started_at: Timestamp,
    /// End (absent while running).
    pub ended_at: Option<Timestamp>,
    /// How it ended.
    pub outcome: Outcome,
    /// Why it failed or was interrupted.
    pub message: Option<String>,
    /// Counters.
    #[serde(flatten)]
    pub counts: RunCounts,
}

/// Unsettled items a status shows per publisher.
pub const UNSETTLED_SHOWN: usize = 100;

/// A publisher's versions not deposited ([`Catalog::unsettled_versions`]).
#[derive(Debug, Default)]
struct UnsettledVersions {
    /// The first [`UNSETTLED_SHOWN`], oldest first.
    items: Vec<Unsettled>,
    pending: u64,
    failed: u64,
}

/// A column of the deposit of `versions` aliased `v`, looked up by its key (a scalar
/// subquery: no join for a planner on old statistics to hash).
fn of_deposit(column: &str) -> String {
    format!("(SELECT d.{column} FROM deposits d WHERE d.id = v.deposit_id)")
}

/// A version not (yet) deposited, or an item rejected by the last run.
#[derive(Debug, Clone, Serialize)]
pub struct Unsettled {
    /// The item's guid (absent for a rejected item without one).
    pub guid: Option<String>,
    /// Where it is.
    pub state: UnsettledState,
    /// Failed attempts.
    pub attempts: u32,
    /// Next retry, for pending versions.
    pub next_attempt_at: Option<Timestamp>,
    /// The reason, naming the URL.
    pub reason: Option<String>,
}

/// Where an [`Unsettled`] item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum UnsettledState {
    /// A version waiting for a retry.
    Pending,
    /// A version that stays failed.
    Failed,
    /// An item the last run rejected (it could not be identified or collected).
    Rejected,
}

impl UnsettledState {
    /// Its word in `plikt status`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Failed => "failed",
            Self::Rejected => "rejected",
        }
    }
}

/// `plikt status` of one publisher (the JSON names are a contract).
#[derive(Debug, Clone, Serialize)]
pub struct PublisherStatus {
    /// Configured id.
    pub id: String,
    /// Items with at least one completely stored version.
    pub deposits: u64,
    /// Completely stored versions.
    pub versions: u64,
    /// Stored files (of all versions).
    pub files: u64,
    /// Versions waiting for a retry.
    pub pending: u64,
    /// Versions that stay failed, plus items the last run rejected.
    pub failed: u64,
    /// The last run.
    pub last_run: Option<LastRun>,
    /// Next scheduled run (filled in by the caller from the schedule).
    pub next_run: Option<Timestamp>,
    /// The run a worker is carrying out now, as its lease says (filled in by the caller).
    pub harvesting: Option<Harvesting>,
    /// Pending, failed and rejected items with the reason (at most [`UNSETTLED_SHOWN`]).
    pub items: Vec<Unsettled>,
    /// Errors and warnings of the last run that read the feed.
    pub findings: Vec<StoredFinding>,
}

/// A run a worker holds the lease of ([`PublisherStatus::harvesting`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Harvesting {
    /// The worker (`host:pid:…`, as its log names it).
    pub worker: String,
    /// Until when the lease holds: a live worker renews it every third of `lease_secs`.
    pub lease_until: Timestamp,
    /// The lease has run out: the worker stopped (or lost the catalog), and the next
    /// worker to look for due runs takes the run over.
    pub expired: bool,
}

impl PublisherStatus {
    /// A publisher that was never harvested.
    pub fn empty(id: &str) -> Self {
        Self {
            id: id.to_string(),
            deposits: 0,
            versions: 0,
            files: 0,
            pending: 0,
            failed: 0,
            last_run: None,
            next_run: None,
            harvesting: None,
            items: Vec::new(),
            findings: Vec::new(),
        }
    }
}

impl Catalog {
    /// The status of each of `publishers`, in their order; the tallies and unsettled
    /// versions of all of them are read at once ([`Catalog::kept_tallies`],
    /// [`Catalog::unsettled_versions`], which counts them too).
    pub fn statuses(&self, publishers: &[&str]) -> Result<Vec<PublisherStatus>, StoreError> {
        let mut tallies = self.kept_tallies()?;
        let mut unsettled = self.unsettled_versions()?;
        publishers
            .iter()
            .map(|&publisher| {
                let tally = tallies.remove(publisher).unwrap_or_default();
                let UnsettledVersions {
                    mut items,
                    pending,
                    failed,
                } = unsettled.remove(publisher).unwrap_or_default();
                let rejected = self.rejected_items(publisher, &mut items)?;
                Ok(PublisherStatus {
                    id: publisher.to_string(),
                    deposits: tally.deposits,
                    versions: tally.versions,
                    files: tally.files,
                    pending,
                    failed: failed + rejected,
                    last_run: self.last_run(publisher)?,
                    next_run: None,
                    harvesting: None,
                    items,
                    findings: self.open_findings(publisher)?,
                })
            })
            .collect()
    }

    /// Every publisher's numbers, in the order of their ids: the deposits, versions and
    /// files of its tally, kept as versions are deposited (migration 11), and its pending
    /// and failed versions, counted through the partial indexes of those (migrations 10
    /// and 11), each version's publisher looked up by key. None of it reads the deposited
    /// collection: a scrape of `/metrics` or a `plikt status` costs the same at 10 million
    /// files as at ten.
    fn tallies(&self) -> Result<Vec<PublisherGauges>, StoreError> {
        let c = self.db();
        let n = |v: i64| v.max(0).unsigned_abs();
        let mut out = self.kept_tallies()?;
        let of = of_deposit("publisher");
        let unsettled = c
            .query(
                &format!(
                    "SELECT publisher, sum(pending), sum(failed) FROM (
                       SELECT {of} AS publisher, 1 AS pending, 0 AS failed FROM versions v
                       WHERE {PENDING_VERSION}
                       UNION ALL
                       SELECT {of}, 0, 1 FROM versions v WHERE {FAILED_VERSION}
                     ) u GROUP BY publisher"
                ),
                params![],
                |r| Ok((r.get::<String>(0)?, n(r.get(1)?), n(r.get(2)?))),
            )
            .map_err(sql("counting pending and failed versions"))?;
        for (id, pending, failed) in unsettled {
            let g = out.entry(id.clone()).or_insert_with(|| PublisherGauges {
                id,
                ..PublisherGauges::default()
            });
            g.pending = pending;
            g.failed = failed;
        }
        Ok(out.into_values().collect())
    }

    /// Every publisher's tally (migration 11) by id: its deposits, versions and files;
    /// pending and failed left at 0.
    fn kept_tallies(
        &self,
    ) -> Result<std::collections::BTreeMap<String, PublisherGauges>, StoreError> {
        let n = |v: i64| v.max(0).unsigned_abs();
        Ok(self
            .db()
            .query(
                "SELECT publisher, deposits, versions, files FROM tallies",
                params![],
                |r| {
                    let id: String = r.get(0)?;
                    Ok((
                        id.clone(),
                        PublisherGauges {
                            id,
                            deposits: n(r.get(1)?),
                            versions: n(r.get(2)?),
                            files: n(r.get(3)?),
                            ..PublisherGauges::default()
                        },
                    ))
                },
            )
            .map_err(sql("reading the tallies"))?
            .into_iter()
            .collect())
    }

    /// The publisher's last run.
    fn last_run(&self, publisher: &str) -> Result<Option<LastRun>, StoreError> {
        self.db()
            .query_opt(
                "SELECT id, started_at, ended_at, outcome, message, items, new_versions, rejected,
                        deposited, files_stored, files_failed, bytes
                 FROM runs WHERE publisher = ?1 ORDER BY id DESC LIMIT 1",
                params![publisher],
                |r| {
                    let n = |i: usize| r.get::<i64>(i).map(|v| v.max(0).unsigned_abs());
                    Ok(LastRun {
                        id: r.get(0)?,
                        started_at: r.get(1)?,
                        ended_at: r.get(2)?,
                        outcome: r.get(3)?,
                        message: r.get(4)?,
                        counts: RunCounts {
                            items: n(5)?,
                            new_versions: n(6)?,
                            rejected: n(7)?,
                            deposited: n(8)?,
                            files_stored: n(9)?,
                            files_failed: n(10)?,
                            bytes: n(11)?,
                        },
                    })
                },
            )
            .map_err(sql("reading the last run"))
    }

    /// Every publisher's versions not deposited (at most [`UNSETTLED_SHOWN`] each), oldest
    /// first: the pending and failed ones through their partial indexes (migrations 10
    /// and 11), read once for all publishers. Failed versions stay failed for good and
    /// add up over the years; read once per publisher, 2,000 publishers with 10 failed
    /// versions each took `plikt status` 16–20 s (BENCHMARKS.md).
    fn unsettled_versions(
        &self,
    ) -> Result<std::collections::HashMap<String, UnsettledVersions>, StoreError> {
        let (publisher, guid) = (of_deposit("publisher"), of_deposit("guid"));
        let columns = "v.id, v.state, v.attempts, v.next_attempt_at, v.last_error";
        let mut out: std::collections::HashMap<String, UnsettledVersions> = Default::default();
        self.db().each(
            &format!(
                "SELECT publisher, guid, state, attempts, next_attempt_at, last_error FROM (
                   SELECT {publisher} AS publisher, {guid} AS guid, {columns} FROM versions v
                   WHERE {PENDING_VERSION}
                   UNION ALL
                   SELECT {publisher}, {guid}, {columns} FROM versions v WHERE {FAILED_VERSION}
                 ) u ORDER BY id"
            ),
            params![],
            |r| {
                let of = out.entry(r.get::<String>(0)?).or_default();
                let state = match r.get(2)? {
                    VersionState::Failed => UnsettledState::Failed,
                    _ => UnsettledState::Pending,
                };
                match state {
                    UnsettledState::Failed => of.failed += 1,
                    _ => of.pending += 1,
                }
                if of.items.len() < UNSETTLED_SHOWN {
                    of.items.push(Unsettled {
                        guid: r.get(1)?,
                        state,
                        attempts: r.get(3)?,
                        next_attempt_at: r.get(4)?,
                        reason: r.get(5)?,
                    });
                }
                Ok::<_, StoreError>(())
            },
        )?;
        Ok(out)
    }

    /// The items the last run that read the feed rejected, added to `items` up to
    /// [`UNSETTLED_SHOWN`];
    /// returns how many there are.
    fn rejected_items(
        &self,
        publisher: &str,
        items: &mut Vec<Unsettled>,
    ) -> Result<u64, StoreError> {
        let c = self.db();
        let last_feed_run = self
            .last_run_of(
                publisher,
                &[Outcome::Ok, Outcome::Failed, Outcome::Interrupted],
            )
            .map_err(sql("reading runs"))?;
        let Some(run) = last_feed_run else {
            return Ok(0);
        };
        let ctx = "listing rejected items";
        let rows = c
            .query(
                "SELECT guid, reason FROM rejections WHERE run_id = ?1 ORDER BY item",
                params![run],
                |r| {
                    Ok(Unsettled {
                        guid: r.get(0)?,
                        state: UnsettledState::Rejected,
                        attempts: 0,
                        next_attempt_at: None,
                        reason: r.get(1)?,
                    })
                },
            )
            .map_err(sql(ctx))?;
        let mut rejected = 0;
        for row in rows {
            rejected += 1;
            if items.len() < UNSETTLED_SHOWN {
                items.push(row);
            }
        }
        Ok(rejected)
    }

    /// Errors and warnings (at most 1,000) of the last run that read the feed: they
    /// are open.
    fn open_findings(&self, publisher: &str) -> Result<Vec<StoredFinding>, StoreError> {
        let c = self.db();
        // The publisher's runs newest first, up to the first with findings: runs that
        // find the feed unchanged (most of them) have none, and findings are kept for
        // the last few feeds only, so this stops soon instead of going through them all.
        let feed_run: Option<i64> = c
            .query_opt(
                "SELECT r.id FROM runs r WHERE r.publisher = ?1
                   AND EXISTS (SELECT 1 FROM findings f WHERE f.run_id = r.id)
                 ORDER BY r.id DESC LIMIT 1",
                params![publisher],
                |r| r.get(0),
            )
            .map_err(sql("reading findings"))?;
        let Some(run) = feed_run else {
            return Ok(Vec::new());
        };
        let ctx = "listing findings";
        let rows = c
            .query(
                "SELECT rule, severity, line, col, item, guid, url, message FROM findings
                 WHERE run_id = ?1 AND severity != ?2 ORDER BY id LIMIT 1000",
                params![run, Severity::Info],
                |r| {
                    Ok(StoredFinding {
                        rule: r.get(0)?,
                        severity: r.get(1)?,
                        line: r.get(2)?,
                        column: r.get(3)?,
                        item: r.get(4)?,
                        guid: r.get(5)?,
                        url: r.get(6)?,
                        message: r.get(7)?,
                    })
                },
            )
            .map_err(sql(ctx))?;
        Ok(rows)
    }
}

/// One publisher's numbers for `/metrics`.
#[derive(Debug, Clone, Default)]
pub struct PublisherGauges {
    /// Its id.
    pub id: String,
    /// Items with a deposited version.
    pub deposits: u64,
    /// Deposited versions.
    pub versions: u64,
    /// Versions waiting for files.
    pub pending: u64,
    /// Versions given up.
    pub failed: u64,
    /// Stored files of deposited versions.
    pub files: u64,
}

/// The catalog's numbers for `/metrics`, read at each scrape.
#[derive(Debug, Clone, Default)]
pub struct Gauges {
    /// Per publisher.
    pub publishers: Vec<PublisherGauges>,
    /// Blobs in the store.
    pub blobs: u64,
    /// Their bytes.
    pub blob_bytes: u64,
    /// Notification deliveries waiting.
    pub deliveries_pending: u64,
    /// Subscriptions whose lease has not ended.
    pub subscriptions: u64,
}

impl Catalog {
    /// The catalog's numbers for `/metrics`.
    pub fn gauges(&self) -> Result<Gauges, StoreError> {
        let c = self.db();
        let ctx = "counting for /metrics";
        let n = |v: i64| v.max(0).unsigned_abs();
        let publishers = self.tallies()?;
        let (blobs, blob_bytes, deliveries_pending, subscriptions) = c
            .query_row(
                "SELECT (SELECT coalesce(max(blobs), 0) FROM blob_tally),
                   (SELECT coalesce(max(bytes), 0) FROM blob_tally),
                   (SELECT count(*) FROM deliveries WHERE state = ?1),
                   (SELECT count(*) FROM subscriptions WHERE lease_expires_at > ?2)",
                params![crate::store::DeliveryState::Pending, super::now()],
                |r| Ok((n(r.get(0)?), n(r.get(1)?), n(r.get(2)?), n(r.get(3)?))),
            )
            .map_err(sql(ctx))?;
        Ok(Gauges {
            publishers,
            blobs,
            blob_bytes,
            deliveries_pending,
            subscriptions,
        })
    }
}

/// Deposits of one UTC day (the operators' dashboard).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DayDeposits {
    /// `YYYY-MM-DD`.
    pub day: String,
    /// Versions deposited (journalled) that day.
    pub versions: u64,
    /// Bytes of their stored files.
    pub bytes: u64,
}

/// Findings of the runs that started on one UTC day, by severity.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DayFindings {
    /// `YYYY-MM-DD`.
    pub day: String,
    /// Errors.
    pub errors: u64,
    /// Warnings.
    pub warnings: u64,
    /// Infos.
    pub infos: u64,
}

impl Catalog {
    /// Versions and bytes deposited per UTC day since `since` (days without deposits
    /// are absent), oldest first.
    pub fn deposits_per_day(&self, since: Timestamp) -> Result<Vec<DayDeposits>, StoreError> {
        self.db()
            .query(
                "SELECT substr(c.at, 1, 10), count(DISTINCT c.version_id), CAST(COALESCE(sum(f.length), 0) AS BIGINT)
                 FROM changes c LEFT JOIN files f ON f.version_id = c.version_id AND f.state = ?2
                 WHERE c.at >= ?1 GROUP BY 1 ORDER BY 1",
                params![since, FileState::Stored],
                |r| {
                    Ok(DayDeposits {
                        day: r.get(0)?,
                        versions: r.get(1)?,
                        bytes: r.get(2)?,
                    })
                },
            )
            .map_err(sql("reading deposits per day"))
    }

    /// Findings of the runs that started each UTC day since `since`, by severity
    /// (days without a run that read a feed are absent), oldest first.
    pub fn findings_per_day(&self, since: Timestamp) -> Result<Vec<DayFindings>, StoreError> {
        let rows: Vec<(String, Severity, u64)> = self
            .db()
            .query(
                "SELECT substr(r.started_at, 1, 10), f.severity, count(*)
                 FROM runs r JOIN findings f ON f.run_id = r.id
                 WHERE r.started_at >= ?1 GROUP BY 1, 2 ORDER BY 1",
                params![since],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .map_err(sql("reading findings per day"))?;
        let mut out: Vec<DayFindings> = Vec::new();
        for (day, severity, n) in rows {
            if out.last().is_none_or(|d| d.day != day) {
                out.push(DayFindings {
                    day,
                    ..DayFindings::default()
                });
            }
            let d = out.last_mut().expect("just pushed");
            match severity {
                Severity::Error => d.errors += n,
                Severity::Warning => d.warnings += n,
                Severity::Info => d.infos += n,
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Location;

    /// `plikt status` of several publishers, whose unsettled versions are read in one
    /// pass: each publisher gets its own, oldest first, at most [`UNSETTLED_SHOWN`],
    /// and its counts from the tallies (SQLite, and PostgreSQL when the test script
    /// gives one).
    #[test]
    fn each_publisher_gets_its_own_unsettled_versions_oldest_first_and_at_most_100() {
        let tmp = tempfile::Builder::new()
            .prefix("plikt-statuses-")
            .tempdir()
            .unwrap();
        let dir = tmp.path();
        let mut locations = vec![Location::Sqlite(dir.join("catalog.sqlite"))];
        if let Some(server) = super::super::sql::tests::postgres_server() {
            locations.push(Location::plain_postgres(
                super::super::sql::tests::fresh_database(&server, "statuses"),
            ));
        }
        for location in locations {
            let catalog = Catalog::open(&location).unwrap();
            let t = "'2026-11-27T12:00:00.000Z'";
            let mut sql = format!(
                "INSERT INTO publishers (id, name, feed) VALUES ('a', 'A', 'x'), ('b', 'B', 'y'), ('c', 'C', 'z');
                 INSERT INTO runs (id, publisher, started_at) VALUES (1, 'a', {t}), (2, 'b', {t});"
            );
            // Publisher a: 151 failed versions, one of them last; b: a pending and a
            // failed one among them.
            let mut version = |id: i64, publisher: &str, state: &str| {
                let run = if publisher == "a" { 1 } else { 2 };
                sql.push_str(&format!(
                    "INSERT INTO deposits (id, publisher, guid, created_at) VALUES ({id}, '{publisher}', 'g{id}', {t});
                     INSERT INTO versions (id, deposit_id, pub_date, pub_date_raw, item_hash, metadata,
                       findings, conforming, access, state, found_run, found_at, last_error)
                     VALUES ({id}, {id}, '1', '1', 'h', '{{}}', '[]', 1, 'gratis', '{state}', {run}, {t}, 'e{id}');"
                ));
            };
            for id in 1..=150 {
                version(id, "a", "failed");
            }
            version(152, "b", "failed");
            version(75_000, "a", "failed");
            version(151, "b", "pending");
            catalog.db().batch(&sql).unwrap_or_else(|e| panic!("{e}"));
            let statuses = catalog.statuses(&["a", "b", "c"]).unwrap();
            let guids = |i: usize| -> Vec<String> {
                statuses[i]
                    .items
                    .iter()
                    .map(|u| u.guid.clone().unwrap())
                    .collect()
            };
            let want: Vec<String> = (1..=UNSETTLED_SHOWN).map(|i| format!("g{i}")).collect();
            assert_eq!(guids(0), want, "{location:?}");
            assert_eq!(statuses[0].failed, 151, "{location:?}");
            assert_eq!(guids(1), vec!["g151", "g152"], "{location:?}");
            assert_eq!(statuses[1].items[0].state, UnsettledState::Pending);
            assert_eq!(statuses[1].items[1].state, UnsettledState::Failed);
            assert_eq!(statuses[1].items[1].reason.as_deref(), Some("e152"));
            assert_eq!((statuses[1].pending, statuses[1].failed), (1, 1));
            assert!(statuses[2].items.is_empty());
        }
    }
}
