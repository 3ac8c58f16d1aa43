#!/usr/bin/env python3
"""Fill a fresh plikt catalog with N synthetic changes for scripts/bench-publish.

One publisher `bench`, N deposits with one deposited `gratis` version each, one stored
file per version (all the same small blob, written once), and N journal entries spread
over DAYS closed UTC days ending yesterday (so publishing writes DAYS closed Change Lists).
The catalog's schema comes from plikt itself (`plikt audit` creates it)."""
import hashlib, json, os, sqlite3, sys, datetime

data_dir, n, days = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
blob = b"<html><body>bench</body></html>\n"
sha, md5 = hashlib.sha256(blob).hexdigest(), hashlib.md5(blob).hexdigest()
os.makedirs(os.path.join(data_dir, "blobs", sha[:2]), exist_ok=True)
with open(os.path.join(data_dir, "blobs", sha[:2], sha), "wb") as f:
    f.write(blob)
db = sqlite3.connect(os.path.join(data_dir, "catalog.sqlite"))
db.execute("PRAGMA synchronous = OFF")
now = datetime.datetime.now(datetime.timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
start = now - datetime.timedelta(days=days)
step = datetime.timedelta(days=days) / n
iso = lambda t: t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"
with db:
    db.execute("INSERT INTO publishers (id, name, feed) VALUES ('bench', 'Bench', 'https://bench.example/feed.xml')")
    db.execute("INSERT INTO runs (id, publisher, started_at, ended_at, outcome) VALUES (1, 'bench', ?, ?, 'ok')", (iso(start), iso(start)))
    db.execute("INSERT INTO blobs (sha256, length, md5, stored_at) VALUES (?, ?, ?, ?)", (sha, len(blob), md5, iso(start)))
    for i in range(1, n + 1):
        at = iso(start + step * (i - 1))
        meta = json.dumps({"guid": f"bench-{i}", "title": [f"Artikel {i}"], "link": [f"https://bench.example/a/{i}"]})
        db.execute("INSERT INTO deposits (id, publisher, guid, created_at) VALUES (?, 'bench', ?, ?)", (i, f"bench-{i}", at))
        db.execute("""INSERT INTO versions (id, deposit_id, pub_date, pub_date_raw, item_hash, metadata, findings,
                      conforming, access, state, found_run, found_at, deposited_at)
                      VALUES (?, ?, ?, 'x', 'h', ?, '[]', 1, 'gratis', 'deposited', 1, ?, ?)""", (i, i, at, meta, at, at))
        db.execute("""INSERT INTO files (version_id, ord, role, url, state, sha256, length, md5, fetched_at, content_type)
                      VALUES (?, 0, 'link', ?, 'stored', ?, ?, ?, ?, 'text/html')""",
                   (i, f"https://bench.example/a/{i}", sha, len(blob), md5, at))
        db.execute("INSERT INTO changes (version_id, deposit_id, publisher, change, at) VALUES (?, ?, 'bench', 'created', ?)", (i, i, at))
print(f"{n} changes over {days} days in {data_dir}")
