#!/usr/bin/env python3
"""Self-test of crawl.py against a small in-memory ResourceSync Source.

    python3 tests/destination/selftest.py [-v]

Serves, on loopback, a Source laid out as plikt will publish it -- a public and
a restricted set, a Resource List Index, the four Archives (one archived Resource
List an index, one closed Change List an index), Resource and Change Dumps with
their ZIP packages, the WebSub topic and hub -- and checks that crawl.py passes
it (exit 0, no FAIL line), then breaks one thing at a time and checks that
crawl.py fails with the expected message. Standard library only.
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
CRAWL = os.path.join(HERE, "crawl.py")
TOKEN = "Bearer selftest-token"
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"'
DAY1, DAY2, DAY3, DAY4 = "2026-01-01", "2026-01-02", "2026-01-03", "2026-01-04"


def midnight(day: str) -> str:
    return f"{day}T00:00:00.000Z"


class Version:
    """One version of a deposit: its files (key -> (bytes, type)) and record."""

    def __init__(self, pub, dep, ver, at, change, files):
        self.pub, self.dep, self.ver, self.at, self.change, self.files = pub, dep, ver, at, change, files
        self.record = (f'<?xml version="1.0"?><record deposit="{dep}" version="{ver}"/>').encode()


def md_attrs(body: bytes, type_: str) -> str:
    return (f'hash="md5:{hashlib.md5(body).hexdigest()} sha-256:{hashlib.sha256(body).hexdigest()}" '
            f'length="{len(body)}" type="{type_}"')


class Site:
    """The Source: URL path -> (status, headers, body), built from versions."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.pages: dict[str, tuple[int, dict[str, str], bytes]] = {}
        self.anonymous_sd = b""
        self.protected: list[str] = []  # path prefixes that need TOKEN

    def put(self, path, body, type_="application/xml", headers=None):
        h = {"Content-Type": type_}
        h.update(headers or {})
        self.pages[path] = (200, h, body if isinstance(body, bytes) else body.encode())

    # --- entries -------------------------------------------------------------------

    def entry(self, v: Version, key: str, *, change=False, path=False) -> str:
        b = self.base
        deposit = f"{b}d/{v.pub}/{v.dep}/"
        extra = f' change="{v.change}" datetime="{v.at}"' if change else ""
        if key == "metadata.xml":
            body, type_ = v.record, "application/xml"
            links = (f'<rs:ln rel="describes" href="{deposit}"/>'
                     f'<rs:ln rel="profile" href="http://purl.org/dc/terms/"/>')
        else:
            body, type_ = v.files[key]
            links = (f'<rs:ln rel="via" href="https://publisher.example/{key}" modified="{v.at}"/>'
                     f'<rs:ln rel="describedby" href="{deposit}metadata.xml" type="application/xml"/>'
                     f'<rs:ln rel="collection" href="{deposit}"/>')
        if path:
            extra += f' path="/{v.dep}/v{v.ver}/{key}"'
        memento = f'<rs:ln rel="memento" href="{deposit}v{v.ver}/{key}" {md_attrs(body, type_)}/>'
        return (f"<url><loc>{deposit}{key}</loc><lastmod>{v.at}</lastmod>"
                f"<rs:md {md_attrs(body, type_)}{extra}/>{links}{memento}</url>")

    @staticmethod
    def keys(v: Version) -> list[str]:
        return ["metadata.xml"] + sorted(v.files)

    def urlset(self, folder, md, entries, index=None, archives=None):
        links = f'<rs:ln rel="up" href="{self.base}{folder}capabilitylist.xml"/>'
        if index:
            links += f'<rs:ln rel="index" href="{self.base}{index}"/>'
        if archives:
            links += f'<rs:ln rel="archives" href="{self.base}{folder}{archives}"/>'
        return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {NS}>{links}<rs:md {md}/>{"".join(entries)}</urlset>'

    def index(self, folder, md, parts, archives=None):
        links = f'<rs:ln rel="up" href="{self.base}{folder}capabilitylist.xml"/>'
        if archives:
            links += f'<rs:ln rel="archives" href="{self.base}{folder}{archives}"/>'
        items = "".join(f"<sitemap><loc>{self.base}{p}</loc></sitemap>" for p in parts)
        return f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex {NS}>{links}<rs:md {md}/>{items}</sitemapindex>'

    def put_list(self, folder, name, md, entries, split=False, archives=None):
        """A document at folder+name; with split, an index over two parts."""
        if not split:
            self.put(folder + name, self.urlset(folder, md, entries, archives=archives))
            return
        stem = name[:-4]
        half = len(entries) // 2
        cap = md.split('"')[1]
        parts = [f"{folder}{stem}-part-{i:05}.xml" for i in (1, 2)]
        for p, chunk in zip(parts, (entries[:half], entries[half:])):
            self.put(p, self.urlset(folder, f'capability="{cap}"', chunk, index=folder + name))
        self.put(folder + name, self.index(folder, md, parts, archives))

    def package(self, folder, zip_path, cap, md, versions, change):
        """A dump package and its manifest copy; returns the dump entry."""
        entries, buf = [], io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            for v in versions:
                for key in self.keys(v):
                    body = v.record if key == "metadata.xml" else v.files[key][0]
                    z.writestr(f"{v.dep}/v{v.ver}/{key}", body)
                    entries.append(self.entry(v, key, change=change, path=True))
            manifest = self.urlset(folder, f'capability="{cap}" {md}', entries).encode()
            z.writestr("manifest.xml", manifest)
        data = buf.getvalue()
        self.put(zip_path, data, "application/zip")
        self.put(zip_path[:-4] + "-manifest.xml", manifest)
        return (f"<url><loc>{self.base}{zip_path}</loc><rs:md {md_attrs(data, 'application/zip')} {md}/>"
                f'<rs:ln rel="contents" href="{self.base}{zip_path[:-4]}-manifest.xml" type="application/xml"/></url>')

    # --- a set -------------------------------------------------------------------------

    def build_set(self, folder: str, versions: list[Version], split: bool) -> None:
        b = self.base
        caps = {c: f"{folder}{c}.xml" for c in (
            "resourcelist", "resourcedump", "changelist", "changedump", "resourcelist-archive",
            "resourcedump-archive", "changelist-archive", "changedump-archive")}
        caps["change-notification"] = f"{folder}change/"
        items = "".join(
            f"<url><loc>{b}{loc}</loc><rs:md capability=\"{c}\"/>"
            + (f'<rs:ln rel="hub" href="{b}hub"/>' if c == "change-notification" else "") + "</url>"
            for c, loc in caps.items())
        self.put(f"{folder}capabilitylist.xml",
                 f'<?xml version="1.0"?>\n<urlset {NS}><rs:ln rel="up" href="{b}.well-known/resourcesync"/>'
                 f'<rs:md capability="capabilitylist"/>{items}</urlset>')

        def current(upto: str) -> list[Version]:
            latest: dict[str, Version] = {}
            for v in versions:
                if v.at < upto:
                    latest[v.dep] = v
            return list(latest.values())

        def snapshot(upto: str) -> list[str]:
            return [self.entry(v, k) for v in current(upto) for k in self.keys(v)]

        # Resource Lists: the live one, and two archived (the second an index).
        now = f"{DAY3}T12:00:00.000Z"
        self.put_list(folder, "resourcelist.xml", f'capability="resourcelist" at="{now}" completed="{now}"',
                      snapshot("9999"), split=split, archives="resourcelist-archive.xml")
        archived = []
        for day, as_index in ((DAY1, False), (DAY2, True)):
            at = f"{day}T23:00:00.000Z"
            self.put_list(folder, f"resourcelist/{day}.xml", f'capability="resourcelist" at="{at}" completed="{at}"',
                          snapshot(at), split=as_index)
            archived.append(f'<url><loc>{b}{folder}resourcelist/{day}.xml</loc><rs:md at="{at}" completed="{at}"/></url>')
        self.put(f"{folder}resourcelist-archive.xml", self.urlset(folder, 'capability="resourcelist-archive"', archived))

        # Resource Dumps: the live one and one archived.
        def resource_dump(name, at, live):
            pkg = self.package(folder, f"{folder}resourcedump/{name}.zip", "resourcedump-manifest",
                               f'at="{at}" completed="{at}"', current(at), change=False)
            doc = f"{folder}resourcedump.xml" if live else f"{folder}resourcedump/{name}.xml"
            self.put(doc, self.urlset(folder, f'capability="resourcedump" at="{at}" completed="{at}"', [pkg],
                                      archives="resourcedump-archive.xml" if live else None))
        resource_dump("part-00001", now, True)
        resource_dump(DAY1, f"{DAY1}T23:00:00.000Z", False)
        self.put(f"{folder}resourcedump-archive.xml", self.urlset(folder, 'capability="resourcedump-archive"', [
            f'<url><loc>{b}{folder}resourcedump/{DAY1}.xml</loc><rs:md at="{DAY1}T23:00:00.000Z" '
            f'completed="{DAY1}T23:00:00.000Z"/></url>']))

        # Change Lists: closed days (the second an index), the open one, the archive.
        def changes(start, end):
            return [self.entry(v, k, change=True) for v in versions if start <= v.at < end for k in self.keys(v)]

        archive = []
        for day, nxt, as_index in ((DAY1, DAY2, False), (DAY2, DAY3, True)):
            md = f'from="{midnight(day)}" until="{midnight(nxt)}"'
            self.put_list(folder, f"changelist/{day}.xml", f'capability="changelist" {md}',
                          changes(midnight(day), midnight(nxt)), split=as_index)
            archive.append(f"<url><loc>{b}{folder}changelist/{day}.xml</loc><rs:md {md}/></url>")
        self.put(f"{folder}changelist-archive.xml", self.urlset(folder, 'capability="changelist-archive"', archive))
        self.put(f"{folder}changelist.xml", self.urlset(folder, f'capability="changelist" from="{midnight(DAY3)}"',
                                                        changes(midnight(DAY3), "9999"),
                                                        archives="changelist-archive.xml"))

        # Change Dumps: one package per closed day, per-day documents, the archive.
        live_pkgs, archive = [], []
        for day, nxt in ((DAY1, DAY2), (DAY2, DAY3)):
            md = f'from="{midnight(day)}" until="{midnight(nxt)}"'
            day_versions = [v for v in versions if midnight(day) <= v.at < midnight(nxt)]
            pkg = self.package(folder, f"{folder}changedump/{day}.zip", "changedump-manifest", md,
                               day_versions, change=True)
            live_pkgs.append(pkg)
            self.put(f"{folder}changedump/{day}.xml", self.urlset(folder, f'capability="changedump" {md}', [pkg]))
            archive.append(f"<url><loc>{b}{folder}changedump/{day}.xml</loc><rs:md {md}/></url>")
        self.put(f"{folder}changedump.xml", self.urlset(folder, f'capability="changedump" from="{midnight(DAY1)}"',
                                                        live_pkgs, archives="changedump-archive.xml"))
        self.put(f"{folder}changedump-archive.xml", self.urlset(folder, 'capability="changedump-archive"', archive))

        # The topic.
        topic = f"{b}{folder}change/"
        self.put(f"{folder}change/", self.urlset(folder, 'capability="change-notification"',
                                                 changes(midnight(DAY3), "9999")),
                 headers={"Link": f'<{topic}>; rel="self", <{b}hub>; rel="hub"'})

        # Resources, records, deposits and mementos.
        capability_list = f'<{b}{folder}capabilitylist.xml>; rel="resourcesync"'
        for v in versions:
            d = f"d/{v.pub}/{v.dep}/"
            for key, (body, type_) in v.files.items():
                self.put(f"{d}{key}", body, type_, {"Link": capability_list})
                self.put(f"{d}v{v.ver}/{key}", body, type_, {"Link": capability_list})
            self.put(f"{d}metadata.xml", v.record, "application/xml; charset=utf-8", {"Link": capability_list})
            self.put(d, v.record, "application/xml; charset=utf-8", {"Link": capability_list})
            self.put(f"{d}v{v.ver}/metadata.xml", v.record, "application/xml; charset=utf-8",
                     {"Link": capability_list})


