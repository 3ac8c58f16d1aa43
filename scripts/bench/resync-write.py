#!/usr/bin/env python3
"""The peer of scripts/bench-publish: the Python resync library writing a Change List of
N entries (split at 50,000 entries into a sitemapindex and parts, as resync does)."""
import os
import sys
from resync import ChangeList, Resource
from resync.mapper import Mapper

n, out = int(sys.argv[1]), sys.argv[2]
# Writing an index and parts needs a mapping from files to URIs.
cl = ChangeList(mapper=Mapper([f"http://127.0.0.1:8080/={os.path.dirname(os.path.abspath(out))}"]))
cl.max_sitemap_entries = 50000
cl.allow_multifile = True
for i in range(1, n + 1):
    cl.add(Resource(uri=f"http://127.0.0.1:8080/d/bench/{i}/0123456789abcdef",
                    lastmod="2026-11-01T00:00:00Z", change="created",
                    md5="0123456789abcdef0123456789abcdef", length=33, mime_type="text/html"))
cl.write(basename=out)
print(f"wrote {n} entries to {out}")
