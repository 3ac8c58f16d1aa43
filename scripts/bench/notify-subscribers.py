#!/usr/bin/env python3
"""WebSub subscribers, a changing feed and the rounds of scripts/bench-notify (stdlib only).

Usage:
  notify-subscribers.py feed --www DIR --base URL --items N
      Writes DIR/feed.xml (N items, newest first, every one public: accessRights gratis) and
      each item's link page and media file under DIR/f/. Item i (0-based) has pubDate
      START + i hours, so item N-1 is the newest and adding one item adds the newest. The
      feed's mtime is set to a fixed past instant + N minutes: it grows with N, so a
      conditional GET (If-Modified-Since, whole seconds in http.server) always sees a new
      feed as modified.

  notify-subscribers.py run --mode serve|run --plikt BIN --config CFG --data DIR
                            --www DIR --feed-base URL --hub URL --topic URL --out DIR
                            [--service-log FILE] [--items0 N] [--runs 10] [--live 90]
                            [--dead 10] [--timeout 30] [--gap-min 0.5] [--gap-max 1.5]
      Starts two HTTP servers on 127.0.0.1 (live callbacks /live/NN on one port, dead
      callbacks /dead/NN on another), subscribes all of them to TOPIC at HUB (POST,
      application/x-www-form-urlencoded: hub.mode=subscribe, hub.topic, hub.callback,
      hub.lease_seconds=86400), waits until the catalog (DATA/catalog.sqlite) holds all
      of them, then runs RUNS rounds; each round adds one item to the feed and:
        --mode serve: runs `BIN harvest --config CFG` and `BIN publish --config CFG`; the
          publish end is time.time() right after the publish process is reaped. (A
          `plikt serve` started by the caller delivers.)
        --mode run: waits for the next "change notification stored" line in FILE (the
          stderr of a `plikt run` started by the caller, whose schedule harvests every few
          seconds and publishes after each run); the publish end is that line's timestamp
          (enqueue stored the notification: the same point as `plikt publish`'s exit,
          minus the process exit).
      and then waits until every live callback has received a notification whose
      <rs:md capability="change-notification" until=…> is that round's `until` (from the
      publish's log line "change notification stored … until=…"), or TIMEOUT seconds.
      Latency per live callback = time.time() when its server thread had read the whole
      POST body − publish end. A random pause of GAP-MIN..GAP-MAX s (seeded) follows each
      round, so that the publish ends fall at different phases of the hub's 500 ms poll.

      Live callbacks answer the verification GET with hub.challenge and each delivery POST
      with 200 at once (HTTP/1.1 keep-alive). Dead callbacks answer the verification GET
      correctly, then read each delivery POST and never answer: they hold the connection
      until the hub closes it (its timeout), and record when it did.

      Writes OUT/events.jsonl (every verification, receipt, dead POST and close, with
      time.time()), OUT/rounds.jsonl (one line per round), OUT/summary.json (the
      statistics and the dead callbacks' deliveries as the catalog holds them at the end)
      and prints the summary to stdout.

  notify-subscribers.py report --result NAME=DIR [--result NAME=DIR] --info FILE
                               --commands FILE --out FILE
      The Markdown section of the results of one or two configurations.

Percentiles are nearest-rank (the smallest value with at least p % of the values at or
below it): the p99 of 900 receipts is the 891st smallest.
"""

import argparse
import hashlib
import json
import math
import os
import random
import re
import select
import socket
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PUBLISHER_ORG = "http://id.kb.se/organisations/SE5560041815"
START = datetime(2025, 3, 14, 9, 0, 0, tzinfo=timezone(timedelta(hours=1)))
MTIME0 = 1_700_000_000  # 2023-11-14: the feed's mtime is this + N minutes


# ---- the feed ---------------------------------------------------------------------------------

def write_atomic(path: str, data: bytes) -> None:
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def item_files(www: str, i: int) -> tuple:
    """Writes item i's link page and media file (if missing); returns (page, media) bytes."""
    page = (f"<!DOCTYPE html>\n<html lang=\"sv\">\n<head><meta charset=\"utf-8\">"
            f"<title>Notis {i}</title></head>\n<body>\n<h1>Notis {i}</h1>\n"
            f"<p>Beslut nr {i} i Västerås.</p>\n"
            f"<p><a href=\"{i:06d}.bin\">Bilaga</a></p>\n</body>\n</html>\n").encode("utf-8")
    media = random.Random(i).randbytes(2048 + (i * 97) % 2048)
    os.makedirs(os.path.join(www, "f"), exist_ok=True)
    for name, data in ((f"{i:06d}.html", page), (f"{i:06d}.bin", media)):
        p = os.path.join(www, "f", name)
        if not os.path.exists(p) or os.path.getsize(p) != len(data):
            write_atomic(p, data)
    return page, media


