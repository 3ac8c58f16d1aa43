#!/usr/bin/env python3
"""Clients of scripts/bench-web: CLIENTS threads, each with its own connection, POST the same
feed to URL (`POST /api/validate`) REQUESTS times each, all starting together. Each answer
must be 200 with a JSON document whose `items` is ITEMS. Prints one JSON line: wall time,
throughput and every latency (seconds, sorted).

Usage: web-clients.py URL FEED CLIENTS REQUESTS ITEMS
"""

import http.client
import json
import sys
import threading
import time
import urllib.parse


def main(argv):
    url, feed, clients, requests, items = argv[1], argv[2], int(argv[3]), int(argv[4]), int(argv[5])
    body = open(feed, "rb").read()
    u = urllib.parse.urlsplit(url)
    latencies, errors = [], []
    lock = threading.Lock()
    start = threading.Barrier(clients + 1)

    def client():
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
        start.wait()
        for _ in range(requests):
            t0 = time.monotonic()
            try:
                conn.request("POST", u.path, body=body,
                             headers={"Content-Type": "application/rss+xml"})
                r = conn.getresponse()
                data = r.read()
                t1 = time.monotonic()
                ok = r.status == 200 and json.loads(data)["items"] == items
                with lock:
                    (latencies if ok else errors).append(
                        t1 - t0 if ok else f"{r.status} {data[:200]!r}")
            except Exception as e:  # a broken connection: count it, reconnect
                with lock:
                    errors.append(repr(e))
                conn.close()
                conn = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
        conn.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    start.wait()
    t0 = time.monotonic()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0
    latencies.sort()
    print(json.dumps({
        "clients": clients, "requests": clients * requests, "ok": len(latencies),
        "errors": errors[:5], "error_count": len(errors), "wall": wall,
        "bytes": len(body), "latencies": latencies,
    }))
    return 0 if not errors else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
