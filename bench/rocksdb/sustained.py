# SPDX-License-Identifier: MIT
"""sustained.py: the parts of bench/rocksdb/report.py that only the sustained run (bench/run
--sustained) needs: compaction debt over time from db_bench's periodic statistics,
compaction while the bursty reader is off, the per-phase table, the plain statement of the
best static setting at each compaction share, and issue 12's performance goals, judged.
report.py imports it; it reads no files of its own but the logs it is handed.
"""
import bisect
import re

from frontier import is_adaptive, pareto

# The DB shape bench/run gives db_bench (its `shape`): what RocksDB's estimate uses.
L0_TRIGGER = 4                  # level0_file_num_compaction_trigger, RocksDB's default
LEVEL_BASE = 64 << 20           # --max_bytes_for_level_base
LEVEL_MULT = 10                 # max_bytes_for_level_multiplier, RocksDB's default
NUM_LEVELS = 7

UNITS = {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}
LEVEL_ROW = re.compile(r"^\s*L(\d)\s+(\d+)/\d+\s+([\d.]+)\s+(B|KB|MB|GB|TB)\s", re.M)


def level_samples(text):
    """[(files per level, bytes per level)] for every `rocksdb.stats` dump in a db_bench log
    (every 10 s with --stats_interval_seconds and --stats_per_interval, and the final
    `stats`), in order."""
    out = []
    for block in text.split("** Compaction Stats [")[1:]:
        rows = LEVEL_ROW.findall(block.split("\n\n", 1)[0] if "Level" in block[:200] else "")
        if not rows:
            continue
        files, size = [0] * NUM_LEVELS, [0] * NUM_LEVELS
        for lvl, n, num, unit in rows:
            if int(lvl) < NUM_LEVELS:
                files[int(lvl)] = int(n)
                size[int(lvl)] = int(float(num) * UNITS[unit])
        out.append((files, size))
    return out


def pending_bytes(files, size):
    """RocksDB's estimate of pending compaction bytes (VersionStorageInfo::
    EstimateCompactionBytesNeeded, leveled, base level 1), from one dump's level table.
    db_bench 7.8 prints neither the estimate nor the property in its periodic statistics,
    and the LOG names it only once writes already stall; this is the same arithmetic on the
    level sizes the dump does print (to its two decimals)."""
    need, to_next = 0, 0
    triggered = files[0] >= L0_TRIGGER or size[0] >= LEVEL_BASE
    if triggered:
        need = to_next = size[0]
    next_size = 0
    for lvl in range(1, NUM_LEVELS - 1):
        lsize = next_size if next_size else size[lvl]
        next_size = 0
        if lvl == 1 and triggered:
            need += lsize
        lsize += to_next
        to_next = 0
        target = LEVEL_BASE * LEVEL_MULT ** (lvl - 1)
        if lsize > target:
            to_next = lsize - target
            next_size = size[lvl + 1]
            if next_size:
                need += int(to_next * (next_size / lsize + 1))
    return need


def debt_series(text):
    """L0 files and estimated pending compaction bytes at each stats dump."""
    s = level_samples(text)
    return [f[0] for f, _ in s], [pending_bytes(f, z) for f, z in s]


def read_pairs(path, conv):
    try:
        with open(path) as f:
            return [conv(line.split()) for line in f if len(line.split()) == 2]
    except (OSError, ValueError):
        return []


def off_compaction(burst_log, lowio_log, end=None):
    """Compaction's bytes/s while the bursty reader was off, and while it was on: the
    cumulative rocksdb:low bytes of bench/rocksdb/low-io (sampled every second) interpolated at the
    on/off times of bench/rocksdb/burst. None when either log is missing or too short."""
    marks = read_pairs(burst_log, lambda p: (float(p[0]), p[1]))
    samples = read_pairs(lowio_log, lambda p: (float(p[0]), int(p[1])))
    if len(samples) < 2 or not marks:
        return None
    ts = [t for t, _ in samples]

    def at(t):
        i = bisect.bisect_left(ts, t)
        if i == 0:
            return samples[0][1]
        if i >= len(ts):
            return samples[-1][1]
        (t0, b0), (t1, b1) = samples[i - 1], samples[i]
        return b0 + (b1 - b0) * (t - t0) / (t1 - t0)

    stop = min(end or ts[-1], ts[-1])
    tot = {"on": [0.0, 0.0], "off": [0.0, 0.0]}
    for i, (t, state) in enumerate(marks):
        t_end = min(marks[i + 1][0] if i + 1 < len(marks) else stop, stop)
        t = max(t, ts[0])
        if t_end <= t or state not in tot:
            continue
        tot[state][0] += at(t_end) - at(t)
        tot[state][1] += t_end - t
    rate = {k: (b / s if s > 0 else None) for k, (b, s) in tot.items()}
    return {"off_bps": rate["off"], "on_bps": rate["on"], "off_s": tot["off"][1]}


