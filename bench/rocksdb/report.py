#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""report.py: turn one bench/run work directory into the "## RocksDB under compaction"
section of one run's page under docs/bench/, with one latency-CDF SVG per variant drawn by gnuplot
(bench/common/cdf.gp). It parses db_bench's output (reader percentiles and histogram, the writer's
keys, stall time, compaction bytes from rocksdb.stats), `iotier lat` JSON (latency per
I/O class at the device) and `iotier check` JSON (bytes per tier by arrival class), takes
medians and min-max over the repetitions, checks the issue's targets and writes the
section, replacing only that section of the file. Everything quoted comes from this one
run; nothing is carried over from an earlier one.

A sustained run (bench/run --sustained) writes "## RocksDB under compaction, sustained"
instead, with its phases, compaction debt, issue 12's goals and the frontier (the parts in
bench/rocksdb/sustained.py). --compare writes two sustained runs into that section side by side,
with whether they agree: the reproducibility issue 11 asks for.

usage: report.py WORKDIR [--write PAGE.md --svg-dir DIR]
       report.py --compare WORKDIR1 WORKDIR2 [--write PAGE.md --svg-dir DIR]
       report.py --sustains DB_BENCH.LOG RATE   (the calibration: did untagged keep RATE?)
       report.py --wstar-probe RUNDIR ALONEDIR K RATE SECONDS   (one W* probe held? JSON)
       report.py --wstar-next PROBES.JSONL      (the W* search's next rate, or nothing)
"""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys

from frontier import frontier, points_from_summary, static, svg as frontier_svg
import sustained
import physical

HERE = os.path.dirname(os.path.abspath(__file__))
HEADING = "## RocksDB under compaction"
SUSTAINED_HEADING = "## RocksDB under compaction, sustained"

# id -> (label, what it is, is an iotier variant)
VARIANTS = {
    "alone": ("readrandom alone", "no writer, auto-compaction off: the floor", False),
    "untagged": ("untagged", "readwhilewriting, nothing changed", False),
    "rocksdb-prio": ("RocksDB --enable_io_prio", "RocksDB lowers its own pool threads to idle", False),
    "rocksdb-auto": ("RocksDB auto-tuned rate limiter", "RocksDB's rate limiter with `--rate_limiter_auto_tuned --rate_limit_bg_reads`, its ceiling the disk's bandwidth: the shipped adaptive baseline", False),
    "ionice": ("ionice -c3 (whole process)", "every thread idle, the reader too", False),
    "low": ("iotier low=rocksdb:low*", "compaction threads idle", True),
    "low-high": ("iotier low=rocksdb:low*,rocksdb:high*", "compaction and flush idle", True),
    "aging": ("iotier low, prio_aging_expire 1 s", "as low, mq-deadline ages idle requests after 1 s instead of 10 s", True),
    "bfq-untagged": ("untagged, bfq", "reference for the bfq variants", False),
    "bfq-be7": ("iotier low be:7, bfq", "compaction at best-effort level 7 under bfq", True),
    "bfq-weight": ("iotier low be:7 + cgroup weight, bfq", "compaction threads in a blkio cgroup of weight 10 under bfq", True),
    "low-rate": ("iotier low + rate limit", "compaction idle and all low threads together capped at 16 MiB/s of reads and writes (`--low-rate 16M`)", True),
}
# the sweeps: the same knob at other settings
for _mib in (8, 32, 64, 128):
    VARIANTS[f"low-rate-{_mib}"] = (f"iotier low + rate {_mib} MiB/s", f"as low-rate, capped at {_mib} MiB/s", True)
for _lvl in (5, 6):
    VARIANTS[f"bfq-be{_lvl}"] = (f"iotier low be:{_lvl}, bfq", f"compaction at best-effort level {_lvl} under bfq", True)
for _k, _vid in (("1.5", "adaptive-1.5"), ("2", "adaptive"), ("3", "adaptive-3")):
    VARIANTS[_vid] = (f"iotier adaptive, P99 ≤ {_k}×", "the adaptive low tier: compaction's requests capped "
                      f"and split so that the reader's P99 stays within {_k}× its baseline "
                      f"(`--target 'read.p99<={_k}x'`, with `--debt-log '*/LOG'` where built)", True)


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def rng(xs):
    xs = [x for x in xs if x is not None]
    return (min(xs), max(xs)) if xs else (None, None)


def parse_db_bench(path):
    """Reader percentiles and histogram, reader and writer ops/s, stall, compaction bytes."""
    r = {"hist": []}
    text = open(path, errors="replace").read()
    m = re.search(r"^(readwhilewriting|readrandom)\s*:.*?(\d+) ops/sec\s+([\d.]+) seconds", text, re.M)
    if m:
        r["read_ops"] = int(m.group(2))
        r["seconds"] = float(m.group(3))
    blk = text.split("Microseconds per read:", 1)
    if len(blk) == 2:
        b = blk[1]
        m = re.search(r"Percentiles: P50: ([\d.]+) P75: [\d.]+ P99: ([\d.]+) P99\.9: ([\d.]+)", b)
        if m:
            r["p50"], r["p99"], r["p999"] = (float(x) for x in m.groups())
        # histogram rows up to the first blank line after the dashes
        body = b.split("------------------------------------------------------", 1)
        if len(body) == 2:
            for line in body[1].splitlines()[1:]:
                h = re.match(r"^[\[(]\s*(\d+),\s*(\d+)\s*\]\s+(\d+)\s+[\d.]+%\s+([\d.]+)%", line)
                if not h:
                    if r["hist"]:
                        break
                    continue
                r["hist"].append((int(h.group(2)), float(h.group(4)) / 100))
    m = re.search(r"Cumulative compaction: ([\d.]+) GB write, [\d.]+ MB/s write, ([\d.]+) GB read", text)
    if m:
        r["comp_write_gb"], r["comp_read_gb"] = float(m.group(1)), float(m.group(2))
    m = re.search(r"rocksdb\.number\.keys\.written COUNT : (\d+)", text)
    if m:
        r["keys_written"] = int(m.group(1))
    m = re.search(r"rocksdb\.stall\.micros COUNT : (\d+)", text)
    if m:
        r["stall_s"] = int(m.group(1)) / 1e6
    # L0 files and pending compaction bytes at every stats dump (every 10 s in the
    # sustained run, and the final `stats`)
    r["l0_series"], r["pending_series"] = sustained.debt_series(text)
    r["interval_stalls"] = sustained.interval_stalls(text)
    for k, xs in (("l0", r["l0_series"]), ("pending", r["pending_series"])):
        if xs:
            r[k + "_max"], r[k + "_mean"] = max(xs), sum(xs) / len(xs)
    m = re.search(r"Cumulative stall: (\d+):(\d+):([\d.]+) H:M:S, ([\d.]+) percent", text)
    if m:
        r["stall_cum_s"] = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
    return r


def parse_lat(path, reader_class):
    """The reader's class row from `iotier lat --by class --format json`."""
    try:
        d = json.load(open(path))
    except (OSError, ValueError):
        return {}
    rows = [x for x in d.get("rows", []) if x.get("op") == "read"]
    # class none and be are the same to mq-deadline and bfq; take whichever carried more
    want = [x for x in rows if x.get("class") == reader_class] if reader_class == "idle" else \
        sorted([x for x in rows if x.get("class") in ("none", "be")], key=lambda x: -x["count"])[:1]
    if not want:
        return {}
    lat = want[0]["lat_ns"]
    out = {"lat_p50": lat["p50"] / 1e3, "lat_p99": lat["p99"] / 1e3, "lat_p999": lat["p999"] / 1e3,
           "lat_class": want[0]["class"]}
    other = [x for x in rows if x is not want[0]]
    out["other_read_bytes"] = sum(x["bytes"] for x in other)
    return out


def parse_check(path):
    """Low-tier bytes by arrival class, its leaks, from `iotier check --json`."""
    try:
        d = json.load(open(path))
    except (OSError, ValueError):
        return {}
    tiers = d.get("tiers", d)
    low = tiers.get("low")
    if not isinstance(low, dict):
        return {}
    by_class = {}
    for op in low.get("ops", {}).values():
        for cls, cell in op.get("classes", {}).items():
            by_class[cls] = by_class.get(cls, 0) + cell.get("bytes", 0)
    out = {"low_bytes": low.get("bytes"), "low_by_class": by_class,
           "low_leak_bytes": low.get("leak_bytes")}
    # Compaction's device bytes, whatever tier the variant puts it in: the rows of threads
    # named rocksdb:low, read and written, including the writeback of their dirty pages that
    # check attributes back to them. Unlike RocksDB's own counter, which only counts finished
    # compaction jobs, this counts the work done during the run.
    rows = d.get("threads", [])
    comp = [r for r in rows if str(r.get("thread", "")).startswith("rocksdb:low")]
    if "threads" in d:
        out["comp_dev_gib"] = sum(r.get("bytes", 0) for r in comp) / 2**30
        out["comp_wb_gib"] = sum(r.get("bytes", 0) for r in comp
                                 if r.get("cause") == "writeback") / 2**30
    # the reader's block latency: reads of the default tier (no rocksdb:* thread)
    reads = tiers.get("default", {}).get("ops", {}).get("read", {}).get("classes", {})
    if reads:
        c = max(reads.values(), key=lambda c: c.get("count", 0))
        out.update(fg_p50=c.get("p50_ns", 0) / 1e3, fg_p99=c.get("p99_ns", 0) / 1e3,
                   fg_p999=c.get("p99.9_ns", 0) / 1e3)
    return out


def load(work):
    meta = json.load(open(os.path.join(work, "meta.json")))
    runs, na = {}, {}
    for d in sorted(glob.glob(os.path.join(work, "runs", "*"))):
        vid, rep = os.path.basename(d).rsplit(".", 1)
        if rep == "na":
            na[vid] = open(os.path.join(d, "why")).read().strip()
            continue
        r = parse_db_bench(os.path.join(d, "db_bench.log"))
        r["rep"] = int(rep)
        r["rc"] = int(open(os.path.join(d, "rc")).read().strip() or 1)
        t0, t1 = (float(x) for x in open(os.path.join(d, "wall")).read().split())
        r["wall_s"] = t1 - t0
        r.update(parse_lat(os.path.join(d, "lat.json"), "idle" if vid.startswith("ionice") else "be"))
        r.update(parse_check(os.path.join(d, "check.json")))
        secs = r.get("seconds") or meta["seconds"]
        if "keys_written" in r:
            r["write_ops"] = r["keys_written"] / secs
        if "stall_s" in r:
            r["stall_pct"] = 100 * r["stall_s"] / secs
        r["comp_gb"] = r.get("comp_write_gb")
        if "keys_written" in r:
            r["writer_mib_s"] = r["keys_written"] * (16384 + 16) / secs / 2**20
        off = sustained.off_compaction(os.path.join(d, "burst.log"), os.path.join(d, "low-io.log"), t1)
        if off:
            r["off_mib_s"] = off["off_bps"] / 2**20 if off["off_bps"] is not None else None
            r["on_mib_s"] = off["on_bps"] / 2**20 if off["on_bps"] is not None else None
        r.update(interval_figures(d, r, secs))
        comp = r.get("comp_dev_gib")
        r["comp_mib_s"] = comp * 1024 / secs if comp is not None else (
            r["comp_gb"] * 1e9 / 2**20 / secs if r.get("comp_gb") is not None else None)
        runs.setdefault(vid, []).append(r)
    return meta, runs, na


def interval_figures(d, r, secs):
    """The per-interval view of one run (issue 22): the reader's P99 in every 10 s from
    its sampled reads (reads.log), the slopes of L0 and pending bytes over the stats dumps
    and when the writer would stall. The dumps beyond secs / 10 (the final `stats`, a few
    seconds after the last periodic one) are left out of the slopes."""
    out = {}
    samples = sustained.read_samples(os.path.join(d, "reads.log"))
    if samples:
        out["get_p99s"] = sustained.interval_p99s(samples)
        out["get_p99_all"] = sustained.p99([lat for _, lat in samples])
        out["pread_rate"] = len(samples) / secs
    n = int(secs // sustained.INTERVAL_S)
    l0, pend = (r.get(k, [])[:n] if len(r.get(k, [])) > n >= 3 else r.get(k, [])
                for k in ("l0_series", "pending_series"))
    out["l0_slope"] = sustained.slope_per_min(l0)
    out["pending_slope"] = sustained.slope_per_min(pend)
    out["eta"] = sustained.stall_eta(l0, pend) if l0 else {}
    return out


FIELDS = ["p50", "p99", "p999", "lat_p50", "lat_p99", "lat_p999", "read_ops", "write_ops",
          "stall_s", "stall_pct", "comp_gb", "comp_read_gb", "low_bytes", "low_leak_bytes",
          "fg_p50", "fg_p99", "fg_p999", "comp_dev_gib", "comp_wb_gib", "l0_max", "l0_mean",
          "writer_mib_s", "comp_mib_s", "pending_max", "pending_mean", "off_mib_s", "on_mib_s", "get_p99_all",
          "pread_rate", "l0_slope", "pending_slope"]


def summarize(runs):
    s = {}
    for vid, rs in runs.items():
        ok = [r for r in rs if r["rc"] == 0]
        s[vid] = {"n": len(ok), "failed": len(rs) - len(ok)}
        for f in FIELDS:
            vals = [r.get(f) for r in ok]
            s[vid][f] = med(vals)
            s[vid][f + "_range"] = rng(vals)
        classes = {}
        for r in ok:
            for c, b in r.get("low_by_class", {}).items():
                classes.setdefault(c, []).append(b)
        s[vid]["low_by_class"] = {c: med(v) for c, v in classes.items()}
        s[vid]["lat_class"] = next((r["lat_class"] for r in ok if "lat_class" in r), None)
        first = min(ok, key=lambda r: r["rep"]) if ok else {}
        for k in ("l0_series", "pending_series", "get_p99s", "eta", "interval_stalls"):
            s[vid][k] = first.get(k, [] if k != "eta" else {})
    return s


def fmt_us(x):
    if x is None:
        return "-"
    return f"{x / 1000:.2f} ms" if x >= 1000 else f"{x:.0f} µs"


def cell(s, f, kind="us"):
    v, (lo, hi) = s.get(f), s.get(f + "_range", (None, None))
    if v is None:
        return "-"
    if kind == "us":
        one = fmt_us
    elif kind == "gb":
        def one(x):
            return f"{x:.2f}"
    elif kind == "pct":
        def one(x):
            return f"{x:.1f}%"
    else:
        def one(x):
            return f"{x:.0f}"
    if s["n"] > 1 and lo is not None and lo != hi:
        return f"{one(v)} ({one(lo)}–{one(hi)})"
    return one(v)


def gib(b):
    return f"{b / 2**30:.2f}" if b is not None else "-"


def plot(work, runs, svg_dir, rel_dir, prefix="rocksdb-"):
    """One SVG per variant: every repetition, with alone and untagged (median-P99 run) as
    grey references."""
    os.makedirs(svg_dir, exist_ok=True)
    dat = os.path.join(work, "cdf")
    os.makedirs(dat, exist_ok=True)
    paths = {}

    def write(vid, r):
        p = os.path.join(dat, f"{vid}.{r['rep']}.dat")
        with open(p, "w") as f:
            for bound, frac in r["hist"]:
                f.write(f"{bound} {frac}\n")
        return p

    def median_run(vid):
        ok = [r for r in runs.get(vid, []) if r["rc"] == 0 and r["hist"] and "p99" in r]
        if not ok:
            return None
        ok.sort(key=lambda r: r["p99"])
        return ok[len(ok) // 2]

    refs = []
    for ref in ("alone", "untagged"):
        r = median_run(ref)
        if r:
            refs.append((write(ref, r), f"'{VARIANTS[ref][0]} (median run)'"))
    for vid, rs in runs.items():
        mine = [r for r in rs if r["rc"] == 0 and r["hist"]]
        if not mine:
            continue
        files = [f for f, _ in refs if not os.path.basename(f).startswith(vid + ".")]
        labels = [lab for f, lab in refs if not os.path.basename(f).startswith(vid + ".")]
        nrefs = len(files)
        for r in sorted(mine, key=lambda r: r["rep"]):
            files.append(write(vid, r))
            labels.append(f"'{vid} run {r['rep']}'")
        out = os.path.join(svg_dir, f"{prefix}{vid}.svg")
        base, _, phase = vid.partition("~")  # a sustained run's phases: "low~bursty"
        heading = (f"{VARIANTS[base][0]}{', ' + phase + ' reader' if phase else ''}: "
                   f"foreground read latency CDF")
        subprocess.run(["gnuplot", "-e",
                        f"out='{out}'; heading=\"{heading}\"; files='{' '.join(files)}'; "
                        f"labels=\"{' '.join(labels)}\"; refs={nrefs}",
                        os.path.join(HERE, "..", "common", "cdf.gp")], check=True)
        paths[vid] = f"{rel_dir}/{prefix}{vid}.svg"
    return paths


def comp_key(s):
    """The compaction measure the targets use: device bytes from iotier check when every
    variant has them, else RocksDB's finished-job counter."""
    have = [v for v in s.values() if v["n"]]
    if have and all(v.get("comp_dev_gib") is not None for v in have):
        return "comp_dev_gib", "GiB at the device (iotier check)"
    return "comp_gb", "GB written by finished compactions (rocksdb.stats)"


def targets(s):
    """The issue's targets, from the medians. Returns markdown lines."""
    out = []
    key, unit = comp_key(s)
    out.append(f"Compaction is measured as {unit}.")
    out.append("")
    alone = s.get("alone", {}).get("p99")
    untag = s.get("untagged", {}).get(key)
    bfq_untag = s.get("bfq-untagged", {}).get(key)
    cands = []
    for vid, (_, _, is_iotier) in VARIANTS.items():
        v = s.get(vid)
        if not is_iotier or not v or v["n"] == 0 or v.get("p99") is None:
            continue
        base = bfq_untag if vid.startswith("bfq") and bfq_untag else untag
        kept = v[key] / base if base and v.get(key) is not None else None
        ratio = v["p99"] / alone if alone else None
        stall = v.get("stall_pct")
        ok = ratio is not None and ratio <= 2 and kept is not None and kept >= 0.25 and \
            stall is not None and stall <= 10
        cands.append((vid, ratio, kept, stall, ok))
    if not cands or alone is None:
        out.append("- **Target 1** (best iotier variant: read P99 ≤ 2× alone, compaction ≥ 25% of "
                   "untagged bytes, stall ≤ 10%): not measured in this run.")
    else:
        good = [c for c in cands if c[4]]
        best = min(good or cands, key=lambda c: c[1])
        vid, ratio, kept, stall, ok = best
        # a run without untagged (--only) has no share to give: say so, do not guess
        share = f"{100 * kept:.0f}% of untagged" if kept is not None else "share unknown (no untagged run)"
        detail = (f"`{vid}`: read P99 {ratio:.2f}× alone ({fmt_us(s[vid]['p99'])} against "
                  f"{fmt_us(alone)}), compaction {share}, writer "
                  f"stall {stall:.1f}% of the run")
        if ok:
            out.append(f"- **Target 1: met** by {detail}.")
        else:
            miss = []
            if ratio > 2:
                miss.append(f"P99 is {ratio / 2:.2f}× the 2× bound")
            if kept is not None and kept < 0.25:
                miss.append(f"compaction is {25 - 100 * kept:.0f} points under 25%")
            if stall is not None and stall > 10:
                miss.append(f"stall is {stall - 10:.1f} points over 10%")
            out.append(f"- **Target 1: missed.** Lowest P99 of any iotier variant: {detail}; "
                       + "; ".join(miss) + ".")
        every = [f"`{c[0]}` {c[1]:.2f}× alone, {100 * c[2]:.0f}% compaction, {c[3]:.1f}% stall"
                 for c in cands if c[2] is not None and c[3] is not None]
        if every:
            out.append("  Every iotier variant: " + "; ".join(every) + ".")
    rp = s.get("rocksdb-prio")
    if rp and rp.get("p99") and rp.get(key) is not None:
        eq = [c for c in cands if s[c[0]].get(key) is not None and
              s[c[0]][key] >= rp[key] and not c[0].startswith("bfq")]
        if eq:
            vid = min(eq, key=lambda c: s[c[0]]["p99"])[0]
            gain = rp["p99"] / s[vid]["p99"]
            verdict = "met" if gain >= 1.5 else "missed"
            out.append(
                f"- **Target 2: {verdict}.** At equal or better compaction "
                f"({s[vid][key]:.2f} against {rp[key]:.2f}), the best mq-deadline iotier "
                f"variant `{vid}` has read P99 {fmt_us(s[vid]['p99'])} against RocksDB's "
                f"--enable_io_prio {fmt_us(rp['p99'])}: {gain:.2f}× better"
                + ("." if gain >= 1.5 else f", {1.5 / gain:.2f}× short of the 1.5× target."))
        else:
            out.append(f"- **Target 2: missed.** No iotier variant on mq-deadline compacted as "
                       f"much as --enable_io_prio ({rp[key]:.2f}), so none qualifies.")
        same = [c[0] for c in cands if c[0] in ("low", "low-high")]
        if same:
            out.append("  Like for like (the same threads at the same class): " + "; ".join(
                f"`{x}` P99 {fmt_us(s[x]['p99'])} ({rp['p99'] / s[x]['p99']:.2f}× "
                f"--enable_io_prio's), compaction {s[x][key]:.2f}" for x in same)
                + f"; --enable_io_prio P99 {fmt_us(rp['p99'])}, compaction {rp[key]:.2f}.")
    else:
        out.append("- **Target 2**: not measured in this run.")
    return out


def knobs(s):
    """The policy knobs this run measured, each against the variant it modifies."""
    key, unit = comp_key(s)
    L = []

    def pair(a, b):
        va, vb = s.get(a), s.get(b)
        if not va or not vb or not va["n"] or not vb["n"] or va.get("p99") is None or \
                vb.get("p99") is None or va.get(key) is None or vb.get(key) is None:
            return None
        return (f"read P99 {fmt_us(va['p99'])} against {fmt_us(vb['p99'])} "
                f"({va['p99'] / vb['p99']:.2f}×), compaction {va[key]:.2f} against {vb[key]:.2f} "
                f"({100 * va[key] / vb[key]:.0f}%), stall {va.get('stall_pct') or 0:.1f}% against "
                f"{vb.get('stall_pct') or 0:.1f}%")
    rows = [
        ("aging", "low", "mq-deadline `prio_aging_expire` 1000 ms instead of the default 10000 ms "
         "(`echo 1000 > /sys/block/DEV/queue/iosched/prio_aging_expire`; iotier never changes "
         "scheduler settings itself): an idle request waits at most 1 s before it is served "
         "ahead of the reader"),
        ("bfq-be7", "bfq-untagged", "`--low-class be:7` under bfq (bfq weighs best-effort levels: "
         "level 7 gets a quarter of the default level 4's share), against untagged under bfq"),
        ("bfq-weight", "bfq-be7", "the compaction threads also moved into a blkio cgroup of weight "
         "10 (`--cgroup v1`), against be:7 alone"),
        ("low-high", "low", "flush (`rocksdb:high*`) demoted as well as compaction"),
    ]
    got = [(a, b, what, pair(a, b)) for a, b, what in rows]
    got = [g for g in got if g[3]]
    if got:
        L += ["### Policy knobs in this run", "",
              f"Each knob against the variant it changes (medians; compaction in {unit}). With "
              "three repetitions on a shared host, a difference smaller than the min–max ranges "
              "in the table above is not a finding.", ""]
        for a, b, what, text in got:
            L.append(f"- {what}: `{a}` against `{b}`: {text}.")
        L.append("")
    return L


def figures(work):
    lines = refdisk_figures(work)
    fm = os.path.join(work, "figures", "fio-model.json")
    if os.path.exists(fm):
        d = json.load(open(fm))
        dd, ii = d["default"], d["idle"]
        lines += [
            "### fio model (same run)",
            "",
            "One fio process, two threads (`thread`): a foreground reader (4 KiB random, QD1, "
            "direct, psync) and a background writer (1 MiB sequential, QD32, libaio, direct) "
            f"whose class is the default, then idle (`prioclass=3`); medians of {d['reps']} "
            f"interleaved rounds, on the same rig (`bench/micro/fio-model`).",
            "",
            "| background class | reader P50 | reader P99 | reader P99.9 | reader IOPS | writer MiB/s |",
            "|---|---|---|---|---|---|",
        ]
        for name, r in (("default", dd), ("idle", ii)):
            lines.append(f"| {name} | {fmt_us(r['p50_us'])} | {fmt_us(r['p99_us'])} | "
                         f"{fmt_us(r['p999_us'])} | {r['read_iops']:.0f} | {r['bg_mib_s']:.1f} |")
        lines += ["", f"Idle background: reader P99 **{d['p99_ratio']:.1f}× better**, the writer "
                  f"keeps **{100 * d['bg_kept']:.0f}%** of its throughput.", ""]
    for name, title in (("shim-cost", "Shim per-call cost"), ("lat-overhead", "Tracer overhead")):
        p = os.path.join(work, "figures", name + ".txt")
        if not os.path.exists(p):
            continue
        text = open(p, errors="replace").read().strip()
        lines += [f"### {title} (same run)", ""]
        if text.startswith("n/a"):
            lines += [f"n/a (not built): bench/micro/{name} is not in this tree.", ""]
        else:
            # from its description and table to the end, without its progress out_lines
            out_lines = text.splitlines()
            start = max(0, len(out_lines) - 14)
            for i in range(len(out_lines) - 1):
                if out_lines[i].startswith("kernel ") or (
                        out_lines[i].startswith("|") and out_lines[i + 1].lstrip("| ").startswith(("-", ":"))):
                    start = i
                    break
            tail = "\n".join(out_lines[start:])
            lines += [f"Summary printed by `bench/micro/{name}` in this run"
                      + (" (fewer, shorter rounds than its own section of this file, which it "
                         "leaves alone)" if name == "shim-cost" else "")
                      + ":", "", "```", tail, "```", ""]
    return lines


def rig_text(meta):
    """The rig paragraph: which disk, and the queue trick that makes priority matter."""
    depths = meta.get("depths", "4 ?").split()
    how = depths[2] if len(depths) > 2 else ""
    # how the driver depth was known: debugfs, the in-flight peak (a kernel without block
    # debugfs), or not at all (said, not hidden)
    checked = {"debugfs": f"driver depth read back from debugfs: {depths[0]}",
               "inflight": f"driver depth {depths[0]}, the peak of `/sys/block/DEV/inflight` under "
                           "16 concurrent reads (this kernel has no block debugfs)",
               "unchecked": "driver depth not checked: no block debugfs, and the in-flight "
                            "probe could not fill the queue"}.get(
        how, f"driver depth read back: {depths[0]}")
    bfq = ("" if meta.get("have_bfq", 1) else
           " This kernel has no bfq: the bfq variants are n/a.")
    where = meta["backing"] if meta.get("disk") else "a file on the host's disk (" + meta["backing"] + ")"
    return ("**Rig.** " + where[0].upper() + where[1:] + ". A disk as it comes accepts 128 "
            "requests at once, so nothing ever waits in its scheduler and no I/O priority can "
            "change anything; `nr_requests` is set to 4 while the scheduler is `none` (the only "
            "time it sets the driver's tag depth), then the scheduler is switched to "
            "`mq-deadline` (or `bfq` for the bfq variants), which keeps the 4 driver tags and "
            f"queues the rest where priority is honoured ({checked}; "
            f"the scheduler's own depth: {depths[1] if len(depths) > 1 else '?'}). ext4 on top, "
            "mounted noatime." + bfq
            + (" The reference disk's speed is the model's, not the host's: its accuracy in this "
               "run is under *Reference disk* below." if meta.get("disk") == "ref" else
               " This disk's speed is the host's: ratios from it do not carry to another machine."))


def contention(s):
    """Untagged P99 over alone: the rig must show contention for any variant to mean much."""
    a, u = s.get("alone"), s.get("untagged")
    if not a or not u or not a.get("p99") or not u.get("p99"):
        return []
    r = u["p99"] / a["p99"]
    return [f"**Contention.** Untagged read P99 is **{r:.1f}×** alone ({fmt_us(u['p99'])} "
            f"against {fmt_us(a['p99'])}): " + ("at least 3×, the rig shows contention." if r >= 3
                                                else "**under 3×: this run shows too little "
                                                     "contention for its ratios to mean much.**"), ""]


def refdisk_figures(work):
    p = os.path.join(work, "figures", "refdisk.json")
    if not os.path.exists(p):
        return []
    d = json.load(open(p))
    m, q, rt = d["model"], d["qd1"], d["roundtrip"]
    L = ["### Reference disk (same run)", "",
         f"Model: {m['lat_us']} µs per request + size ÷ {m['bw'] / 1e6:g} MB/s, {m['channels']} "
         "channel(s), FIFO (`bench/refdisk/refdisk measure`, fio on the raw loop device before mkfs; "
         "docs/refdisk.md).", "",
         "| measure | model | measured | measured ÷ model |", "|---|---|---|---|",
         f"| FUSE round trip, model off, QD1 4 KiB read (mean / P50) | 0 | {fmt_us(rt['mean_us'])} / "
         f"{fmt_us(rt['p50_us'])} | - |",
         f"| QD1 4 KiB read, mean | {fmt_us(q['model_us'])} | {fmt_us(q['mean_us'])} | "
         f"{q['mean_us'] / q['model_us']:.2f} |",
         f"| QD1 4 KiB read, P50 | {fmt_us(q['model_us'])} | {fmt_us(q['p50_us'])} | "
         f"{q['p50_us'] / q['model_us']:.2f} |"]
    for op in ("write", "read"):
        x = d["seq" + op]
        L.append(f"| sequential 1 MiB {op}s, QD8 ({x['request_kib']:.0f} KiB requests at the "
                 f"daemon), MB/s | {x['model_mb_s']:.0f} | {x['mb_s']:.0f} | "
                 f"{x['mb_s'] / x['model_mb_s']:.2f} |")
    L += ["", f"The model's sleeps (SCHED_FIFO) woke {d['late_mean_us']:.1f} µs late on average, "
          f"{fmt_us(d['late_max_us'])} at most.", ""]
    return L


def render(meta, s, na, svgs):
    L = [SUSTAINED_HEADING if meta.get("sustained") else HEADING, "",
         "<!-- generated by bench/run; edit bench/rocksdb/report.py, not this section -->", ""]
    L += [
        f"Run {meta['started']} – "
        + (f"{meta['finished']}" if meta.get("finished") else
           "**interrupted** (stopped before its end, kept with `--keep`: what ran is reported, "
           "the rest is missing)")
        + f", commit {meta['commit']}, kernel "
        f"{meta['kernel']}, {meta['cpus']} CPUs, db_bench {meta['db_bench']}; the whole "
        f"`bench/run` took {meta.get('elapsed_s', 0) / 60:.1f} min"
        + (f"; load average {meta['load_start']} at the start, {meta['load_end']} at the end "
           "(other work shares this host and its disk)" if meta.get("load_start") else "")
        + (" — **quick run (smoke, one repetition): not for quoting**" if meta["quick"] else "") + ".",
        "",
        rig_text(meta),
        "",
        f"**Workload.** db_bench `readwhilewriting` on a DB of {meta['keys']} keys × 16 KiB "
        "(no compression, bloom bits 10, write buffer and target file 16 MiB, level base 64 MiB, "
        "4 background jobs: three `rocksdb:low` compaction threads and one `rocksdb:high` flush "
        "thread, WAL off, seed 1), filled once and copied afresh for every run, its pages "
        "dropped from the cache (`POSIX_FADV_DONTNEED`) before the run. One reader thread with "
        "direct reads; one writer capped at "
        f"{meta['rate'] / 2**20:.0f} MiB/s (`--benchmark_write_rate_limit`: uncapped, db_bench "
        "is CPU-bound on 2 cores and no I/O priority can help). "
        f"{meta['seconds']} s per run, {meta['reps']} repetition(s) of every variant"
        + (f" (the reader alone {s['alone']['n']} times, first, in the middle and last: one "
           "short run of it can land in a burst of CPU noise, so its median is the baseline)"
           if meta["quick"] and s.get("alone", {}).get("n", 0) > 1 else "")
        + ", the variants in a different order each round. Compaction and flush writes are buffered "
        "(RocksDB's default); they reach the disk from the thread's own `fsync`/`sync_file_range` "
        "and so mostly carry its class (see the check column).",
        "",
        "Cells are the median over the repetitions, with min–max in parentheses. "
        "*db_bench* percentiles are the reader's `Get` latency as db_bench measures it; "
        "*iotier lat* percentiles are the block-layer read latency (queue insert to completion) "
        "of the reader's I/O class on the rig, from `iotier lat --by class`: in the variants "
        "where compaction keeps the reader's class (untagged, bfq-untagged) that row also holds "
        "compaction's reads, and so does it under bfq with compaction at be:7 (the reader's own "
        "block latency is in the check table below). *Compaction GB (RocksDB)* is "
        "rocksdb.stats' `Cumulative compaction` write GB, which counts only compaction jobs "
        "that finished during the run (a long job at idle counts zero until it ends); "
        "*compaction GiB (device)* is what the `rocksdb:low` threads read and wrote at the rig, "
        "their writeback included, from `iotier check`: the work done. *Stall* is "
        "`rocksdb.stall.micros` over the run.",
        "",
    ]
    L += contention(s)
    hdr = ("| variant | db_bench P50 | P99 | P99.9 | iotier lat P50 | P99 | P99.9 | reads/s | "
           "writer ops/s | stall | compaction GB (RocksDB) | compaction GiB (device) |")
    L += [hdr, "|" + "---|" * 12]
    for vid, (label, _, _) in VARIANTS.items():
        if vid not in meta["variants"].split():
            continue
        if vid in na:
            L.append(f"| {label} | {na[vid]} |" + " |" * 10)
            continue
        v = s.get(vid)
        if not v or v["n"] == 0:
            L.append(f"| {label} | failed (see the work directory) |" + " |" * 10)
            continue
        latcols = (f"{cell(v, 'lat_p50')} | {cell(v, 'lat_p99')} | {cell(v, 'lat_p999')}"
                   if v.get("lat_p99") is not None else
                   ("n/a (not built) | | " if not meta["have_lat"] else "- | - | -"))
        L.append(f"| {label} | {cell(v, 'p50')} | **{cell(v, 'p99')}** | {cell(v, 'p999')} | "
                 f"{latcols} | {cell(v, 'read_ops', 'n')} | {cell(v, 'write_ops', 'n')} | "
                 f"{cell(v, 'stall_pct', 'pct')} | {cell(v, 'comp_gb', 'gb')} | "
                 f"{cell(v, 'comp_dev_gib', 'gb')} |")
    L += ["", "What each variant is:", ""]
    for vid, (label, what, _) in VARIANTS.items():
        if vid in meta["variants"].split():
            L.append(f"- `{vid}` ({label}): {what}.")
    L += [""]
    # check columns
    L += ["**Compaction bytes per tier, from `iotier check`** (tier `low` = the threads the "
          "variant's low rules name, `rocksdb:low*`, plus `rocksdb:high*` for low-high; bytes "
          "read and written at the rig, by the class they arrived with; leak = low-tier bytes "
          "that reached the disk at another class than the shim gave it, e.g. through the flusher; "
          "`rocksdb:high*` is its own tier otherwise). For variants that do not use iotier, check "
          "classifies by the same rules without tagging anything (it is given a library db_bench loads anyway, libpthread, as the shim). "
          "*Reader block* percentiles are the block-layer latency of the default tier's reads "
          "(the reader thread's alone, unlike the iotier lat columns).", ""]
    if not meta["have_check"]:
        L += ["n/a (not built): `iotier check` is not in this tree.", ""]
    else:
        L += ["| variant | low tier GiB | at none/be | at idle | leaked | reader block P50 | P99 | P99.9 |",
              "|---|---|---|---|---|---|---|---|"]
        for vid, (label, _, _) in VARIANTS.items():
            v = s.get(vid)
            if vid not in meta["variants"].split() or not v or v["n"] == 0:
                continue
            c = v.get("low_by_class", {})
            L.append(f"| {label} | {gib(v.get('low_bytes'))} | "
                     f"{gib(c.get('none', 0) + c.get('be', 0)) if c else '-'} | "
                     f"{gib(c.get('idle')) if c else '-'} | "
                     f"{gib(v.get('low_leak_bytes')) if VARIANTS[vid][2] else '-'} | "
                     f"{cell(v, 'fg_p50')} | {cell(v, 'fg_p99')} | {cell(v, 'fg_p999')} |")
        L += [""]
    L += ["### Targets (issue 7, section 3)", ""] + targets(s) + [""]
    L += knobs(s)
    if svgs:
        L += ["### Latency CDFs", "",
              "Every repetition of a variant, with the median run of `alone` and `untagged` "
              "dashed grey for reference. The y axis is stretched towards the tail.", ""]
        for vid in VARIANTS:
            if vid in svgs:
                L.append(f"![{VARIANTS[vid][0]}]({svgs[vid]})")
                L.append("")
    return L


def frontier_section(s, svg_dir, rel_dir, name="rocksdb-frontier.svg", heading="### Frontier"):
    """The trade-off of every variant, the static settings' lower-right hull, the adaptive
    points beside it, and the SVG (when writing)."""
    pts = points_from_summary({"summary": s})
    hull = frontier(static(pts))
    if not hull:
        return []
    L = [heading, "",
         "Every variant as one point: compaction as a share of untagged (device GiB from "
         "`iotier check` where built) against read P99 over alone (db_bench, medians, the "
         "steady phase). The line is the lower-right convex hull of the static settings "
         "(`bench/rocksdb/frontier.py`): the best trade-off they reach, alone or by alternating two of "
         "them in time. The adaptive variants (green diamonds) are not part of it.", ""]
    if svg_dir:
        os.makedirs(svg_dir, exist_ok=True)
        open(os.path.join(svg_dir, name), "w").write(frontier_svg(pts, hull))
        L += [f"![frontier]({rel_dir}/{name})", ""]
    L += ["On the static hull, from the least compaction to the most:", ""]
    for share, ratio, vid in hull:
        L.append(f"- `{vid}`: compaction {100 * share:.0f}% of untagged, read P99 {ratio:.2f}× alone")
    L += [""] + sustained.best_static(pts)
    return L


def labels(meta):
    """(id, label) of the variants of a run, in the report's order."""
    ran = meta["variants"].split()
    return [(vid, VARIANTS[vid][0]) for vid in VARIANTS if vid in ran]


def sustained_text(meta):
    """What the sustained run did, in one paragraph."""
    cal = meta.get("calibration") or {}
    bursty = meta.get("bursty_variants", "").split()
    if cal.get("given"):
        lead = (f"Writer at the rate given with `--rate` (no calibration, so that runs to compare "
                f"write alike), starting from the master DB fully compacted, so that every byte "
                f"of compaction debt is the writer's: {meta['rate'] / 2**20:.1f} MiB/s. ")
    else:
        lead = (f"Writer calibrated first: untagged sustained {cal.get('sustained_mib_s', '?')} MiB/s "
                f"without stalls (from 8 MiB/s, doubling while untagged keeps up, then one step "
                f"of 1.5x, or halving down to 1 MiB/s until it does; under 1% stalled and at "
                f"least 90% of the rate achieved), starting from the master DB fully compacted, "
                f"so that every byte of compaction debt is the writer's; every run writes at 60% "
                f"of it, {meta['rate'] / 2**20:.1f} MiB/s. ")
    return lead + sustained_phases_text(meta, bursty)


def sustained_phases_text(meta, bursty):
    """The phases and the columns of a sustained run."""
    return (f"Each phase is {meta['seconds']} s: *steady*, the reader always on; *bursty* (for "
            + ", ".join(f"`{v}`" for v in bursty if v in meta["variants"].split())
            + "), the reader frozen and thawed 10 s each (`bench/rocksdb/burst`, cgroup v1 freezer on "
            "the reader thread alone), its percentiles from its on periods. Latency is over the "
            "reader alone (steady); compaction MiB/s are the `rocksdb:low` threads' device bytes "
            "from `iotier check` over the phase, their share against untagged in the same phase. "
            "*Reader-off compaction* is the `rocksdb:low` threads' bytes (read at the block "
            "layer and dirtied, `/proc` task io, sampled every second by `bench/rocksdb/low-io`) during "
            "the reader's off periods (`bench/rocksdb/burst`'s log) over their length, and its share of "
            "untagged's in its own off periods. L0 files and pending compaction bytes come from "
            "db_bench's `rocksdb.stats` dump every 10 s (`--stats_interval_seconds 10 "
            "--stats_per_interval`); db_bench 7.8 prints no pending-bytes figure there, so it is "
            "RocksDB's own estimate (`EstimateCompactionBytesNeeded`) recomputed from each dump's "
            "level sizes (bench/rocksdb/sustained.py). The whole `bench/run` took "
            f"{meta.get('elapsed_s', 0) / 60:.1f} min (estimated at its start: "
            f"{meta.get('estimate_s', 0) / 60:.0f} min).")


def sustained_section(meta, s):
    """Per variant and reader phase: the reader over alone, compaction, debt, stalls, writer;
    then issue 12's goals."""
    if not meta.get("sustained"):
        return []
    key, _ = comp_key(s)
    pts = points_from_summary({"summary": s})
    return (["### Sustained phases", "", sustained_text(meta), ""]
            + sustained.phase_table(s, labels(meta), key)
            + sustained.interval_table(s, labels(meta), target_k(meta))
            + physical.section(meta, s, labels(meta))
            + (sustained.wstar_section(meta["wstar"], {v: x[0] for v, x in VARIANTS.items()})
               if meta.get("wstar") else [])
            + ["### Goals of issue 12 (this run)", ""] + sustained.goals(s, pts, key))


def target_k(meta):
    """The k of "P99 <= k x alone" the intervals are judged by: --wstar's, else 2."""
    return float((meta.get("wstar") or {}).get("k") or meta.get("wstar_k") or 2)


def probe_figures(d, seconds):
    """One W* probe's run directory: its stall percent and per-interval figures."""
    r = parse_db_bench(os.path.join(d, "db_bench.log"))
    secs = r.get("seconds") or seconds
    r["stall_pct"] = 100 * r["stall_s"] / secs if "stall_s" in r else None
    r.update(interval_figures(d, r, secs))
    return r


def wstar_probe(d, alone_dir, k, rate, seconds):
    """The verdict on one W* probe, as the JSON line bench/run keeps; prints it."""
    r, a = probe_figures(d, seconds), probe_figures(alone_dir, seconds)
    ok, share, why = sustained.wstar_verdict(r.get("get_p99s") or [], a.get("get_p99_all"), k,
                                             r.get("stall_pct"), r.get("l0_slope"))
    rc = int(open(os.path.join(d, "rc")).read().strip() or 1) if os.path.exists(os.path.join(d, "rc")) else 0
    if rc != 0:
        ok, why = False, why + [f"db_bench exit {rc}"]
    out = {"rate": rate, "ok": ok, "share": share, "stall_pct": r.get("stall_pct"),
           "l0_slope": r.get("l0_slope"), "pending_slope": r.get("pending_slope"), "why": why,
           "alone_p99": a.get("get_p99_all")}
    print(json.dumps(out))
    return ok


def read_probes(path):
    try:
        with open(path) as f:
            return [json.loads(x) for x in f if x.strip()]
    except (OSError, ValueError):
        return []


def load_wstar(work):
    """bench/run --wstar's probes (wstar/VARIANT/probes.jsonl), or None."""
    info = os.path.join(work, "wstar", "k")
    if not os.path.exists(info):
        return None
    vs = {}
    for f in sorted(glob.glob(os.path.join(work, "wstar", "*", "probes.jsonl"))):
        vs[os.path.basename(os.path.dirname(f))] = read_probes(f)
    alone = next((p["alone_p99"] for ps in vs.values() for p in ps if p.get("alone_p99")), None)
    end = sustained.read_samples(os.path.join(work, "runs", "alone.2", "reads.log"))
    return {"k": float(open(info).read().strip()), "alone_p99": alone, "variants": vs,
            "alone_p99_end": sustained.p99([lat for _, lat in end]) if end else None}


def sustains(log, rate):
    """The calibration's verdict on one untagged run: did it keep the writer's rate?"""
    r = parse_db_bench(log)
    secs = r.get("seconds") or 1
    got = r.get("keys_written", 0) * (16384 + 16) / secs
    stall = 100 * r.get("stall_s", 0) / secs
    ok = stall < 1 and got >= 0.9 * rate
    print(f"{'sustained' if ok else 'not sustained'}: {got / 2**20:.1f} of {rate / 2**20:.0f} "
          f"MiB/s written, {stall:.1f}% stalled")
    return ok


def differs(a, b, tol=0.25):
    """Two runs' figures differ by more than tol (of the smaller), or only one has it."""
    if a is None or b is None:
        return a is not b
    lo, hi = sorted((abs(a), abs(b)))
    return hi > lo * (1 + tol) if lo > 0 else hi > 0


def run_figures(s, vid, phase):
    """P99 ÷ alone, compaction share, stall %, reader-off share of one phase of one run."""
    key, _ = comp_key(s)
    sfx, ref = ("", "untagged") if phase == "steady" else ("~bursty", "untagged~bursty")
    v, a, u = s.get(vid + sfx) or {}, s.get("alone") or {}, s.get(ref) or {}
    if not v.get("n"):
        return None
    share = sustained.interval_figures(v, a, 2)[0]
    return {"p99 ÷ alone": v["p99"] / a["p99"] if v.get("p99") and a.get("p99") else None,
            "intervals in target": share,
            "L0 slope": v.get("l0_slope"),
            "pending slope": v["pending_slope"] / 2**20 if v.get("pending_slope") is not None else None,
            "compaction share": v[key] / u[key] if v.get(key) is not None and u.get(key) else None,
            "stall %": v.get("stall_pct"),
            "reader-off share": v["off_mib_s"] / u["off_mib_s"]
            if v.get("off_mib_s") is not None and u.get("off_mib_s") else None}


# Figures near zero that count as the same in both runs whatever their ratio: stall under
# 1% in both; L0 within its bound (sustained.L0_BOUND files/min) either way in both; pending
# bytes growing or shrinking under 64 MiB/min in both (at most 4 GiB an hour, against a
# 64 GiB soft limit).
SMALL = {"stall %": 1.0, "L0 slope": sustained.L0_BOUND, "pending slope": 64}


def same_when_small(k, a, b):
    return k in SMALL and max(abs(a), abs(b)) < SMALL[k]


def ranking(s, ids):
    """The variants ordered by steady read P99 over alone, best first."""
    got = [(run_figures(s, v, "steady") or {}).get("p99 ÷ alone") for v in ids]
    return [v for r, v in sorted((r, v) for r, v in zip(got, ids) if r is not None)]


def comparison(runs):
    """Two sustained runs side by side: the same ranking? figures within 25%? Markdown."""
    (m1, s1), (m2, s2) = runs
    # alone is every ratio's denominator (1× by definition): its own P99 is quoted instead
    ids = [v for v, _ in labels(m1) if v in m2["variants"].split() and v != "alone"]
    L = ["### Two runs side by side", "",
         "Each figure of run 1 against run 2; *differs* names the figures more than 25% apart "
         "(of the smaller; stall below 1%, L0 slope within ±0.2 files/min and pending bytes' "
         "slope within ±64 MiB/min in both runs count as the same). Both runs' ratios "
         "are over their own reader alone and their own untagged.", "",
         "| variant | phase | P99 ÷ alone | intervals in target (2×) | L0 slope /min | pending slope "
         "MiB/min | compaction share | stall | reader-off share | differs |",
         "|---|---|---|---|---|---|---|---|---|---|"]
    fmt = {"p99 ÷ alone": "{:.2f}×", "intervals in target": "{:.0%}", "L0 slope": "{:+.2f}",
           "pending slope": "{:+.0f}", "compaction share": "{:.0%}", "stall %": "{:.1f}%",
           "reader-off share": "{:.0%}"}
    n = bad = 0
    apart = []
    for vid in ids:
        for phase in ("steady", "bursty"):
            f1, f2 = run_figures(s1, vid, phase), run_figures(s2, vid, phase)
            if not f1 and not f2:
                continue
            f1, f2 = f1 or {}, f2 or {}
            cells, diff = [], []
            for k, f in fmt.items():
                a, b = f1.get(k), f2.get(k)
                cells.append(f"{sustained.fx(a, f)} / {sustained.fx(b, f)}")
                if a is None and b is None:
                    continue
                same_stall = a is not None and b is not None and same_when_small(k, a, b)
                n += 1
                # a slope that changes sign is apart whatever the sizes
                if not same_stall and (differs(a, b) or (a is not None and b is not None and a * b < 0)):
                    bad += 1
                    diff.append(k)
            if diff:
                apart.append(f"`{vid}` {phase} ({', '.join(diff)})")
            L.append(f"| {VARIANTS[vid][0]} | {phase} | " + " | ".join(cells) + f" | {', '.join(diff) or '-'} |")
    r1, r2 = ranking(s1, ids), ranking(s2, ids)
    a1, a2 = (s.get("alone", {}).get("p99") for s in (s1, s2))
    L += ["", f"- **The reader alone** (the denominator): P99 {fmt_us(a1)} in run 1, {fmt_us(a2)} in "
          f"run 2" + (" — more than 25% apart: every P99 ratio of the runs moves with it."
                      if differs(a1, a2) else ".")]
    if r1 == r2:
        L.append(f"- **Ranking: the same** in both runs (steady read P99 over alone, best first): "
                 + ", ".join(f"`{v}`" for v in r1) + ".")
    else:
        moved = [v for v in r1 if v in r2 and r1.index(v) != r2.index(v)]
        L.append("- **Ranking: not the same.** Run 1: " + ", ".join(f"`{v}`" for v in r1)
                 + ". Run 2: " + ", ".join(f"`{v}`" for v in r2) + ". Placed differently: "
                 + ", ".join(f"`{v}` ({r1.index(v) + 1} against {r2.index(v) + 1})" for v in moved) + ".")
    L.append(f"- **Figures within 25%: {n - bad} of {n}.**"
             + (" More than 25% apart: " + "; ".join(apart) + "." if apart else ""))
    return L + [""]


def compare_section(runs, svg_dir, rel):
    """The sustained section for two runs: the comparison, then each run's phases, goals and
    frontier."""
    m1 = runs[0][0]
    L = [SUSTAINED_HEADING, "",
         "<!-- generated by bench/rocksdb/report.py --compare; edit bench/rocksdb/report.py, not this section -->", "",
         "Two sustained runs of `bench/run --sustained` back to back on the same machine "
         "(issue 11: the same ranking, ratios within 25%), then written together by "
         "`bench/rocksdb/report.py --compare`. "
         + " ".join(f"Run {i}: {m['started']} – {m['finished']}, commit {m['commit']}, "
                    f"{m.get('elapsed_s', 0) / 60:.1f} min, load average {m.get('load_start', '?')} "
                    f"at the start, {m.get('load_end', '?')} at the end."
                    for i, (m, _) in enumerate(runs, 1)), "",
         rig_text(m1), ""]
    L += comparison(runs)
    for i, (m, s) in enumerate(runs, 1):
        key, _ = comp_key(s)
        pts = points_from_summary({"summary": s})
        L += [f"### Run {i}", "", sustained_text(m), ""] + contention(s)
        L += sustained.phase_table(s, labels(m), key)
        L += [f"#### Goals of issue 12 (run {i})", ""] + sustained.goals(s, pts, key)
        L += frontier_section(s, svg_dir, rel, f"rocksdb-sustained-frontier-{i}.svg",
                              f"#### Frontier (run {i})")
    return L


# A page the generator starts (one run's page under docs/bench/): a title, and the way back.
NEW_PAGE = ("<!-- SPDX-License-Identifier: MIT -->\n# Benchmark run\n\n"
            "One run, as its generator wrote it; the current results are on "
            "[BENCHMARKS.md](../BENCHMARKS.md), every run on [README.md](README.md).\n\n")


def write_section(path, lines, heading=HEADING):
    old = open(path).read() if os.path.exists(path) else NEW_PAGE
    new = "\n".join(lines).rstrip() + "\n"
    pat = re.compile(r"^" + re.escape(heading) + r"\n.*?(?=^## (?!#)|\Z)", re.M | re.S)
    if pat.search(old):
        out = pat.sub(lambda _: new + "\n", old, count=1)
    else:
        out = old.rstrip() + "\n\n" + new
    open(path, "w").write(out.rstrip() + "\n")


def publish(lines, path, heading, who):
    """Write the section into path, when given, and print it."""
    if path:
        write_section(path, lines, heading)
        print(f"{who}: wrote {heading!r} in {path}", file=sys.stderr)
    print("\n".join(lines))


def load_run(work):
    """meta, summary and n/a reasons of one work directory; leaves summary.json in it."""
    meta, runs, na = load(work)
    cal = os.path.join(work, "calibration.json")
    if os.path.exists(cal):
        meta["calibration"] = json.load(open(cal))
    w = load_wstar(work)
    if w:
        meta["wstar"] = w
    s = summarize(runs)
    json.dump({"meta": meta, "summary": s, "na": na}, open(os.path.join(work, "summary.json"), "w"),
              indent=1, default=str)
    return meta, runs, na, s


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--sustains":
        sys.exit(0 if sustains(sys.argv[2], int(sys.argv[3])) else 1)
    if len(sys.argv) == 7 and sys.argv[1] == "--wstar-probe":
        d, alone, k, rate, secs = sys.argv[2:]
        sys.exit(0 if wstar_probe(d, alone, float(k), int(rate), float(secs)) else 1)
    if len(sys.argv) == 3 and sys.argv[1] == "--wstar-next":
        nxt = sustained.wstar_next([(p["rate"], p["ok"]) for p in read_probes(sys.argv[2])])
        if nxt:
            print(nxt)
        sys.exit(0)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("work", nargs="+", help="a bench/run work directory (two with --compare)")
    ap.add_argument("--compare", action="store_true",
                    help="two sustained runs side by side, with their agreement")
    ap.add_argument("--write", metavar="PAGE.md")
    ap.add_argument("--svg-dir")
    a = ap.parse_args()
    if len(a.work) != (2 if a.compare else 1):
        ap.error("--compare takes two work directories" if a.compare else "one work directory")
    for w in a.work:
        if not os.path.exists(os.path.join(w, "meta.json")):
            ap.error(f"{w}: not a bench/run work directory (no meta.json; keep one with --keep)")
    svg_dir, rel = None, None
    if a.write:
        svg_dir = a.svg_dir or os.path.dirname(os.path.abspath(a.write))  # next to the page
        rel = os.path.relpath(svg_dir, os.path.dirname(os.path.abspath(a.write)))
    if a.compare:
        both = [load_run(w) for w in a.work]
        if not all(m.get("sustained") for m, _, _, _ in both):
            ap.error("--compare wants two sustained runs (bench/run --sustained --keep)")
        lines, heading = compare_section([(m, s) for m, _, _, s in both], svg_dir, rel), SUSTAINED_HEADING
    else:
        meta, runs, na, s = load_run(a.work[0])
        heading = SUSTAINED_HEADING if meta.get("sustained") else HEADING
        svgs = plot(a.work[0], runs, svg_dir, rel,
                    "rocksdb-sustained-" if meta.get("sustained") else "rocksdb-") if a.write else {}
        fname = "rocksdb-sustained-frontier.svg" if meta.get("sustained") else "rocksdb-frontier.svg"
        lines = (render(meta, s, na, svgs) + sustained_section(meta, s)
                 + frontier_section(s, svg_dir, rel, fname) + figures(a.work[0]))
    publish(lines, a.write, heading, "report.py")


if __name__ == "__main__":
    main()
