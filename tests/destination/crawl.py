#!/usr/bin/env python3
"""A ResourceSync Destination that crawls a plikt Source over HTTP and checks it.

    crawl.py BASE_URL [--auth 'Bearer TOKEN' | --auth 'Basic BASE64']
             [--expect-set PUBLISHER[/restricted] ...] [--json OUT.json]
             [--quiet] [--timeout SECONDS]

Starts at BASE_URL.well-known/resourcesync (BASE_URL ends with `/`) and walks
what a Destination meets: the Source Description, every set's Capability List,
Resource List (and Index), Resource Dump and its ZIP packages, the open and the
closed Change Lists, the Change Dumps, the four Archives (ResourceSync Archives
0.9.1) and everything they list, the Change Notification topic (WebSub) and its
hub, and every resource, metadata record, deposit and memento the entries name.
Every `<loc>` and `<rs:ln href>` under BASE_URL is fetched (once: responses are
cached); other links (`rel="via"` to the publisher, `rel="profile"` to a
namespace) are external and not followed. The checks, by function:

  Source Description / Capability Lists   check_source_description, crawl_set
  documents of each capability            crawl_resource_list, crawl_resource_dump,
                                          crawl_change_list, crawl_change_dump,
                                          crawl_archive, crawl_topic
  document links (up, index, archives)    check_up, check_index_link, check_archives_link
  one resource / record entry             check_entry (+ check_memento, check_location)
  change entries' order and window        check_change_order
  one dump package (ZIP + manifest)       check_package
  restricted sets                         Crawler.fetch (401 + WWW-Authenticate anonymously;
                                          404 for a restricted resource, as if missing)

With --auth every request carries the credentials, and every URL reached
through a restricted set (`resourcesync/<publisher>/restricted/`) is fetched a
second time without them and must answer 401 with a `WWW-Authenticate` header.

Output: each failure as one line `FAIL <url>: <what is wrong>` on stderr
(identical lines once), and a JSON summary (documents by capability, resources,
records, mementos, packages, checks, failures) on stdout -- or in the --json
file; --quiet leaves the summary off stdout. Exit status 0 only when nothing
failed, the crawl met at least one resource and every --expect-set is listed
in the Source Description; 1 otherwise; 2 for bad arguments.

Python 3.11 standard library only.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import http.client
import io
import json
import re
import sys
import urllib.parse
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass, field

SM = "http://www.sitemaps.org/schemas/sitemap/0.9"
RS = "http://www.openarchives.org/rs/terms/"
SOURCE_DESCRIPTION = ".well-known/resourcesync"

# The nine capabilities every Capability List advertises, and where plikt puts them
# (relative to the set's folder S = resourcesync/<publisher>[/restricted]/).
SET_CAPABILITIES = {
    "resourcelist": "resourcelist.xml",
    "resourcedump": "resourcedump.xml",
    "changelist": "changelist.xml",
    "changedump": "changedump.xml",
    "resourcelist-archive": "resourcelist-archive.xml",
    "resourcedump-archive": "resourcedump-archive.xml",
    "changelist-archive": "changelist-archive.xml",
    "changedump-archive": "changedump-archive.xml",
    "change-notification": "change/",
}
CHANGES = ("created", "updated")
XML = "application/xml"
ZIP = "application/zip"


# --------------------------------------------------------------------------------------
# Small value helpers


def media_type(value: str | None) -> str:
    """`text/html; charset=utf-8` -> `text/html` (lower case, no parameters)."""
    return (value or "").split(";", 1)[0].strip().lower()


def parse_datetime(value: str | None) -> dt.datetime | None:
    """A W3C datetime (as ResourceSync uses it) as an aware UTC datetime, or None."""
    if not value:
        return None
    try:
        t = dt.datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if t.tzinfo is None:
        # A date or a datetime without offset: UTC (a time needs an offset, but a
        # bare date is allowed by W3C datetime).
        if "T" in value:
            return None
        t = t.replace(tzinfo=dt.timezone.utc)
    return t.astimezone(dt.timezone.utc)


def show(t: dt.datetime) -> str:
    """A datetime for a message: ISO 8601 in UTC with Z."""
    return t.isoformat().replace("+00:00", "Z")


def parse_hashes(value: str | None) -> dict[str, str]:
    """`md5:… sha-256:…` -> {"md5": "…", "sha-256": "…"} (lower-case hex)."""
    out = {}
    for token in (value or "").split():
        algo, _, digest = token.partition(":")
        out[algo.lower()] = digest.lower()
    return out


def parse_link_header(value: str | None) -> list[tuple[str, set[str]]]:
    """An HTTP `Link` header as [(target, {rel, …}), …]."""
    links = []
    for m in re.finditer(r"<([^>]*)>((?:\s*;\s*[^;,<]+(?:=(?:\"[^\"]*\"|[^;,]*))?)*)", value or ""):
        rels: set[str] = set()
        for p in re.finditer(r";\s*([^=;\s]+)\s*=\s*(\"[^\"]*\"|[^;,\s]*)", m.group(2)):
            if p.group(1).lower() == "rel":
                rels.update(p.group(2).strip('"').lower().split())
        links.append((m.group(1), rels))
    return links


def digests(body: bytes) -> dict[str, str]:
    return {"md5": hashlib.md5(body).hexdigest(), "sha-256": hashlib.sha256(body).hexdigest()}


# --------------------------------------------------------------------------------------
# Failures


@dataclass
class Issue:
    url: str
    what: str
    where: str | None = None  # the document that led there, when it helps

    def line(self) -> str:
        tail = f" (in {self.where})" if self.where and self.where != self.url else ""
        return f"FAIL {self.url}: {self.what}{tail}"


class Issues:
    """The failures found, each (url, what) once, and the number of checks made."""

    def __init__(self) -> None:
        self.items: list[Issue] = []
        self._seen: set[tuple[str, str]] = set()
        self.checks = 0

    def expect(self, ok: bool, url: str, what: str, where: str | None = None) -> bool:
        """Count one check; record a failure unless `ok`. Returns `ok`."""
        self.checks += 1
        if not ok:
            self.fail(url, what, where)
        return ok

    def fail(self, url: str, what: str, where: str | None = None) -> None:
        key = (url, what)
        if key not in self._seen:
            self._seen.add(key)
            self.items.append(Issue(url, what, where))


# --------------------------------------------------------------------------------------
# HTTP


@dataclass
class Response:
    url: str
    status: int  # 0 when there was no HTTP answer at all (see `error`)
    headers: http.client.HTTPMessage | None
    body: bytes
    error: str | None = None
    _digests: dict[str, str] | None = None

    def header(self, name: str) -> str | None:
        return self.headers.get(name) if self.headers is not None else None

    @property
    def content_type(self) -> str:
        return media_type(self.header("Content-Type"))

    @property
    def digests(self) -> dict[str, str]:
        if self._digests is None:
            self._digests = digests(self.body)
        return self._digests


class Fetcher:
    """GET/HEAD with a timeout, each (method, URL, with/without credentials) once.

    Redirects are not followed (a redirect is an answer to check: expected 200).
    One persistent connection per host, reopened when the server closed it."""

    def __init__(self, auth: str | None, timeout: float) -> None:
        self.auth = auth
        self.timeout = timeout
        self.requests = 0
        self._cache: dict[tuple[str, str, bool], Response] = {}
        self._connections: dict[tuple[str, str], http.client.HTTPConnection] = {}

    def fetched(self, url: str) -> bool:
        return any(key[1] == url for key in self._cache)

    def get(self, url: str, *, anonymous: bool = False, method: str = "GET") -> Response:
        with_auth = bool(self.auth) and not anonymous
        key = (method, url, with_auth)
        if key not in self._cache:
            self._cache[key] = self._request(url, method, with_auth)
        return self._cache[key]

    def _request(self, url: str, method: str, with_auth: bool) -> Response:
        headers = {"User-Agent": "plikt-destination-crawler/1", "Accept-Encoding": "identity"}
        if with_auth:
            headers["Authorization"] = self.auth
        self.requests += 1
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            return Response(url, 0, None, b"", error="not an http(s) URL")
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        for attempt in (1, 2):
            conn = self._connection(parts.scheme, parts.netloc)
            try:
                conn.request(method, target, headers=headers)
                r = conn.getresponse()
                body = r.read()
                if r.will_close:
                    self._drop(parts.scheme, parts.netloc)
                return Response(url, r.status, r.headers, body)
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as e:
                self._drop(parts.scheme, parts.netloc)
                if attempt == 2:
                    return Response(url, 0, None, b"", error=f"{type(e).__name__}: {e}")
            except (OSError, http.client.HTTPException) as e:
                self._drop(parts.scheme, parts.netloc)
                return Response(url, 0, None, b"", error=f"{type(e).__name__}: {e}")
        raise AssertionError("unreachable")

    def _connection(self, scheme: str, netloc: str) -> http.client.HTTPConnection:
        key = (scheme, netloc)
        if key not in self._connections:
            cls = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
            self._connections[key] = cls(netloc, timeout=self.timeout)
        return self._connections[key]

    def _drop(self, scheme: str, netloc: str) -> None:
        conn = self._connections.pop((scheme, netloc), None)
        if conn is not None:
            conn.close()


# --------------------------------------------------------------------------------------
# Documents


@dataclass
class Link:
    rel: str
    href: str
    attrs: dict[str, str]


@dataclass
class Entry:
    """A `<url>` or `<sitemap>` of a document."""

    loc: str
    lastmod: str | None
    md: dict[str, str]
    links: list[Link]

    def links_of(self, rel: str) -> list[Link]:
        return [ln for ln in self.links if ln.rel == rel]


@dataclass
class Doc:
    url: str
    root: str  # "urlset" or "sitemapindex"
    md: dict[str, str]
    links: list[Link]
    entries: list[Entry]
    raw: bytes = b""

    @property
    def capability(self) -> str | None:
        return self.md.get("capability")

    @property
    def is_index(self) -> bool:
        return self.root == "sitemapindex"

    def links_of(self, rel: str) -> list[Link]:
        return [ln for ln in self.links if ln.rel == rel]


def _links_and_md(el: ET.Element) -> tuple[dict[str, str], list[Link]]:
    md: dict[str, str] = {}
    links = []
    for child in el:
        if child.tag == f"{{{RS}}}md":
            md.update(child.attrib)
        elif child.tag == f"{{{RS}}}ln":
            links.append(Link(child.get("rel", ""), (child.get("href") or "").strip(), dict(child.attrib)))
    return md, links


def parse_document(url: str, body: bytes) -> Doc:
    """Parse a Sitemap-based ResourceSync document; ValueError says what is wrong."""
    try:
        root = ET.fromstring(body)
    except ET.ParseError as e:
        raise ValueError(f"not well-formed XML: {e}") from None
    kinds = {f"{{{SM}}}urlset": "urlset", f"{{{SM}}}sitemapindex": "sitemapindex"}
    if root.tag not in kinds:
        raise ValueError(f"root element {root.tag}, expected <urlset> or <sitemapindex> in {SM}")
    kind = kinds[root.tag]
    md, links = _links_and_md(root)
    if root.find(f"{{{RS}}}md") is None:
        raise ValueError("no <rs:md> child of the root (capability)")
    entries = []
    item_tag = f"{{{SM}}}url" if kind == "urlset" else f"{{{SM}}}sitemap"
    for item in root.findall(item_tag):
        e_md, e_links = _links_and_md(item)
        loc = (item.findtext(f"{{{SM}}}loc") or "").strip()
        lastmod = item.findtext(f"{{{SM}}}lastmod")
        entries.append(Entry(loc, lastmod.strip() if lastmod else None, e_md, e_links))
    return Doc(url, kind, md, links, entries, body)


# --------------------------------------------------------------------------------------
# The crawl


@dataclass
class SetInfo:
    """One set of resources: a Capability List and what it advertises."""

    publisher: str
    restricted: bool
    folder: str  # BASE_URL + resourcesync/<publisher>[/restricted]/
    capabilitylist: str
    capabilities: dict[str, str] = field(default_factory=dict)  # capability -> loc

    @property
    def name(self) -> str:
        return self.publisher + ("/restricted" if self.restricted else "")


RESOURCE_PATH = re.compile(r"d/(?P<pub>[^/]+)/(?P<dep>[^/]+)/(?P<rest>.*)")
MEMENTO_REST = re.compile(r"v(?P<ver>[0-9]+)/(?P<key>[^/]+)")
SET_PATH = re.compile(r"resourcesync/(?P<pub>[^/]+)/(?P<restricted>restricted/)?capabilitylist\.xml")


class Crawler:
    def __init__(self, base: str, fetcher: Fetcher) -> None:
        self.base = base
        self.fetcher = fetcher
        self.issues = Issues()
        self.sd_url = base + SOURCE_DESCRIPTION
        self.hub_url = base + "hub"
        self.sets: dict[str, SetInfo] = {}  # capability list URL -> set
        self.docs: dict[str, Doc | None] = {}
        self.doc_counts: dict[str, int] = {}
        self.visited: set[tuple[str, str]] = set()  # (url, role) already checked
        self.referenced: dict[str, tuple[str, SetInfo | None]] = {}  # URL -> (where, set) first seen
        self.anonymous_checked: set[str] = set()
        self.skipped: set[str] = set()  # restricted sets listed to a client without credentials
        self.resources: set[str] = set()
        self.records: set[str] = set()
        self.mementos: set[str] = set()
        self.packages: set[str] = set()
        self.manifests = 0
        self.entries = 0

    # ---- plumbing ---------------------------------------------------------------

    def internal(self, url: str) -> bool:
        return url.startswith(self.base)

    def expect(self, ok: bool, url: str, what: str, where: str | None = None) -> bool:
        return self.issues.expect(ok, url, what, where)

    def refer(self, url: str, where: str, ctx: SetInfo | None) -> None:
        if url and self.internal(url):
            self.referenced.setdefault(url, (where, ctx))

    def fetch(self, url: str, ctx: SetInfo | None, where: str | None,
              expect_type: str | None = None, what: str = "") -> Response | None:
        """GET `url`; check 200 (and the media type); None unless 200.

        For a URL of a restricted set fetched with credentials, also check that
        it is refused without them (401 + WWW-Authenticate)."""
        r = self.fetcher.get(url)
        label = f"{what} " if what else ""
        if r.status == 0:
            self.issues.fail(url, f"{label}no HTTP answer ({r.error}), expected 200", where)
            return None
        if not self.expect(r.status == 200, url, f"{label}status {r.status}, expected 200", where):
            return None
        if ctx is not None and ctx.restricted and self.fetcher.auth:
            self.check_refused_anonymously(url, where)
        if expect_type is not None:
            self.expect(r.content_type == media_type(expect_type), url,
                        f"{label}Content-Type {r.header('Content-Type')!r}, expected {media_type(expect_type)}",
                        where)
        return r

    def check_refused_anonymously(self, url: str, where: str | None) -> None:
        if url in self.anonymous_checked:
            return
        self.anonymous_checked.add(url)
        r = self.fetcher.get(url, anonymous=True)
        # A restricted resource (`d/…`) answers as one that does not exist, so that
        # nobody can confirm a guessed URL; a restricted set's documents ask for
        # credentials.
        if url[len(self.base):].startswith("d/"):
            self.expect(r.status == 404, url,
                        f"restricted-set URL without credentials: status {r.status or r.error}, expected 404",
                        where)
            return
        if self.expect(r.status == 401, url,
                       f"restricted-set URL without credentials: status {r.status or r.error}, expected 401",
                       where):
            self.expect(bool(r.header("WWW-Authenticate")), url,
                        "401 without a WWW-Authenticate header", where)

    def load(self, url: str, ctx: SetInfo | None, where: str | None) -> Doc | None:
        """Fetch and parse a ResourceSync document (cached); None when unusable."""
        if url in self.docs:
            return self.docs[url]
        self.docs[url] = None
        r = self.fetch(url, ctx, where, XML, "document")
        if r is None:
            return None
        try:
            doc = parse_document(url, r.body)
        except ValueError as e:
            self.issues.fail(url, str(e), where)
            return None
        self.docs[url] = doc
        cap = doc.capability or "(none)"
        self.doc_counts[cap] = self.doc_counts.get(cap, 0) + 1
        for ln in doc.links:
            self.refer(ln.href, url, ctx)
        for e in doc.entries:
            self.refer(e.loc, url, ctx)
            for ln in e.links:
                self.refer(ln.href, url, ctx)
        return doc

    def once(self, url: str, role: str) -> bool:
        """True the first time (url, role) is checked."""
        if (url, role) in self.visited:
            return False
        self.visited.add((url, role))
        return True

    def check_capability(self, doc: Doc, capability: str, root: str | None = None) -> bool:
        ok = self.expect(doc.capability == capability, doc.url,
                         f"capability {doc.capability!r}, expected {capability!r}")
        if root is not None:
            ok &= self.expect(doc.root == root, doc.url, f"root <{doc.root}>, expected <{root}>")
        return ok

    def check_md_times(self, doc_url: str, md: dict[str, str], names: tuple[str, ...],
                       label: str, optional: tuple[str, ...] = ()) -> dict[str, dt.datetime | None]:
        """Require the datetimes `names` (and parse `optional` ones) in an rs:md."""
        out = {}
        for name in dict.fromkeys(names + optional):
            value = md.get(name)
            if value is None:
                if name in names:
                    self.issues.fail(doc_url, f"{label}<rs:md> has no {name} attribute")
                out[name] = None
                continue
            t = parse_datetime(value)
            self.expect(t is not None, doc_url, f"{label}{name}={value!r} is not a W3C datetime with a time zone")
            out[name] = t
        return out

    # ---- document links -----------------------------------------------------------

    def one_link(self, doc_url: str, links: list[Link], rel: str, required: bool = True,
                 label: str = "") -> Link | None:
        found = [ln for ln in links if ln.rel == rel]
        if not found:
            if required:
                self.issues.fail(doc_url, f"{label}no <rs:ln rel=\"{rel}\">")
            return None
        self.expect(len(found) == 1, doc_url, f"{label}{len(found)} <rs:ln rel=\"{rel}\">, expected one")
        return found[0]

    def check_up(self, doc: Doc, expected: str, required: bool = True) -> None:
        """rel="up" → the set's Capability List (for a Capability List: the Source Description)."""
        ln = self.one_link(doc.url, doc.links, "up", required)
        if ln is not None:
            self.expect(ln.href == expected, doc.url, f"rel=\"up\" → {ln.href}, expected {expected}")

    def check_index_link(self, part: Doc, ctx: SetInfo, expected: str | None = None) -> None:
        """rel="index" → a <sitemapindex> of the same capability that lists this document."""
        ln = self.one_link(part.url, part.links, "index", required=expected is not None)
        if ln is None:
            return
        if expected is not None:
            self.expect(ln.href == expected, part.url, f"rel=\"index\" → {ln.href}, expected {expected}")
        index = self.load(ln.href, ctx, part.url)
        if index is None:
            return
        self.expect(index.is_index, ln.href, f"target of rel=\"index\" is a <{index.root}>, expected <sitemapindex>",
                    part.url)
        self.expect(index.capability == part.capability, ln.href,
                    f"index capability {index.capability!r}, expected {part.capability!r} as its part", part.url)
        self.expect(any(e.loc == part.url for e in index.entries), ln.href,
                    f"index does not list its part {part.url}", part.url)

    def check_archives_link(self, doc: Doc, ctx: SetInfo, required: bool) -> None:
        """rel="archives" → the set's `<capability>-archive` document."""
        ln = self.one_link(doc.url, doc.links, "archives", required)
        if ln is None:
            return
        kind = f"{doc.capability}-archive"
        listed = ctx.capabilities.get(kind)
        self.expect(listed is not None and ln.href == listed, doc.url,
                    f"rel=\"archives\" → {ln.href}, expected the Capability List's {kind} entry "
                    + (f"({listed})" if listed else "(it has none)"))
        target = self.load(ln.href, ctx, doc.url)
        if target is not None:
            self.expect(target.capability == kind, ln.href,
                        f"target of rel=\"archives\": capability {target.capability!r}, expected {kind!r}", doc.url)

    def check_other_links(self, doc_url: str, links: list[Link], known: set[str], ctx: SetInfo | None) -> None:
        """Links with no relation-specific check: an internal target must answer 200."""
        for ln in links:
            if ln.rel not in known and self.internal(ln.href):
                self.fetch(ln.href, ctx, doc_url, None, f"rel=\"{ln.rel}\" target")

    def parts(self, doc: Doc, ctx: SetInfo, archive: bool = False) -> list[Doc]:
        """The <urlset> documents holding a document's entries: itself, or an index's parts."""
        if not doc.is_index:
            return [doc]
        out = []
        self.expect(bool(doc.entries), doc.url, "index without <sitemap> entries")
        for e in doc.entries:
            if not self.expect(self.internal(e.loc), doc.url, f"index entry {e.loc!r} is not under {self.base}"):
                continue
            part = self.load(e.loc, ctx, doc.url)
            if part is None:
                continue
            if not self.check_capability(part, doc.capability or "", "urlset"):
                continue
            self.check_index_link(part, ctx, doc.url)
            self.check_up(part, ctx.capabilitylist, required=not archive)
            self.check_other_links(part.url, part.links, {"up", "index", "archives"}, ctx)
            out.append(part)
        return out

    # ---- Source Description and Capability Lists ------------------------------------

    def check_source_description(self) -> list[SetInfo]:
        doc = self.load(self.sd_url, None, None)
        if doc is None:
            return []
        self.check_capability(doc, "description", "urlset")
        self.check_other_links(doc.url, doc.links, set(), None)
        sets = []
        for e in doc.entries:
            self.expect(e.md.get("capability") == "capabilitylist", doc.url,
                        f"entry {e.loc}: capability {e.md.get('capability')!r}, expected 'capabilitylist'")
            m = SET_PATH.fullmatch(e.loc[len(self.base):]) if self.internal(e.loc) else None
            if not self.expect(m is not None, doc.url,
                               f"entry {e.loc} is not {self.base}resourcesync/<publisher>[/restricted]/capabilitylist.xml"):
                continue
            restricted = m.group("restricted") is not None
            if restricted and not self.fetcher.auth:
                self.issues.fail(doc.url, f"lists the restricted set {e.loc} to a client without credentials")
                self.skipped.add(e.loc)
                continue
            if e.loc in self.sets:
                self.issues.fail(doc.url, f"lists {e.loc} twice")
                continue
            folder = e.loc[: -len("capabilitylist.xml")]
            info = SetInfo(m.group("pub"), restricted, folder, e.loc)
            self.sets[e.loc] = info
            sets.append(info)
        if self.fetcher.auth:
            # The anonymous view must not name the restricted sets.
            r = self.fetcher.get(self.sd_url, anonymous=True)
            if self.expect(r.status == 200, self.sd_url, f"without credentials: status {r.status}, expected 200"):
                try:
                    anon = parse_document(self.sd_url, r.body)
                    leaked = [e.loc for e in anon.entries if "/restricted/" in e.loc]
                    self.expect(not leaked, self.sd_url,
                                f"lists restricted sets to a client without credentials: {', '.join(leaked)}")
                except ValueError as err:
                    self.issues.fail(self.sd_url, f"without credentials: {err}")
        return sets

    def crawl_set(self, ctx: SetInfo) -> None:
        doc = self.load(ctx.capabilitylist, ctx, self.sd_url)
        if doc is None:
            return
        self.check_capability(doc, "capabilitylist", "urlset")
        self.check_up(doc, self.sd_url)
        self.check_other_links(doc.url, doc.links, {"up"}, ctx)
        for e in doc.entries:
            cap = e.md.get("capability")
            if not self.expect(cap in SET_CAPABILITIES, doc.url, f"entry {e.loc}: unknown capability {cap!r}"):
                continue
            if not self.expect(cap not in ctx.capabilities, doc.url, f"a second entry for capability {cap!r}"):
                continue
            ctx.capabilities[cap] = e.loc
            expected = ctx.folder + SET_CAPABILITIES[cap]
            self.expect(e.loc == expected, doc.url, f"{cap} entry at {e.loc}, expected {expected}")
            if cap == "change-notification":
                hub = self.one_link(doc.url, e.links, "hub", label="change-notification entry: ")
                if hub is not None:
                    self.expect(hub.href == self.hub_url, doc.url,
                                f"change-notification rel=\"hub\" → {hub.href}, expected {self.hub_url}")
                self.check_other_links(doc.url, e.links, {"hub"}, ctx)
            else:
                self.check_other_links(doc.url, e.links, set(), ctx)
        missing = [c for c in SET_CAPABILITIES if c not in ctx.capabilities]
        self.expect(not missing, doc.url, f"no entry for capability {', '.join(missing)}")

        caps = ctx.capabilities
        if "resourcelist" in caps:
            self.crawl_resource_list(caps["resourcelist"], ctx, live=True)
        if "resourcedump" in caps:
            self.crawl_resource_dump(caps["resourcedump"], ctx, live=True)
        open_list = self.crawl_change_list(caps["changelist"], ctx, open_list=True) if "changelist" in caps else None
        if "changedump" in caps:
            self.crawl_change_dump(caps["changedump"], ctx, open_dump=True)
        for kind in ("resourcelist-archive", "resourcedump-archive", "changelist-archive", "changedump-archive"):
            if kind in caps:
                archived = self.crawl_archive(caps[kind], ctx, kind)
                if kind == "changelist-archive" and open_list is not None and archived:
                    last_until = parse_datetime(archived[-1].md.get("until"))
                    opened = parse_datetime(open_list.md.get("from"))
                    if last_until and opened:
                        self.expect(opened == last_until, open_list.url,
                                    f"open Change List from={open_list.md.get('from')}, expected the last archived "
                                    f"until={archived[-1].md.get('until')} ({archived[-1].loc})")
        if "change-notification" in caps:
            self.crawl_topic(caps["change-notification"], ctx)
            self.check_hub()

    # ---- Resource Lists ---------------------------------------------------------------

    def crawl_resource_list(self, url: str, ctx: SetInfo, live: bool) -> Doc | None:
        doc = self.load(url, ctx, ctx.capabilitylist)
        if doc is None or not self.once(url, "resourcelist"):
            return doc
        if not self.check_capability(doc, "resourcelist"):
            return doc
        self.check_md_times(url, doc.md, ("at", "completed") if live else ("at",), "", ("completed",))
        self.check_up(doc, ctx.capabilitylist)
        self.check_archives_link(doc, ctx, required=live)
        self.check_other_links(url, doc.links, {"up", "archives", "index"}, ctx)
        if not doc.is_index and doc.links_of("index"):
            self.check_index_link(doc, ctx)
        seen: dict[str, str] = {}
        for part in self.parts(doc, ctx):
            for e in part.entries:
                self.expect(e.loc not in seen, part.url, f"{e.loc} listed twice in the Resource List"
                            + (f" (also in {seen.get(e.loc)})" if seen.get(e.loc) != part.url else ""))
                seen.setdefault(e.loc, part.url)
                self.check_entry(part.url, e, ctx, live=live)
        return doc

    # ---- Change Lists and notifications ----------------------------------------------

    def crawl_change_list(self, url: str, ctx: SetInfo, open_list: bool) -> Doc | None:
        doc = self.load(url, ctx, ctx.capabilitylist)
        if doc is None or not self.once(url, "changelist"):
            return doc
        if not self.check_capability(doc, "changelist"):
            return doc
        times = self.check_md_times(url, doc.md, ("from",) if open_list else ("from", "until"), "", ("until",))
        if open_list:
            self.expect("until" not in doc.md, url, f"the open Change List has until={doc.md.get('until')}")
        self.check_up(doc, ctx.capabilitylist)
        self.check_archives_link(doc, ctx, required=open_list)
        self.check_other_links(url, doc.links, {"up", "archives", "index"}, ctx)
        if not doc.is_index and doc.links_of("index"):
            self.check_index_link(doc, ctx)
        previous = None
        for part in self.parts(doc, ctx):
            p_times = self.check_md_times(part.url, part.md, (), "", ("from", "until")) if part is not doc else times
            start = p_times.get("from") or times.get("from")
            end = p_times.get("until") or times.get("until")
            previous = self.check_change_order(part.url, part.entries, start, end, previous)
            for e in part.entries:
                self.check_entry(part.url, e, ctx, live=False, change=True)
        return doc

    def check_change_order(self, url: str, entries: list[Entry], start: dt.datetime | None,
                           end: dt.datetime | None, previous: dt.datetime | None = None) -> dt.datetime | None:
        """Change entries: datetimes non-decreasing and in [start, end). Returns the last one."""
        for e in entries:
            t = parse_datetime(e.md.get("datetime"))
            if t is None:
                continue  # reported by check_entry
            if previous is not None:
                self.expect(t >= previous, url, f"entry {e.loc} datetime={e.md.get('datetime')} comes before "
                            f"the previous entry's {show(previous)}: not forward chronological order")
            if start is not None:
                self.expect(t >= start, url, f"entry {e.loc} datetime={e.md.get('datetime')} is before from={show(start)}")
            if end is not None:
                self.expect(t < end, url, f"entry {e.loc} datetime={e.md.get('datetime')} is not before until={show(end)}")
            previous = t
        return previous

    def crawl_topic(self, url: str, ctx: SetInfo) -> None:
        """The WebSub topic: Link self + hub on GET and HEAD; a change-notification body."""
        if not self.once(url, "topic"):
            return
        doc = self.load(url, ctx, ctx.capabilitylist)  # the GET: status, type, body
        for method in ("GET", "HEAD"):
            r = self.fetcher.get(url, method=method)
            if method == "HEAD" and not self.expect(r.status == 200, url,
                                                    f"HEAD: status {r.status or r.error}, expected 200"):
                continue
            if r.status != 200:
                continue
            links = parse_link_header(", ".join(r.headers.get_all("Link") or []))
            for target, rel in ((url, "self"), (self.hub_url, "hub")):
                self.expect(any(t == target and rel in rels for t, rels in links), url,
                            f"{method}: no Link header <{target}>; rel=\"{rel}\" (found {r.header('Link')!r})")
        if doc is None:
            return
        self.check_capability(doc, "change-notification", "urlset")
        times = self.check_md_times(url, doc.md, (), "", ("from", "until"))
        self.check_up(doc, ctx.capabilitylist)
        self.check_other_links(url, doc.links, {"up"}, ctx)
        self.check_change_order(url, doc.entries, times["from"], times["until"])
        for e in doc.entries:
            self.check_entry(url, e, ctx, live=False, change=True)

    def check_hub(self) -> None:
        if not self.once(self.hub_url, "hub"):
            return
        r = self.fetcher.get(self.hub_url)
        self.expect(r.status in (200, 405), self.hub_url,
                    f"hub GET: status {r.status or r.error}, expected 200 or 405")

    # ---- Dumps ----------------------------------------------------------------------------

    def crawl_resource_dump(self, url: str, ctx: SetInfo, live: bool) -> Doc | None:
        doc = self.load(url, ctx, ctx.capabilitylist)
        if doc is None or not self.once(url, "resourcedump"):
            return doc
        if not self.check_capability(doc, "resourcedump", "urlset"):
            return doc
        self.check_md_times(url, doc.md, ("at", "completed") if live else ("at",), "", ("completed",))
        self.check_up(doc, ctx.capabilitylist)
        self.check_archives_link(doc, ctx, required=live)
        self.check_other_links(url, doc.links, {"up", "archives"}, ctx)
        for e in doc.entries:
            self.check_package(url, e, ctx, "resourcedump")
        return doc

    def crawl_change_dump(self, url: str, ctx: SetInfo, open_dump: bool) -> Doc | None:
        doc = self.load(url, ctx, ctx.capabilitylist)
        if doc is None or not self.once(url, "changedump"):
            return doc
        if not self.check_capability(doc, "changedump", "urlset"):
            return doc
        times = self.check_md_times(url, doc.md, ("from",) if open_dump else ("from", "until"), "", ("until",))
        self.check_up(doc, ctx.capabilitylist)
        self.check_archives_link(doc, ctx, required=open_dump)
        self.check_other_links(url, doc.links, {"up", "archives"}, ctx)
        previous = None
        for e in doc.entries:
            p = self.check_md_times(url, e.md, ("from", "until"), f"package {e.loc}: ")
            if p["from"] and times["from"]:
                self.expect(p["from"] >= times["from"], url,
                            f"package {e.loc} from={e.md.get('from')} is before the Change Dump's from={doc.md.get('from')}")
            if p["until"] and times["until"]:
                self.expect(p["until"] <= times["until"], url,
                            f"package {e.loc} until={e.md.get('until')} is after the Change Dump's until={doc.md.get('until')}")
            if p["from"] and previous:
                self.expect(p["from"] >= previous, url, f"package {e.loc} is out of chronological order")
            previous = p["from"] or previous
            self.check_package(url, e, ctx, "changedump")
        return doc

    def check_package(self, doc_url: str, e: Entry, ctx: SetInfo, kind: str) -> None:
        """One ZIP package of a Resource or Change Dump, against its entry and its manifest."""
        where = doc_url
        md = e.md
        label = f"package {e.loc}: "
        self.check_size_attrs(doc_url, md, label)
        self.expect(media_type(md.get("type")) == ZIP, doc_url, f"{label}type={md.get('type')!r}, expected {ZIP}")
        if kind == "resourcedump":
            self.check_md_times(doc_url, md, ("at", "completed"), label)
        contents = self.one_link(doc_url, e.links, "contents", label=label)
        if contents is not None:
            self.expect(media_type(contents.attrs.get("type")) == XML, doc_url,
                        f"{label}rel=\"contents\" type={contents.attrs.get('type')!r}, expected {XML}")
        self.check_other_links(doc_url, e.links, {"contents"}, ctx)
        copy = None
        if contents is not None and self.internal(contents.href):
            copy = self.fetch(contents.href, ctx, doc_url, XML, "rel=\"contents\" target")
            if copy is not None:
                try:
                    c = parse_document(contents.href, copy.body)
                    self.doc_counts[c.capability or "(none)"] = self.doc_counts.get(c.capability or "(none)", 0) + 1
                except ValueError as err:
                    self.issues.fail(contents.href, str(err), doc_url)
        if not self.expect(self.internal(e.loc), doc_url, f"package {e.loc} is not under {self.base}"):
            return
        r = self.fetch(e.loc, ctx, where, ZIP, "package")
        if r is None:
            return
        self.packages.add(e.loc)
        self.check_bytes(e.loc, r.body, md, where, "package")
        try:
            z = zipfile.ZipFile(io.BytesIO(r.body))
            bad = z.testzip()
        except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError) as err:
            self.issues.fail(e.loc, f"not a valid ZIP: {err}", where)
            return
        if not self.expect(bad is None, e.loc, f"ZIP member {bad} fails its CRC check", where):
            return
        names = [n for n in z.namelist() if not n.endswith("/")]
        if not self.expect("manifest.xml" in names, e.loc, "no manifest.xml in the ZIP", where):
            return
        manifest_bytes = z.read("manifest.xml")
        if copy is not None:
            self.expect(copy.body == manifest_bytes, contents.href,
                        f"rel=\"contents\" copy differs from manifest.xml in {e.loc} "
                        f"({len(copy.body)} vs {len(manifest_bytes)} bytes)", doc_url)
        self.check_manifest(e, z, names, manifest_bytes, ctx, kind)

    def check_manifest(self, pkg: Entry, z: zipfile.ZipFile, names: list[str], body: bytes,
                       ctx: SetInfo, kind: str) -> None:
        murl = f"{pkg.loc}!/manifest.xml"
        try:
            m = parse_document(murl, body)
        except ValueError as err:
            self.issues.fail(murl, str(err))
            return
        self.manifests += 1
        if not self.check_capability(m, f"{kind}-manifest", "urlset"):
            return
        self.check_up(m, ctx.capabilitylist)
        self.check_other_links(murl, m.links, {"up"}, ctx)
        if kind == "resourcedump":
            times = self.check_md_times(murl, m.md, ("at", "completed"), "")
        else:
            times = self.check_md_times(murl, m.md, ("from", "until"), "")
            for name in ("from", "until"):
                pv, mv = parse_datetime(pkg.md.get(name)), times[name]
                if pv and mv:
                    self.expect(pv == mv, murl, f"manifest {name}={m.md.get(name)}, but its package entry says "
                                f"{name}={pkg.md.get(name)}")
            self.check_change_order(murl, m.entries, times["from"], times["until"])
        paths: dict[str, str] = {}
        member_names = set(names)
        locs: set[str] = set()
        for e in m.entries:
            path = e.md.get("path")
            if kind == "resourcedump":
                self.expect(e.loc not in locs, murl, f"{e.loc} listed twice in a Resource Dump manifest")
                locs.add(e.loc)
            if not self.expect(bool(path) and path.startswith("/"), murl,
                               f"entry {e.loc}: path={path!r}, expected an absolute path within the ZIP"):
                self.check_entry(murl, e, ctx, live=False, change=kind == "changedump")
                continue
            self.expect(path not in paths, murl, f"path {path} used by two entries ({paths.get(path)} and {e.loc})")
            paths.setdefault(path, e.loc)
            member = path[1:]
            data = None
            if self.expect(member in member_names, murl, f"entry {e.loc}: path {path} is not in the ZIP"):
                data = z.read(member)
                self.check_bytes(f"{pkg.loc}!{path}", data, e.md, murl, "ZIP member")
            self.check_entry(murl, e, ctx, live=False, change=kind == "changedump")
        for n in names:
            if n != "manifest.xml":
                self.expect("/" + n in paths, pkg.loc, f"ZIP member {n} is not in manifest.xml")

    # ---- Archives --------------------------------------------------------------------

    def crawl_archive(self, url: str, ctx: SetInfo, kind: str) -> list[Entry]:
        """An Archive: its entries in order, each target crawled as an archived document."""
        doc = self.load(url, ctx, ctx.capabilitylist)
        if doc is None or not self.once(url, "archive"):
            return []
        if not self.check_capability(doc, kind):
            return []
        self.check_up(doc, ctx.capabilitylist)
        self.check_other_links(url, doc.links, {"up", "index"}, ctx)
        if not doc.is_index and doc.links_of("index"):
            self.check_index_link(doc, ctx)
        entries: list[tuple[str, Entry]] = [(p.url, e) for p in self.parts(doc, ctx, archive=True) for e in p.entries]
        archived = kind[: -len("-archive")]
        timed = ("at",) if archived in ("resourcelist", "resourcedump") else ("from", "until")
        previous: Entry | None = None
        for part_url, e in entries:
            times = self.check_md_times(part_url, e.md, timed, f"entry {e.loc}: ", ("completed",))
            self.check_other_links(part_url, e.links, set(), ctx)
            if previous is not None:
                self.check_archive_order(part_url, previous, e, timed[0])
            previous = e
            if not self.expect(self.internal(e.loc), part_url, f"entry {e.loc} is not under {self.base}"):
                continue
            if archived == "resourcelist":
                target = self.crawl_resource_list(e.loc, ctx, live=False)
            elif archived == "resourcedump":
                target = self.crawl_resource_dump(e.loc, ctx, live=False)
            elif archived == "changelist":
                target = self.crawl_change_list(e.loc, ctx, open_list=False)
            else:
                target = self.crawl_change_dump(e.loc, ctx, open_dump=False)
            if target is None:
                continue
            self.expect(target.capability == archived, e.loc,
                        f"archived document has capability {target.capability!r}, expected {archived!r}", part_url)
            for name in timed + ("completed",):
                if times.get(name) and name in target.md:
                    self.expect(parse_datetime(target.md[name]) == times[name], e.loc,
                                f"{name}={target.md[name]}, but the archive entry says {name}={e.md.get(name)}",
                                part_url)
        return [e for _, e in entries]

    def check_archive_order(self, url: str, prev: Entry, e: Entry, key: str) -> None:
        a, b = parse_datetime(prev.md.get(key)), parse_datetime(e.md.get(key))
        if a and b:
            self.expect(b >= a, url, f"entry {e.loc} {key}={e.md.get(key)} comes before the previous entry's "
                        f"{key}={prev.md.get(key)}: not chronological")
        if key == "from":
            until, start = parse_datetime(prev.md.get("until")), b
            if until and start:
                self.expect(start == until, url, f"entry {e.loc} from={e.md.get('from')}, expected the previous "
                            f"entry's until={prev.md.get('until')} (archive not contiguous)")

    # ---- resources ---------------------------------------------------------------------

    def check_size_attrs(self, doc_url: str, md: dict[str, str], label: str) -> None:
        """An rs:md's hash (md5 and sha-256 both), length and type are there and well-formed."""
        hashes = parse_hashes(md.get("hash"))
        for algo, n in (("md5", 32), ("sha-256", 64)):
            self.expect(re.fullmatch(f"[0-9a-f]{{{n}}}", hashes.get(algo, "")) is not None, doc_url,
                        f"{label}hash={md.get('hash')!r} has no {algo} digest ({n} hex digits)")
        self.expect((md.get("length") or "").isdigit(), doc_url, f"{label}length={md.get('length')!r}, expected a number")
        self.expect(bool(md.get("type")), doc_url, f"{label}no type")

    def check_bytes(self, url: str, body: bytes, md: dict[str, str], where: str | None, what: str) -> None:
        """Length and the digests (md5, sha-256) against an rs:md (check_size_attrs: both are there)."""
        length = md.get("length")
        self.expect(length is not None and length.isdigit() and int(length) == len(body), url,
                    f"{what} is {len(body)} bytes, entry says length={length!r}", where)
        hashes = parse_hashes(md.get("hash"))
        actual = digests(body)
        for algo in ("md5", "sha-256"):
            if algo in hashes:
                self.expect(hashes[algo] == actual[algo], url,
                            f"{what} {algo} is {actual[algo]}, entry says {hashes[algo]}", where)

    def check_entry(self, doc_url: str, e: Entry, ctx: SetInfo, live: bool, change: bool = False) -> None:
        """One resource or record entry (lists, manifests, notifications)."""
        self.entries += 1
        label = f"entry {e.loc}: "
        if not self.expect(bool(e.loc), doc_url, "entry without <loc>"):
            return
        m = RESOURCE_PATH.fullmatch(e.loc[len(self.base):]) if self.internal(e.loc) else None
        if not self.expect(m is not None and "/" not in m.group("rest") and m.group("rest") != "", doc_url,
                           f"{label}<loc> is not {self.base}d/<publisher>/<deposit>/<key or metadata.xml>"):
            return
        pub, dep, key = m.group("pub"), m.group("dep"), m.group("rest")
        record = key == "metadata.xml"
        (self.records if record else self.resources).add(e.loc)
        self.expect(pub == ctx.publisher, doc_url, f"{label}publisher {pub!r} in a set of {ctx.publisher!r}")
        md = e.md
        self.expect(e.lastmod is not None, doc_url, f"{label}no <lastmod>")
        self.check_size_attrs(doc_url, md, label)
        if record:
            self.expect(media_type(md.get("type")) == XML, doc_url, f"{label}type={md.get('type')!r}, expected {XML}")
        if change:
            self.expect(md.get("change") in CHANGES, doc_url,
                        f"{label}change={md.get('change')!r}, expected one of {', '.join(CHANGES)}")
            t = parse_datetime(md.get("datetime"))
            if self.expect(t is not None, doc_url, f"{label}datetime={md.get('datetime')!r}, expected a W3C datetime"):
                self.expect(parse_datetime(e.lastmod) == t, doc_url,
                            f"{label}<lastmod>{e.lastmod}</lastmod> differs from datetime={md.get('datetime')}")
        deposit = f"{self.base}d/{pub}/{dep}/"
        if record:
            required = {"describes": deposit, "profile": None, "memento": None}
        else:
            required = {"via": None, "memento": None, "describedby": deposit + "metadata.xml", "collection": deposit}
        for rel, target in required.items():
            ln = self.one_link(doc_url, e.links, rel, label=label)
            if ln is not None and target is not None:
                self.expect(ln.href == target, doc_url, f"{label}rel=\"{rel}\" → {ln.href}, expected {target}")
        for ln in e.links:
            if ln.rel == "memento":
                self.check_memento(doc_url, e, ln, ctx, key)
            elif ln.rel == "describedby":
                self.check_xml_target(ln.href, ctx, doc_url, "record (rel=\"describedby\")")
            elif ln.rel in ("collection", "describes"):
                self.check_xml_target(ln.href, ctx, doc_url, f"deposit (rel=\"{ln.rel}\")")
            elif self.internal(ln.href):
                # via/profile point outside; anything under BASE_URL must answer.
                self.fetch(ln.href, ctx, doc_url, None, f"rel=\"{ln.rel}\" target")
        self.check_location(doc_url, e, ctx, live)

    def check_location(self, doc_url: str, e: Entry, ctx: SetInfo, live: bool) -> None:
        """GET the <loc>: 200 with the entry's type; on the live Resource List, its exact bytes."""
        r = self.fetch(e.loc, ctx, doc_url, None, "resource")
        if r is None:
            return
        self.expect(r.content_type == media_type(e.md.get("type")), e.loc,
                    f"Content-Type {r.header('Content-Type')!r}, the entry says type={e.md.get('type')!r}", doc_url)
        if live:
            self.check_bytes(e.loc, r.body, e.md, doc_url, "resource")
        self.check_resourcesync_header(r, doc_url)

    def check_memento(self, doc_url: str, e: Entry, ln: Link, ctx: SetInfo, key: str) -> None:
        label = f"entry {e.loc}: "
        m = RESOURCE_PATH.fullmatch(ln.href[len(self.base):]) if self.internal(ln.href) else None
        v = MEMENTO_REST.fullmatch(m.group("rest")) if m else None
        loc = RESOURCE_PATH.fullmatch(e.loc[len(self.base):])
        ok = (v is not None and loc is not None and m.group("pub") == loc.group("pub")
              and m.group("dep") == loc.group("dep") and v.group("key") == key)
        self.expect(ok, doc_url, f"{label}rel=\"memento\" → {ln.href}, expected "
                    f"{self.base}d/<publisher>/<deposit>/v<version>/{key} of the same deposit")
        for name in ("length", "type"):
            if name in e.md:
                same = (ln.attrs.get(name) == e.md[name] if name == "length"
                        else media_type(ln.attrs.get(name)) == media_type(e.md[name]))
                self.expect(same, doc_url, f"{label}rel=\"memento\" {name}={ln.attrs.get(name)!r}, "
                            f"the entry says {e.md[name]!r}")
        self.expect(parse_hashes(ln.attrs.get("hash")) == parse_hashes(e.md.get("hash")), doc_url,
                    f"{label}rel=\"memento\" hash={ln.attrs.get('hash')!r}, the entry says {e.md.get('hash')!r}")
        if not self.internal(ln.href):
            return
        self.mementos.add(ln.href)
        r = self.fetch(ln.href, ctx, doc_url, None, "memento")
        if r is None:
            return
        self.expect(r.content_type == media_type(e.md.get("type")), ln.href,
                    f"Content-Type {r.header('Content-Type')!r}, the entry says type={e.md.get('type')!r}", doc_url)
        self.check_bytes(ln.href, r.body, e.md, doc_url, "memento")
        self.check_resourcesync_header(r, doc_url)

    def check_xml_target(self, url: str, ctx: SetInfo, where: str, what: str) -> None:
        """A record or deposit URL: 200, application/xml, well-formed."""
        if not self.internal(url):
            return
        r = self.fetch(url, ctx, where, XML, what)
        if r is None or not self.once(url, "xml"):
            return
        try:
            ET.fromstring(r.body)
        except ET.ParseError as err:
            self.issues.fail(url, f"{what}: not well-formed XML: {err}", where)
        self.check_resourcesync_header(r, where)

    def check_resourcesync_header(self, r: Response, where: str) -> None:
        if not self.once(r.url, "resourcesync-header"):
            return
        links = parse_link_header(", ".join(r.headers.get_all("Link") or []) if r.headers else "")
        targets = [t for t, rels in links if "resourcesync" in rels]
        self.expect(bool(targets) and all(t in self.sets for t in targets), r.url,
                    f"Link rel=\"resourcesync\" is {targets or 'missing'}, expected a Capability List "
                    f"of the Source Description", where)

    # ---- whatever else is linked -----------------------------------------------------------

    def follow_leftovers(self) -> None:
        """Every internal <loc>/<rs:ln href> not fetched yet must at least answer 200."""
        for url, (where, ctx) in list(self.referenced.items()):
            if not self.fetcher.fetched(url) and url != self.hub_url and url not in self.skipped:
                self.fetch(url, ctx, where, None, "linked URL")

    def run(self, expect_sets: list[str]) -> None:
        for ctx in self.check_source_description():
            self.crawl_set(ctx)
        self.follow_leftovers()
        names = {s.name for s in self.sets.values()}
        for name in expect_sets:
            self.expect(name in names, self.sd_url, f"the set {name!r} is not listed (listed: {', '.join(sorted(names)) or 'none'})")
        self.expect(bool(self.resources or self.records), self.base, "the crawl found no resources at all")

    def summary(self) -> dict:
        return {
            "base_url": self.base,
            "ok": not self.issues.items,
            "sets": sorted(s.name for s in self.sets.values()),
            "documents": dict(sorted(self.doc_counts.items())),
            "resources": len(self.resources),
            "records": len(self.records),
            "mementos": len(self.mementos),
            "entries": self.entries,
            "packages": len(self.packages),
            "manifests": self.manifests,
            "requests": self.fetcher.requests,
            "checks": self.issues.checks,
            "failures": len(self.issues.items),
        }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("base_url", help="the Source's base URL, ending with /")
    p.add_argument("--auth", help="Authorization header value: 'Bearer TOKEN' or 'Basic BASE64'")
    p.add_argument("--expect-set", action="append", default=[], metavar="PUBLISHER[/restricted]",
                   help="fail unless the Source Description lists this set (repeatable)")
    p.add_argument("--json", metavar="OUT.json", help="write the summary here instead of stdout")
    p.add_argument("--quiet", action="store_true", help="no summary on stdout (FAIL lines still on stderr)")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds per request (default 30)")
    args = p.parse_args(argv)
    if not args.base_url.endswith("/"):
        p.error("BASE_URL must end with /")
    if args.auth is not None and not re.fullmatch(r"(Bearer|Basic) \S+", args.auth):
        p.error("--auth takes 'Bearer TOKEN' or 'Basic BASE64'")

    crawler = Crawler(args.base_url, Fetcher(args.auth, args.timeout))
    crawler.run(args.expect_set)
    for issue in crawler.issues.items:
        print(issue.line(), file=sys.stderr)
    summary = json.dumps(crawler.summary(), indent=2)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            f.write(summary + "\n")
    elif not args.quiet:
        print(summary)
    return 0 if not crawler.issues.items else 1


if __name__ == "__main__":
    sys.exit(main())
