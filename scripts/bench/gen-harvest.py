#!/usr/bin/env python3
"""Generate the files and feeds that scripts/bench-harvest serves from its loopback nginx.

Usage:
  python3 scripts/bench/gen-harvest.py CASE --www DIR --meta DIR --base URL
                                       [--count N] [--size-mib M] [--seed S]

CASE "small" (case A): N items (default 10,000), each with a tiny HTML page as its `link`
(small/a/NNNNNN.html, 250-400 bytes) and one `media:content` pointing at a file of 1-64 KiB of
pseudo-random bytes (small/f/NNNNNN.bin, size uniform in [1024, 65536]).
CASE "big" (case B): N items (default 4), each with a tiny HTML page as its `link`
(big/a/NNN.html) and one `media:content` pointing at a file of M MiB (default 256) of
pseudo-random bytes (big/f/NNN.bin), every file different.

Every item has a distinct link and a distinct media:content url, so the set of URLs a harvester
fetches (every link and every media:content url) is exactly the set listed in META/CASE.curl,
plus the feed itself, which is listed there too: curl fetches the feed as well, so that both
sides fetch the same set of URLs.

The items have the shape of scripts/gen-feed.py's (its constants are reused; title,
description, guid = link, pubDate strictly decreasing, dcterms:identifier typed uri = link,
dcterms:publisher SE5560041815, accessRights gratis/restricted, license, format text/html),
and the media:content carries type="application/octet-stream" (what nginx sends for .bin),
fileSize and media:hash algo="md5" of the file's bytes.

No randomness beyond random.Random(seed): the same arguments always give the same bytes
(the feed depends on --base, i.e. on the port). The content files are generated once and
reused while META/CASE.stamp matches (parameters and file sizes); the feed and the lists are
rewritten every time (cheap).

Writes:
  WWW/feed-CASE.xml           the feed (served at BASE/feed-CASE.xml)
  WWW/CASE/...                the content files
  META/CASE.content.tsv       kind, path (relative to WWW), size, md5 of every content file
  META/CASE.md5               md5sum -c list of every fetched file (feed, links, media),
                              paths relative to the download directory (= WWW layout)
  META/CASE.curl              curl --config file: url/output pairs of every fetched file
  META/CASE.paths             sorted request paths (/feed-CASE.xml, /CASE/...), one per line
  META/CASE.json              counts: items, files (links + media), bytes, feed bytes, ...
and prints META/CASE.json to stdout.
"""

import argparse
import hashlib
import importlib.util
import json
import os
import random
import sys
from datetime import timedelta
from email.utils import format_datetime

HERE = os.path.dirname(os.path.abspath(__file__))
GEN_FEED = os.path.join(os.path.dirname(HERE), "gen-feed.py")
VERSION = 1  # bump when the content layout changes (invalidates stamps)


def load_gen_feed():
    spec = importlib.util.spec_from_file_location("gen_feed", GEN_FEED)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


G = load_gen_feed()


