#!/usr/bin/env python3
"""Fill a fresh plikt catalog with N synthetic changes for scripts/bench-publish.

One publisher `bench`, N deposits with one deposited `gratis` version each, one stored
file per version (all the same small blob, written once), and N journal entries spread
over DAYS closed UTC days ending yesterday (so publishing writes DAYS closed Change Lists).
The catalog's schema comes from plikt itself (`plikt audit` creates it).

Options (scripts/bench-archive):
  --end WHEN   the span ends at WHEN (`YYYY-MM-DD` or `YYYY-MM-DDThh:mm:ss`, UTC)
               instead of today's UTC midnight; DAYS may be a fraction (0.5: half a day)
  --append     add N new deposits to a catalog filled before (ids after the highest;
               publisher, run and blob are there already), their versions, files and
               journal entries spread over the DAYS before --end
  --update     with --append: instead of new deposits, a new version (same file URL,
               journal `updated`) of N existing deposits spread evenly over all of them
  --access A   the access of those new versions (default gratis; restricted: the
               deposits leave the public set)
  --publishers P  spread the N deposits round-robin over P publishers `bench-1` …
               `bench-P` instead of the one publisher `bench` (a fresh catalog only)"""
import argparse, hashlib, json, os, sqlite3, datetime

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("data_dir")
ap.add_argument("n", type=int)
ap.add_argument("days", type=float)
ap.add_argument("--end", help="end of the span, UTC (default: today's midnight)")
ap.add_argument("--append", action="store_true", help="add N deposits to a filled catalog")
ap.add_argument("--update", action="store_true", help="with --append: update N existing deposits")
ap.add_argument("--access", default="gratis", choices=["gratis", "restricted"], help="with --update: their new access")
ap.add_argument("--publishers", type=int, default=0, help="spread the deposits over P publishers (fresh catalog)")
args = ap.parse_args()
data_dir, n, days = args.data_dir, args.n, args.days

blob = b"<html><body>bench</body></html>\n"
sha, md5 = hashlib.sha256(blob).hexdigest(), hashlib.md5(blob).hexdigest()
os.makedirs(os.path.join(data_dir, "blobs", sha[:2]), exist_ok=True)
with open(os.path.join(data_dir, "blobs", sha[:2], sha), "wb") as f:
    f.write(blob)
db = sqlite3.connect(os.path.join(data_dir, "catalog.sqlite"))
db.execute("PRAGMA synchronous = OFF")
if args.end:
    now = datetime.datetime.fromisoformat(args.end).replace(tzinfo=datetime.timezone.utc)
else:
    now = datetime.datetime.now(datetime.timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
start = now - datetime.timedelta(days=days)
step = datetime.timedelta(days=days) / n
publishers = [f"bench-{k}" for k in range(1, args.publishers + 1)] if args.publishers else ["bench"]
assert not (args.publishers and args.append), "--publishers fills a fresh catalog"
publisher_of = lambda i: publishers[(i - 1) % len(publishers)]
iso = lambda t: t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"
with db:
    # Version ids follow the highest (equal to the deposit ids until a deposit is updated).
    if args.append:
        first = db.execute("SELECT coalesce(max(id), 0) FROM deposits").fetchone()[0]
        shift = db.execute("SELECT coalesce(max(id), 0) FROM versions").fetchone()[0] - first
    else:
        first = shift = 0
        for pub in publishers:
            db.execute("INSERT INTO publishers (id, name, feed) VALUES (?, ?, ?)", (pub, pub.title(), f"https://{pub}.example/feed.xml"))
        db.execute("INSERT INTO runs (id, publisher, started_at, ended_at, outcome) VALUES (1, ?, ?, ?, 'ok')", (publishers[0], iso(start), iso(start)))
        db.execute("INSERT INTO blobs (sha256, length, md5, stored_at) VALUES (?, ?, ?, ?)", (sha, len(blob), md5, iso(start)))
    if args.update:
        vfirst = db.execute("SELECT coalesce(max(id), 0) FROM versions").fetchone()[0]
        for j in range(n):
            at = iso(start + step * j)
            i = (2 * j + 1) * first // (2 * n) + 1   # deposits spread evenly over 1..first
            v = vfirst + 1 + j
            meta = json.dumps({"guid": f"bench-{i}", "title": [f"Artikel {i} (rättad)"], "link": [f"https://bench.example/a/{i}"]})
            db.execute("""INSERT INTO versions (id, deposit_id, pub_date, pub_date_raw, item_hash, metadata, findings,
                          conforming, access, state, found_run, found_at, deposited_at)
                          VALUES (?, ?, ?, 'x', 'h2', ?, '[]', 1, ?, 'deposited', 1, ?, ?)""", (v, i, at, meta, args.access, at, at))
            db.execute("""INSERT INTO files (version_id, ord, role, url, state, sha256, length, md5, fetched_at, content_type)
                          VALUES (?, 0, 'link', ?, 'stored', ?, ?, ?, ?, 'text/html')""",
                       (v, f"https://bench.example/a/{i}", sha, len(blob), md5, at))
            db.execute("INSERT INTO changes (version_id, deposit_id, publisher, change, at) VALUES (?, ?, 'bench', 'updated', ?)", (v, i, at))
    for i in range(first + 1, first + n + 1) if not args.update else ():
        at = iso(start + step * (i - first - 1))
        meta = json.dumps({"guid": f"bench-{i}", "title": [f"Artikel {i}"], "link": [f"https://bench.example/a/{i}"]})
        db.execute("INSERT INTO deposits (id, publisher, guid, created_at) VALUES (?, ?, ?, ?)", (i, publisher_of(i), f"bench-{i}", at))
        db.execute("""INSERT INTO versions (id, deposit_id, pub_date, pub_date_raw, item_hash, metadata, findings,
                      conforming, access, state, found_run, found_at, deposited_at)
                      VALUES (?, ?, ?, 'x', 'h', ?, '[]', 1, 'gratis', 'deposited', 1, ?, ?)""", (i + shift, i, at, meta, at, at))
        db.execute("""INSERT INTO files (version_id, ord, role, url, state, sha256, length, md5, fetched_at, content_type)
                      VALUES (?, 0, 'link', ?, 'stored', ?, ?, ?, ?, 'text/html')""",
                   (i + shift, f"https://bench.example/a/{i}", sha, len(blob), md5, at))
        db.execute("INSERT INTO changes (version_id, deposit_id, publisher, change, at) VALUES (?, ?, ?, 'created', ?)", (i + shift, i, publisher_of(i), at))
if args.update:
    print(f"{n} deposits of {first} updated ({args.access}) from {iso(start)} until {iso(now)} in {data_dir}")
elif args.append:
    print(f"{n} changes added (deposits {first + 1}–{first + n}) from {iso(start)} until {iso(now)} in {data_dir}")
else:
    print(f"{n} changes over {days:g} days in {data_dir}")
