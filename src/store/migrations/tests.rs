use super::*;

/// A new in-memory SQLite database, and a new PostgreSQL one when the test script
/// gives a server (`PLIKT_TEST_POSTGRES`).
fn new_databases(name: &str) -> Vec<Db> {
    let mut dbs = vec![Db::sqlite(rusqlite::Connection::open_in_memory().unwrap())];
    if let Some(server) = super::super::sql::tests::postgres_server() {
        let url = super::super::sql::tests::fresh_database(&server, name);
        dbs.push(Db::postgres(
            postgres::Client::connect(&url, postgres::NoTls).unwrap(),
        ));
    }
    dbs
}

#[test]
fn both_backends_have_every_version() {
    assert_eq!(SQLITE.len(), POSTGRES.len());
}

/// A catalog of schema version 10 (before the tallies), with deposited (one of them
/// restricted), pending and failed versions and blobs shared between files, brought
/// up to this plikt's: migrations 11, 12 and 15 fill the publishers' tallies and the
/// blob tally from its rows, on both backends.
#[test]
fn an_older_catalogs_tallies_are_filled_from_its_rows() {
    for mut db in new_databases("tallies") {
        migrate_upto(&mut db, 10).unwrap();
        let t = "'2026-11-27T12:00:00.000Z'";
        db.batch(&format!(
            "INSERT INTO publishers (id, name, feed) VALUES ('a', 'A', 'x'), ('b', 'B', 'y');
             INSERT INTO runs (id, publisher, started_at) VALUES (1, 'a', {t}), (2, 'b', {t});
             INSERT INTO deposits (id, publisher, guid, created_at)
               VALUES (1, 'a', 'g1', {t}), (2, 'a', 'g2', {t}), (3, 'b', 'g3', {t});
             INSERT INTO versions (id, deposit_id, pub_date, pub_date_raw, item_hash,
               metadata, findings, conforming, access, state, found_run, found_at)
             VALUES (1, 1, '1', '1', 'h', '{{}}', '[]', 1, 'gratis', 'deposited', 1, {t}),
                    (2, 1, '2', '2', 'h', '{{}}', '[]', 0, 'restricted', 'deposited', 1, {t}),
                    (3, 2, '1', '1', 'h', '{{}}', '[]', 1, 'gratis', 'pending', 1, {t}),
                    (4, 3, '1', '1', 'h', '{{}}', '[]', 1, 'gratis', 'failed', 2, {t});
             INSERT INTO blobs (sha256, length, md5, stored_at)
               VALUES ('s1', 10, 'm', {t}), ('s2', 32, 'm', {t});
             INSERT INTO files (id, version_id, ord, role, url, state, sha256)
             VALUES (1, 1, 0, 'link', 'u', 'stored', 's1'),
                    (2, 2, 0, 'link', 'u', 'stored', 's1'),
                    (3, 2, 1, 'content', 'v', 'stored', 's2'),
                    (4, 3, 0, 'link', 'u', 'stored', 's2'),
                    (5, 4, 0, 'link', 'u', 'failed', NULL);"
        ))
        .unwrap();
        migrate(&mut db).unwrap();
        let tallies = db
            .query(
                "SELECT publisher, deposits, versions, files, restricted FROM tallies
                 ORDER BY publisher",
                params![],
                |r| {
                    Ok((
                        r.get::<String>(0)?,
                        r.get::<i64>(1)?,
                        r.get::<i64>(2)?,
                        r.get::<i64>(3)?,
                        r.get::<i64>(4)?,
                    ))
                },
            )
            .unwrap();
        // Publisher a: one deposit with two deposited versions (one restricted)
        // and three files; its pending version and b's failed one are not counted.
        assert_eq!(
            tallies,
            vec![("a".to_string(), 1, 2, 3, 1)],
            "{:?}",
            db.backend()
        );
        let blobs = db
            .query("SELECT id, blobs, bytes FROM blob_tally", params![], |r| {
                Ok((r.get::<i64>(0)?, r.get::<i64>(1)?, r.get::<i64>(2)?))
            })
            .unwrap();
        assert_eq!(blobs, vec![(1, 2, 42)], "{:?}", db.backend());
    }
}

/// A catalog of schema version 12 whose records were digested up to a gap (version
/// 3's is missing): migration 13 marks the journal position before the gap, so that
/// the next fill starts there and not at the beginning.
#[test]
fn the_record_digest_mark_of_an_older_catalog_stops_before_the_first_gap() {
    for mut db in new_databases("digest_mark") {
        migrate_upto(&mut db, 12).unwrap();
        let t = "'2026-11-27T12:00:00.000Z'";
        let mut sql = format!(
            "INSERT INTO publishers (id, name, feed) VALUES ('a', 'A', 'x');
             INSERT INTO runs (id, publisher, started_at) VALUES (1, 'a', {t});"
        );
        for id in 1..=4 {
            sql.push_str(&format!(
                "INSERT INTO deposits (id, publisher, guid, created_at) VALUES ({id}, 'a', 'g{id}', {t});
                 INSERT INTO versions (id, deposit_id, pub_date, pub_date_raw, item_hash, metadata,
                   findings, conforming, access, state, found_run, found_at)
                 VALUES ({id}, {id}, '1', '1', 'h', '{{}}', '[]', 1, 'gratis', 'deposited', 1, {t});
                 INSERT INTO changes (version_id, deposit_id, publisher, change, at)
                 VALUES ({id}, {id}, 'a', 'created', {t});"
            ));
            if id != 3 {
                sql.push_str(&format!(
                    "INSERT INTO record_digests (version_id, mapping, length, md5, sha256)
                     VALUES ({id}, 'kb-2', 1, 'm', 's');"
                ));
            }
        }
        // One stale digest of an older mapping.
        sql.push_str("UPDATE record_digests SET mapping = 'kb-1' WHERE version_id = 4;");
        db.batch(&sql).unwrap();
        migrate(&mut db).unwrap();
        let mark = db
            .query(
                "SELECT mapping, seq FROM record_digest_mark",
                params![],
                |r| Ok((r.get::<String>(0)?, r.get::<i64>(1)?)),
            )
            .unwrap();
        assert_eq!(mark, vec![("kb-2".to_string(), 2)], "{:?}", db.backend());
    }
}

/// An empty catalog has no blob tally row: `plikt migrate` copies the source's into
/// it (`ON CONFLICT DO NOTHING` would keep a zero row found there).
#[test]
fn a_new_catalog_has_no_blob_tally_row() {
    let mut db = Db::sqlite(rusqlite::Connection::open_in_memory().unwrap());
    migrate(&mut db).unwrap();
    let n: i64 = db
        .one("SELECT count(*) FROM blob_tally", params![])
        .unwrap();
    assert_eq!(n, 0);
}