def md5_bytes(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def title_of(i: int) -> str:
    place = G.PLACES[i % len(G.PLACES)]
    subject = G.SUBJECTS[(i // 3) % len(G.SUBJECTS)]
    event = G.EVENTS[(i // 7) % len(G.EVENTS)]
    return f"{subject} i {place} {event}"


def html_page(i: int, media_name: str) -> bytes:
    place = G.PLACES[i % len(G.PLACES)]
    title = title_of(i)
    return (f"<!DOCTYPE html>\n<html lang=\"sv\">\n<head><meta charset=\"utf-8\">"
            f"<title>{title}</title></head>\n<body>\n<h1>{title}</h1>\n"
            f"<p>Beslut nr {i} i {place}.</p>\n"
            f"<p><a href=\"../f/{media_name}\">Bilaga</a></p>\n</body>\n</html>\n").encode("utf-8")


def write_file(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


def gen_small(www: str, count: int, seed: int) -> list:
    """Returns [(index, link_rel, link_size, link_md5, media_rel, media_size, media_md5)]."""
    rng = random.Random(seed)
    os.makedirs(os.path.join(www, "small", "a"), exist_ok=True)
    os.makedirs(os.path.join(www, "small", "f"), exist_ok=True)
    rows = []
    for i in range(count):
        size = rng.randint(1024, 65536)
        data = rng.randbytes(size)
        media_name = f"{i:06d}.bin"
        media_rel = f"small/f/{media_name}"
        write_file(os.path.join(www, media_rel), data)
        page = html_page(i, media_name)
        link_rel = f"small/a/{i:06d}.html"
        write_file(os.path.join(www, link_rel), page)
        rows.append((i, link_rel, len(page), md5_bytes(page), media_rel, size, md5_bytes(data)))
    return rows


def gen_big(www: str, count: int, size_mib: int, seed: int) -> list:
    os.makedirs(os.path.join(www, "big", "a"), exist_ok=True)
    os.makedirs(os.path.join(www, "big", "f"), exist_ok=True)
    chunk = 8 << 20
    total = size_mib << 20
    rows = []
    for i in range(count):
        rng = random.Random(seed * 1_000_003 + i)  # one stream per file: all files differ
        media_name = f"{i:03d}.bin"
        media_rel = f"big/f/{media_name}"
        h = hashlib.md5()
        with open(os.path.join(www, media_rel), "wb") as f:
            left = total
            while left:
                n = min(chunk, left)
                data = rng.randbytes(n)
                h.update(data)
                f.write(data)
                left -= n
        page = html_page(i, media_name)
        link_rel = f"big/a/{i:03d}.html"
        write_file(os.path.join(www, link_rel), page)
        rows.append((i, link_rel, len(page), md5_bytes(page), media_rel, total, h.hexdigest()))
    return rows


def item_xml(i: int, when, base: str, row: tuple) -> str:
    _, link_rel, _, _, media_rel, media_size, media_md5 = row
    place = G.PLACES[i % len(G.PLACES)]
    link = base + link_rel
    url = base + media_rel
    description = f"Beslut nr {i} i {place}."
    if i % 5 == 0:  # some publishers send HTML, escaped (as in gen-feed.py)
        description = f"&lt;p&gt;{description}&lt;/p&gt;"
    return f"""\t<item>
\t\t<title>{title_of(i)}</title>
\t\t<link>{link}</link>
\t\t<description>{description}</description>
\t\t<guid>{link}</guid>
\t\t<pubDate>{format_datetime(when)}</pubDate>
\t\t<dcterms:identifier xsi:type="dcterms:uri">{link}</dcterms:identifier>
\t\t<dcterms:publisher>{G.PUBLISHER}</dcterms:publisher>
\t\t<dcterms:accessRights>{"gratis" if i % 4 else "restricted"}</dcterms:accessRights>
\t\t<dcterms:license>{G.LICENSE}</dcterms:license>
\t\t<dcterms:format>text/html</dcterms:format>
\t\t<media:content url="{url}" type="application/octet-stream" medium="document" fileSize="{media_size}">
\t\t\t<media:hash algo="md5">{media_md5}</media:hash>
\t\t</media:content>
\t</item>
"""


def content_ok(www: str, meta: str, case: str, stamp: dict) -> list:
    """The cached content rows if the stamp matches and every file has its size, else None."""
    try:
        with open(os.path.join(meta, f"{case}.stamp"), encoding="utf-8") as f:
            if json.load(f) != stamp:
                return None
        rows = []
        with open(os.path.join(meta, f"{case}.content.tsv"), encoding="utf-8") as f:
            for line in f:
                r = line.rstrip("\n").split("\t")
                row = (int(r[0]), r[1], int(r[2]), r[3], r[4], int(r[5]), r[6])
                if (os.path.getsize(os.path.join(www, row[1])) != row[2]
                        or os.path.getsize(os.path.join(www, row[4])) != row[5]):
                    return None
                rows.append(row)
        return rows if len(rows) == stamp["count"] else None
    except (OSError, ValueError, IndexError, KeyError):
        return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("case", choices=["small", "big"])
    ap.add_argument("--www", required=True)
    ap.add_argument("--meta", required=True)
    ap.add_argument("--base", required=True, help="URL prefix of WWW, ending in /")
    ap.add_argument("--count", type=int)
    ap.add_argument("--size-mib", type=int, default=256)
    ap.add_argument("--seed", type=int, default=20250314)
    a = ap.parse_args()
    if not a.base.endswith("/"):
        ap.error("--base must end in /")
    count = a.count if a.count is not None else (10_000 if a.case == "small" else 4)
    os.makedirs(a.www, exist_ok=True)
    os.makedirs(a.meta, exist_ok=True)
    stamp = {"version": VERSION, "case": a.case, "count": count, "seed": a.seed,
             "size_mib": a.size_mib if a.case == "big" else None}

    rows = content_ok(a.www, a.meta, a.case, stamp)
    reused = rows is not None
    if rows is None:
        print(f"gen-harvest: generating {a.case} content ({count} items) in {a.www}",
              file=sys.stderr, flush=True)
        stamp_path = os.path.join(a.meta, f"{a.case}.stamp")
        if os.path.exists(stamp_path):
            os.remove(stamp_path)
        if a.case == "small":
            rows = gen_small(a.www, count, a.seed)
        else:
            rows = gen_big(a.www, count, a.size_mib, a.seed)
        with open(os.path.join(a.meta, f"{a.case}.content.tsv"), "w", encoding="utf-8") as f:
            for r in rows:
                f.write("\t".join(map(str, r)) + "\n")
        with open(stamp_path, "w", encoding="utf-8") as f:
            json.dump(stamp, f)

    feed_name = f"feed-{a.case}.xml"
    feed_path = os.path.join(a.www, feed_name)
    parts = [G.HEADER]
    when = G.START
    for r in rows:
        i = r[0]
        parts.append(item_xml(i, when, a.base, r))
        when -= timedelta(minutes=7 + (i * 13) % 23, seconds=(i * 7) % 60)
    parts.append(G.FOOTER)
    feed = "".join(parts).encode("utf-8")
    tmp = feed_path + ".tmp"
    write_file(tmp, feed)
    os.replace(tmp, feed_path)

    # (path relative to WWW, size, md5) of every URL a harvester fetches, the feed first.
    fetched = [(feed_name, len(feed), md5_bytes(feed))]
    for r in rows:
        fetched.append((r[1], r[2], r[3]))
        fetched.append((r[4], r[5], r[6]))
    with open(os.path.join(a.meta, f"{a.case}.md5"), "w", encoding="utf-8") as f:
        for rel, _, digest in fetched:
            f.write(f"{digest}  {rel}\n")
    with open(os.path.join(a.meta, f"{a.case}.curl"), "w", encoding="utf-8") as f:
        for rel, _, _ in fetched:
            f.write(f'url = "{a.base}{rel}"\noutput = "{rel}"\n')
    with open(os.path.join(a.meta, f"{a.case}.paths"), "w", encoding="utf-8") as f:
        base_path = "/" + a.base.split("://", 1)[1].split("/", 1)[1]
        for p in sorted(base_path + rel for rel, _, _ in fetched):
            f.write(p + "\n")

    summary = {
        "case": a.case,
        "items": len(rows),
        "feed": feed_name,
        "feed_url": a.base + feed_name,
        "feed_bytes": len(feed),
        "files": 2 * len(rows),  # link pages + media files (the feed not counted)
        "bytes": sum(r[2] + r[5] for r in rows),
        "media_files": len(rows),
        "media_bytes": sum(r[5] for r in rows),
        "link_bytes": sum(r[2] for r in rows),
        "requests": len(fetched),  # files + the feed
        "reused_content": reused,
        "seed": a.seed,
    }
    with open(os.path.join(a.meta, f"{a.case}.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