def ratio(v, a, k):
    return v[k] / a[k] if v.get(k) and a.get(k) else None


def fx(x, fmt="{:.2f}×"):
    return fmt.format(x) if x is not None else "-"


def phase_rows(s, variants):
    """(label, vid, phase, summary, reference untagged summary) for every measured phase."""
    for vid, label in variants:
        for phase, key, ref in (("steady", vid, "untagged"), ("bursty", vid + "~bursty", "untagged~bursty")):
            v = s.get(key)
            if v and v.get("n"):
                yield label, vid, phase, v, s.get(ref) or {}


def series_text(xs, scale=1, fmt="{:.0f}"):
    return " ".join(fmt.format(x / scale) for x in xs) if xs else "-"


def phase_table(s, variants, comp_key):
    """The per-phase table and the debt-over-time table, markdown lines."""
    a = s.get("alone") or {}
    L = ["| variant | phase | P50 ÷ alone | P99 ÷ alone | P99.9 ÷ alone | reads/s | compaction MiB/s "
         "| share of untagged | reader-off compaction (share) | stall | writer MiB/s | L0 files max "
         "(mean) | pending compaction GiB max (mean) |", "|" + "---|" * 13]
    for label, vid, phase, v, u in phase_rows(s, variants):
        share = fx(v[comp_key] / u[comp_key] if v.get(comp_key) is not None and u.get(comp_key) else None,
                   "{:.0%}")
        off = "-"
        if v.get("off_mib_s") is not None:
            off = f"{v['off_mib_s']:.0f} MiB/s"
            if u.get("off_mib_s"):
                off += f" ({v['off_mib_s'] / u['off_mib_s']:.0%})"
        l0 = f"{v['l0_max']:.0f} ({v['l0_mean']:.1f})" if v.get("l0_max") is not None else "-"
        pend = (f"{v['pending_max'] / 2**30:.2f} ({v['pending_mean'] / 2**30:.2f})"
                if v.get("pending_max") is not None else "-")
        stall = f"{v['stall_pct']:.1f}%" if v.get("stall_pct") is not None else "-"
        L.append(f"| {label} | {phase} | {fx(ratio(v, a, 'p50'))} | {fx(ratio(v, a, 'p99'))} | "
                 f"{fx(ratio(v, a, 'p999'))} | {fx(v.get('read_ops'), '{:.0f}')} | "
                 f"{fx(v.get('comp_mib_s'), '{:.1f}')} | {share} | {off} | {stall} | "
                 f"{fx(v.get('writer_mib_s'), '{:.1f}')} | {l0} | {pend} |")
    L += ["", "L0 files and estimated pending compaction bytes (MiB) at every stats dump, 10 s "
          "apart (the last is the dump at the end of the run), first repetition:", "",
          "| variant | phase | L0 files | pending compaction MiB |", "|---|---|---|---|"]
    for label, vid, phase, v, _ in phase_rows(s, variants):
        L.append(f"| {label} | {phase} | {series_text(v.get('l0_series'))} | "
                 f"{series_text(v.get('pending_series'), 2**20)} |")
    return L + [""]


def best_static(points):
    """A plain statement of the best static setting at each compaction share, from the
    static points' Pareto set (points: (share, ratio, id))."""
    st = sorted(pareto([p for p in points if not is_adaptive(p[2])]), key=lambda p: p[0])
    if not st:
        return []
    L = ["Best static setting at each compaction share (the lowest read P99 of any static "
         "setting that keeps at least that share; medians of this run):", ""]
    lo = 0.0
    for share, r, vid in st:
        L.append(f"- compaction from {lo:.0%} to {share:.0%} of untagged: **`{vid}`**, read P99 "
                 f"{r:.2f}× alone.")
        lo = share
    L.append(f"- more than {lo:.0%}: no static setting of this run.")
    return L + [""]


