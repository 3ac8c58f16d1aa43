#!/usr/bin/env python3
"""The report of scripts/bench-archive (Markdown on stdout) from its work dir's res/."""
import os, re, sqlite3, statistics, sys
from collections import defaultdict

w = sys.argv[1]
res = os.path.join(w, "res")
SET = "resourcesync/bench/"
CATS = ["resourcelist/", "resourcedump/", "changelist/", "changedump/", "archives", "live"]


def read(name):
    with open(os.path.join(res, name)) as f:
        return f.read()


def timing(run):
    """wall s, CPU s, peak RSS KiB of one run (GNU time -v)."""
    t = read(f"{run}.time")
    wall = re.search(r"Elapsed \(wall clock\) time.*: (\S+)", t).group(1)
    secs = 0.0
    for part in wall.split(":"):
        secs = secs * 60 + float(part)
    user = float(re.search(r"User time \(seconds\): (\S+)", t).group(1))
    sys_ = float(re.search(r"System time \(seconds\): (\S+)", t).group(1))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1))
    return secs, user + sys_, rss


def fsout(run):
    """Bytes written (GNU time's file system outputs, 512-byte blocks)."""
    return int(re.search(r"File system outputs: (\d+)", read(f"{run}.time")).group(1)) * 512


def breakdown(run):
    """plikt's own timings of the public set (ms): records digested, Resource List,
    lists (Resource List and Change Lists at once), Resource Dump, Change Dumps."""
    log = read(f"{run}.log")
    out = {}
    m = re.search(r"metadata records digested.*?records=(\d+).*?ms=(\d+)", log)
    if m:
        out["digest"] = int(m.group(2))
    for line in log.splitlines():
        if "gratis" not in line:
            continue
        if "resource list written" in line:
            out["rl"] = int(re.search(r"\bms=(\d+)", line).group(1))
        if "set published" in line:
            for k, f in [("lists", "lists_ms"), ("rd", "resource_dump_ms"), ("cd", "change_dump_ms")]:
                out[k] = int(re.search(rf"\b{f}=(\d+)", line).group(1))
    return out


def files(name):
    out = {}
    for line in read(f"{name}.files").splitlines():
        p, s = line.rsplit("\t", 1)
        out[p] = int(s)
    return out


def du(name):
    return {k: int(v) for k, v in (l.split("\t") for l in read(f"{name}.du").splitlines())}


def cat(path):
    if not path.startswith(SET) or path.startswith(SET + "restricted/"):
        return "other"
    rest = path[len(SET):]
    if "-archive" in rest.split("/")[0]:
        return "archives"
    if "/" in rest:
        return rest.split("/")[0] + "/"
    if rest in ("resourcelist.xml", "resourcedump.xml", "changelist.xml", "changedump.xml"):
        return "live"
    return "other"


def mb(b):
    return f"{b / 1e6:,.1f} MB" if abs(b) >= 1e6 else f"{b / 1e3:,.1f} kB" if abs(b) >= 1e3 else f"{b:,} B"


steps = [l.split() for l in read("steps").splitlines()]
steps = [(s[0], f"{s[1]} {s[2]}", int(s[3])) for s in steps]
params = dict(kv.split("=") for kv in read("params").split())
n = int(params["N"])
new = int(params["NEW"])
day_of = {name: when.split()[0] for name, when, _ in steps}
what = {
    "day1": "full publish: every list and dump from scratch (the first snapshots)",
    "day2": f"{new:,} new deposits; a new day's snapshots",
    "day3": f"{new:,} new deposits; a new day's snapshots, day 2 closes",
    "day3same": f"{new:,} more the same afternoon; second publish of the day (no new snapshot); runs alternate with day 3's",
    "day4": "no change; day 3 closes",
    "day4u": f"instead of day 4: {int(params.get('UPDATES', 0)):,} deposits spread over the collection updated; a new day's snapshots",
    "day4s": "instead of day 4: one deposit in the middle of the collection leaves the public set (a restricted version); a new day's snapshots",
}
size_after = {"day1": n, "day2": n + new, "day3": n + 2 * new, "day3same": n + 3 * new, "day4": n + 2 * new, "day4u": n + 2 * new, "day4s": n + 2 * new - 1}

