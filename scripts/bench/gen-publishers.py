#!/usr/bin/env python3
"""Write N small publishers for scripts/bench-publishers (issue 35 §6).

Usage: python3 scripts/bench/gen-publishers.py N WWW PORT [--new]

Publisher p (0 ≤ p < N) lives at http://127.0.0.H:PORT/pP/ with H = 2 + p mod 249 (the
loopback addresses 127.0.0.2–127.0.0.250, so that plikt's per-host limit is not what is
measured): WWW/pP/feed.xml has 2 items, each a link page and one file of 1–4 KiB of
seeded bytes (feed + 4 small files per run). With --new every feed gets 2 newer items
(2 more pages and files) before the 2 it had. Deterministic: the same arguments give the
same bytes. Prints the config's [[publisher]] tables to stdout.
"""

import importlib.util
import os
import random
import sys
from datetime import timedelta

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("gen_harvest", os.path.join(HERE, "gen-harvest.py"))
H = importlib.util.module_from_spec(spec)
spec.loader.exec_module(H)
G = H.G


def rows(www: str, p: int, first: int, count: int) -> list:
    rng = random.Random(p * 1000 + first)
    out = []
    for i in range(first, first + count):
        data = rng.randbytes(rng.randint(1024, 4096))
        media_rel, link_rel = f"f/{i}.bin", f"a/{i}.html"
        H.write_file(os.path.join(www, media_rel), data)
        page = H.html_page(i, f"{i}.bin")
        H.write_file(os.path.join(www, link_rel), page)
        out.append((i, link_rel, len(page), H.md5_bytes(page), media_rel, len(data),
                    H.md5_bytes(data)))
    return out


def main(argv: list) -> int:
    if len(argv) not in (4, 5) or not argv[1].isdigit():
        print(__doc__, file=sys.stderr)
        return 2
    n, www, port, new = int(argv[1]), argv[2], argv[3], argv[4:] == ["--new"]
    for p in range(n):
        host = f"127.0.0.{2 + p % 249}"
        base = f"http://{host}:{port}/p{p}/"
        d = os.path.join(www, f"p{p}")
        os.makedirs(os.path.join(d, "a"), exist_ok=True)
        os.makedirs(os.path.join(d, "f"), exist_ok=True)
        items = rows(d, p, 0, 2)
        if new:
            items = rows(d, p, 2, 2)[::-1] + items[::-1]
        else:
            items = items[::-1]
        when = G.START + timedelta(hours=len(items))
        with open(os.path.join(d, "feed.xml"), "w", encoding="utf-8") as f:
            f.write(G.HEADER)
            for row in items:
                f.write(H.item_xml(row[0], when, base, row))
                when -= timedelta(hours=1)
            f.write(G.FOOTER)
        print(f'[[publisher]]\nid = "p{p}"\nname = "Förlag {p}"\nfeed = "{base}feed.xml"\n'
              f'organisations = ["SE5560041815"]\nschedule = "0 0 3 * * *"\n'
              f'https_only = false\nallow_private = true\n')
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
