# SPDX-License-Identifier: MIT
"""sustained.py: the parts of bench/rocksdb/report.py that only the sustained run (bench/run
--sustained) needs: compaction debt over time from db_bench's periodic statistics,
compaction while the bursty reader is off, the per-phase table, the plain statement of the
best static setting at each compaction share, and issue 12's performance goals, judged;
and issue 22's per-interval view: the reader's P99 in every 10 s judged against k x alone,
the slopes of L0 and pending bytes with when the writer would stall, and W*(k), the fastest
writer a variant sustains, with the search over fixed rates that finds it. report.py
imports it; it reads no files of its own but the logs it is handed.
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


# ---- the per-interval view (issue 22): every 10 s of a phase judged on its own ----

# RocksDB's write-stall limits as bench/run leaves them: db_bench 7.8's defaults, which
# bench/run's `shape` does not change.
L0_SLOWDOWN, L0_STOP = 20, 36                   # level0_slowdown/stop_writes_trigger
SOFT_PENDING, HARD_PENDING = 64 << 30, 128 << 30  # soft/hard_pending_compaction_bytes_limit
INTERVAL_S = 10          # the stats dumps' and the judged intervals' length
MIN_READS = 20           # an interval with fewer reads (the bursty reader off) is not judged
HOLD_SHARE = 0.95        # W*: the share of intervals that must meet the target
STALL_MAX = 1.0          # W*: the most of the phase the writer may stall, percent
# W*: "L0 bounded". From the trigger (4 files) to the slowdown trigger (20) at this slope
# takes 80 minutes: longer than any phase, and a steady writer's L0 oscillates around a
# level with a fitted slope well under it (each flush adds one file, each L0 compaction
# takes them all).
L0_BOUND = 0.2           # files per minute


def read_samples(path):
    """[(seconds since the sampler started, latency µs)] of the reader's reads: bench/run's
    sampler writes "ELAPSED_US LATENCY_US" per pread64 of the reader thread."""
    try:
        with open(path) as f:
            return read_samples_text(f.read())
    except OSError:
        return []


def p99(xs):
    """The nearest-rank 99th percentile (db_bench's histogram interpolates; with a few
    hundred reads per interval the two differ by less than a bucket)."""
    xs = sorted(xs)
    return xs[max(0, -(-99 * len(xs) // 100) - 1)] if xs else None


def interval_p99s(samples, width=INTERVAL_S, min_reads=MIN_READS):
    """P99 of each width-second interval from the sampler's start, in order; None for an
    interval with fewer than min_reads reads (not judged: the reader was frozen). The last
    interval is left out when the reads in it span under half of it: the phase ended just
    after it began."""
    if not samples:
        return []
    bins = {}
    for t, lat in samples:
        bins.setdefault(int(t // width), []).append(lat)
    last = max(bins)
    if samples[-1][0] - last * width < width / 2:
        last -= 1
    return [p99(bins[i]) if len(bins.get(i, [])) >= min_reads else None
            for i in range(last + 1)]


def in_target_share(p99s, limit):
    """The share of judged intervals whose P99 is at most limit; None if none was judged."""
    judged = [x for x in p99s if x is not None]
    return sum(x <= limit for x in judged) / len(judged) if judged else None


def slope_per_min(ys, dt=INTERVAL_S):
    """Least-squares slope of samples taken dt seconds apart, per minute; None under 3."""
    n = len(ys)
    if n < 3:
        return None
    xs = [i * dt / 60 for i in range(n)]
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx


def fitted_end(ys, dt=INTERVAL_S):
    """The least-squares line's value at the last sample (less noisy than the sample)."""
    b = slope_per_min(ys, dt)
    if b is None:
        return ys[-1] if ys else None
    n = len(ys)
    return sum(ys) / n + b * ((n - 1) * dt / 60 - (n - 1) * dt / 120)