def build(base: str) -> Site:
    s = Site(base)
    page = ("<html>v1</html>".encode(), "text/html; charset=utf-8")
    public = [
        Version("alpha", "1", "1", f"{DAY1}T10:00:00.000Z", "created",
                {"aaaaaaaaaaaaaaaa": page, "cccccccccccccccc": (b"\x89PNG one", "image/png")}),
        Version("alpha", "2", "2", f"{DAY1}T11:00:00.000Z", "created", {"bbbbbbbbbbbbbbbb": (b"%PDF-1", "application/pdf")}),
        Version("alpha", "1", "3", f"{DAY2}T09:00:00.000Z", "updated",
                {"aaaaaaaaaaaaaaaa": (b"<html>v3</html>", "text/html; charset=utf-8"),
                 "cccccccccccccccc": (b"\x89PNG one", "image/png")}),
        # Changed twice on DAY2: twice in that day's Change Dump manifest, at different paths.
        Version("alpha", "1", "7", f"{DAY2}T15:00:00.000Z", "updated",
                {"aaaaaaaaaaaaaaaa": (b"<html>v7</html>", "text/html; charset=utf-8"),
                 "cccccccccccccccc": (b"\x89PNG two", "image/png")}),
        Version("alpha", "2", "4", f"{DAY3}T08:00:00.000Z", "updated", {"bbbbbbbbbbbbbbbb": (b"%PDF-2", "application/pdf")}),
    ]
    restricted = [
        Version("alpha", "5", "5", f"{DAY1}T12:00:00.000Z", "created", {"dddddddddddddddd": (b"secret", "text/plain")}),
        Version("alpha", "5", "6", f"{DAY3}T09:00:00.000Z", "updated", {"dddddddddddddddd": (b"secret 2", "text/plain")}),
    ]
    s.build_set("resourcesync/alpha/", public, split=True)
    s.build_set("resourcesync/alpha/restricted/", restricted, split=False)
    s.protected = ["resourcesync/alpha/restricted/", "d/alpha/5/"]
    entries = lambda folders: "".join(  # noqa: E731
        f'<url><loc>{base}{f}capabilitylist.xml</loc><rs:md capability="capabilitylist"/></url>' for f in folders)
    sd = lambda folders: (f'<?xml version="1.0"?>\n<urlset {NS}><rs:md capability="description"/>'  # noqa: E731
                          f"{entries(folders)}</urlset>").encode()
    s.put(".well-known/resourcesync", sd(["resourcesync/alpha/", "resourcesync/alpha/restricted/"]))
    s.anonymous_sd = sd(["resourcesync/alpha/"])
    s.pages["hub"] = (405, {"Content-Type": "text/plain", "Allow": "POST"}, b"POST only\n")
    return s