def _p(s, vid, comp_key, base="untagged"):
    """(P99 ÷ alone, compaction share, stall %) of a steady phase, or None."""
    v, a, u = s.get(vid) or {}, s.get("alone") or {}, s.get(base) or {}
    if not v.get("n") or not v.get("p99") or not a.get("p99") or v.get(comp_key) is None or not u.get(comp_key):
        return None
    return v["p99"] / a["p99"], v[comp_key] / u[comp_key], v.get("stall_pct")


def goals(s, points, comp_key):
    """Issue 12's performance goals on this run, each met or missed with its numbers."""
    L = ["Issue 12's performance goals (adaptive = `--target 'read.p99<=2x'`; the PostgreSQL "
         "goal is measured elsewhere, not by bench/run):", ""]
    ad = _p(s, "adaptive", comp_key)
    if ad is None:
        L.append("- **Steady phase**: not measured (no `adaptive` run with its baselines).")
    else:
        r, share, stall = ad
        ok = r <= 2 and share >= 0.5 and stall is not None and stall <= 1
        L.append(f"- **Steady phase: {'met' if ok else 'missed'}.** Read P99 {r:.2f}× alone "
                 f"(goal ≤ 2×), compaction {share:.0%} of untagged (goal ≥ 50%), stall "
                 f"{fx(stall, '{:.1f}%')} of the run (goal ≤ 1%).")
    v, u = s.get("adaptive~bursty") or {}, s.get("untagged~bursty") or {}
    if v.get("off_mib_s") is None or not u.get("off_mib_s"):
        L.append("- **Reader-off phases**: not measured (no bursty `adaptive` and `untagged` "
                 "runs with compaction sampled).")
    else:
        sh = v["off_mib_s"] / u["off_mib_s"]
        L.append(f"- **Reader-off phases: {'met' if sh >= 0.9 else 'missed'}.** Compaction "
                 f"{v['off_mib_s']:.0f} MiB/s while the reader is off, against untagged's "
                 f"{u['off_mib_s']:.0f} MiB/s in its off periods: {sh:.0%} (goal ≥ 90%).")
    static = [p for p in points if not is_adaptive(p[2])]
    ads = sorted((p for p in points if is_adaptive(p[2])), key=lambda p: p[2])
    if not ads or not static:
        L.append("- **Frontier**: not measured (no adaptive or no static points).")
    for p in ads:
        better = [q for q in static if q[0] >= p[0] and q[1] <= p[1] and (q[0] > p[0] or q[1] < p[1])]
        where = f"`{p[2]}` at {p[0]:.0%} compaction, {p[1]:.2f}× alone"
        if better:
            q = min(better, key=lambda q: q[1])
            L.append(f"- **Frontier, `{p[2]}`: missed.** {where}; `{q[2]}` is better on both "
                     f"axes ({q[0]:.0%}, {q[1]:.2f}×).")
        else:
            L.append(f"- **Frontier, `{p[2]}`: met.** {where}; no static point is better on "
                     "both axes.")
    for base, name in (("rocksdb-auto", "RocksDB's auto-tuned limiter"), ("rocksdb-prio", "`--enable_io_prio`")):
        b = _p(s, base, comp_key)
        if b is None or not ads:
            L.append(f"- **Against {name}**: not measured.")
            continue
        eq = [p for p in ads if p[0] >= b[1]]
        if not eq:
            best = max(ads, key=lambda p: p[0])
            L.append(f"- **Against {name}: missed.** No adaptive point compacts as much ({b[1]:.0%} "
                     f"of untagged at {b[0]:.2f}× alone); the most is `{best[2]}` at {best[0]:.0%}.")
            continue
        p = min(eq, key=lambda p: p[1])
        ok = p[1] < b[0]
        L.append(f"- **Against {name}: {'met' if ok else 'missed'}.** `{p[2]}` {p[1]:.2f}× alone "
                 f"at {p[0]:.0%} compaction, against {b[0]:.2f}× at {b[1]:.0%}.")
    return L + [""]
