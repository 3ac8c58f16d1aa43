#!/usr/bin/env python3
"""A third-party WebSub subscriber (flask-websub) for plikt's interop tests.

Runs flask-websub's Subscriber on 127.0.0.1, subscribes to one topic, saves
every notification body under --out and reports every event as one JSON
object per line on stdout (flushed). Logs go to stderr.

    subscriber.py --topic URL [--hub URL] --out DIR [--port 0] [--lease N]
                  [--secret S] [--header 'Name: value']... [--unsubscribe-after N]
                  [--renew-margin SECONDS] [--no-https-probe]

Commands read from stdin, one per line: `unsubscribe`, `renew` (subscribe
again with the same callback: the active subscription's parameters, else the
original request), `quit`.
EOF on stdin is ignored; SIGTERM/SIGINT stop the process (exit code 0).

Events (field "event"):
  listening           {"callback": URL, "port": N}
  discovered          {"topic": URL, "hub": URL}   (not with --hub)
  subscribe_requested {"mode": "subscribe"|"unsubscribe", "topic", "hub",
                       "callback"}                 (hub answered 202)
  subscribed          {"topic", "callback", "lease_seconds", "count"}
                      (verification GET answered; sent after the response)
  unsubscribed        {"topic", "callback"}
  denied              {"topic", "reason"}          (hub.mode=denied)
  notification        {"file", "n", "accepted", "signature_ok", "signature",
                       "link", "content_type", "bytes", "topic"}
  delivery_rejected   {"status", "content_length", "transfer_encoding"}
                      (a POST the library refused: 404 no/expired subscription,
                       400 too large, 500 e.g. no Content-Length)
  verification_rejected {"status", "query"}        (a GET the library refused)
  library_warning     {"message"}                  (flask_websub's log warnings)
  error               {"stage", "message", "status"?}
  exit                {}
"""
import argparse
import json
import logging
import os
import re
import signal
import sys
import tempfile
import threading
import uuid

import requests
from flask import Flask, g, request
from werkzeug.serving import make_server

import flask_websub.subscriber as fws
from flask_websub.errors import DiscoveryError, SubscriberError
from flask_websub.subscriber import (SQLite3SubscriberStorage,
                                     SQLite3TempSubscriberStorage, Subscriber,
                                     discover)
from flask_websub.subscriber.discovery import Finished, LinkParser
from flask_websub.utils import request_url

_out_lock = threading.Lock()


def emit(event, **fields):
    """Print one JSON event line on stdout and flush it."""
    with _out_lock:
        sys.stdout.write(json.dumps({"event": event, **fields}) + "\n")
        sys.stdout.flush()


class EmitWarnings(logging.Handler):
    """Mirror flask_websub's warnings (e.g. bad signature) as JSON events."""

    def emit(self, record):
        msg = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            msg += ": " + repr(record.exc_info[1])
        emit("library_warning", message=msg)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--topic", required=True, help="topic URL (discovered "
                   "from its Link headers unless --hub is given)")
    p.add_argument("--hub", help="hub URL; skips discovery, --topic is used "
                   "as hub.topic verbatim")
    p.add_argument("--out", required=True, help="directory for NNNN.xml")
    p.add_argument("--port", type=int, default=0, help="0 = any free port")
    p.add_argument("--lease", type=int, help="hub.lease_seconds to request")
    p.add_argument("--secret", help="hub.secret (signature is then checked)")
    p.add_argument("--header", action="append", default=[],
                   help="extra 'Name: value' header on discovery and on "
                   "subscription/unsubscription/renewal requests")
    p.add_argument("--unsubscribe-after", type=int, metavar="N",
                   help="unsubscribe after N accepted notifications")
    p.add_argument("--renew-margin", type=int, metavar="SECONDS",
                   help="renew (library's renew_close_to_expiration) when the "
                   "lease has less than SECONDS left; checked every second")
    p.add_argument("--no-https-probe", action="store_true",
                   help="don't let the library try https:// before an "
                   "http:// hub URL (it does by default)")
    p.add_argument("--max-body", type=int, default=1024 * 1024,
                   help="MAX_BODY_SIZE (library default 1 MiB)")
    p.add_argument("--timeout", type=float, default=3,
                   help="REQUEST_TIMEOUT for outgoing requests (default 3)")
    return p.parse_args()


def parse_headers(values):
    headers = {}
    for value in values:
        name, sep, content = value.partition(":")
        if not sep:
            sys.exit("--header must look like 'Name: value': %r" % value)
        headers[name.strip()] = content.strip()
    return headers


