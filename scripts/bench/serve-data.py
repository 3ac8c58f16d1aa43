#!/usr/bin/env python3
"""Helpers of scripts/bench-serve: which resources plikt serves, the same bytes laid out for
nginx, and a check that both servers answer every URL with those bytes.

  serve-data.py list --www DIR --base URL --blobs DIR --publisher ID --out FILE.tsv
      Reads the publisher's public Resource List as `plikt publish` wrote it below DIR
      (resourcesync/ID/resourcelist.xml, following a Resource List Index to its parts) and
      writes one line per file resource (`d/ID/<deposit>/<key>`, not the metadata records):
      path (from /), sha-256, length, type. Checks that each blob is in the blob store
      (BLOBS/<sha256[..2]>/<sha256>) with that length.
  serve-data.py mirror --blobs DIR --root DIR FILE.tsv...
      Hard-links (copies if it cannot) every listed resource's blob to ROOT/<path>: the
      same bytes at the same URL paths, for nginx.
  serve-data.py check --url http://HOST:PORT FILE.tsv...
      GETs every listed path (over 32 keep-alive connections, each a share of the list) and
      checks status 200, the length and the SHA-256 of the body. Exit 1 on a mismatch.
  serve-data.py paths FILE.tsv [--min-length N]
      Prints the paths (one per line) of the listed resources of at least N bytes.
"""

import argparse
import concurrent.futures
import hashlib
import http.client
import os
import re
import shutil
import sys
import urllib.parse
import xml.etree.ElementTree as ET

SM = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
RS = "{http://www.openarchives.org/rs/terms/}"
FILE_PATH = re.compile(r"^d/[^/]+/[0-9]+/[0-9a-f]{16}$")


def blob_path(blobs: str, sha: str) -> str:
    return os.path.join(blobs, sha[:2], sha)


def read_list(path: str, www: str, base: str, out: list) -> None:
    root = ET.parse(path).getroot()
    if root.tag == SM + "sitemapindex":
        for sm in root.iter(SM + "sitemap"):
            loc = sm.find(SM + "loc").text
            if not loc.startswith(base):
                sys.exit(f"serve-data: index entry {loc} is not below {base}")
            read_list(os.path.join(www, loc[len(base):]), www, base, out)
        return
    for url in root.iter(SM + "url"):
        loc = url.find(SM + "loc").text
        rel = loc[len(base):] if loc.startswith(base) else None
        if rel is None or not FILE_PATH.match(rel):
            continue  # a deposit or its metadata record: made by plikt, not a blob
        md = url.find(RS + "md")
        hashes = dict(h.split(":", 1) for h in md.get("hash", "").split())
        out.append(("/" + rel, hashes["sha-256"], int(md.get("length")), md.get("type", "")))


def cmd_list(a) -> int:
    rows = []
    read_list(os.path.join(a.www, "resourcesync", a.publisher, "resourcelist.xml"), a.www,
              a.base, rows)
    if not rows:
        sys.exit(f"serve-data: no file resources in {a.publisher}'s Resource List")
    for path, sha, length, _ in rows:
        p = blob_path(a.blobs, sha)
        if os.path.getsize(p) != length:
            sys.exit(f"serve-data: blob {p} of {path}: {os.path.getsize(p)} bytes, listed {length}")
    rows.sort()
    with open(a.out, "w", encoding="utf-8") as f:
        for r in rows:
            f.write("\t".join(map(str, r)) + "\n")
    print(f"{a.publisher}: {len(rows)} file resources, {sum(r[2] for r in rows)} bytes")
    return 0


def load(tsvs) -> list:
    rows = []
    for tsv in tsvs:
        with open(tsv, encoding="utf-8") as f:
            for line in f:
                path, sha, length, ctype = line.rstrip("\n").split("\t")
                rows.append((path, sha, int(length), ctype))
    return rows


def cmd_mirror(a) -> int:
    linked = copied = 0
    for path, sha, _, _ in load(a.tsv):
        dst = os.path.join(a.root, path.lstrip("/"))
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if os.path.exists(dst):
            os.remove(dst)
        try:
            os.link(blob_path(a.blobs, sha), dst)
            linked += 1
        except OSError:
            shutil.copyfile(blob_path(a.blobs, sha), dst)
            copied += 1
    print(f"mirror {a.root}: {linked} hard links, {copied} copies")
    return 0


def check_some(url: str, rows: list) -> tuple:
    """GETs `rows` in order over one keep-alive connection: (count, bytes) or an error text."""
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
    n = total = 0
    for path, sha, length, _ in rows:
        conn.request("GET", path)
        r = conn.getresponse()
        h = hashlib.sha256()
        got = 0
        while True:
            chunk = r.read(1 << 20)
            if not chunk:
                break
            h.update(chunk)
            got += len(chunk)
        if r.status != 200 or got != length or h.hexdigest() != sha:
            return (f"check {url}{path}: status {r.status}, {got} bytes (want {length}), "
                    f"sha-256 {h.hexdigest()} (want {sha})")
        if r.getheader("Connection", "").lower() == "close":
            conn.close()
            conn = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
        n += 1
        total += got
    conn.close()
    return n, total


def cmd_check(a) -> int:
    # Several connections at once: a server that leaves Nagle's algorithm on answers one
    # connection about every 40 ms (delayed ACKs), which would make one connection take minutes.
    rows = load(a.tsv)
    shares = [rows[i::a.connections] for i in range(a.connections)]
    n = total = 0
    with concurrent.futures.ThreadPoolExecutor(a.connections) as pool:
        for res in pool.map(lambda share: check_some(a.url, share), shares):
            if isinstance(res, str):
                print(res, file=sys.stderr)
                return 1
            n += res[0]
            total += res[1]
    print(f"check {a.url}: {n} resources, {total} bytes, all 200 with the listed length and "
          f"SHA-256 ({a.connections} connections)")
    return 0


def cmd_paths(a) -> int:
    for path, _, length, _ in load([a.tsv]):
        if length >= a.min_length:
            print(path)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("list")
    p.add_argument("--www", required=True)
    p.add_argument("--base", required=True)
    p.add_argument("--blobs", required=True)
    p.add_argument("--publisher", required=True)
    p.add_argument("--out", required=True)
    p = sub.add_parser("mirror")
    p.add_argument("--blobs", required=True)
    p.add_argument("--root", required=True)
    p.add_argument("tsv", nargs="+")
    p = sub.add_parser("check")
    p.add_argument("--url", required=True)
    p.add_argument("--connections", type=int, default=32)
    p.add_argument("tsv", nargs="+")
    p = sub.add_parser("paths")
    p.add_argument("tsv")
    p.add_argument("--min-length", type=int, default=0)
    a = ap.parse_args()
    return {"list": cmd_list, "mirror": cmd_mirror, "check": cmd_check, "paths": cmd_paths}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