print(f"## Results: one run of `N={n} scripts/bench-archive`, commit {read('commit').split()[0]}"
      f"{' (src modified)' if 'modified' in read('commit') else ''}, {read('started').strip()} – {read('ended').strip()}")
print()
print(f"Machine: {read('machine').strip()}.")
print()
print(f"Parameters: {read('params').strip()}. Days: " + ", ".join(f"{nm} {wh}" for nm, wh, _ in steps) + " (UTC, faketime).")
print()
d = timing("digest")
print(f"Before day 1, `publish --no-dumps` digesting {n:,} records once: {d[0]:.2f} s wall, {d[1]:.1f} s CPU, "
      f"peak RSS {d[2] / 1024:.0f} MiB (its documents removed; not part of the figures below).")
print()
print("### Time and memory per publish")
print()
print("| day | what | runs (wall s) | median wall | median CPU | peak RSS | Resource List | lists (RL ∥ CL) | Resource Dump | Change Dumps | plikt's summary |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
med = {}
for name, when, runs in steps:
    t = [timing(f"{name}-{r}") for r in range(1, runs + 1)]
    b = [breakdown(f"{name}-{r}") for r in range(1, runs + 1)]
    mw, mc, rss = statistics.median(x[0] for x in t), statistics.median(x[1] for x in t), max(x[2] for x in t)
    mbk = {k: statistics.median(x.get(k, 0) for x in b) / 1000 for k in ["rl", "lists", "rd", "cd"]}
    med[name] = (mw, mc, rss, mbk)
    summary = read(f"{name}-{runs}.out").strip()
    summary = re.sub(r" \(under [^)]*\)", "", summary.replace("published ", ""))
    print(f"| {name} | {what.get(name, '')} | {', '.join(f'{x[0]:.2f}' for x in t)} | **{mw:.2f} s** | {mc:.1f} s | "
          f"{rss / 1024:.0f} MiB | {mbk['rl']:.2f} s | {mbk['lists']:.2f} s | {mbk['rd']:.2f} s | {mbk['cd']:.2f} s | {summary} |")
print()
print("The four right-hand time columns are plikt's own (debug log, the public set, medians): the Resource "
      "List and the Change Lists are written at the same time on two threads (\"lists\" is both); the dumps after.")
print()
print("### Bytes each publish added under `data_dir/www/` (du -sb after − before; files added/removed)")
print()
print("Folders of the public set `resourcesync/bench/`; archives: the four `*-archive.xml` (and parts); live: "
      "`resourcelist.xml`, `resourcedump.xml`, `changelist.xml` (the open days), `changedump.xml`; other: the rest "
      "(Source Descriptions, Capability Lists, the empty restricted set, stamps).")
print()
print("| day | " + " | ".join(CATS) + " | other | total www | files +/− |")
print("|---|" + "---:|" * (len(CATS) + 3))
added = {}
for name, when, runs in steps:
    b, a = du(f"{name}-before"), du(f"{name}-after")
    fb, fa = files(f"{name}-before"), files(f"{name}-after")
    delta = {c: a.get(c, 0) - b.get(c, 0) for c in CATS + ["www"]}
    delta["other"] = delta["www"] - sum(delta[c] for c in CATS)
    added[name] = (delta, fb, fa)
    plus = sum(1 for p in fa if p not in fb)
    minus = sum(1 for p in fb if p not in fa)
    print(f"| {name} | " + " | ".join(mb(delta[c]) for c in CATS) + f" | {mb(delta['other'])} | **{mb(delta['www'])}** | +{plus:,} / −{minus:,} |")
print()
# What the documents hold after each step.
final = files("day4-after")
by = defaultdict(lambda: [0, 0])
for p, s in final.items():
    by[cat(p)][0] += s
    by[cat(p)][1] += 1
print("After day 4 (file bytes, hidden sidecars included): " + "; ".join(
    f"{c} {mb(by[c][0])} in {by[c][1]:,} files" for c in CATS + ["other"]) + ".")
print()

print("### Snapshots")
print()
rl, rd = {}, {}
for name, when, runs in steps:
    dday = day_of[name]
    _, fb, fa = added[name]
    # The Resource List snapshot of the day: resourcelist/<day>*.xml and its sidecars.
    snap = {p: s for p, s in fa.items() if p.startswith(SET + "resourcelist/")
            and os.path.basename(p).lstrip(".").startswith(dday)}
    new_rl = {p: s for p, s in snap.items() if fb.get(p) != s or p not in fb}
    docs = [p for p in snap if p.endswith(".xml")]
    rl[name] = (sum(snap.values()), len(docs), sum(new_rl.values()), len([p for p in new_rl if p.endswith(".xml")]))
    # The Resource Dump snapshot: resourcedump/<day>.xml (+ sidecars), new packages.
    rdd = SET + "resourcedump/"
    doc = {p: s for p, s in fa.items() if p.startswith(rdd) and os.path.basename(p).lstrip(".").startswith(dday)}
    pk_new = {p: s for p, s in fa.items() if p.startswith(rdd) and p not in fb and p not in doc}
    pk_gone = {p: s for p, s in fb.items() if p.startswith(rdd) and p not in fa}
    zips = [p for p in pk_new if p.endswith(".zip")]
    rd[name] = (sum(doc.values()), sum(pk_new.values()), len(zips), sum(s for p, s in pk_new.items() if p.endswith(".zip")), len([p for p in pk_gone if p.endswith(".zip")]))
print("| day | files in the set | Resource List snapshot of the day (documents) | of it written by this publish | per file | Resource Dump document (+ sidecars) | new packages (ZIP + manifest + sidecar) | packages removed |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for name, when, runs in steps:
    t, docs, nb, nd = rl[name]
    dd, pb, pz, pzb, gone = rd[name]
    k = size_after[name]
    print(f"| {name} | {k:,} | {mb(t)} ({docs}) | {mb(nb)} ({nd}) | {t / k:,.0f} B | {mb(dd)} | {mb(pb)} ({pz} ZIP, {mb(pzb)}) | {gone} |")
print()
# Packages: what a file costs in a dump package.
zips = {p: s for p, s in final.items() if p.startswith(SET + "resourcedump/") and p.endswith(".zip")}
mans = {p: s for p, s in final.items() if p.startswith(SET + "resourcedump/") and p.endswith("-manifest.xml")}
cz = {p: s for p, s in final.items() if p.startswith(SET + "changedump/") and p.endswith(".zip")}
cm = {p: s for p, s in final.items() if p.startswith(SET + "changedump/") and p.endswith("-manifest.xml")}
db = sqlite3.connect(os.path.join(w, "data", "catalog.sqlite"))
rec_len = db.execute("SELECT avg(length) FROM record_digests").fetchone()[0]
blob_len = db.execute("SELECT avg(length) FROM files").fetchone()[0]
files_now = db.execute("SELECT count(*) FROM files").fetchone()[0]
print(f"Packages after day 4: Resource Dump {len(zips)} ZIP, {mb(sum(zips.values()))} (+ {mb(sum(mans.values()))} manifest copies beside) "
      f"for the {files_now:,} files of the day-4 set and the packages kept for earlier snapshots; Change Dumps {len(cz)} ZIP, "
      f"{mb(sum(cz.values()))} (+ {mb(sum(cm.values()))}). Content per file: {blob_len:.0f} B of file + {rec_len:.0f} B of metadata record.")
if final:
    day1_zips = {p: s for p, s in files("day1-after").items() if p.startswith(SET + "resourcedump/") and p.endswith(".zip")}
    day1_mans = {p: s for p, s in files("day1-after").items() if p.startswith(SET + "resourcedump/") and p.endswith("-manifest.xml")}
    per = (sum(day1_zips.values()) + sum(day1_mans.values())) / n
    print(f"Day 1's Resource Dump: {len(day1_zips)} packages, {mb(sum(day1_zips.values()))} + {mb(sum(day1_mans.values()))} manifests = "
          f"{per:,.0f} B per file, of which {blob_len + rec_len:,.0f} B content and {per - blob_len - rec_len:,.0f} B plikt's own "
          f"(ZIP headers, the manifest entries inside and beside).")
print()
# Archives.
arch = {p: s for p, s in final.items() if cat(p) == "archives"}
www = os.path.join(w, "data", "www")
print("Archives after day 4:")
print()
print("| archive | entries | bytes | per entry |")
print("|---|---:|---:|---:|")
for p in sorted(arch):
    if not p.endswith(".xml"):
        continue
    with open(os.path.join(www, p)) as f:
        text = f.read()
    entries = text.count("<url>")
    per = ""
    if entries > 1:
        empty = len(re.sub(r"<url>.*?</url>\s*", "", text, flags=re.S))
        per = f"{(len(text) - empty) / entries:,.0f} B"
    print(f"| {p[len(SET):]} | {entries} | {arch[p]:,} | {per} |")
print()

print("### Unit costs")
print()
k2 = size_after["day2"]
t2 = rl["day2"][0]
print(f"* One Resource List snapshot: {mb(t2)} for {k2:,} files = **{t2 / k2 * 1e6 / 1e9:.2f} GB per million files** "
      f"({t2 / k2:,.0f} B per file: its entry and its record's). Written whole on every day the set changes "
      f"(day 2: {rl['day2'][3]} documents written of {rl['day2'][1]}; day 3' the same day: {rl['day3same'][3]} of {rl['day3same'][1]}).")
for nm in ["day2", "day3"]:
    dd, pb, pz, pzb, gone = rd[nm]
    print(f"* One Resource Dump snapshot, {new:,} files changed ({nm}): document {mb(dd)} + new packages {mb(pb)} ({pz} ZIP) = "
          f"**{mb(dd + pb)}**; the document is {dd / size_after[nm] * 1e6 / 1e3:,.1f} kB per million files.")
if "day4u" in rd:
    dd, pb, pz, pzb, gone = rd["day4u"]
    print(f"* One Resource Dump snapshot, {int(params['UPDATES']):,} deposits updated across the collection (day4u): document {mb(dd)} + "
          f"new packages {mb(pb)} ({pz} ZIP) = **{mb(dd + pb)}**; "
          f"the publish took {med['day4u'][0]:.2f} s (Resource Dump {med['day4u'][3]['rd']:.2f} s).")
if "day4s" in rd:
    dd, pb, pz, pzb, gone = rd["day4s"]
    print(f"* One Resource Dump snapshot, one deposit in the middle leaving the public set (day4s): document {mb(dd)} + "
          f"new packages {mb(pb)} ({pz} ZIP) = **{mb(dd + pb)}**; "
          f"the publish took {med['day4s'][0]:.2f} s (Resource Dump {med['day4s'][3]['rd']:.2f} s).")
for nm in ["day2", "day3"]:
    print(f"* Everything {nm}'s publish added: {mb(added[nm][0]['www'])}.")
mw3, mw3s = med["day3"][0], med["day3same"][0]
pairs = [timing(f"day3-{r}")[0] - timing(f"day3same-{r}")[0] for r in range(1, dict((a, c) for a, _, c in steps)["day3"] + 1)]
print(f"* Day 3 − day 3' per pair of alternating runs (wall s): {', '.join(f'{x:+.2f}' for x in pairs)}; median {statistics.median(pairs):+.2f} s. "
      f"Bytes the two wrote (GNU time's file system outputs, median): day 3 {statistics.median(fsout(f'day3-{r}') for r in range(1, len(pairs) + 1)) / 1e9:.2f} GB, "
      f"day 3' {statistics.median(fsout(f'day3same-{r}') for r in range(1, len(pairs) + 1)) / 1e9:.2f} GB.")
print(f"* Time a day's snapshot adds: day 3 {mw3:.2f} s − day 3' (same day, no new snapshot) {mw3s:.2f} s = **{mw3 - mw3s:+.2f} s** "
      f"(medians; Resource List {med['day3'][3]['rl']:.2f} s vs {med['day3same'][3]['rl']:.2f} s, "
      f"Resource Dump {med['day3'][3]['rd']:.2f} s vs {med['day3same'][3]['rd']:.2f} s; day 3 also closes day 2: "
      f"Change Dumps {med['day3'][3]['cd']:.2f} s).")
tot = sum(arch.values())
print(f"* The archives themselves: {mb(tot)} after 4 days ({len(arch)} files).")