# --------------------------------------------------------------------------------------
# Serving

SITE: Site | None = None


class Handler(BaseHTTPRequestHandler):
    def answer(self, send_body: bool) -> None:
        site = SITE
        path = self.path.split("?", 1)[0].lstrip("/")
        authorised = self.headers.get("Authorization") == TOKEN
        if path == ".well-known/resourcesync" and not authorised:
            status, headers, body = 200, {"Content-Type": "application/xml"}, site.anonymous_sd
        elif any(path.startswith(p) for p in site.protected) and not authorised and path.startswith("d/"):
            status, headers, body = 404, {"Content-Type": "text/plain"}, b"not found\n"
        elif any(path.startswith(p) for p in site.protected) and not authorised:
            status, headers, body = 401, {"WWW-Authenticate": 'Bearer realm="plikt"', "Content-Type": "text/plain"}, b"no\n"
        else:
            status, headers, body = site.pages.get(path, (404, {"Content-Type": "text/plain"}, b"not found\n"))
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if send_body:
            self.wfile.write(body)

    def do_GET(self):  # noqa: N802
        self.answer(True)

    def do_HEAD(self):  # noqa: N802
        self.answer(False)

    def log_message(self, *args):
        pass


def crawl(base, *args):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "summary.json")
        p = subprocess.run([sys.executable, CRAWL, base, "--json", out, "--timeout", "10", *args],
                           capture_output=True, text=True)
        summary = json.load(open(out)) if os.path.exists(out) else {}
    return p.returncode, p.stderr, summary


