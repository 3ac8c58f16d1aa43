#!/usr/bin/env python3
"""A Destination that keeps its mirror up to date from change notifications alone.

    apply_notifications.py BASE_URL MIRROR NOTIFICATION.xml ...

Reads each ResourceSync change notification (Change Notification 1.0.1 §3: a
`<urlset>` with `capability="change-notification"`), in the order given, and for
every entry fetches the version it names (its `rel="memento"` link: the bytes of
that change, which stay retrievable however often the resource changes later),
checks its length and both digests against the entry, and writes it where the
entry's `<loc>` maps under MIRROR (BASE_URL=MIRROR, as `resync-sync` maps URLs).
A `change="deleted"` entry removes the file. Nothing else is fetched: no Resource
List, no Change List. Checks that the notifications of one topic come in forward
chronological order and that their intervals follow one another.

Prints one JSON line: notifications, entries applied, interval chain. Exit 1 on
any mismatch. Python 3.11 standard library only.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import urllib.request
import xml.etree.ElementTree as ET

SM = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
RS = "{http://www.openarchives.org/rs/terms/}"


def fail(msg: str) -> None:
    print(f"FAIL {msg}", file=sys.stderr)
    sys.exit(1)


def digests(data: bytes) -> dict[str, str]:
    return {"md5": hashlib.md5(data).hexdigest(), "sha-256": hashlib.sha256(data).hexdigest()}


def main() -> None:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    base, mirror, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    applied = 0
    previous_until = None
    last_datetime = ""
    for path in files:
        root = ET.parse(path).getroot()
        if root.tag != SM + "urlset":
            fail(f"{path}: root is {root.tag}, not a <urlset> (§3: never a <sitemapindex>)")
        md = root.find(RS + "md")
        if md is None or md.get("capability") != "change-notification":
            fail(f"{path}: no <rs:md capability=\"change-notification\">")
        frm, until = md.get("from"), md.get("until")
        if previous_until is not None and frm != previous_until:
            fail(f"{path}: from={frm} does not follow the previous until={previous_until}")
        previous_until = until
        for url in root.findall(SM + "url"):
            loc = url.findtext(SM + "loc")
            emd = url.find(RS + "md")
            change, when = emd.get("change"), emd.get("datetime")
            if when < last_datetime:
                fail(f"{path}: {loc} at {when} comes after a change at {last_datetime}")
            if not (frm <= when < until):
                fail(f"{path}: {loc} at {when} is outside [{frm}, {until})")
            last_datetime = when
            if not loc.startswith(base):
                fail(f"{path}: {loc} is not below {base}")
            target = os.path.join(mirror, loc[len(base):])
            if change == "deleted":
                if os.path.exists(target):
                    os.remove(target)
                applied += 1
                continue
            memento = next(
                (ln.get("href") for ln in url.findall(RS + "ln") if ln.get("rel") == "memento"),
                None,
            )
            if memento is None:
                fail(f"{path}: {loc} has no rel=\"memento\" link")
            with urllib.request.urlopen(memento, timeout=30) as r:
                data = r.read()
            want = dict(p.split(":", 1) for p in emd.get("hash", "").split())
            if int(emd.get("length", -1)) != len(data) or any(
                want.get(k) != v for k, v in digests(data).items()
            ):
                fail(f"{path}: {memento} does not match the entry of {loc}")
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as f:
                f.write(data)
            applied += 1
    print(json.dumps({"notifications": len(files), "applied": applied, "until": previous_until}))


if __name__ == "__main__":
    main()
