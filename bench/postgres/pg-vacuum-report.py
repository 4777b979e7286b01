#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pg-vacuum-report.py: turn one bench/postgres/pg-vacuum work directory into the "## PostgreSQL:
pgbench under VACUUM" section of its page under docs/bench/ (pg-vacuum-DATE.md).

A work directory holds meta.json and runs/VARIANT.REP/, each with pgbench's per-transaction
logs (pgb.*), window.json (when pgbench and VACUUM started and ended, epoch seconds) and
vacuum.log (VACUUM VERBOSE's output). The latency of a run is taken over its window: from
the warm-up's end to pgbench's end for `alone`, and while VACUUM ran (and pgbench still did)
for every other variant. Each figure is the median over the repetitions.

The window is also cut into 10 s intervals (issue 22), each with its own P99, and the
report gives the share of them in which the goal's P99 held. These come from the same
per-transaction logs: pgbench's --aggregate-interval log has per interval only the count,
the sum and sum of squares, the minimum and the maximum of the latencies, no percentile.
The reader's wait events, sampled five times a second, are tabled per variant.

With --also-build LABEL=BUILDDIR the run has one more variant, adaptive@LABEL: the adaptive
one with another build's iotier. It is a row of its own in every table and verdict, right
after adaptive, named by that build's commit (meta.json's also_build_*).

