#!/usr/bin/env python3
"""The peer of scripts/bench-publish: the Python resync library writing a Resource List of
R entries and a Change List of C entries (each split at 50,000 entries into a sitemapindex
and parts, as resync does): as many entries as plikt wrote into its Resource and Change
Lists from the same catalog. One list at a time, so that only one is held in memory."""
import os
import sys
from resync import ChangeList, Resource, ResourceList
from resync.mapper import Mapper

r, c, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
os.makedirs(out, exist_ok=True)
# Writing an index and parts needs a mapping from files to URIs.
mapper = Mapper([f"http://127.0.0.1:8080/={os.path.abspath(out)}"])
for kind, n, name in ((ResourceList, r, "resourcelist.xml"), (ChangeList, c, "changelist.xml")):
    lst = kind(mapper=mapper)
    lst.max_sitemap_entries = 50000
    lst.allow_multifile = True
    for i in range(1, n + 1):
        extra = {"change": "created"} if kind is ChangeList else {}
        lst.add(Resource(uri=f"http://127.0.0.1:8080/d/bench/{i}/0123456789abcdef",
                         lastmod="2026-11-01T00:00:00Z",
                         md5="0123456789abcdef0123456789abcdef", length=33, mime_type="text/html",
                         **extra))
    lst.write(basename=os.path.join(out, name))
    del lst
print(f"wrote {r} + {c} entries under {out}")
