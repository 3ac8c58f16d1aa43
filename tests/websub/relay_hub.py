#!/usr/bin/env python3
"""A third-party WebSub hub (flask-websub) that relays plikt's topics.

Runs flask-websub's Hub on 127.0.0.1 with publishing enabled and its celery
tasks executed by an embedded celery worker (a thread of this process, with
kombu's in-memory broker; celery's own test helper `start_worker`). Nothing
outside this process is needed. Events go to stdout as JSON lines (flushed),
logs to stderr.

    relay_hub.py [--port 0] [--signature-algorithm sha512] [--min-lease 60]
                 [--max-attempts 5] [--backoff-base 1.0] [--timeout 3]

Publish ping the hub accepts (form-encoded POST to the hub URL, answer 202):
    hub.mode=publish & hub.topic=<topic URL>     (hub.url is ignored)

Events (field "event"):
  listening    {"hub": URL, "port": N}
  hub_request  {"mode", "topic", "callback", "status", "form"}  every POST /hub
  subscription {"mode": "subscribe"|"unsubscribe", "topic", "callback",
                "active": bool}   after the intent-verification task; active =
                the hub now holds this subscription
  fetched      {"topic", "subscribers": N}   publish task fetched the topic
               and queued one delivery per subscriber
  delivered    {"topic", "callback"}         a subscriber answered 2xx/410
  delivery_retry {"topic", "callback"}   a delivery failed and is retried
  library_warning {"message"}   flask_websub's warnings, e.g. "Cannot verify
               subscriber intent - 404: ..." or "Notification failed: ..."
  error        {"stage": "fetch"|"deliver"|..., "topic", "message"}
  exit         {}
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

from celery import Celery
from celery.contrib.testing.worker import start_worker
from celery.signals import task_postrun
from flask import Flask, request
from werkzeug.serving import make_server

from flask_websub.hub import Hub, SQLite3HubStorage

_out_lock = threading.Lock()


def emit(event, **fields):
    """Print one JSON event line on stdout and flush it."""
    with _out_lock:
        sys.stdout.write(json.dumps({"event": event, **fields}) + "\n")
        sys.stdout.flush()


class EmitWarnings(logging.Handler):
    """Mirror flask_websub's warnings (failed verification or delivery) as
    JSON events."""

    def emit(self, record):
        msg = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            msg += ": " + repr(record.exc_info[1])
        emit("library_warning", message=msg)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--port", type=int, default=0, help="0 = any free port")
    p.add_argument("--signature-algorithm", default="sha512",
                   choices=["sha1", "sha256", "sha384", "sha512"],
                   help="X-Hub-Signature algorithm (library default sha512)")
    p.add_argument("--min-lease", type=int, default=60,
                   help="HUB_MIN_LEASE_SECONDS (library default 60)")
    p.add_argument("--default-lease", type=int, default=10 * 86400,
                   help="HUB_DEFAULT_LEASE_SECONDS (library default 10 days)")
    p.add_argument("--max-lease", type=int, default=31 * 86400,
                   help="HUB_MAX_LEASE_SECONDS (library default 31 days)")
    p.add_argument("--max-attempts", type=int, default=5,
                   help="delivery retries (library default 10)")
    p.add_argument("--backoff-base", type=float, default=1.0,
                   help="retry backoff scale in seconds (library default 8)")
    p.add_argument("--timeout", type=float, default=3,
                   help="REQUEST_TIMEOUT for the hub's requests (default 3)")
    return p.parse_args()


def main():
    args = parse_args()
    logging.basicConfig(stream=sys.stderr, level=logging.INFO)
    logging.getLogger("flask_websub").addHandler(EmitWarnings(logging.WARNING))

    config = {
        "PUBLISH_SUPPORTED": True,  # accept hub.mode=publish (off by default)
        "SIGNATURE_ALGORITHM": args.signature_algorithm,
        "HUB_MIN_LEASE_SECONDS": args.min_lease,
        "HUB_DEFAULT_LEASE_SECONDS": min(max(args.default_lease,
                                             args.min_lease), args.max_lease),
        "HUB_MAX_LEASE_SECONDS": args.max_lease,
        "MAX_ATTEMPTS": args.max_attempts,
        "BACKOFF_BASE": args.backoff_base,
        "REQUEST_TIMEOUT": args.timeout,
    }

    # Celery with kombu's in-process memory broker; results are not needed.
    celery = Celery("relay_hub", broker="memory://")
    celery.conf.update(task_ignore_result=True,
                       broker_transport_options={"polling_interval": 0.05},
                       broker_connection_retry_on_startup=True,
                       worker_hijack_root_logger=False)

    workdir = tempfile.TemporaryDirectory(prefix="websub-hub-")
    storage = SQLite3HubStorage(os.path.join(workdir.name, "hub.db"))
    hub = Hub(storage, celery, **config)  # registers the hub's celery tasks

    app = Flask("websub-relay-hub")
    app.config.update(config)  # the endpoint reads PUBLISH_SUPPORTED, leases
    app.register_blueprint(hub.build_blueprint(url_prefix="/hub"))

    @app.after_request
    def report(resp):
        if request.method == "POST" and request.path == "/hub":
            emit("hub_request", mode=request.form.get("hub.mode"),
                 topic=request.form.get("hub.topic"),
                 callback=request.form.get("hub.callback"),
                 status=resp.status_code, form=sorted(request.form.keys()))
        return resp

    def active(topic, callback):
        return any(cb == callback for cb, _ in storage.get_callbacks(topic))

    @task_postrun.connect
    def on_task(task=None, args=None, retval=None, state=None, **kw):
        """Turn the hub's celery task results into events."""
        name = re.sub(r"_\d+$", "", task.name.rsplit(".", 1)[-1])
        args = list(args or [])
        if name in ("subscribe", "unsubscribe"):
            callback, topic = args[0], args[1]
            emit("subscription", mode=name, topic=topic, callback=callback,
                 active=active(topic, callback), state=state)
        elif name == "send_change_notification":
            topic = args[0]
            if state == "SUCCESS":
                emit("fetched", topic=topic,
                     subscribers=len(list(storage.get_callbacks(topic))))
            else:
                emit("error", stage="fetch", topic=topic, message=repr(retval)
                     + (": " + repr(retval.__cause__)
                        if getattr(retval, "__cause__", None) else ""))
        elif name == "make_request_retrying":
            topic, callback = args[0], args[1]
            if state == "SUCCESS":
                emit("delivered", topic=topic, callback=callback)
            elif state == "RETRY":  # the cause is in a library_warning
                emit("delivery_retry", topic=topic, callback=callback)
            else:
                emit("error", stage="deliver", topic=topic, callback=callback,
                     message=repr(retval))

    server = make_server("127.0.0.1", args.port, app, threaded=True)
    hub_url = "http://127.0.0.1:%d/hub" % server.server_port

    def on_signal(signum, frame):
        raise SystemExit(0)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    # Requests arriving before the worker runs just queue their tasks.
    threading.Thread(target=server.serve_forever, daemon=True).start()
    code = 0
    try:
        with start_worker(celery, pool="solo", concurrency=1,
                          perform_ping_check=False, loglevel="WARNING",
                          shutdown_timeout=5):
            emit("listening", hub=hub_url, port=server.server_port)
            stop = threading.Event()
            while not stop.wait(0.5):
                pass
    except SystemExit as e:
        code = e.code or 0
    finally:
        server.shutdown()
        workdir.cleanup()
        emit("exit", code=code)
    return code


if __name__ == "__main__":
    sys.exit(main())