def discover_with_headers(url, headers, timeout):
    """flask_websub.subscriber.discover() cannot send extra headers (needed
    for restricted topics), so this repeats it with them: a GET (not HEAD),
    Link headers parsed by requests, then <link> tags in the body."""
    resp = requests.get(url, headers=headers, timeout=timeout, stream=True)
    resp.raise_for_status()
    parser = LinkParser()
    parser.hub_url = (resp.links.get("hub") or {}).get("url")
    parser.topic_url = (resp.links.get("self") or {}).get("url")
    try:
        parser.updated()
        for chunk in resp.iter_content(chunk_size=None, decode_unicode=True):
            parser.feed(chunk)
        parser.close()
    except Finished:
        return {"hub_url": parser.hub_url, "topic_url": parser.topic_url}
    raise DiscoveryError("Could not find hub url in topic page")


def allow_secret_over_http():
    """The library refuses hub.secret unless the hub URL is https://
    (SubscriberError "Only specify a secret when using https"). plikt's test
    hub is plain http on loopback, so pretend the hub is secure whenever an
    explicit secret is given. Nothing else changes."""
    original = fws.add_secret_to_args

    def patched(args, req, hub_is_secure):
        return original(args, req, hub_is_secure or bool(req.get("secret")))
    fws.add_secret_to_args = patched


class NoProbeSubscriber(Subscriber):
    """Subscriber that POSTs to an http:// hub directly instead of trying
    the https:// variant of its URL first."""

    def safe_post_request(self, url, **opts):
        return request_url(self.config, "POST", url, **opts)