def minutes_to(limit, end, slope):
    """Minutes from the phase's end until a quantity at end, growing at slope per minute,
    reaches limit: 0 when already there, None when it does not grow."""
    if end is None:
        return None
    if end >= limit:
        return 0.0
    if slope is None or slope <= 0:
        return None
    return (limit - end) / slope


def stall_eta(l0, pending, dt=INTERVAL_S):
    """When the writer would stall if the phase went on as it ended: minutes to RocksDB's
    L0 slowdown and stop triggers and its soft and hard pending-compaction limits, each
    extrapolated along the phase's least-squares line (None: not growing)."""
    l0s, ps = slope_per_min(l0, dt), slope_per_min(pending, dt)
    l0e, pe = fitted_end(l0, dt), fitted_end(pending, dt)
    return {"l0_slowdown_min": minutes_to(L0_SLOWDOWN, l0e, l0s),
            "l0_stop_min": minutes_to(L0_STOP, l0e, l0s),
            "soft_min": minutes_to(SOFT_PENDING, pe, ps),
            "hard_min": minutes_to(HARD_PENDING, pe, ps)}


def eta_text(eta):
    """The soonest stall of stall_eta, in words."""
    cands = [(eta[k], what) for k, what in (("l0_slowdown_min", "L0 slowdown"), ("l0_stop_min", "L0 stop"),
                                            ("soft_min", "soft pending limit"),
                                            ("hard_min", "hard pending limit")) if eta.get(k) is not None]
    if not cands:
        return "not growing"
    # at a tie (both L0 triggers already passed) the graver limit is the one to name
    m, _, what = min((m, -i, what) for i, (m, what) in enumerate(cands))
    return f"{what} now" if m == 0 else f"{what} in {m:.1f} min" if m < 10 else f"{what} in {m:.0f} min"


def interval_stalls(text):
    """The writer's stall percent in each stats dump's interval ("Interval stall: ...,
    X percent" of rocksdb.stats)."""
    return [float(x) for x in re.findall(r"^Interval stall: [\d:.]+ H:M:S, ([\d.]+) percent", text, re.M)]


def wstar_verdict(p99s, alone_p99, k, stall_pct, l0_slope):
    """Does one W* probe hold? (ok, share of intervals in target, reasons it does not)."""
    share = in_target_share(p99s, k * alone_p99) if alone_p99 else None
    why = []
    if share is None:
        why.append("no interval judged")
    elif share < HOLD_SHARE:
        why.append(f"P99 <= {k:g}x alone in {share:.0%} of intervals (< {HOLD_SHARE:.0%})")
    if stall_pct is None or stall_pct > STALL_MAX:
        why.append(f"stall {'?' if stall_pct is None else f'{stall_pct:.1f}%'} (> {STALL_MAX:g}%)")
    if l0_slope is None or l0_slope > L0_BOUND:
        why.append(f"L0 slope {'?' if l0_slope is None else f'{l0_slope:+.2f}'}/min (> {L0_BOUND:g})")
    return not why, share, why


def wstar_bracket(probes):
    """(highest rate that held below the lowest that failed, that lowest failure): either
    may be None. Noise can make a lower rate fail and a higher one hold: the bracket is
    below the lowest failure, so a W* never rests on a rate above one that failed."""
    fails = [r for r, ok in probes if not ok]
    f = min(fails) if fails else None
    held = [r for r, ok in probes if ok and (f is None or r < f)]
    return (max(held) if held else None), f