# --------------------------------------------------------------------------------------
# Breakages: (name, crawl arguments, change to the site, text expected in a FAIL line)


def replace_body(path, old, new):
    def change(site):
        status, headers, body = site.pages[path]
        assert old.encode() in body, f"{old!r} not in {path}"
        site.pages[path] = (status, headers, body.replace(old.encode(), new.encode(), 1))
    return change


def set_page(path, status=None, headers=None, body=None):
    def change(site):
        s, h, b = site.pages[path]
        site.pages[path] = (status or s, {**h, **(headers or {})}, b if body is None else body)
    return change


def rezip(path, edit):
    """Rewrite the ZIP at path: edit(dict name -> bytes) (entry hash is not updated)."""
    def change(site):
        s, h, b = site.pages[path]
        with zipfile.ZipFile(io.BytesIO(b)) as z:
            members = {n: z.read(n) for n in z.namelist()}
        edit(members)
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            for n, data in members.items():
                z.writestr(n, data)
        site.pages[path] = (s, h, buf.getvalue())
    return change


def unprotect(prefix):
    def change(site):
        site.protected = [p for p in site.protected if p != prefix]
    return change


def drop_sha256(path):
    def change(site):
        s, h, b = site.pages[path]
        site.pages[path] = (s, h, re.sub(rb" sha-256:[0-9a-f]{64}", b"", b, count=1))
    return change


