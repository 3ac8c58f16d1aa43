#!/usr/bin/env python3
"""Helpers of scripts/bench-harvest: record one measured command, and write the report.

  harvest-report.py row --out RESULTS.jsonl --case A --tool plikt --run 1 --rc 0
                        --time FILE.time --log ACCESS_LOG --start BYTES --end BYTES
                        [--paths-out FILE]
      Parses the `/usr/bin/time -v` output and the slice [START, END) of nginx's access log
      (the requests the command made) and appends one JSON line to RESULTS.jsonl. With
      --paths-out, writes the sorted distinct request paths of the slice there.

  harvest-report.py report --results RESULTS.jsonl --meta DIR --info INFO.json
                           --commands COMMANDS.md --out RESULTS.md
      Prints the Markdown report (medians over runs) and writes it to RESULTS.md.

The access log lines have the format `bench` of the nginx.conf that scripts/bench-harvest
writes: $msec $status $body_bytes_sent $connection $connection_requests "$request"
"$http_if_none_match" "$http_if_modified_since" "$http_user_agent".
"""

import argparse
import json
import os
import re
import statistics
import sys
from collections import Counter

LOG_LINE = re.compile(r'^(\S+) (\d{3}) (\d+) (\d+) (\d+) "([^"]*)" "([^"]*)" "([^"]*)" "([^"]*)"$')
CASE_TITLES = {"A": "small", "B": "big"}


def parse_time_v(path: str) -> dict:
    out = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            key, _, value = line.strip().rpartition(": ")
            if key.startswith("Elapsed (wall clock) time"):
                secs = 0.0
                for part in value.split(":"):
                    secs = secs * 60 + float(part)
                out["wall"] = secs
            elif key == "Maximum resident set size (kbytes)":
                out["rss_kib"] = int(value)
            elif key == "User time (seconds)":
                out["user"] = float(value)
            elif key == "System time (seconds)":
                out["sys"] = float(value)
            elif key == "Exit status":
                out["exit"] = int(value)
    if "wall" not in out:
        raise SystemExit(f"harvest-report: no wall time in {path}")
    return out


def parse_log(path: str, start: int, end: int) -> tuple:
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(max(0, end - start)).decode("utf-8", "replace")
    statuses, conns, paths, conditional = Counter(), set(), Counter(), 0
    sent = 0
    bad = 0
    for line in data.splitlines():
        m = LOG_LINE.match(line)
        if not m:
            bad += 1
            continue
        _, status, nbytes, conn, _, request, inm, ims, _ = m.groups()
        statuses[status] += 1
        conns.add(conn)
        sent += int(nbytes)
        parts = request.split(" ")
        paths[parts[1] if len(parts) >= 2 else request] += 1
        if inm not in ("", "-") or ims not in ("", "-"):
            conditional += 1
    return {
        "requests": sum(statuses.values()),
        "statuses": dict(sorted(statuses.items())),
        "connections": len(conns),
        "body_bytes": sent,
        "distinct_paths": len(paths),
        "repeated_paths": sum(1 for n in paths.values() if n > 1),
        "conditional": conditional,
        "unparsed_lines": bad,
    }, sorted(paths)


def cmd_row(a) -> int:
    row = {"case": a.case, "tool": a.tool, "run": a.run, "rc": a.rc}
    row.update(parse_time_v(a.time))
    log, paths = parse_log(a.log, a.start, a.end)
    row.update(log)
    if a.paths_out:
        with open(a.paths_out, "w", encoding="utf-8") as f:
            f.writelines(p + "\n" for p in paths)
    with open(a.out, "a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")
    return 0


# --------------------------------------------------------------------------------------------

def fmt(x, digits=2):
    return "–" if x is None else f"{x:,.{digits}f}"


def human(n: int) -> str:
    return f"{n / 1e6:,.1f} MB" if n >= 1e6 else f"{n / 1e3:,.1f} kB"


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summarise(rows: list, meta: dict) -> dict:
    walls = [r["wall"] for r in rows]
    wall = median(walls)
    return {
        "runs": len(rows),
        "wall": wall,
        "wall_min": min(walls),
        "wall_max": max(walls),
        "files_s": meta["files"] / wall if wall else None,
        "mb_s": meta["bytes"] / 1e6 / wall if wall else None,
        "cpu": median([r["user"] + r["sys"] for r in rows]),
        "rss_mib": median([r["rss_kib"] / 1024 for r in rows]),
        "rss_max_mib": max(r["rss_kib"] for r in rows) / 1024,
        "requests": median([r["requests"] for r in rows]),
        "connections": median([r["connections"] for r in rows]),
    }


