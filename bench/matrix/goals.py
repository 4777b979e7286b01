# SPDX-License-Identifier: MIT
"""Issue 23's goals over a matrix run (bench/matrix/README.md): per variant, how many cells
met each, and the same per disk, reader family, read mode and background, as Markdown
tables at the top of results.md, so that a page of runs counts nothing by hand. Pure
functions of report.figures' output."""
import re
import statistics

BOUND_SHARE = 0.6   # the background >= 60% of the physical bound
BUSY_SHARE = 0.4    # >= 40% of untagged's while the reader is busy
IDLE_SHARE = 0.9    # >= 90% of untagged's while it is idle (bursty cells)
REACTION_MS = 1.0   # the first window back under the target within 1 ms (median)


def k_of(name, targets):
    """The P99 multiple a variant is judged at: its own target's, else the first target's."""
    t = name[7:].split("@")[0] if name.startswith("target:") else targets[0]
    m = re.search(r"<=([0-9.]+)x$", t)
    return float(m.group(1)) if m else 2.0


def judge(f, k, bursty):
    """One cell's verdicts for one variant's figures (report.figures); None: not applicable."""
    def at_least(x, y):
        return None if x is None else x >= y
    v = {"p99": f["p99x"] is not None and f["p99x"] <= k,
         "bound": at_least(f.get("frac_bound"), BOUND_SHARE),
         "busy": at_least(f.get("busy_share"), BUSY_SHARE),
         "idle": at_least(f.get("idle_share"), IDLE_SHARE) if bursty else None,
         "react": (f["react_ms"] is not None and f["react_ms"] <= REACTION_MS) if bursty else None}
    v["all"] = bool(v["p99"] and v["bound"] and v["busy"])
    return v


def tally(cells, names, targets, figures):
    """{variant: {"met": {goal: count}, "of": {goal: cells judged}, "p99x", "bound", "busy"}}."""
    out = {}
    for name in names:
        t = {"met": {}, "of": {}, "p99x": [], "bound": [], "busy": []}
        for c in cells:
            f = figures(c, name)
            if f is None:
                continue
            for goal, ok in judge(f, k_of(name, targets), c["pattern"].startswith("bursty")).items():
                if ok is not None:
                    t["of"][goal] = t["of"].get(goal, 0) + 1
                    t["met"][goal] = t["met"].get(goal, 0) + int(ok)
            for key, fig in (("p99x", "p99x"), ("bound", "frac_bound"), ("busy", "busy_share")):
                if f.get(fig) is not None:
                    t[key].append(f[fig])
        out[name] = t
    return out


def _median(xs, spec):
    return f"{statistics.median(xs):{spec}}" if xs else "–"


def _count(t, goal):
    of = t["of"].get(goal, 0)
    return f"{t['met'].get(goal, 0)} of {of}" if of else "–"


ROWS = [("p99", "foreground P99 ≤ k× alone"),
        ("bound", f"background ≥ {BOUND_SHARE:.0%} of the bound"),
        ("busy", f"background ≥ {BUSY_SHARE:.0%} of untagged while the reader is busy"),
        ("idle", f"background ≥ {IDLE_SHARE:.0%} of untagged while it is idle (bursty)"),
        ("react", f"reaction ≤ {REACTION_MS:.0f} ms, median (bursty)"),
        ("all", "P99, bound and busy share at once")]


def summary_lines(cells, names, targets, figures):
    """The goals table: one row per goal, one column per variant."""
    ts = tally(cells, names, targets, figures)
    lines = ["| goal, cells met | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for goal, label in ROWS:
        cols = [_count(ts[n], goal) for n in names]
        lines.append(f"| {label} | " + " | ".join(cols) + " |")
    lines.append("| median P99 ÷ alone / of the bound / busy share | " + " | ".join(
        f"{_median(ts[n]['p99x'], '.2f')}× / {_median(ts[n]['bound'], '.0%')} / "
        f"{_median(ts[n]['busy'], '.0%')}" for n in names) + " |")
    lines.append("| worst P99 ÷ alone | " + " | ".join(
        f"{max(ts[n]['p99x']):.1f}×" if ts[n]["p99x"] else "–" for n in names) + " |")
    return lines


def family(pattern):
    """A reader pattern's family: bursty:500:500 and bursty:2000:1000 are both bursty."""
    return pattern.split(":")[0]


def group_lines(cells, names, targets, figures, key, title):
    """Per value of @key (a cell's disk, pattern family, read mode or background), for each
    target variant: the cells that met the P99, the bound and the busy share, and all three
    at once; then the medians of P99 over alone and of the fraction of the bound."""
    tnames = [n for n in names if n.startswith("target:")]
    groups = {}
    for c in cells:
        groups.setdefault(key(c), []).append(c)
    lines = [f"| {title} | cells | " + " | ".join(
                 f"{n}: P99, bound, busy, all three met; median P99×, of the bound"
                 for n in tnames) + " |",
             "|---|---:|" + "---:|" * len(tnames)]
    for g, cs in groups.items():
        ts = tally(cs, tnames, targets, figures)
        lines.append(f"| {g} | {len(cs)} | " + " | ".join(
            ", ".join(str(ts[n]["met"].get(goal, 0)) for goal in ("p99", "bound", "busy", "all"))
            + f"; {_median(ts[n]['p99x'], '.2f')}×, {_median(ts[n]['bound'], '.0%')}"
            for n in tnames) + " |")
    return lines


GROUPS = [(lambda c: c["preset"], "disk"), (lambda c: family(c["pattern"]), "reader"),
          (lambda c: c["read"], "reads"), (lambda c: c["bg"], "background")]


def markdown_lines(results, names, figures):
    cells, targets = results["cells"], results["targets"]
    if not cells:
        return []
    lines = (["Goals (issue 23), cells met; k is each target's multiple (the first "
              "target's for untagged, idle and static):", ""]
             + summary_lines(cells, names, targets, figures) + [""])
    for key, title in GROUPS:
        lines += group_lines(cells, names, targets, figures, key, title) + [""]
    return lines