usage: pg-vacuum-report.py WORK [--write PAGE.md]
"""
import argparse
import glob
import json
import math
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "rocksdb"))
from report import publish  # noqa: E402  (the same in-place section replacement)

HEADING = "## PostgreSQL: pgbench under VACUUM"
# the goal of issue 12: read P99 within 1.5x of alone, VACUUM within 2x of untagged
P99_GOAL = 1.5
VACUUM_GOAL = 2.0
MIN_TX = 100  # fewer transactions in a window estimate no P99
INTERVAL_S = 10     # the judged intervals' length
MIN_INTERVAL_TX = 20  # fewer transactions in an interval (its tail end) and it is not judged
VARIANTS = {
    "alone": "pgbench -S only, no VACUUM",
    "untagged": "VACUUM concurrently, nothing tagged",
    "low": "VACUUM backends at class idle (`--low RULES`)",
    "low-rate": "as low, and the low tier capped in bytes/s (`--low-rate`)",
    "adaptive": "the same rule under a latency target (`--target`; the class is the shim's choice, see Checks)",
}
# --also-build's variant: adaptive with another build's iotier
OTHER_BUILD = re.compile(r"adaptive@[A-Za-z0-9_-]+")


def is_variant(vid):
    return vid in VARIANTS or OTHER_BUILD.fullmatch(vid) is not None


def variant_order(s):
    """The variants of s in the report's order: VARIANTS', each other build's adaptive
    right after adaptive."""
    out = []
    for vid in VARIANTS:
        if vid in s:
            out.append(vid)
        if vid == "adaptive":
            out += sorted(v for v in s if OTHER_BUILD.fullmatch(v))
    return out


def build_name(meta, vid):
    """Which build an adaptive@LABEL variant ran: `LABEL` and, when the script could tell,
    its commit (git describe) and directory."""
    label = vid.partition("@")[2]
    if meta.get("also_build_label") != label:
        return f"`{label}`"
    bits = ([f"commit `{meta['also_build_commit']}`"] if meta.get("also_build_commit") else []) + (
        [f"`{meta['also_build_dir']}`"] if meta.get("also_build_dir") else [])
    return f"`{label}`" + (f" ({', '.join(bits)})" if bits else "")


def percentile(xs, p):
    """Nearest rank: the smallest value with at least p% of the values at or below it."""
    if not xs:
        return None
    s = sorted(xs)
    return s[max(0, math.ceil(p / 100.0 * len(s)) - 1)]


def parse_pgbench_log(path):
    """One pgbench per-transaction log (no --aggregate-interval): a (end time in epoch
    seconds, latency in µs) pair per line. Failed or skipped transactions carry a word
    instead of a latency and are left out."""
    out = []
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) < 6 or not w[2].isdigit():
                continue
            out.append((int(w[4]) + int(w[5]) / 1e6, int(w[2])))
    return out


def interval_p99s(tx, lo, hi, width=INTERVAL_S, min_tx=MIN_INTERVAL_TX):
    """P99 of each width-second interval of [lo, hi] from lo, in order: the transactions
    that ended in it; None for one with fewer than min_tx (the window's short tail)."""
    bins = {}
    for t, us in tx:
        if lo <= t <= hi:
            bins.setdefault(min(int((t - lo) // width), max(0, math.ceil((hi - lo) / width) - 1)), []).append(us)
    n = max(0, math.ceil((hi - lo) / width))
    return [percentile(bins[i], 99) if len(bins.get(i, [])) >= min_tx else None for i in range(n)]


def share_within(p99s, limit):
    """The share of judged intervals whose P99 is at most limit (None: none judged)."""
    judged = [x for x in p99s if x is not None]
    return sum(x <= limit for x in judged) / len(judged) if judged else None


def parse_waits(path):
    """bench/postgres/pg-vacuum's sampler: "NOTICE:  EPOCH EVENT ..." lines, one event (TYPE:NAME, or
    CPU) per active reader backend; a sample with none active has no events."""
    out = []
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) >= 2 and w[0] == "NOTICE:":
                try:
                    # PL/pgSQL prints a NULL aggregate (no reader active) as <NULL>
                    out.append((float(w[1]), [e for e in w[2:] if e != "<NULL>"]))
                except ValueError:
                    pass
    return out


def window(win, variant):
    """The part of a run whose latency counts, as (start, end) in epoch seconds."""
    if variant == "alone":
        return win["warm"], win["pgbench_end"]
    return win["vacuum_start"], min(win["vacuum_end"], win["pgbench_end"])


def run_stats(rundir, variant):
    with open(os.path.join(rundir, "window.json")) as f:
        win = json.load(f)
    tx = []
    for p in sorted(glob.glob(os.path.join(rundir, "pgb.*"))):
        tx += parse_pgbench_log(p)
    if tx:
        # pgbench stops at its own -T: when VACUUM outlived it, the script's wait ended later
        win["pgbench_end"] = min(win["pgbench_end"], max(t for t, _ in tx))
    lo, hi = window(win, variant)
    lat = [us for t, us in tx if lo <= t <= hi]
    p99s = interval_p99s(tx, lo, hi) if hi > lo else []
    waits = {}
    for t, events in parse_waits(os.path.join(rundir, "waits")):
        if lo <= t <= hi:
            for e in events:
                waits[e] = waits.get(e, 0) + 1
    enough = len(lat) >= MIN_TX and hi > lo
    r = {"tx": len(lat), "seconds": max(0.0, hi - lo),
         "p50_us": percentile(lat, 50) if enough else None,
         "p99_us": percentile(lat, 99) if enough else None,
         "tps": len(lat) / (hi - lo) if enough else None,
         "vacuum_s": None, "outlived": False, "rc": win.get("rc", 0), "waits": waits,
         "interval_p99s": p99s}
    if variant != "alone":
        r["vacuum_s"] = win["vacuum_end"] - win["vacuum_start"]
        # VACUUM went on after the reader stopped: its tail ran alone, so the time is a
        # lower bound on what it would take under the reader
        r["outlived"] = win["vacuum_end"] > win["pgbench_end"]
        # cancelled by its statement_timeout: not done, and at least that long
        r["cancelled"] = bool(win.get("vacuum_cancelled"))
    for k in ("vacuum_class", "mem_failcnt", "mem_oom_kills", "mem_max_bytes"):
        if k in win:
            r[k] = win[k]
    return r


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def load(work):
    with open(os.path.join(work, "meta.json")) as f:
        meta = json.load(f)
    runs = {}
    for d in sorted(glob.glob(os.path.join(work, "runs", "*.*"))):
        variant, _, rep = os.path.basename(d).rpartition(".")
        if not is_variant(variant) or not os.path.exists(os.path.join(d, "window.json")):
            continue
        runs.setdefault(variant, []).append(run_stats(d, variant))
    return meta, runs


def merge_counts(ds):
    out = {}
    for d in ds:
        for k, n in d.items():
            out[k] = out.get(k, 0) + n
    return out


def top_waits(waits, n=3):
    """The reader's most sampled wait events, as "IO:DataFileRead 80%, CPU 15%"."""
    total = sum(waits.values())
    if not total:
        return None
    top = sorted(waits.items(), key=lambda kv: (-kv[1], kv[0]))[:n]
    return ", ".join(f"{k} {100 * c / total:.0f}%" for k, c in top)


def summarize(runs):
    """Medians per variant, and the ratios to alone (P99) and untagged (VACUUM time)."""
    s = {}
    for v, rs in runs.items():
        s[v] = {"reps": len(rs),
                "p50_us": med([r["p50_us"] for r in rs]),
                "p99_us": med([r["p99_us"] for r in rs]),
                "p99_range": [min((r["p99_us"] for r in rs if r["p99_us"] is not None), default=None),
                              max((r["p99_us"] for r in rs if r["p99_us"] is not None), default=None)],
                "tps": med([r["tps"] for r in rs]),
                "vacuum_s": med([r["vacuum_s"] for r in rs]),
                "outlived": any(r["outlived"] for r in rs),
                "cancelled": sum(1 for r in rs if r.get("cancelled")),
                "failed": sum(1 for r in rs if r["rc"] != 0),
                "oom_kills": sum(r.get("mem_oom_kills", 0) or 0 for r in rs),
                "waits": merge_counts([r["waits"] for r in rs]),
                # every judged interval of every round
                "interval_p99s": [x for r in rs for x in r.get("interval_p99s", []) if x is not None],
                "classes": sorted({r["vacuum_class"] for r in rs if r.get("vacuum_class")})}
    alone_p99 = s.get("alone", {}).get("p99_us")
    untagged_vac = s.get("untagged", {}).get("vacuum_s")
    for v in s.values():
        v["p99_x"] = v["p99_us"] / alone_p99 if alone_p99 and v["p99_us"] is not None else None
        v["intervals_held"] = share_within(v["interval_p99s"], P99_GOAL * alone_p99) if alone_p99 else None
        v["worst_interval_x"] = (max(v["interval_p99s"]) / alone_p99
                                 if alone_p99 and v["interval_p99s"] else None)
        v["vacuum_x"] = (v["vacuum_s"] / untagged_vac
                         if untagged_vac and v["vacuum_s"] is not None else None)
    return s


def verdict(v):
    """The goal for one variant: (met, missed or inconclusive, the reason with numbers)."""
    if v.get("p99_x") is None or v.get("vacuum_x") is None:
        return "inconclusive", "no ratio (a baseline run or the window is missing)"
    p_ok = v["p99_x"] <= P99_GOAL
    v_ok = v["vacuum_x"] <= VACUUM_GOAL
    why = (f"P99 {v['p99_x']:.2f}x alone ({'≤' if p_ok else '>'} {P99_GOAL}x), "
           f"VACUUM {v['vacuum_x']:.2f}x untagged ({'≤' if v_ok else '>'} {VACUUM_GOAL}x)")
    if p_ok and v_ok and v["outlived"]:
        return "inconclusive", why + "; VACUUM outlived the reader, so its time is a lower bound"
    return ("met" if p_ok and v_ok else "missed"), why


# what a reader waits on that is not its own read: a lock or an I/O another backend (VACUUM)
# holds or does, which no I/O priority reorders
LOCK_WAITS = ("LWLock:", "Lock:", "IPC:BufferIO", "IO:WALWrite", "IO:WALSync", "IO:DataFileFlush",
              "IO:DataFileWrite", "IO:DataFileSync")


def obstacles(v):
    """For a missed goal, what the figures show stood in the way."""
    out = []
    if v.get("vacuum_x") is not None and v["vacuum_x"] > VACUUM_GOAL and v["outlived"]:
        out.append("VACUUM got little of the disk while the reader ran: it finished (or was "
                   "cancelled) only after the reader had stopped")
    total = sum(v["waits"].values())
    held = {k: n for k, n in v["waits"].items() if k.startswith(LOCK_WAITS)}
    if total and sum(held.values()) >= 0.02 * total:
        out.append(f"the reader waited on others' locks and writes in {100 * sum(held.values()) / total:.0f}% "
                   f"of its samples ({top_waits(held)}): when VACUUM holds one while its own I/O is "
                   "held back, the reader waits for the low tier (priority inversion)")
    return out


def interval_table(s):
    """Every 10 s of each variant's window: how often the goal's P99 held, the worst."""
    L = [f"### Every {INTERVAL_S} s", "",
         f"Each run's window cut into {INTERVAL_S} s intervals, each with its own P99 (intervals "
         f"of fewer than {MIN_INTERVAL_TX} transactions, a window's tail, not judged), against "
         f"{P99_GOAL}× the P99 alone; every round's intervals together.", "",
         f"| variant | intervals | P99 ≤ {P99_GOAL}× alone | worst interval P99 / alone |", "|---|---|---|---|"]
    for vid in variant_order(s):
        v = s[vid]
        held = "—" if v.get("intervals_held") is None else f"{v['intervals_held']:.0%}"
        L.append(f"| {vid} | {len(v['interval_p99s'])} | {held} | {fmt_x(v.get('worst_interval_x'))} |")
    return L + [""]


# always a column: the WAL lock a reader waits on while VACUUM writes WAL
WAIT_COLUMNS = ("LWLock:WALWrite",)


def waits_table(s, most=6):
    """The reader's sampled wait events per variant, as shares of its samples: the events
    most sampled over all variants (LWLock:WALWrite always), the rest as "other"."""
    total = merge_counts([v["waits"] for v in s.values()])
    if not total:
        return []
    cols = [e for e, _ in sorted(total.items(), key=lambda kv: (-kv[1], kv[0])) if e not in WAIT_COLUMNS][:most]
    cols = list(WAIT_COLUMNS) + cols
    L = ["### What the reader waited on", "",
         "The reader's backends sampled five times a second in each window (`pg_stat_activity`; "
         "CPU when running), as shares of the samples, every round together.", "",
         "| variant | samples | " + " | ".join(cols) + " | other |", "|---|---|" + "---|" * (len(cols) + 1)]
    for vid in variant_order(s):
        w = s[vid]["waits"]
        n = sum(w.values())
        if not n:
            L.append(f"| {vid} | 0 | " + " | ".join("—" for _ in cols) + " | — |")
            continue
        other = n - sum(w.get(c, 0) for c in cols)
        L.append(f"| {vid} | {n} | " + " | ".join(f"{100 * w.get(c, 0) / n:.0f}%" for c in cols)
                 + f" | {100 * other / n:.0f}% |")
    return L + [""]


def fmt_ms(us):
    return "—" if us is None else f"{us / 1000:.2f} ms"


def fmt_x(x):
    return "—" if x is None else f"{x:.2f}×"


def render(meta, s):
    L = [HEADING, "",
         "<!-- generated by bench/postgres/pg-vacuum; edit bench/postgres/pg-vacuum-report.py, not this section -->", "",
         f"`{meta.get('command', 'bench/postgres/pg-vacuum')}`, "
         f"{meta.get('started', '?')} to {meta.get('finished', '?')} on commit "
         f"`{meta.get('commit', '?')}`, kernel {meta.get('kernel', '?')}, {meta.get('cpus', '?')} CPUs "
         f"(load {meta.get('load_start', '?')} at the start, {meta.get('load_end', '?')} at the end), "
         f"PostgreSQL {meta.get('pg_version', '?')}. The disk: {meta.get('rig', '?')}; "
         f"driver depth and scheduler depth {meta.get('depths', '?')}, mq-deadline, ext4.", "",
         f"`pgbench -S -M prepared -c {meta.get('clients', '?')}` on a scale-{meta.get('scale', '?')} "
         f"database ({meta.get('db_size', '?')}; `pgbench_accounts` {meta.get('table_size', '?')}) "
         f"with {meta.get('dead_pct', '?')}% of the accounts deleted, then `VACUUM (VERBOSE) "
         f"pgbench_accounts` started {meta.get('warmup', '?')} s into a {meta.get('seconds', '?')} s run: "
         "the same dead rows to remove each time (every run starts from one copy of the prepared "
         "cluster). PostgreSQL reads through the page cache, so the server runs in a memory "
         f"cgroup of {meta.get('mem', '?')} (shared_buffers {meta.get('shared_buffers', '?')}): "
         "the reads miss memory as on a database larger than its RAM (a cgroup rather than "
         "dropping the cache before each run: the reader would warm the host's whole page "
         "cache within seconds). "
         + ("The index is read into that cache before each run (`pg_prewarm`), so the reader "
            "starts in its steady state: index cached, table on disk. " if meta.get("prewarm") else "")
         + f"{meta.get('reps', '?')} rounds, the variants interleaved in a fresh order each round; "
         "each figure is the median over the rounds.", "",
         f"Low rule: `{meta.get('rule', '?')}` (a `VACUUM` command's backend, and autovacuum "
         "workers, by their process title). The postmaster runs under `iotier run`, so every "
         "backend it forks has the shim.", "",
         "| variant | what | reader P50 | reader P99 | P99 / alone | reader TPS | VACUUM | VACUUM / untagged |",
         "|---|---|---|---|---|---|---|---|"]
    what = dict(VARIANTS)
    what["low-rate"] += f" {meta.get('low_rate', '')}"
    what["adaptive"] += f" `{meta.get('target', '')}`" + (
        f", floor `--low-min-rate {meta['min_rate']}`" if meta.get("min_rate") else "")
    others = [vid for vid in variant_order(s) if OTHER_BUILD.fullmatch(vid)]
    if others:
        what["adaptive"] += f"; this tree's build (commit `{meta.get('commit', '?')}`)"
    for vid in others:
        what[vid] = f"as adaptive, with the iotier and libiotier.so of the build {build_name(meta, vid)}"
    for vid in variant_order(s):
        v = s[vid]
        lo, hi = v["p99_range"]
        rng = f" ({fmt_ms(lo)}–{fmt_ms(hi)})" if v["reps"] > 1 and lo is not None else ""
        vac = "—" if v["vacuum_s"] is None else f"{v['vacuum_s']:.1f} s"
        if v["cancelled"]:
            vac = "≥ " + vac + f" (cancelled in {v['cancelled']} of {v['reps']})"
        elif v["outlived"]:
            vac += " (outlived the reader)"
        tps = "—" if v["tps"] is None else f"{v['tps']:.0f}"
        L.append(f"| {vid} | {what[vid]} | {fmt_ms(v['p50_us'])} | {fmt_ms(v['p99_us'])}{rng} | "
                 f"{fmt_x(v['p99_x'])} | {tps} | {vac} | {fmt_x(v['vacuum_x']) if vid != 'alone' else '—'} |")
    L += [""] + interval_table(s) + waits_table(s)
    L += [f"### Goal (issue 12): reader P99 ≤ {P99_GOAL}× alone, VACUUM ≤ {VACUUM_GOAL}× untagged", ""]
    for vid in [v for v in variant_order(s) if v.startswith("adaptive")] + ["low-rate", "low"]:
        if vid in s:
            res, why = verdict(s[vid])
            note = {"adaptive": " (the goal: a target)"}.get(vid, "")
            if OTHER_BUILD.fullmatch(vid):
                note = f" (the goal: a target, build {build_name(meta, vid)})"
            L.append(f"- **{vid}**{note}: **{res}**: {why}.")
            if res == "missed":
                L += [f"  - {o}." for o in obstacles(s[vid])]
    notes = []
    for vid, v in s.items():
        if v["failed"]:
            notes.append(f"{vid}: {v['failed']} run(s) ended with an error (see the work directory)")
        if v["oom_kills"]:
            notes.append(f"{vid}: {v['oom_kills']} process(es) killed by the memory cgroup")
        tw = top_waits(v["waits"])
        if tw:
            notes.append(f"{vid}: what the reader waited on in its window (sampled): {tw}")
        if v["classes"] and vid != "alone":
            notes.append(f"{vid}: the VACUUM backend's I/O class, seen with ionice: {', '.join(v['classes'])}")
    if notes:
        L += ["", "Checks:", ""] + [f"- {n}" for n in notes]
    return L


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("work")
    ap.add_argument("--write", metavar="PAGE.md")
    a = ap.parse_args()
    meta, runs = load(a.work)
    s = summarize(runs)
    lines = render(meta, s)
    with open(os.path.join(a.work, "summary.json"), "w") as f:
        json.dump({"meta": meta, "summary": s,
                   "verdicts": {v: verdict(s[v]) for v in s if v != "alone"}}, f, indent=1)
    publish(lines, a.write, HEADING, "pg-vacuum-report.py")


if __name__ == "__main__":
    main()