def wstar_next(probes, start=8 << 20, lo=1 << 18, hi=128 << 20, tol=0.2, most=8):
    """The next writer rate (bytes/s) of the W* search, or None when it is done. probes:
    [(rate, held)]. From start, doubling while it holds up to hi, halving while it fails
    down to lo (1/4 MiB/s: on the sata preset untagged and idle both failed at 1, issue 22); then bisection until the bracket is within tol of its lower end (two steps
    from a factor of 2), at most `most` probes in all. Rates are whole 1/4 MiB/s."""
    if len(probes) >= most:
        return None
    p, f = wstar_bracket(probes)
    if p is None and f is None:
        nxt = start
    elif f is None:
        nxt = None if p >= hi else min(2 * p, hi)
    elif p is None:
        nxt = None if f <= lo else max(f // 2, lo)
    elif (f - p) <= tol * p:
        nxt = None
    else:
        nxt = (p + f) // 2
    if nxt is None:
        return None
    nxt = max(1, round(nxt / (1 << 18))) << 18
    return None if nxt in (r for r, _ in probes) else nxt


def wstar_value(probes):
    """W* (bytes/s): the highest rate that held below the lowest that failed; 0 if none."""
    p, _ = wstar_bracket(probes)
    return p or 0


def interval_figures(v, a, k):
    """(share of judged intervals with P99 <= k x alone, judged intervals, median and max
    interval P99 over alone) of one phase; alone's P99 is over all its sampled reads."""
    xs, ref = v.get("get_p99s") or [], a.get("get_p99_all")
    judged = [x for x in xs if x is not None]
    if not judged or not ref:
        return None, len(judged), None, None
    srt = sorted(judged)
    return (in_target_share(judged, k * ref), len(judged), srt[len(srt) // 2] / ref, srt[-1] / ref)


def interval_table(s, variants, k):
    """Every 10 s of every phase: the reader's P99 against k x alone, the writer's stalls,
    and the compaction debt's slope with when it would stall, markdown lines."""
    a = s.get("alone") or {}
    L = [f"Every {INTERVAL_S} s of each phase (first repetition): the reader's P99 in that "
         f"interval against {k:g}× its P99 alone, intervals in which the writer stalled at all, "
         "the P99 being that of the reader thread's `pread64` calls, each timed by bpftrace "
         "(bench/run's `read_timer`): one per Get that misses RocksDB's block cache, the Gets "
         "that hit it do no I/O (so it sits a little above db_bench's Get P99, over all Gets; "
         "both measures' ratios to alone agree within a few percent in the wiring run); "
         "the least-squares slope of L0 files and of pending compaction bytes over the phase, "
         "and when the writer would stall if the phase went on as it ended (the line "
         f"extrapolated to RocksDB's L0 slowdown/stop triggers, {L0_SLOWDOWN}/{L0_STOP} files, "
         f"and its soft/hard pending-compaction limits, {SOFT_PENDING >> 30}/{HARD_PENDING >> 30} GiB). "
         "A phase with no stall whose debt grows is not a phase that sustains its writer.", "",
         f"| variant | phase | intervals | P99 ≤ {k:g}× alone | interval P99 ÷ alone, median (max) "
         "| intervals stalled | L0 slope /min | pending slope MiB/min | would stall |",
         "|" + "---|" * 9]
    for label, vid, phase, v, _ in phase_rows(s, variants):
        if vid == "alone":
            continue
        share, n, mid, top = interval_figures(v, a, k)
        st = v.get("interval_stalls") or []
        stalled = f"{sum(x > 0 for x in st)} of {len(st)}" if st else "-"
        l0s, ps = v.get("l0_slope"), v.get("pending_slope")
        L.append(f"| {label} | {phase} | {n or '-'} | {fx(share, '{:.0%}')} | "
                 + (f"{mid:.2f}× ({top:.2f}×)" if mid is not None else "-")
                 + f" | {stalled} | {fx(l0s, '{:+.2f}')} | {fx(ps / 2**20 if ps is not None else None, '{:+.0f}')} | "
                 f"{eta_text(v.get('eta') or {}) if v.get('eta') else '-'} |")
    return L + [""]


def wstar_text(val, probes):
    """W* in MiB/s; "< X" when no rate held down to the lowest tried, X."""
    if val:
        return f"{val / 2**20:.2f}"
    return f"< {min(p['rate'] for p in probes) / 2**20:g}" if probes else "-"


def wstar_section(w, labels):
    """The W*(k) search's result: w is {"k", "alone_p99", "variants": {vid: [probe]}} with
    probe {"rate", "ok", "share", "stall_pct", "l0_slope", "why"}. One figure per variant,
    the best static setting named, then every probe."""
    k = w["k"]
    L = [f"### W*({k:g}×): the fastest writer each variant sustains", "",
         f"W*({k:g}×) is the highest writer rate at which the reader's P99 stays within {k:g}× "
         f"its P99 alone in at least {HOLD_SHARE:.0%} of the {INTERVAL_S} s intervals, with the "
         f"writer stalled at most {STALL_MAX:g}% of the phase and L0 bounded (its least-squares "
         f"slope at most {L0_BOUND:g} files per minute). Search over fixed `--rate`s: from 8 MiB/s, "
         "doubling while it holds (to 128) or halving while it fails (to 1/4), then bisection "
         "until the bracket is within 20%. Alone's P99, every probe's reference: "
         + ("each probe's own run's (the search was resumed across runs; per probe below)"
            if len({p.get("alone_p99") for ps in w["variants"].values() for p in ps
                    if p.get("alone_p99")}) > 1
            else f"{w['alone_p99']:.0f} µs" if w.get("alone_p99") else "not measured")
         + (f"; measured again after the search: {w['alone_p99_end']:.0f} µs "
            f"({w['alone_p99_end'] / w['alone_p99'] - 1:+.0%}, the host's drift over the search)"
            if w.get("alone_p99_end") and w.get("alone_p99") else "") + ".", "",
         "| variant | W* MiB/s | probes (MiB/s: held ✓ / failed ✗) |", "|---|---|---|"]
    static = {}
    for vid, probes in w["variants"].items():
        val = wstar_value([(p["rate"], p["ok"]) for p in probes])
        if not is_adaptive(vid) and vid not in ("untagged", "alone"):
            static[vid] = val
        L.append(f"| {labels.get(vid, vid)} | {wstar_text(val, probes)} | "
                 + ", ".join(f"{p['rate'] / 2**20:g} {'✓' if p['ok'] else '✗'}" for p in probes) + " |")
    if static:
        best = max(static, key=static.get)
        L += ["", f"Best static setting: **`{best}`**, W* {wstar_text(static[best], w['variants'][best])} MiB/s (of "
              + ", ".join(f"`{v}`" for v in static) + ")."]
    refs = sorted({p.get("alone_p99") for ps in w["variants"].values() for p in ps if p.get("alone_p99")})
    L += ["", "Every probe: the share of intervals in target, the stall and the L0 slope; why it failed."
          + (f" The search was resumed across runs (bench/run --wstar-resume): each probe was judged "
             f"against its own run's reader alone ({', '.join(f'{x:.0f}' for x in refs)} µs), "
             "shown per probe." if len(refs) > 1 else ""), "",
          "| variant | MiB/s | in target | stall | L0 slope /min | alone P99 µs | verdict |",
          "|---|---|---|---|---|---|---|"]
    for vid, probes in w["variants"].items():
        for p in probes:
            L.append(f"| {labels.get(vid, vid)} | {p['rate'] / 2**20:g} | {fx(p.get('share'), '{:.0%}')} | "
                     f"{fx(p.get('stall_pct'), '{:.1f}%')} | {fx(p.get('l0_slope'), '{:+.2f}')} | "
                     f"{fx(p.get('alone_p99'), '{:.0f}')} | "
                     + ("held" if p["ok"] else "failed: " + "; ".join(p.get("why") or [])) + " |")
    return L + [""]


def read_samples_text(text):
    """read_samples on a log's text."""
    out = []
    for line in text.splitlines():
        p = line.split()
        if len(p) == 2 and p[0].isdigit() and p[1].isdigit():
            out.append((int(p[0]) / 1e6, int(p[1])))
    return out