def leak_sd(site):
    site.anonymous_sd = site.pages[".well-known/resourcesync"][2]


A = "resourcesync/alpha/"
R = "resourcesync/alpha/restricted/"
AUTH = ("--auth", TOKEN)
BREAKAGES = [
    ("memento bytes differ", AUTH, set_page("d/alpha/1/v1/aaaaaaaaaaaaaaaa", body=b"<html>v0</html>"),
     "memento md5 is"),
    ("live resource bytes differ", AUTH, set_page("d/alpha/2/bbbbbbbbbbbbbbbb", body=b"%PDF-3"),
     "resource sha-256 is"),
    ("resource wrong Content-Type", AUTH, set_page("d/alpha/2/bbbbbbbbbbbbbbbb", headers={"Content-Type": "text/plain"}),
     "Content-Type 'text/plain', the entry says type='application/pdf'"),
    ("record dead", AUTH, set_page("d/alpha/2/metadata.xml", status=404), "status 404, expected 200"),
    ("deposit not XML", AUTH, set_page("d/alpha/2/", body=b"<oops"), "not well-formed XML"),
    ("resourcesync Link header", AUTH, set_page("d/alpha/2/v4/bbbbbbbbbbbbbbbb", headers={"Link": "<http://x/>; rel=\"resourcesync\""}),
     'Link rel="resourcesync" is'),
    ("resource dump manifest up", AUTH,
     rezip(f"{A}resourcedump/part-00001.zip", lambda m: m.update({"manifest.xml": m["manifest.xml"].replace(
         b'capabilitylist.xml"/>', b'resourcedump.xml"/>', 1)})),
     'rel="up" → http://HOST/resourcesync/alpha/resourcedump.xml'),
    ("package bytes differ from entry", AUTH,
     rezip(f"{A}changedump/{DAY1}.zip", lambda m: m.update({"extra.txt": b"x"})), "package md5 is"),
    ("ZIP member not in manifest", AUTH,
     rezip(f"{A}changedump/{DAY1}.zip", lambda m: m.update({"extra.txt": b"x"})), "ZIP member extra.txt is not in manifest.xml"),
    ("manifest path missing", AUTH,
     rezip(f"{A}changedump/{DAY2}.zip", lambda m: m.pop("1/v3/cccccccccccccccc")), "path /1/v3/cccccccccccccccc is not in the ZIP"),
    ("contents copy differs", AUTH, set_page(f"{A}changedump/{DAY1}-manifest.xml", body=b"<urlset/>"),
     'rel="contents" copy differs'),
    ("package hash without sha-256", AUTH, drop_sha256(f"{A}resourcedump.xml"), "has no sha-256 digest"),
    ("archive out of order", AUTH, replace_body(f"{A}resourcelist-archive.xml", f'at="{DAY2}T23:00:00.000Z"', f'at="{DAY1}T20:00:00.000Z"'),
     "not chronological"),
    ("change dump package 404", AUTH, set_page(f"{A}changedump/{DAY2}.zip", status=404), "package status 404"),
    ("archive not contiguous", AUTH, replace_body(f"{A}changelist-archive.xml", f'from="{midnight(DAY2)}"', f'from="{DAY2}T01:00:00.000Z"'),
     "archive not contiguous"),
    ("open list not after archive", AUTH, replace_body(f"{A}changelist.xml", f'from="{midnight(DAY3)}"', f'from="{midnight(DAY4)}"'),
     "expected the last archived until"),
    ("change list out of order", AUTH, replace_body(f"{A}changelist/{DAY1}.xml", f'datetime="{DAY1}T11:00:00.000Z"', f'datetime="{DAY1}T09:00:00.000Z"'),
     "not forward chronological order"),
    ("lastmod differs from datetime", AUTH, replace_body(f"{A}changelist.xml", f"<lastmod>{DAY3}T08:00:00.000Z", f"<lastmod>{DAY3}T07:00:00.000Z"),
     "differs from datetime="),
    ("archived list at mismatch", AUTH, replace_body(f"{A}resourcelist-archive.xml", f'at="{DAY1}T23:00:00.000Z"', f'at="{DAY1}T22:00:00.000Z"'),
     "but the archive entry says at="),
    ("index part without index link", AUTH, replace_body(f"{A}resourcelist-part-00002.xml", 'rel="index"', 'rel="indx"'),
     'no <rs:ln rel="index">'),
    ("index does not list its part", AUTH, replace_body(f"{A}changelist/{DAY2}-part-00002.xml", f"{DAY2}.xml", f"{DAY1}.xml"),
     "index does not list its part"),
    ("archives link wrong", AUTH, replace_body(f"{A}resourcedump.xml", "resourcedump-archive.xml", "changedump-archive.xml"),
     "expected the Capability List's resourcedump-archive entry"),
    ("capability missing", AUTH, replace_body(f"{A}capabilitylist.xml", 'capability="changedump-archive"', 'capability="changedump-archiv"'),
     "no entry for capability changedump-archive"),
    ("topic without hub Link", AUTH, set_page(f"{A}change/", headers={"Link": "<http://HOST/x>; rel=\"self\""}),
     'no Link header <http://HOST/hub>; rel="hub"'),
    ("hub dead", AUTH, lambda site: site.pages.pop("hub"), "hub GET: status 404"),
    ("restricted resource served anonymously", AUTH, unprotect("d/alpha/5/"),
     "restricted-set URL without credentials: status 200, expected 404"),
    ("restricted set named anonymously", AUTH, leak_sd, "lists restricted sets to a client without credentials"),
    ("restricted set without --auth", (), leak_sd, "lists the restricted set"),
    ("expected set missing", ("--expect-set", "beta"), lambda site: None, "the set 'beta' is not listed"),
    ("no resources", (), lambda site: site.pages.update({".well-known/resourcesync": (200, {"Content-Type": "application/xml"}, site.anonymous_sd)})
     or setattr(site, "anonymous_sd", f'<?xml version="1.0"?><urlset {NS}><rs:md capability="description"/></urlset>'.encode()),
     "the crawl found no resources at all"),
]


def main() -> int:
    global SITE
    verbose = "-v" in sys.argv
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host = f"127.0.0.1:{server.server_address[1]}"
    base = f"http://{host}/"
    pristine = build(base)
    failed = 0

    SITE = pristine
    for args in (AUTH + ("--expect-set", "alpha", "--expect-set", "alpha/restricted"), ("--expect-set", "alpha")):
        code, err, summary = crawl(base, *args)
        ok = code == 0 and not err.strip()
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} conforming Source {' '.join(args)}: exit {code}")
        if not ok or verbose:
            print(err, json.dumps(summary), sep="\n")

    for name, args, change, expected in BREAKAGES:
        SITE = copy.deepcopy(pristine)
        change(SITE)
        code, err, _ = crawl(base, *args)
        expected = expected.replace("HOST", host)
        ok = code == 1 and any(expected in line for line in err.splitlines() if line.startswith("FAIL "))
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name}: exit {code}")
        if not ok or verbose:
            print(f"  expected a FAIL line containing {expected!r}; stderr:\n{err}")
    server.shutdown()
    print("selftest:", "all passed" if not failed else f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