def feed_xml(www: str, base: str, n: int) -> bytes:
    parts = [f"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"
\txmlns:media="http://search.yahoo.com/mrss/"
\txmlns:dcterms="http://purl.org/dc/terms/"
\txmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<channel>
\t<title>Nya Posten – Notiser</title>
\t<link>{base}</link>
\t<description>Notiser för e-plikt (benchmark av Change Notification).</description>
\t<language>sv-SE</language>
\t<lastBuildDate>{format_datetime(START + timedelta(hours=n))}</lastBuildDate>
"""]
    for i in reversed(range(n)):  # newest first
        _, media = item_files(www, i)
        link = f"{base}f/{i:06d}.html"
        url = f"{base}f/{i:06d}.bin"
        parts.append(f"""\t<item>
\t\t<title>Notis {i} i Västerås</title>
\t\t<link>{link}</link>
\t\t<description>Beslut nr {i} i Västerås.</description>
\t\t<guid>{link}</guid>
\t\t<pubDate>{format_datetime(START + timedelta(hours=i))}</pubDate>
\t\t<dcterms:identifier xsi:type="dcterms:uri">{link}</dcterms:identifier>
\t\t<dcterms:publisher>{PUBLISHER_ORG}</dcterms:publisher>
\t\t<dcterms:accessRights>gratis</dcterms:accessRights>
\t\t<dcterms:license>https://www.nyp.se/villkor</dcterms:license>
\t\t<dcterms:format>text/html</dcterms:format>
\t\t<media:content url="{url}" type="application/octet-stream" medium="document" fileSize="{len(media)}">
\t\t\t<media:hash algo="md5">{hashlib.md5(media).hexdigest()}</media:hash>
\t\t</media:content>
\t</item>
""")
    parts.append("</channel>\n</rss>\n")
    return "".join(parts).encode("utf-8")


def write_feed(www: str, base: str, n: int) -> str:
    os.makedirs(www, exist_ok=True)
    path = os.path.join(www, "feed.xml")
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(feed_xml(www, base, n))
    t = MTIME0 + 60 * n
    os.utime(tmp, (t, t))
    os.replace(tmp, path)
    return path


# ---- the callbacks ----------------------------------------------------------------------------

class Events:
    """Every event, in memory and appended to a file (one JSON object per line)."""

    def __init__(self, path: str):
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        self.f = open(path, "a", encoding="utf-8")
        self.verified = set()      # callback names that answered a subscribe verification
        self.receipts = {}         # until -> {live name: t}
        self.dead = []             # dead POSTs and closes

    def add(self, ev: dict) -> None:
        with self.cond:
            self.f.write(json.dumps(ev) + "\n")
            self.f.flush()
            kind = ev["event"]
            if kind == "verify" and ev["mode"] == "subscribe":
                self.verified.add(ev["cb"])
            elif kind == "receipt":
                self.receipts.setdefault(ev["until"], {}).setdefault(ev["cb"], ev["t"])
            elif kind in ("dead_post", "dead_closed"):
                self.dead.append(ev)
            self.cond.notify_all()


MD = re.compile(rb'<rs:md\b[^>]*\bcapability="change-notification"[^>]*>')
UNTIL = re.compile(rb'\buntil="([^"]+)"')


def make_handler(events: Events, stopping: threading.Event):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as a real subscriber would

        def log_message(self, *_):
            pass

        def name(self) -> str:
            return urllib.parse.urlsplit(self.path).path.strip("/")

        def do_GET(self):  # noqa: N802 (WebSub §5.3 verification of intent)
            q = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            challenge = q.get("hub.challenge", [""])[0].encode()
            events.add({"event": "verify", "cb": self.name(), "t": time.time(),
                        "mode": q.get("hub.mode", [""])[0]})
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(challenge)))
            self.end_headers()
            self.wfile.write(challenge)

        def do_POST(self):  # noqa: N802 (a delivery)
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n)
            t = time.time()
            name = self.name()
            md = MD.search(body)
            u = UNTIL.search(md.group(0)) if md else None
            until = u.group(1).decode() if u else None
            if name.startswith("live/"):
                events.add({"event": "receipt", "cb": name, "t": t, "until": until,
                            "bytes": n})
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            # Dead: never answer; hold the connection until the hub closes it.
            events.add({"event": "dead_post", "cb": name, "t": t, "until": until})
            self.close_connection = True
            sock = self.connection
            while not stopping.is_set():
                r, _, _ = select.select([sock], [], [], 0.5)
                if r:
                    try:
                        data = sock.recv(65536)
                    except OSError:
                        data = b""
                    if not data:
                        events.add({"event": "dead_closed", "cb": name, "t": time.time(),
                                    "until": until, "held": time.time() - t})
                        return

    return Handler


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # the default 5 drops SYNs under 32 concurrent connections


def start_server(events: Events, stopping: threading.Event) -> Server:
    s = Server(("127.0.0.1", 0), make_handler(events, stopping))
    threading.Thread(target=s.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True).start()
    return s


# ---- catalog, logs ----------------------------------------------------------------------------

def catalog(data: str) -> sqlite3.Connection:
    c = sqlite3.connect(f"file:{os.path.join(data, 'catalog.sqlite')}?mode=ro", uri=True,
                        timeout=30)
    return c


def subscribed(data: str, callbacks: list) -> set:
    with catalog(data) as c:
        rows = c.execute("SELECT callback FROM subscriptions WHERE access = 'gratis'").fetchall()
    have = {r[0] for r in rows}
    return {cb for cb in callbacks if cb in have}


STORED = re.compile(r'^(\S+)\s+INFO\s+\S+: change notification stored .*?\baccess="?gratis"?\s.*?'
                    r"\buntil=(\S+)")
PUBLISHED = re.compile(r"^(\S+)\s+INFO\s+\S+: published\b")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def log_time(stamp: str) -> float:
    """A tracing-subscriber timestamp (RFC 3339, UTC, µs) as a Unix time."""
    s = stamp.rstrip("Z")
    frac = ""
    if "." in s:
        s, frac = s.split(".", 1)
    t = datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc).timestamp()
    return t + (float("0." + frac) if frac else 0.0)


def stored_lines(text: str) -> list:
    """(t, until) of every public "change notification stored" line."""
    out = []
    for line in text.splitlines():
        m = STORED.match(ANSI.sub("", line))
        if m:
            out.append((log_time(m.group(1)), m.group(2).strip('"')))
    return out


class LogFollower:
    """Reads the lines appended to a log file since the last call."""

    def __init__(self, path: str):
        self.path = path
        self.offset = os.path.getsize(path) if os.path.exists(path) else 0
        self.partial = ""

    def lines(self) -> list:
        with open(self.path, encoding="utf-8", errors="replace") as f:
            f.seek(self.offset)
            data = f.read()
            self.offset = f.tell()
        data = self.partial + data
        lines = data.split("\n")
        self.partial = lines.pop()
        return [ANSI.sub("", ln) for ln in lines]


# ---- statistics -------------------------------------------------------------------------------

def pct(values: list, p: float) -> float:
    v = sorted(values)
    if not v:
        return float("nan")
    k = max(1, math.ceil(p / 100 * len(v)))
    return v[k - 1]


def stats(values: list) -> dict:
    if not values:
        return {"n": 0}
    return {"n": len(values), "min": min(values), "median": statistics.median(values),
            "p90": pct(values, 90), "p99": pct(values, 99), "max": max(values)}


# ---- run --------------------------------------------------------------------------------------

def log(msg: str) -> None:
    print(f"[notify-subscribers {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def subscribe(hub: str, topic: str, callback: str) -> int:
    body = urllib.parse.urlencode({"hub.mode": "subscribe", "hub.topic": topic,
                                   "hub.callback": callback,
                                   "hub.lease_seconds": "86400"}).encode()
    req = urllib.request.Request(hub, data=body, method="POST", headers={
        "Content-Type": "application/x-www-form-urlencoded"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def cmd_run(a) -> int:
    os.makedirs(a.out, exist_ok=True)
    for f in ("events.jsonl", "rounds.jsonl"):
        if os.path.exists(os.path.join(a.out, f)):
            os.remove(os.path.join(a.out, f))
    events = Events(os.path.join(a.out, "events.jsonl"))
    stopping = threading.Event()
    live_srv = start_server(events, stopping)
    dead_srv = start_server(events, stopping)
    lp, dp = live_srv.server_address[1], dead_srv.server_address[1]
    live = [f"live/{i:02d}" for i in range(a.live)]
    dead = [f"dead/{i:02d}" for i in range(a.dead)]
    url = {n: f"http://127.0.0.1:{lp if n.startswith('live/') else dp}/{n}" for n in live + dead}
    log(f"callbacks: {a.live} live on 127.0.0.1:{lp}, {a.dead} dead on 127.0.0.1:{dp}")

    # Subscribe, interleaved (a dead one after every 9 live ones), so the dead ones are
    # spread over the catalog's subscription ids.
    order = []
    li, di = iter(live), iter(dead)
    step = max(1, a.live // max(1, a.dead))
    for k in range(a.live + a.dead):
        nxt = next(di, None) if (k + 1) % (step + 1) == 0 else next(li, None)
        if nxt is None:
            nxt = next(li, None) or next(di, None)
        order.append(nxt)
    t0 = time.time()
    for n in order:
        st = subscribe(a.hub, a.topic, url[n])
        if st != 202:
            log(f"error: the hub answered {st} to the subscription of {url[n]}")
            return 1
    want = [url[n] for n in order]
    deadline = time.time() + 60
    resent = False
    while True:
        have = subscribed(a.data, want)
        if len(have) == len(want):
            break
        if time.time() > deadline:
            if resent:
                log(f"error: only {len(have)} of {len(want)} subscriptions in the catalog")
                return 1
            missing = [cb for cb in want if cb not in have]
            log(f"{len(missing)} subscriptions not in the catalog after 60 s: resubscribing")
            for cb in missing:
                subscribe(a.hub, a.topic, cb)
            resent, deadline = True, time.time() + 60
        time.sleep(0.1)
    log(f"{len(want)} subscriptions verified and in the catalog in {time.time() - t0:.2f} s "
        f"({len(events.verified)} verification GETs answered)")
    time.sleep(1.0)  # let the hub settle (its last catalog writes, deliveries of nothing)

    rng = random.Random(a.seed)
    follower = LogFollower(a.service_log) if a.mode == "run" else None
    items = a.items0
    rounds = []
    rf = open(os.path.join(a.out, "rounds.jsonl"), "a", encoding="utf-8")
    for r in range(1, a.runs + 1):
        items += 1
        write_feed(a.www, a.feed_base, items)
        t_change = time.time()
        rec = {"round": r, "items": items, "t_change": t_change}
        if a.mode == "serve":
            t1 = time.time()
            h = subprocess.run([a.plikt, "harvest", "--config", a.config],
                               capture_output=True, text=True)
            t2 = time.time()
            p = subprocess.run([a.plikt, "publish", "--config", a.config],
                               capture_output=True, text=True)
            t_end = time.time()
            rec.update(harvest_s=t2 - t1, harvest_rc=h.returncode, publish_s=t_end - t2,
                       publish_rc=p.returncode, publish_out=p.stdout.strip())
            if h.returncode != 0 or p.returncode != 0:
                log(f"round {r}: harvest exit {h.returncode}, publish exit {p.returncode}:\n"
                    f"{h.stderr[-2000:]}\n{p.stderr[-2000:]}")
                return 1
            st = stored_lines(p.stderr)
            if len(st) != 1:
                log(f"round {r}: expected one public notification stored, the publish logged "
                    f"{len(st)}: {p.stdout.strip()}\n{p.stderr[-2000:]}")
                return 1
            rec["t_stored"], until = st[0]
        else:
            until = None
            deadline = time.time() + a.slot_wait
            t_pub = None
            while until is None and time.time() < deadline:
                for line in follower.lines():
                    m = PUBLISHED.match(line)
                    if m:
                        t_pub = log_time(m.group(1))
                    m = STORED.match(line)
                    if m:
                        until = m.group(2).strip('"')
                        rec["t_stored"] = log_time(m.group(1))
                        rec["t_published_line"] = t_pub
                        break
                else:
                    time.sleep(0.02)
            if until is None:
                log(f"round {r}: no notification stored in the service log within "
                    f"{a.slot_wait} s of the feed change")
                return 1
            t_end = rec["t_stored"]
            rec["t_seen"] = time.time()
        rec.update(t_end=t_end, until=until)
        # Wait for every live callback.
        deadline = t_end + a.timeout
        with events.cond:
            while True:
                got = events.receipts.get(until, {})
                if len(got) >= a.live or time.time() > deadline:
                    break
                events.cond.wait(timeout=0.1)
            got = dict(events.receipts.get(until, {}))
        lat = sorted(got[n] - t_end for n in live if n in got)
        rec["latencies"] = lat
        rec["missing"] = [n for n in live if n not in got]
        rec["first_receipt"] = min(got.values()) - t_end if got else None
        rec["stats"] = stats(lat)
        if a.mode == "serve":
            rec["stored_to_exit"] = t_end - rec["t_stored"]
        rf.write(json.dumps(rec) + "\n")
        rf.flush()
        rounds.append(rec)
        s = rec["stats"]
        if s["n"]:
            log(f"round {r}: until {until}: {s['n']}/{a.live} live receipts, latency median "
                f"{s['median'] * 1000:.0f} ms, p99 {s['p99'] * 1000:.0f} ms, max "
                f"{s['max'] * 1000:.0f} ms" + (f"; MISSING {len(rec['missing'])}"
                                               if rec["missing"] else ""))
        else:
            log(f"round {r}: until {until}: NO live receipt within {a.timeout} s")
        time.sleep(rng.uniform(a.gap_min, a.gap_max))
    rf.close()

    # The dead callbacks: what they saw, and what the catalog says.
    time.sleep(0.5)
    with events.lock:
        dead_ev = list(events.dead)
        all_receipts = {u: dict(v) for u, v in events.receipts.items()}
    with catalog(a.data) as c:
        drows = c.execute(
            "SELECT s.callback, d.state, d.attempts, d.last_error, n.until_at "
            "FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id "
            "JOIN notifications n ON n.id = d.notification_id "
            "WHERE s.callback LIKE ? ORDER BY s.callback, d.notification_id",
            (f"http://127.0.0.1:{dp}/%",)).fetchall()
        lrows = c.execute(
            "SELECT d.state, count(*) FROM deliveries d JOIN subscriptions s "
            "ON s.id = d.subscription_id WHERE s.callback LIKE ? GROUP BY d.state",
            (f"http://127.0.0.1:{lp}/%",)).fetchall()
    dstate = {}
    for _, state, _, _, _ in drows:
        dstate[state] = dstate.get(state, 0) + 1
    errors = {}
    for _, _, _, err, _ in drows:
        if err:
            errors[err] = errors.get(err, 0) + 1
    held = [e["held"] for e in dead_ev if e["event"] == "dead_closed"]
    posts = [e for e in dead_ev if e["event"] == "dead_post"]
    round_untils = {rec["until"] for rec in rounds}
    dup = sum(1 for u, v in all_receipts.items() for _ in v if u not in round_untils)
    all_lat = [x for rec in rounds for x in rec["latencies"]]
    summary = {
        "mode": a.mode, "runs": a.runs, "live": a.live, "dead_n": a.dead,
        "overall": stats(all_lat),
        "per_round": [{"round": rec["round"], **rec["stats"],
                       "missing": len(rec["missing"]), "first": rec["first_receipt"],
                       "stored_to_exit": rec.get("stored_to_exit"),
                       "harvest_s": rec.get("harvest_s"), "publish_s": rec.get("publish_s"),
                       "published_to_stored": (rec["t_stored"] - rec["t_published_line"])
                       if rec.get("t_published_line") else None}
                      for rec in rounds],
        "missing_total": sum(len(rec["missing"]) for rec in rounds),
        "p99_under_1s": bool(all_lat) and pct(all_lat, 99) < 1.0
        and sum(len(rec["missing"]) for rec in rounds) == 0,
        "dead": {
            "posts_received": len(posts),
            "closed_by_hub": len(held),
            "held_s": stats(held),
            "open_at_end": len(posts) - len(held),
            "catalog_deliveries": dstate,
            "catalog_errors": errors,
            "max_attempts_seen": max((r[2] for r in drows), default=0),
        },
        "live_catalog_deliveries": dict(lrows),
        "receipts_of_other_notifications": dup,
        "ports": {"live": lp, "dead": dp},
    }
    with open(os.path.join(a.out, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1)
    print(json.dumps(summary))
    stopping.set()
    live_srv.shutdown()
    dead_srv.shutdown()
    return 0 if summary["missing_total"] == 0 else 1


# ---- report -----------------------------------------------------------------------------------

def ms(x) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x * 1000:.0f}"


def cmd_report(a) -> int:
    info = json.load(open(a.info, encoding="utf-8"))
    out = []
    w = out.append
    w(f"Run: {info['date']}, commit {info['commit']}{info['dirty']}, "
      f"`RUNS={info['runs']}`; {info['machine']}; kernel {info['kernel']}; "
      f"Python {info['python']}; load {info['load']}.\n")
    results = []
    for spec in a.result:
        name, d = spec.split("=", 1)
        s = json.load(open(os.path.join(d, "summary.json"), encoding="utf-8"))
        results.append((name, s))
    w("| configuration | live receipts | median | p90 | p99 | max | p99 < 1 s |")
    w("|---|---:|---:|---:|---:|---:|---|")
    for name, s in results:
        o = s["overall"]
        n_exp = s["runs"] * s["live"]
        w(f"| {name} | {o.get('n', 0)} of {n_exp} | {ms(o.get('median'))} ms | "
          f"{ms(o.get('p90'))} ms | **{ms(o.get('p99'))} ms** | {ms(o.get('max'))} ms | "
          f"{'**yes**' if s['p99_under_1s'] else '**no**'} |")
    w("")
    for name, s in results:
        w(f"Per round, {name} (latencies in ms; first = the first live receipt"
          + ("; stored→exit = from the publish's \"change notification stored\" log line to "
             "its exit" if s["mode"] == "serve" else
             "; published→stored = from the \"published\" log line to \"change notification "
             "stored\" (the enqueue)") + "):\n")
        extra = "stored→exit" if s["mode"] == "serve" else "published→stored"
        w(f"| round | receipts | first | median | p90 | p99 | max | {extra} |")
        w("|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in s["per_round"]:
            e = r["stored_to_exit"] if s["mode"] == "serve" else r["published_to_stored"]
            w(f"| {r['round']} | {r.get('n', 0)} | {ms(r['first'])} | {ms(r.get('median'))} | "
              f"{ms(r.get('p90'))} | {ms(r.get('p99'))} | {ms(r.get('max'))} | {ms(e)} |")
        dd = s["dead"]
        w("")
        w(f"Dead callbacks ({s['dead_n']} of them), {name}: {dd['posts_received']} delivery POSTs "
          f"received, {dd['closed_by_hub']} closed by the hub after "
          f"{dd['held_s'].get('median', float('nan')):.2f} s (median; min "
          f"{dd['held_s'].get('min', float('nan')):.2f}, max "
          f"{dd['held_s'].get('max', float('nan')):.2f}), {dd['open_at_end']} still held at the "
          f"end; in the catalog at the end: {dd['catalog_deliveries']} "
          f"(most attempts of one delivery: {dd['max_attempts_seen']}); live deliveries in the "
          f"catalog: {s['live_catalog_deliveries']}; receipts of notifications outside the "
          f"rounds: {s['receipts_of_other_notifications']}.\n")
    w("Commands:\n")
    w(open(a.commands, encoding="utf-8").read())
    text = "\n".join(out) + "\n"
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(text)
    sys.stdout.write(text)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("feed")
    f.add_argument("--www", required=True)
    f.add_argument("--base", required=True)
    f.add_argument("--items", type=int, required=True)
    r = sub.add_parser("run")
    r.add_argument("--mode", choices=["serve", "run"], required=True)
    r.add_argument("--plikt", required=True)
    r.add_argument("--config", required=True)
    r.add_argument("--data", required=True)
    r.add_argument("--www", required=True)
    r.add_argument("--feed-base", required=True)
    r.add_argument("--hub", required=True)
    r.add_argument("--topic", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--service-log")
    r.add_argument("--items0", type=int, default=3)
    r.add_argument("--runs", type=int, default=10)
    r.add_argument("--live", type=int, default=90)
    r.add_argument("--dead", type=int, default=10)
    r.add_argument("--timeout", type=float, default=30.0)
    r.add_argument("--slot-wait", type=float, default=30.0)
    r.add_argument("--gap-min", type=float, default=0.5)
    r.add_argument("--gap-max", type=float, default=1.5)
    r.add_argument("--seed", type=int, default=20250314)
    p = sub.add_parser("report")
    p.add_argument("--result", action="append", required=True)
    p.add_argument("--info", required=True)
    p.add_argument("--commands", required=True)
    p.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.cmd == "feed":
        if not a.base.endswith("/"):
            ap.error("--base must end in /")
        print(write_feed(a.www, a.base, a.items))
        return 0
    if a.cmd == "run":
        if a.mode == "run" and not a.service_log:
            ap.error("--mode run needs --service-log")
        return cmd_run(a)
    return cmd_report(a)


if __name__ == "__main__":
    sys.exit(main())
