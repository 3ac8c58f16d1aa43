#!/usr/bin/env python3
"""End-to-end check of the harness without plikt.

Starts relay_hub.py, a stand-in topic server (http.server serving a fixed
ResourceSync change notification with WebSub Link headers) and three
subscriber.py processes, pings the relay hub with hub.mode=publish and checks
what the subscribers saved. Run it with the venv's python:

    /tmp/websub-venv/bin/python tests/websub/selftest.py

Everything listens on 127.0.0.1. Exit code 0 when every check passed.
"""
import hashlib
import hmac
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
PY = sys.executable
TIMEOUT = 20

BODY = b"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="http://127.0.0.1/resourcesync/demo/capabilitylist.xml"/>
  <rs:md capability="change-notification"
         from="2024-01-01T00:00:00Z" until="2024-01-01T00:01:00Z"/>
  <url>
    <loc>http://127.0.0.1/resources/demo/1</loc>
    <lastmod>2024-01-01T00:00:30Z</lastmod>
    <rs:md change="created" datetime="2024-01-01T00:00:30Z"
           hash="sha-256:0000" length="4" type="text/plain"/>
  </url>
</urlset>
"""


class Proc:
    """A child script whose JSON stdout lines are collected in a queue."""

    def __init__(self, name, *args):
        self.name = name
        self.p = subprocess.Popen([PY, os.path.join(HERE, name), *args],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=open(os.path.join(LOGDIR, "%s-%d.err"
                                              % (name, id(self))), "w"),
                                  text=True)
        self.events = queue.Queue()
        self.backlog = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            self.events.put(json.loads(line))

    def wait(self, event, timeout=TIMEOUT, **match):
        """Return (and consume) the first event named `event` whose fields
        equal `match`; events that don't match stay in the backlog."""
        deadline = time.monotonic() + timeout
        while True:
            for ev in self.backlog:
                if ev["event"] == event and all(ev.get(k) == v
                                                for k, v in match.items()):
                    self.backlog.remove(ev)
                    return ev
            left = deadline - time.monotonic()
            try:
                self.backlog.append(self.events.get(timeout=max(left, 0.01)))
            except queue.Empty:
                raise AssertionError("%s: no %s %s within %ss (backlog %s)"
                                     % (self.name, event, match, timeout,
                                        self.backlog[-5:]))

    def drain(self):
        """Consume and return everything received so far."""
        while not self.events.empty():
            self.backlog.append(self.events.get())
        out, self.backlog = self.backlog, []
        return out

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        return self.p.wait(timeout=15)


def topic_server(hub_url):
    """Serve BODY at /resourcesync/demo/change/ (public) and
    /resourcesync/demo/restricted/change/ (needs 'Bearer test')."""

    class Handler(BaseHTTPRequestHandler):
        def do_HEAD(self):
            self.respond(head=True)

        def do_GET(self):
            self.respond(head=False)

        def respond(self, head):
            base = "http://127.0.0.1:%d" % self.server.server_port
            if self.path not in ("/resourcesync/demo/change/",
                                 "/resourcesync/demo/restricted/change/"):
                self.send_error(404)
                return
            if ("restricted" in self.path and
                    self.headers.get("Authorization") != "Bearer test"):
                self.send_error(401)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(BODY)))
            self.send_header("Link", '<%s%s>; rel="self", <%s>; rel="hub"'
                             % (base, self.path, hub_url))
            self.end_headers()
            if not head:
                self.wfile.write(BODY)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, "http://127.0.0.1:%d" % server.server_port