def combine_fsync(curl_rows: list, fsync_rows: list) -> list:
    """curl + md5sum and the fsync step of the same run, as one command."""
    by_run = {r["run"]: r for r in fsync_rows}
    out = []
    for c in curl_rows:
        s = by_run.get(c["run"])
        if s is None:
            continue
        out.append({**c, "wall": c["wall"] + s["wall"], "user": c["user"] + s["user"],
                    "sys": c["sys"] + s["sys"], "rss_kib": max(c["rss_kib"], s["rss_kib"])})
    return out


def read_paths(path: str) -> set:
    try:
        with open(path, encoding="utf-8") as f:
            return {line.rstrip("\n") for line in f if line.strip()}
    except OSError:
        return None


def cmd_report(a) -> int:
    rows = []
    if os.path.exists(a.results):
        with open(a.results, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()]
    with open(a.info, encoding="utf-8") as f:
        info = json.load(f)
    with open(a.commands, encoding="utf-8") as f:
        commands = f.read()
    rundir = os.path.join(os.path.dirname(a.results), "runs")

    L = []
    L.append("# Benchmark: `plikt harvest` vs `curl --parallel` + `md5sum` (loopback nginx)")
    L.append("")
    L.append(f"{info['date']} · {info['machine']} · kernel {info['kernel']} · {info['nginx']} · "
             f"{info['curl']} · {info['plikt_version']} · load average (1, 5, 15 min) "
             f"{info.get('load', '?')}")
    L.append("")
    L.append(f"Runs per command: {info['runs']} (medians; plikt and curl alternate within each run, "
             f"odd runs plikt first). Concurrency: {info['parallel']} connections on both sides. "
             f"nginx on 127.0.0.1:{info['port']}, {info['nginx_workers']} worker(s), sendfile on, "
             f"keepalive on.")
    L.append("")
    L.append("* **files/s, MB/s**: the item files (every `link` and every `media:content`; the feed "
             "is fetched by both sides but not counted) divided by the median wall time; "
             "MB = 10^6 bytes.")
    L.append("* **peak RSS**: `/usr/bin/time -v` maximum resident set size; for the curl commands the "
             "largest single process (curl or md5sum), not a sum.")
    L.append("* **curl + md5sum**: `curl --parallel` into a fresh directory, then `md5sum -c` of every "
             "fetched file against the expected MD5s. **+ fsync**: the same run followed by fsync of "
             "every downloaded file and directory (`sync FILE…`), timed separately and added.")
    L.append("* The page cache is **not** dropped (not possible here): nginx serves every file from "
             "the page cache (the files were just generated), and the client side writes into it. "
             "A `sync` (untimed) runs before each measured command so that writeback of an earlier "
             "command does not land in the next one.")
    L.append("* plikt does more than curl: it parses and validates the feed, writes the SQLite "
             "catalog, computes the blob store's own hash, and fsyncs each blob.")
    L.append("")
    if info.get("plikt_skipped"):
        L.append(f"**plikt side skipped:** {info['plikt_skipped']}")
        L.append("")

    problems = []
    for case in info["cases"]:
        meta_path = os.path.join(a.meta, f"{CASE_TITLES[case]}.json")
        with open(meta_path, encoding="utf-8") as f:
            meta = json.load(f)
        mine = [r for r in rows if r["case"] == case]
        plikt_all = [r for r in mine if r["tool"] == "plikt"]
        curl_all = [r for r in mine if r["tool"] == "curl"]
        # Failed runs are reported under Problems and left out of the medians.
        plikt = [r for r in plikt_all if r["rc"] == 0]
        curl = [r for r in curl_all if r["rc"] == 0]
        fsync = [r for r in mine if r["tool"] == "fsync" and r["rc"] == 0]
        curl_fsync = combine_fsync(curl, fsync)
        media_each = (f"{meta['media_files']:,} × 1–64 KiB" if case == "A"
                      else f"{meta['media_files']:,} × {meta['media_bytes'] // meta['media_files'] / 2**20:,.0f} MiB")
        L.append(f"## Case {case}: {meta['items']:,} items, {meta['files']:,} files "
                 f"({media_each} media files + {meta['items']:,} link pages), "
                 f"{meta['bytes'] / 1e6:,.1f} MB; feed {human(meta['feed_bytes'])}")
        L.append("")
        L.append("| command | runs | wall s (median) | wall min–max | files/s | MB/s | CPU s | "
                 "peak RSS MiB | requests | connections |")
        L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        sums = {}
        for name, rs in (("plikt harvest", plikt), ("curl + md5sum", curl),
                         ("curl + md5sum + fsync", curl_fsync)):
            if not rs:
                tried = plikt_all if name.startswith("plikt") else curl_all
                L.append(f"| {name} | 0 | {'failed, see Problems' if tried else 'skipped'} "
                         "| | | | | | | |")
                continue
            s = summarise(rs, meta)
            sums[name] = s
            L.append(f"| {name} | {s['runs']} | {fmt(s['wall'], 3)} | {fmt(s['wall_min'], 2)}–"
                     f"{fmt(s['wall_max'], 2)} | {fmt(s['files_s'], 0)} | {fmt(s['mb_s'], 1)} | "
                     f"{fmt(s['cpu'], 2)} | {fmt(s['rss_mib'], 1)} | {s['requests']:,.0f} | "
                     f"{s['connections']:,.0f} |")
        L.append("")
        p = sums.get("plikt harvest")
        if p:
            ratios = []
            for other in ("curl + md5sum", "curl + md5sum + fsync"):
                o = sums.get(other)
                if o:
                    ratios.append(f"wall plikt / ({other}) = **{p['wall'] / o['wall']:.2f}**")
            o = sums.get("curl + md5sum")
            if o:
                ratios.append(f"peak RSS plikt / curl = {p['rss_mib'] / o['rss_mib']:.2f} "
                              f"({p['rss_mib']:.1f} vs {o['rss_mib']:.1f} MiB)")
            if len(ratios) > 1:
                L.append("Ratios (medians): " + "; ".join(ratios) + ".")
                L.append("")

        # Checks: both sides fetched exactly the expected set, with status 200.
        expected = read_paths(os.path.join(a.meta, f"{CASE_TITLES[case]}.paths"))
        checks = []
        for tool, rs in (("plikt", plikt_all), ("curl", curl_all)):
            for r in rs:
                got = read_paths(os.path.join(rundir, f"{case}-{tool}-{r['run']}.paths"))
                what = f"{tool} run {r['run']}"
                if r["rc"] != 0:
                    problems.append(f"case {case}: {what} exited {r['rc']}")
                if r["statuses"] != {"200": meta["requests"]}:
                    problems.append(f"case {case}: {what}: statuses {r['statuses']}, expected "
                                    f"{meta['requests']} × 200")
                if r["repeated_paths"]:
                    problems.append(f"case {case}: {what}: {r['repeated_paths']} URLs requested "
                                    "more than once")
                if got is not None and expected is not None and got != expected:
                    problems.append(f"case {case}: {what}: request set differs from the expected "
                                    f"(missing {len(expected - got)}, extra {len(got - expected)})")
        n_runs = len(plikt_all) + len(curl_all)
        if n_runs:
            checks.append(f"Runs checked against nginx's access log: {n_runs}. Each must request "
                          f"exactly the {meta['requests']:,} distinct URLs (feed + "
                          f"{meta['files']:,} files) once, all answered 200.")
        L.extend(checks)
        L.append("")

    re_rows = [r for r in rows if r["tool"] == "plikt-reharvest"]
    if re_rows:
        r = re_rows[-1]
        ok = r["requests"] == 1 and r["statuses"] == {"304": 1} and r["rc"] == 0
        L.append("## Re-harvest of the unchanged case A feed")
        L.append("")
        L.append("| wall s | peak RSS MiB | requests logged | statuses | conditional | exit | result |")
        L.append("|---:|---:|---:|---|---:|---:|---|")
        L.append(f"| {r['wall']:.3f} | {r['rss_kib'] / 1024:.1f} | {r['requests']} | "
                 f"{', '.join(f'{k} × {v}' for k, v in r['statuses'].items()) or '–'} | "
                 f"{r['conditional']} | {r['rc']} | {'PASS' if ok else 'FAIL'} |")
        L.append("")
        L.append("Expected: exactly 1 request, the feed, a conditional GET answered 304 "
                 "(nginx answers If-None-Match / If-Modified-Since for static files).")
        L.append("")
        if not ok:
            problems.append("re-harvest: expected exactly 1 request answered 304 and exit 0")

    L.append("## Problems")
    L.append("")
    L.extend([f"* {p}" for p in problems] or ["None."])
    L.append("")
    L.append("## Commands")
    L.append("")
    L.append(commands.rstrip("\n"))
    L.append("")
    text = "\n".join(L)
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(text)
    print(text)
    return 1 if problems else 0


def main() -> int:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("row")
    r.add_argument("--out", required=True)
    r.add_argument("--case", required=True)
    r.add_argument("--tool", required=True)
    r.add_argument("--run", type=int, required=True)
    r.add_argument("--rc", type=int, required=True)
    r.add_argument("--time", required=True)
    r.add_argument("--log", required=True)
    r.add_argument("--start", type=int, required=True)
    r.add_argument("--end", type=int, required=True)
    r.add_argument("--paths-out")
    p = sub.add_parser("report")
    p.add_argument("--results", required=True)
    p.add_argument("--meta", required=True)
    p.add_argument("--info", required=True)
    p.add_argument("--commands", required=True)
    p.add_argument("--out", required=True)
    a = ap.parse_args()
    return cmd_row(a) if a.cmd == "row" else cmd_report(a)


if __name__ == "__main__":
    sys.exit(main())
