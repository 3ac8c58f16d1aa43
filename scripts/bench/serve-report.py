#!/usr/bin/env python3
"""Report of scripts/bench-serve: every run and the medians of plikt serve and nginx, side by
side, with the ratios plikt/nginx against the targets (Markdown on stdout).

  serve-report.py row --out RESULTS.jsonl --wrk WRK.out key=value...
      Appends one result: wrk's JSON line (from scripts/bench/serve-urls.lua) and the
      given fields (case, server, run, time, rss_kib, cpu_s, steal_s, ...).
  serve-report.py report --results RESULTS.jsonl --info INFO.json
"""

import argparse
import json
import statistics
import sys

TARGETS = {"small": ("rps", 0.50, "requests/s"), "big": ("mbps", 0.80, "MB/s")}
CASE_TITLE = {"small": "10,000 small resources", "big": "one 1 GiB resource"}


def cmd_row(a) -> int:
    wrk = None
    with open(a.wrk, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("JSON "):
                wrk = json.loads(line[5:])
    if wrk is None:
        sys.exit(f"serve-report: no JSON line in {a.wrk}")
    row = {}
    for kv in a.fields:
        k, v = kv.split("=", 1)
        try:
            v = int(v)
        except ValueError:
            try:
                v = float(v)
            except ValueError:
                pass
        row[k] = v
    row.update(wrk)
    secs = wrk["duration_us"] / 1e6
    row["rps"] = wrk["requests"] / secs
    row["mbps"] = wrk["bytes"] / secs / 1e6
    row["errors_total"] = sum(wrk["errors"].values())
    row["cpu_us_per_req"] = row.get("cpu_s", 0) * 1e6 / max(wrk["requests"], 1)
    row["cpu_s_per_gb"] = row.get("cpu_s", 0) / max(wrk["bytes"] / 1e9, 1e-9)
    with open(a.out, "a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")
    print(f"    {row['case']:<5} {row['server']:<5} run {row['run']}: {row['rps']:10.1f} req/s "
          f"{row['mbps']:9.1f} MB/s  p50 {ms(wrk['latency_us']['p50'])}  p99 "
          f"{ms(wrk['latency_us']['p99'])}  errors {row['errors_total']}  "
          f"server CPU {row.get('cpu_s', 0):.1f} s  peak RSS {row.get('rss_kib', 0) / 1024:.1f} MiB",
          file=sys.stderr)
    return 0


def ms(us) -> str:
    if us >= 1_000_000:
        return f"{us / 1e6:.2f} s"
    if us >= 10_000:
        return f"{us / 1e3:.0f} ms"
    return f"{us / 1e3:.2f} ms"


def num(x, digits=0) -> str:
    return f"{x:,.{digits}f}"


def mib(kib) -> str:
    return f"{kib / 1024:.1f}"


def lat(r: dict, key: str) -> str:
    """A latency percentile of a run, or – when no request completed (wrk has none)."""
    return ms(r["latency_us"][key]) if r["requests"] else "–"


def median_or_none(values):
    values = list(values)
    return statistics.median(values) if values else None


def per_unit(case: str, r: dict) -> str:
    """Server CPU per unit of work: µs per request (small), seconds per GB sent (big)."""
    return f"{r['cpu_us_per_req']:.0f}" if case == "small" else f"{r['cpu_s_per_gb']:.2f}"


def cmd_report(a) -> int:
    rows = [json.loads(line) for line in open(a.results, encoding="utf-8") if line.strip()]
    info = json.load(open(a.info, encoding="utf-8"))
    out = []
    w = out.append
    w(f"### `{info['command']}`, {info['date']}, plikt {info['plikt']}\n")
    w(f"- machine: {info['machine']}; kernel {info['kernel']}; {info['nginx']}; {info['wrk']}")
    w(f"- CPUs: {info['cpus']}")
    w(f"- load average {info['load']}; steal over the whole benchmark {info['steal']}")
    w("")
    problems = []
    summary = []
    for case in ("small", "big"):
        cr = [r for r in rows if r["case"] == case]
        if not cr:
            continue
        p = info["cases"][case]
        w(f"#### {CASE_TITLE[case]}: {p['desc']}\n")
        w(f"`{p['wrk']}`\n")
        unit = "CPU µs/request" if case == "small" else "CPU s/GB"
        w(f"| run | time (UTC) | server | requests/s | MB/s | latency p50 | p99 | requests | errors | server CPU s | {unit} | peak RSS MiB | threads | wrk CPU s | steal s | CPU pressure % | load |")
        w("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in cr:
            err = r["errors_total"]
            if err:
                problems.append(f"{case} {r['server']} run {r['run']}: errors {r['errors']}")
            w(f"| {r['run']} | {r['time']} | {r['server']} | {num(r['rps'], 0 if case == 'small' else 2)} | {num(r['mbps'], 1)} | "
              f"{lat(r, 'p50')} | {lat(r, 'p99')} | {num(r['requests'])} | "
              f"{err} | {r.get('cpu_s', 0):.1f} | {per_unit(case, r)} | {mib(r.get('rss_kib', 0))} | "
              f"{r.get('threads', '')} | {r.get('wrk_cpu_s', '')} | {r.get('steal_s', '')} | {r.get('cpu_pressure', '')} | {r.get('load', '')} |")
        w("")
        med = {}
        for srv in ("plikt", "nginx"):
            sr = [r for r in cr if r["server"] == srv]
            if not sr:
                continue
            med[srv] = {
                "n": len(sr),
                "rps": statistics.median(r["rps"] for r in sr),
                "mbps": statistics.median(r["mbps"] for r in sr),
                "p50": median_or_none(r["latency_us"]["p50"] for r in sr if r["requests"]),
                "p99": median_or_none(r["latency_us"]["p99"] for r in sr if r["requests"]),
                "cpu": statistics.median(r["cpu_us_per_req"] for r in sr),
                "cpu_gb": statistics.median(r["cpu_s_per_gb"] for r in sr),
                "rss": max(r.get("rss_kib", 0) for r in sr),
                "rss_med": statistics.median(r.get("rss_kib", 0) for r in sr),
            }
        w(f"| server | runs | median requests/s | median MB/s | median p50 | median p99 | median {unit} | peak RSS MiB (median, max) |")
        w("|---|---:|---:|---:|---:|---:|---:|---:|")
        for srv, m in med.items():
            cpu = f"{m['cpu']:.0f}" if case == "small" else f"{m['cpu_gb']:.2f}"
            w(f"| {srv} | {m['n']} | {num(m['rps'], 0 if case == 'small' else 2)} | {num(m['mbps'], 1)} | "
              f"{ms(m['p50']) if m['p50'] is not None else '–'} | {ms(m['p99']) if m['p99'] is not None else '–'} | {cpu} | {mib(m['rss_med'])}, {mib(m['rss'])} |")
        w("")
        if "plikt" in med and "nginx" in med:
            key, target, label = TARGETS[case]
            ratio = med["plikt"][key] / med["nginx"][key] if med["nginx"][key] else float("nan")
            pairs = []
            for run in sorted({r["run"] for r in cr}):
                pr = [r for r in cr if r["run"] == run and r["server"] == "plikt"]
                nr = [r for r in cr if r["run"] == run and r["server"] == "nginx"]
                if pr and nr and nr[0][key]:
                    pairs.append(f"{pr[0][key] / nr[0][key]:.2f}")
            met = "**met**" if ratio >= target else "**missed**"
            w(f"plikt / nginx, {label} (medians): **{ratio:.2f}** (target ≥ {target:.2f}: {met}); "
              f"per run: {', '.join(pairs)}. plikt's peak RSS: {mib(med['plikt']['rss'])} MiB "
              f"(largest of {med['plikt']['n']} runs).\n")
            summary.append((CASE_TITLE[case], label, med["plikt"][key], med["nginx"][key], ratio,
                            target, met, med["plikt"]["rss"]))
    if summary:
        w("#### Summary\n")
        w("| case | measure | plikt (median) | nginx (median) | plikt / nginx | target | | plikt peak RSS |")
        w("|---|---|---:|---:|---:|---:|---|---:|")
        for title, label, pv, nv, ratio, target, met, rss in summary:
            w(f"| {title} | {label} | {num(pv, 1 if label == 'MB/s' else 0)} | "
              f"{num(nv, 1 if label == 'MB/s' else 0)} | {ratio:.2f} | ≥ {target:.2f} | {met} | {mib(rss)} MiB |")
        w("")
    if problems:
        w("Problems: " + "; ".join(problems) + "\n")
    text = "\n".join(out)
    print(text)
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("row")
    p.add_argument("--out", required=True)
    p.add_argument("--wrk", required=True)
    p.add_argument("fields", nargs="*")
    p = sub.add_parser("report")
    p.add_argument("--results", required=True)
    p.add_argument("--info", required=True)
    p.add_argument("--out")
    a = ap.parse_args()
    return cmd_row(a) if a.cmd == "row" else cmd_report(a)


if __name__ == "__main__":
    sys.exit(main())