def post_form(url, data, headers=None):
    req = urllib.request.Request(url, urllib.parse.urlencode(data).encode(),
                                 headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status
    except urllib.error.HTTPError as e:
        return e.code


RESULTS = {"passed": 0, "failed": 0}


def check(label, cond, detail=""):
    RESULTS["passed" if cond else "failed"] += 1
    print("%s - %s%s" % ("ok" if cond else "not ok", label,
                         "" if cond else " (%s)" % detail), flush=True)


def main():
    global LOGDIR
    LOGDIR = tempfile.mkdtemp(prefix="websub-selftest-")
    procs = []
    try:
        hub = Proc("relay_hub.py")
        procs.append(hub)
        hub_url = hub.wait("listening")["hub"]
        server, base = topic_server(hub_url)
        public = base + "/resourcesync/demo/change/"
        restricted = base + "/resourcesync/demo/restricted/change/"

        out = {k: os.path.join(LOGDIR, k) for k in "abc"}
        # a: discovers the hub from the topic's Link header, no secret
        a = Proc("subscriber.py", "--topic", public, "--out", out["a"],
                 "--unsubscribe-after", "1")
        # b: hub given, with a secret (relay signs with sha512) and a header
        b = Proc("subscriber.py", "--hub", hub_url, "--topic", public,
                 "--out", out["b"], "--secret", "s3cret", "--lease", "120",
                 "--header", "Authorization: Bearer ignored-by-relay")
        # c: restricted topic, discovered with an Authorization header
        c = Proc("subscriber.py", "--topic", restricted, "--out", out["c"],
                 "--header", "Authorization: Bearer test")
        procs += [a, b, c]

        callbacks = {}
        for name, p in zip("abc", (a, b, c)):
            callbacks[name] = p.wait("listening")["callback"]
        a.wait("discovered", hub=hub_url, topic=public)
        c.wait("discovered", hub=hub_url, topic=restricted)
        for name, p in zip("abc", (a, b, c)):
            ev = p.wait("subscribed")
            check("%s subscribed (lease %s)" % (name, ev["lease_seconds"]),
                  ev["callback"] == callbacks[name], ev)
            if name == "b":
                check("b was granted its 120 s lease",
                      ev["lease_seconds"] == 120, ev)
        for name in "abc":  # the hub records a subscription after verifying
            ev = hub.wait("subscription", callback=callbacks[name])
            check("relay holds %s's subscription" % name, ev["active"], ev)

        status = post_form(hub_url, {"hub.mode": "publish", "hub.url": public,
                                     "hub.topic": public})
        check("publish ping answered 202", status == 202, status)
        ev = hub.wait("fetched", topic=public)
        check("relay fetched topic for 2 subscribers",
              ev["subscribers"] == 2, ev)

        na = a.wait("notification")
        nb = b.wait("notification")
        for name, n in (("a", na), ("b", nb)):
            with open(n["file"], "rb") as f:
                check("%s saved the topic body as %s" % (
                    name, os.path.basename(n["file"])), f.read() == BODY)
            check("%s got Link rel=self" % name,
                  '<%s>; rel="self"' % public in (n["link"] or ""), n)
        check("a: no secret, signature_ok null", na["signature_ok"] is None,
              na)
        check("b: sha512 signature verified", nb["signature_ok"] is True and
              nb["signature"].startswith("sha512="), nb)

        a.wait("unsubscribed")
        ev = hub.wait("subscription", mode="unsubscribe",
                      callback=callbacks["a"])
        check("relay dropped a after unsubscribe", not ev["active"], ev)

        # a forged delivery with a wrong signature must be refused
        status = post_form(callbacks["b"], {"x": "y"},
                           {"X-Hub-Signature": "sha256=" + "0" * 64})
        ev = b.wait("notification")
        check("b answers 2xx to a forged delivery", status == 200, status)
        check("b rejects the forged signature", ev["accepted"] is False and
              ev["signature_ok"] is False, ev)
        # a correctly signed direct POST is accepted (sha256, as plikt signs)
        sig = hmac.new(b"s3cret", BODY, hashlib.sha256).hexdigest()
        req = urllib.request.Request(callbacks["b"], BODY, headers={
            "Content-Type": "application/xml",
            "X-Hub-Signature": "sha256=" + sig})
        urllib.request.urlopen(req, timeout=5).close()
        ev = b.wait("notification", accepted=True)
        check("b accepts a sha256-signed delivery", ev["signature_ok"], ev)

        status = post_form(hub_url, {"hub.mode": "publish",
                                     "hub.topic": public})
        ev = hub.wait("fetched", topic=public)
        check("second publish reaches 1 subscriber", ev["subscribers"] == 1,
              ev)
        hub.wait("delivered", callback=callbacks["b"])
        ev = b.wait("notification", accepted=True)
        check("b got the second notification", ev["n"] == 3, ev)
        time.sleep(0.5)
        late = [e for e in a.drain() if e["event"] == "notification"]
        check("a got nothing after unsubscribing", not late and
              os.listdir(out["a"]) == ["0001.xml"], late)

        status = post_form(hub_url, {"hub.mode": "publish",
                                     "hub.url": public})
        check("publish with hub.url only is refused (400)", status == 400,
              status)
        post_form(hub_url, {"hub.mode": "publish", "hub.topic": restricted})
        ev = hub.wait("error", stage="fetch", topic=restricted)
        check("relay cannot fetch a topic that needs auth",
              "401" in ev["message"], ev)

        for p in (a, b, c):
            check("%s exits cleanly on SIGTERM" % p.name, p.stop() == 0)
        check("relay exits cleanly on SIGTERM", hub.stop() == 0)
        server.shutdown()
    except AssertionError as e:
        check("no timeout", False, e)
    finally:
        for p in procs:
            if p.p.poll() is None:
                p.p.kill()
    print("logs in %s" % LOGDIR)
    print("%d passed, %d failed" % (RESULTS["passed"], RESULTS["failed"]))
    return 1 if RESULTS["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
