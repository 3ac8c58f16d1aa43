#!/usr/bin/env python3
"""Two (or more) plikt binaries on one feed, run alternately, each run after its own
`sha256sum` of the feed (the machine-state reference of scripts/bench-validate).

Usage: python3 scripts/bench/alternate-validate.py FEED ROUNDS NAME=BINARY...

Each round runs, for every binary in turn: sha256sum FEED, BINARY validate --format json FEED
(two threads), sha256sum FEED, BINARY validate --format json - < FEED (one thread). Wall time
from fork to reap, CPU time and peak RSS from wait4, as scripts/bench-validate measures them.
Prints a Markdown table of medians; the ratio is each run's wall time over the sha256sum run
just before it.
"""

import os
import statistics
import sys
import time


def run(argv, stdin=None):
    """Wall seconds, CPU seconds and peak RSS (MiB) of one process."""
    started = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        null = os.open("/dev/null", os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        if stdin:
            os.dup2(os.open(stdin, os.O_RDONLY), 0)
        os.execv(argv[0], argv)
    _, _, usage = os.wait4(pid, 0)
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main(argv):
    if len(argv) < 4:
        print(__doc__.strip().splitlines()[3], file=sys.stderr)
        return 2
    feed, rounds = argv[1], int(argv[2])
    binaries = dict(arg.split("=", 1) for arg in argv[3:])
    keys = ("wall", "cpu", "ratio", "rss", "wall1", "ratio1")
    results = {name: {k: [] for k in keys} for name in binaries}
    for _ in range(rounds):
        for name, binary in binaries.items():
            r = results[name]
            reference, _, _ = run(["/usr/bin/sha256sum", feed])
            wall, cpu, rss = run([binary, "validate", "--format", "json", feed])
            r["wall"].append(wall)
            r["cpu"].append(cpu)
            r["ratio"].append(wall / reference)
            r["rss"].append(rss)
            reference, _, _ = run(["/usr/bin/sha256sum", feed])
            wall, _, _ = run([binary, "validate", "--format", "json", "-"], stdin=feed)
            r["wall1"].append(wall)
            r["ratio1"].append(wall / reference)
    print("| binary | runs | median wall (file, two threads) | median CPU | median ratio to "
          "`sha256sum` | median wall (stdin, one thread) | median ratio (stdin) | median peak RSS |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    md = statistics.median
    for name, r in results.items():
        print(f"| {name} | {rounds} | {md(r['wall']) * 1000:.0f} ms | {md(r['cpu']) * 1000:.0f} ms "
              f"| {md(r['ratio']):.2f}× | {md(r['wall1']) * 1000:.0f} ms | {md(r['ratio1']):.2f}× "
              f"| {md(r['rss']):.1f} MiB |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
