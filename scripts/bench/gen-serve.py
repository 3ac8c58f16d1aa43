#!/usr/bin/env python3
"""Generate the publisher side of scripts/bench-serve: two feeds and their files, for plikt to
harvest from a loopback nginx (the deposited collection that `plikt serve` then republishes).

Usage:
  python3 scripts/bench/gen-serve.py --www DIR --meta DIR --base URL
                                     [--items N] [--min-bytes A] [--max-bytes B]
                                     [--big-mib M] [--seed S]

Publisher "small": N items (default 5,000), each with a link to an HTML page
(serve-small/a/NNNNNN.html) padded to a size uniform in [A, B] (default 1-8 KiB) and one
media:content of pseudo-random bytes (serve-small/f/NNNNNN.bin) of a size uniform in [A, B]:
2 N small files, i.e. 10,000 resources by default, ~45 MB.
Publisher "big": one item (scripts/bench/gen-harvest.py's "big" shape: a tiny HTML page and
one media:content of M MiB, default 1024, pseudo-random bytes).

The items are gen-harvest.py's (same module, same elements: fileSize, media:hash md5, typed
dcterms:identifier ...), except that every item is `gratis`, so that every resource is in the
public set that `plikt serve` serves without credentials. The same arguments give the same
bytes (the feeds depend on --base). Content files are generated once and reused while
META/serve-CASE.stamp matches; the feeds are rewritten every time.

Writes WWW/feed-small.xml, WWW/feed-big.xml, the files below WWW/serve-small and WWW/big,
META/serve-CASE.{stamp,content.tsv} and prints a JSON summary.
"""

import argparse
import hashlib
import importlib.util
import json
import os
import random
import sys
from datetime import timedelta

HERE = os.path.dirname(os.path.abspath(__file__))
VERSION = 1  # bump when the content layout changes (invalidates stamps)


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


H = load("gen_harvest", os.path.join(HERE, "gen-harvest.py"))
G = H.G  # scripts/gen-feed.py: header, footer, words, publisher


def padded_page(i: int, media_name: str, size: int, rng: random.Random) -> bytes:
    """gen-harvest's page for item i, padded with paragraphs of words to `size` bytes."""
    page = H.html_page(i, media_name)
    head, tail = page.rsplit(b"</body>", 1)
    tail = b"</body>" + tail
    words = [w.encode("utf-8") for w in G.PLACES + G.SUBJECTS + G.EVENTS]
    body = bytearray()
    room = size - len(head) - len(tail)
    while True:  # whole paragraphs while they fit, then spaces to the exact size
        para = b"<p>" + b" ".join(rng.choice(words) for _ in range(rng.randint(8, 40))) + b"</p>\n"
        if len(body) + len(para) > room:
            break
        body += para
    body += b" " * max(0, room - len(body))
    out = head + bytes(body) + tail
    assert len(out) == max(size, len(head) + len(tail)), (len(out), size)
    return out


def gen_small(www: str, count: int, lo: int, hi: int, seed: int) -> list:
    """Rows as gen-harvest's: (index, link_rel, link_size, link_md5, media_rel, size, md5)."""
    rng = random.Random(seed)
    os.makedirs(os.path.join(www, "serve-small", "a"), exist_ok=True)
    os.makedirs(os.path.join(www, "serve-small", "f"), exist_ok=True)
    rows = []
    for i in range(count):
        media_name = f"{i:06d}.bin"
        media_rel = f"serve-small/f/{media_name}"
        data = rng.randbytes(rng.randint(lo, hi))
        H.write_file(os.path.join(www, media_rel), data)
        page = padded_page(i, media_name, rng.randint(lo, hi), rng)
        link_rel = f"serve-small/a/{i:06d}.html"
        H.write_file(os.path.join(www, link_rel), page)
        rows.append((i, link_rel, len(page), H.md5_bytes(page), media_rel, len(data),
                     H.md5_bytes(data)))
    return rows


def feed(rows: list, base: str) -> bytes:
    parts = [G.HEADER]
    when = G.START
    for r in rows:
        i = r[0]
        item = H.item_xml(i, when, base, r)
        # gen-harvest makes every fourth item restricted; here all are public.
        parts.append(item.replace("<dcterms:accessRights>restricted<",
                                  "<dcterms:accessRights>gratis<"))
        when -= timedelta(minutes=7 + (i * 13) % 23, seconds=(i * 7) % 60)
    parts.append(G.FOOTER)
    return "".join(parts).encode("utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--www", required=True)
    ap.add_argument("--meta", required=True)
    ap.add_argument("--base", required=True, help="URL prefix of WWW, ending in /")
    ap.add_argument("--items", type=int, default=5000)
    ap.add_argument("--min-bytes", type=int, default=1024)
    ap.add_argument("--max-bytes", type=int, default=8192)
    ap.add_argument("--big-mib", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=20250314)
    a = ap.parse_args()
    if not a.base.endswith("/"):
        ap.error("--base must end in /")
    os.makedirs(a.www, exist_ok=True)
    os.makedirs(a.meta, exist_ok=True)
    summary = {}
    for case in ("small", "big"):
        name = f"serve-{case}"
        if case == "small":
            stamp = {"version": VERSION, "case": name, "count": a.items, "seed": a.seed,
                     "min": a.min_bytes, "max": a.max_bytes}
        else:
            stamp = {"version": VERSION, "case": name, "count": 1, "seed": a.seed,
                     "size_mib": a.big_mib}
        rows = H.content_ok(a.www, a.meta, name, stamp)
        reused = rows is not None
        if rows is None:
            print(f"gen-serve: generating {name} content in {a.www}", file=sys.stderr, flush=True)
            stamp_path = os.path.join(a.meta, f"{name}.stamp")
            if os.path.exists(stamp_path):
                os.remove(stamp_path)
            if case == "small":
                rows = gen_small(a.www, a.items, a.min_bytes, a.max_bytes, a.seed)
            else:
                rows = H.gen_big(a.www, 1, a.big_mib, a.seed)
            with open(os.path.join(a.meta, f"{name}.content.tsv"), "w", encoding="utf-8") as f:
                for r in rows:
                    f.write("\t".join(map(str, r)) + "\n")
            with open(stamp_path, "w", encoding="utf-8") as f:
                json.dump(stamp, f)
        data = feed(rows, a.base)
        path = os.path.join(a.www, f"feed-{case}.xml")
        H.write_file(path + ".tmp", data)
        os.replace(path + ".tmp", path)
        summary[case] = {"items": len(rows), "files": 2 * len(rows),
                         "bytes": sum(r[2] + r[5] for r in rows),
                         "feed": a.base + f"feed-{case}.xml", "reused_content": reused}
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