def main():
    args = parse_args()
    extra_headers = parse_headers(args.header)
    requests_opts = {"headers": extra_headers} if extra_headers else {}
    os.makedirs(args.out, exist_ok=True)
    if args.secret:
        allow_secret_over_http()

    logging.basicConfig(stream=sys.stderr, level=logging.INFO)
    logging.getLogger("flask_websub").addHandler(EmitWarnings(logging.WARNING))

    workdir = tempfile.TemporaryDirectory(prefix="websub-sub-")
    db = os.path.join(workdir.name, "subscriber.db")
    cls = NoProbeSubscriber if args.no_https_probe else Subscriber
    subscriber = cls(SQLite3SubscriberStorage(db),
                     SQLite3TempSubscriberStorage(db),
                     REQUEST_TIMEOUT=args.timeout,
                     MAX_BODY_SIZE=args.max_body)

    app = Flask("websub-subscriber")
    blueprint = subscriber.build_blueprint(url_prefix="/callbacks")
    app.register_blueprint(blueprint)

    server = make_server("127.0.0.1", args.port, app, threaded=True)
    port = server.server_port
    # url_for(_external=True), used by the library to build hub.callback,
    # needs SERVER_NAME outside a request (Flask >= 3.1 does not restrict
    # incoming Host headers to it).
    app.config["SERVER_NAME"] = "127.0.0.1:%d" % port
    app.config["PREFERRED_URL_SCHEME"] = "http"
    callback_id = str(uuid.uuid4())  # fixed up front so it can be printed
    callback_url = "http://127.0.0.1:%d/callbacks/%s" % (port, callback_id)

    state = {"accepted": 0, "rejected": 0, "subscribed": 0,
             "unsubscribing": False, "renewing": False}
    state_lock = threading.Lock()
    initial = {}  # the first subscription request, for `renew`
    stop = threading.Event()

    def save(body, name):
        path = os.path.abspath(os.path.join(args.out, name))
        with open(path, "wb") as f:
            f.write(body)
        return path

    def notification_event(body, accepted, name, topic):
        # with a secret the library accepts only validly signed bodies
        signature_ok = accepted if args.secret else None
        emit("notification", file=save(body, name), n=int(name[-8:-4]),
             accepted=accepted, signature_ok=signature_ok,
             signature=request.headers.get("X-Hub-Signature"),
             link=request.headers.get("Link"),
             content_type=request.headers.get("Content-Type"),
             bytes=len(body), topic=topic)

    # --- library event handlers (run inside the callback request) ---------
    def on_notification(topic_url, cid, body):
        g.websub_accepted = True
        with state_lock:
            state["accepted"] += 1
            n = state["accepted"]
        notification_event(body, True, "%04d.xml" % n, topic_url)
        if args.unsubscribe_after and n == args.unsubscribe_after:
            # not inline: the hub is waiting for this response
            threading.Thread(target=unsubscribe, daemon=True).start()

    def on_success(topic_url, cid, mode):
        g.websub_verified = (topic_url, mode)

    def on_error(topic_url, cid, reason):
        emit("denied", topic=topic_url, reason=reason)

    subscriber.add_listener(on_notification)
    subscriber.add_success_handler(on_success)
    subscriber.add_error_handler(on_error)

    @app.after_request
    def report(resp):
        """Report what the library did with each hub request. Events for
        verifications are emitted once the response has been written."""
        if request.blueprint != blueprint.name:
            return resp
        if request.method == "POST":
            if resp.status_code == 200 and not g.get("websub_accepted"):
                # library answered 2xx but dropped the body: bad signature
                with state_lock:
                    state["rejected"] += 1
                    n = state["rejected"]
                notification_event(request.get_data(), False,
                                   "rejected-%04d.xml" % n, None)
            elif resp.status_code != 200:
                emit("delivery_rejected", status=resp.status_code,
                     content_length=request.headers.get("Content-Length"),
                     transfer_encoding=request.headers.get(
                         "Transfer-Encoding"))
        elif g.get("websub_verified"):
            topic, mode = g.websub_verified
            if mode == "subscribe":
                with state_lock:
                    state["subscribed"] += 1
                    state["renewing"] = False
                    count = state["subscribed"]
                lease = request.args.get("hub.lease_seconds")
                resp.call_on_close(lambda: emit(
                    "subscribed", topic=topic, callback=callback_url,
                    lease_seconds=int(lease), count=count))
            else:
                resp.call_on_close(lambda: emit(
                    "unsubscribed", topic=topic, callback=callback_url))
        elif resp.status_code >= 300:
            emit("verification_rejected", status=resp.status_code,
                 query=dict(request.args))
        return resp

    # --- actions -----------------------------------------------------------
    def request_mode(mode, **subscription):
        """subscribe_impl with our extra headers. The library's own
        unsubscribe()/renew() drop requests_opts, so restricted topics would
        get no Authorization header there."""
        with app.app_context():
            try:
                subscriber.subscribe_impl(callback_id, mode=mode,
                                          requests_opts=requests_opts,
                                          **subscription)
            except SubscriberError as e:
                m = re.match(r"Hub error - (\d+)", str(e))
                emit("error", stage=mode, message=str(e),
                     cause=repr(e.__cause__) if e.__cause__ else None,
                     status=int(m.group(1)) if m else None)
                return False
        emit("subscribe_requested", mode=mode,
             topic=subscription["topic_url"], hub=subscription["hub_url"],
             callback=callback_url)
        return True

    def unsubscribe():
        with state_lock:
            if state["unsubscribing"]:
                return
            state["unsubscribing"] = True
        try:
            current = dict(subscriber.get_active_subscription(callback_id))
        except SubscriberError as e:
            emit("error", stage="unsubscribe", message=str(e))
            return
        current.pop("mode", None)
        request_mode("unsubscribe", **current)

    def renew(margin=None):
        if margin is None:
            try:
                subs = [dict(subscriber.get_active_subscription(callback_id))]
            except SubscriberError:
                # not (or no longer) subscribed: repeat the first request
                subs = [dict(initial)]
        else:  # same query the library's renew_close_to_expiration uses
            subs = [dict(s) for s in
                    subscriber.storage.close_to_expiration(margin)]
        for sub in subs:
            sub.pop("callback_id", None)
            sub.pop("mode", None)
            with state_lock:
                state["renewing"] = True
            request_mode("subscribe", **sub)

    def renew_loop():
        while not stop.wait(1):
            with state_lock:
                busy = state["renewing"] or state["unsubscribing"]
            if not busy:
                renew(args.renew_margin)

    # --- start ---------------------------------------------------------------
    threading.Thread(target=server.serve_forever, daemon=True).start()
    emit("listening", callback=callback_url, port=port)

    def on_signal(signum, frame):
        raise SystemExit(0)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    code = 0
    try:
        if args.hub:
            topic_url, hub_url = args.topic, args.hub
        else:
            try:
                if extra_headers:
                    found = discover_with_headers(args.topic, extra_headers,
                                                  args.timeout)
                else:
                    found = discover(args.topic, timeout=args.timeout)
            except (DiscoveryError, requests.RequestException) as e:
                emit("error", stage="discover", message=repr(e))
                raise SystemExit(2)
            topic_url, hub_url = found["topic_url"], found["hub_url"]
            emit("discovered", topic=topic_url, hub=hub_url)

        subscription = {"topic_url": topic_url, "hub_url": hub_url}
        if args.lease is not None:
            subscription["lease_seconds"] = args.lease
        if args.secret:
            subscription["secret"] = args.secret
        initial.update(subscription)
        if not request_mode("subscribe", **subscription):
            raise SystemExit(2)
        if args.renew_margin is not None:
            threading.Thread(target=renew_loop, daemon=True).start()

        # stdin commands; on EOF just wait for a signal
        for line in sys.stdin:
            cmd = line.strip()
            if cmd == "unsubscribe":
                threading.Thread(target=unsubscribe, daemon=True).start()
            elif cmd == "renew":
                threading.Thread(target=renew, daemon=True).start()
            elif cmd == "quit":
                raise SystemExit(0)
            elif cmd:
                emit("error", stage="stdin", message="unknown command " + cmd)
        while not stop.wait(0.5):
            pass
    except SystemExit as e:
        code = e.code or 0
    finally:
        stop.set()
        server.shutdown()
        workdir.cleanup()
        emit("exit", code=code)
    return code


if __name__ == "__main__":
    sys.exit(main())
