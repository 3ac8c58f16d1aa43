//! The catalog: publishers, runs, findings, deposits, versions, files, blobs and the
//! append-only change journal that the ResourceSync publisher reads, on SQLite (one file
//! under `data_dir`, the default) or PostgreSQL (`[catalog] url`), through
//! [`Db`](super::sql::Db). The only SQL in plikt.
//!
//! Durability: on SQLite WAL with `synchronous=FULL`, so a committed transaction
//! survives a power loss, not only a crash; on PostgreSQL the server's (fsync on). Foreign
//! keys are on. The schema is migrated in code ([`super::migrations`]).
//!
//! Every writing transaction on SQLite is `BEGIN IMMEDIATE`: it waits (busy timeout) for
//! another publisher's run to commit instead of failing when its snapshot turns stale. On
//! PostgreSQL writers that must take turns (the change journal) take a lock
//! ([`Lock`](super::sql::Lock)).
//!
//! What the catalog keeps is split by concern over files that each `impl Catalog`:
//! runs ([`super::runs`], leases [`super::lease`]), deposits ([`super::deposit`]),
//! the journal as published ([`super::published`]), notifications ([`super::notify`]),
//! and what the pages read ([`super::query`]).

use std::path::Path;

use super::StoreError;
use super::location::Location;
use super::sql::{Db, Lock, params, sql};

/// The catalog.
#[derive(Debug)]
pub struct Catalog {
    db: Db,
}

impl Catalog {
    /// Opens (creating and migrating) the catalog at `location`.
    pub fn open(location: &Location) -> Result<Self, StoreError> {
        let mut db = location.connect()?;
        super::migrations::migrate(&mut db)?;
        Ok(Self { db })
    }

    /// Opens (creating and migrating) the SQLite catalog at `path`.
    pub fn open_sqlite(path: &Path) -> Result<Self, StoreError> {
        Self::open(&Location::Sqlite(path.to_path_buf()))
    }

    /// The connection, for queries of other modules in `store`.
    pub(super) fn db(&self) -> &Db {
        &self.db
    }

    /// The connection, for transactions (in this module's siblings).
    pub(super) fn db_mut(&mut self) -> &mut Db {
        &mut self.db
    }

    /// Which database holds the catalog.
    pub fn backend(&self) -> super::sql::Backend {
        self.db.backend()
    }

    /// Waits for, then holds until this catalog is dropped, the right to publish the
    /// ResourceSync documents: one publish at a time among all workers of a PostgreSQL
    /// catalog (the lock ends with the connection, also when a worker dies). With SQLite
    /// the data folder's publish lock file does this. While another worker publishes it
    /// waits in PostgreSQL's queue, looking every `poll` whether it is to stop, and gives
    /// up (`Ok(false)`) once `stopping` says so.
    pub fn lock_publishing(
        &self,
        stopping: &(dyn Fn() -> bool + Sync),
        poll: std::time::Duration,
    ) -> Result<bool, StoreError> {
        loop {
            let taken = self
                .db
                .lock_session_within(Lock::Publish, poll)
                .map_err(sql("waiting for another worker's publish"))?;
            if taken {
                return Ok(true);
            }
            if stopping() {
                return Ok(false);
            }
        }
    }

    /// Whether this connection still holds the right to publish
    /// ([`Catalog::lock_publishing`]): false, or an error, once the connection ended
    /// (PostgreSQL restarted, the network cut), after which another worker may publish.
    pub fn holds_publishing(&self) -> Result<bool, StoreError> {
        self.db
            .holds_session_lock(Lock::Publish)
            .map_err(sql("checking the publish lock"))
    }

    /// The catalog's identity: made once, at random, when its schema reached version
    /// 17; it moves with the collection (`plikt migrate`, a backup).
    pub fn identity(&self) -> Result<String, StoreError> {
        self.db
            .one("SELECT id FROM catalog_identity", params![])
            .map_err(sql("reading the catalog's identity"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processes_opening_a_fresh_catalog_at_once_both_migrate_it() {
        // `plikt serve` and `plikt harvest` started together on a new data folder.
        let tmp = tempfile::Builder::new()
            .prefix("plikt-migrate-")
            .tempdir()
            .unwrap();
        let dir = tmp.path();
        for round in 0..20 {
            let path = dir.join(format!("{round}.sqlite"));
            let openers: Vec<_> = (0..3)
                .map(|_| {
                    let path = path.clone();
                    std::thread::spawn(move || Catalog::open_sqlite(&path).map(drop))
                })
                .collect();
            for o in openers {
                o.join().unwrap().unwrap();
            }
        }
        // And workers starting together on a new PostgreSQL catalog (the test script's
        // second run).
        let Some(server) = super::super::sql::tests::postgres_server() else {
            return;
        };
        for round in 0..5 {
            let url =
                super::super::sql::tests::fresh_database(&server, &format!("migrate_{round}"));
            let openers: Vec<_> = (0..3)
                .map(|_| {
                    let location = Location::plain_postgres(url.clone());
                    std::thread::spawn(move || Catalog::open(&location).map(drop))
                })
                .collect();
            for o in openers {
                o.join().unwrap().unwrap();
            }
            let c = Catalog::open(&Location::plain_postgres(url.clone())).unwrap();
            let v: i64 = c
                .db()
                .one("SELECT count(*) FROM plikt_schema", params![])
                .unwrap();
            assert_eq!(v, 1);
        }
    }
}
