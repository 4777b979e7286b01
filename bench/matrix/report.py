#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The adaptive matrix's report (bench/matrix/README.md): from results.json, the figures per
cell and variant (percentiles over the reader alone, the background's share of untagged
while the reader is busy and idle, the fraction of the bound, lock waits, reaction), a
Markdown table, and two SVG heat maps (fraction of bound, P99 over alone), hand-written so
that nothing beyond Python is needed. Also run alone: report.py results.json [OUTDIR]."""
import html
import json
import os
import statistics
import sys

import goals


def ratio(a, b):
    return a / b if a is not None and b else None


def figures(cell, name):
    """One variant's derived figures, or None when it (or the cell's alone) failed."""
    v, alone = cell["variants"].get(name), cell["variants"].get("alone")
    unt = cell["variants"].get("untagged")
    if not v or "error" in v or not alone or "error" in alone:
        return None
    f = {"p50x": ratio(v["p50_us"], alone["p50_us"]), "p99x": ratio(v["p99_us"], alone["p99_us"]),
         "p999x": ratio(v["p999_us"], alone["p999_us"]), "reads_s": v["reads_per_s"],
         "bg_mb_s": v.get("bg_mb_s", 0), "busy_mb_s": v.get("bg_mb_s_busy", 0),
         "idle_mb_s": v.get("bg_mb_s_idle") if v.get("idle_s") else None,
         "lock_p99_us": v.get("lock_wait_p99_us") if v.get("lock_waits") else None,
         "lock_ms_s": v.get("lock_wait_ms_per_s") if v.get("lock_waits") else None}
    if unt and "error" not in unt and name != "alone":
        f["busy_share"] = ratio(f["busy_mb_s"], unt.get("bg_mb_s_busy"))
        f["idle_share"] = ratio(f["idle_mb_s"], unt.get("bg_mb_s_idle")) if f["idle_mb_s"] is not None else None
    # read by read where the run has it (matrix-load's reaction_fine_ms), else 10 ms steps
    r = v.get("reaction_fine_ms", v.get("reaction_ms")) or []
    f["react_ms"] = statistics.median(r) if r else None
    f["react_max_ms"] = max(r) if r else None
    bounds = cell.get("bound") or {}
    b = bounds.get(name[7:].split("@")[0]) if name.startswith("target:") else next(iter(bounds.values()), None)
    f["bound_mb_s"] = b["total_mb_s"] if b else None
    f["frac_bound"] = ratio(f["bg_mb_s"], f["bound_mb_s"])
    return f


def cell_label(c):
    return f"{c['preset']} {c['pattern']} {c['read']} {c['bg']}"


def fmt(x, spec=".2f", suffix=""):
    return "–" if x is None else f"{x:{spec}}{suffix}"


def variant_names(results):
    """The variants of a run: the targets, then each --also-build's (target:T@LABEL)."""
    ts = results["targets"]
    return (["untagged", "idle", "static"] + [f"target:{t}" for t in ts]
            + [f"target:{t}@{b}" for b in (results.get("builds") or {}) for t in ts])


def print_cell(cell, names):
    """One line per variant on stderr, as a cell ends: P99 over alone and fraction of bound."""
    for name in names:
        f = figures(cell, name)
        if f is None:
            err = (cell["variants"].get(name) or cell["variants"].get("alone") or {}).get("error", "not run")
            print(f"  {name:22} failed: {err}", file=sys.stderr)
            continue
        print(f"  {name:22} P99 {fmt(f['p99x'], '.2f', 'x')} alone, bg {f['bg_mb_s']:.1f} MB/s = "
              f"{fmt(f['frac_bound'], '.0%')} of bound ({fmt(f['bound_mb_s'], '.1f')}), busy share "
              f"{fmt(f.get('busy_share'), '.0%')}, idle share {fmt(f.get('idle_share'), '.0%')}, "
              f"reaction {fmt(f['react_ms'], '.1f', ' ms')}", file=sys.stderr, flush=True)


def check_lines(ck):
    m, p = ck["measured"], ck["predicted"]
    if "error" in m:
        return [f"bound check failed: {m['error']}"]
    mb, p99 = m["bg_mb_s_busy"], m["p99_us"]
    line = (f"Bound check ({' '.join(ck['cell'])}, k={ck['k']:g}): back-to-back "
            f"{ck['piece_bytes'] // 1024} KiB O_DIRECT pieces, untagged. Background "
            f"{mb:.1f} MB/s measured against {p['bg_mb_s']:.1f} predicted "
            f"({mb / p['bg_mb_s'] - 1:+.0%}); ")
    if "p50_us" in p and "p50_us" in m:
        line += (f"reads/s {m['reads_per_s']:.0f} against {p['reads_s']:.0f} "
                 f"({m['reads_per_s'] / p['reads_s'] - 1:+.0%}); reader P50 "
                 f"{m['p50_us'] / 1e3:.2f} ms against {p['p50_us'] / 1e3:.2f} ms "
                 f"({m['p50_us'] / p['p50_us'] - 1:+.0%}); ")
    line += (f"reader P99 {p99 / 1e3:.2f} ms against {p['p99_us'] / 1e3:.2f} ms predicted "
             f"({p99 / p['p99_us'] - 1:+.0%}; k x alone = "
             f"{ck['k'] * ck['alone_p99_us'] / 1e3:.2f} ms).")
    return [line]


def print_check(ck):
    for line in check_lines(ck):
        print(line, file=sys.stderr, flush=True)


def markdown(results):
    head = ("| cell | variant | P50× | P99× | P99.9× | reads/s | bg MB/s | of bound | busy MB/s "
            "(share) | idle MB/s (share) | lock wait P99 | reaction (max) |")
    lines = [f"Adaptive matrix, {results['started']}; load average at start "
             f"{results['load'][0]:.1f}; static = `{results['static']}`. Ratios over the "
             "reader alone; shares of untagged; bound from the disk model (README.md).", ""]
    lines += goals.markdown_lines(results, variant_names(results), figures)
    lines += [head, "|" + "---|" * 12]
    for c in results["cells"]:
        alone = c["variants"].get("alone", {})
        if "error" in alone:
            lines.append(f"| {cell_label(c)} | alone | failed: {alone['error'][:60]} |" + " |" * 10)
            continue
        lines.append(f"| {cell_label(c)} | alone | {alone['p50_us'] / 1e3:.2f} ms | "
                     f"{alone['p99_us'] / 1e3:.2f} ms | {alone['p999_us'] / 1e3:.2f} ms | "
                     f"{alone['reads_per_s']:.0f} | | {fmt(next(iter(c.get('bound', {}).values()), {}).get('total_mb_s'), '.1f', ' MB/s')} | | | | |")
        for name in variant_names(results):
            f = figures(c, name)
            if f is None:
                lines.append(f"| | {name} | failed |" + " |" * 9)
                continue
            lines.append(
                f"| | {name} | {fmt(f['p50x'])} | {fmt(f['p99x'])} | {fmt(f['p999x'])} | "
                f"{f['reads_s']:.0f} | {f['bg_mb_s']:.1f} | {fmt(f['frac_bound'], '.0%')} | "
                f"{f['busy_mb_s']:.1f} ({fmt(f.get('busy_share'), '.0%')}) | "
                f"{fmt(f['idle_mb_s'], '.1f')} ({fmt(f.get('idle_share'), '.0%')}) | "
                f"{fmt(f['lock_p99_us'] and f['lock_p99_us'] / 1e3, '.2f', ' ms')} | "
                f"{fmt(f['react_ms'], '.1f')} ({fmt(f['react_max_ms'], '.1f')}) ms |")
    if results.get("check"):
        lines += [""] + check_lines(results["check"])
    return "\n".join(lines) + "\n"


def color(x, good, bad):
    """Green at `good`, red at `bad`, linear between (either direction)."""
    if x is None:
        return "#dddddd"
    t = min(1.0, max(0.0, (x - good) / (bad - good)))
    return f"#{int(90 + 165 * t):02x}{int(200 - 120 * t):02x}{90:02x}"


def heatmap(results, key, title, good, bad, spec):
    """An SVG grid: one row per cell, one column per variant, the value in each square."""
    names, cells = variant_names(results), results["cells"]
    lw, cw, rh, top = 330, 130, 22, 50
    w, h = lw + cw * len(names) + 10, top + rh * len(cells) + 10
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           f'font-family="sans-serif" font-size="12">',
           f'<text x="5" y="18" font-size="14">{html.escape(title)}</text>']
    for j, n in enumerate(names):
        out.append(f'<text x="{lw + cw * j + cw / 2}" y="{top - 8}" text-anchor="middle">{html.escape(n)}</text>')
    for i, c in enumerate(cells):
        y = top + rh * i
        out.append(f'<text x="5" y="{y + 15}">{html.escape(cell_label(c))}</text>')
        for j, n in enumerate(names):
            f = figures(c, n)
            x = None if f is None else f.get(key)
            out.append(f'<rect x="{lw + cw * j}" y="{y}" width="{cw - 2}" height="{rh - 2}" '
                       f'fill="{color(x, good, bad)}"/>')
            out.append(f'<text x="{lw + cw * j + cw / 2}" y="{y + 15}" text-anchor="middle">'
                       f'{fmt(x, spec)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def write_all(results, out):
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(markdown(results))
    with open(os.path.join(out, "frac-bound.svg"), "w") as f:
        f.write(heatmap(results, "frac_bound", "background MB/s as a fraction of the bound",
                        1.0, 0.0, ".0%"))
    with open(os.path.join(out, "p99.svg"), "w") as f:
        f.write(heatmap(results, "p99x", "reader P99 over alone", 1.0, 4.0, ".2f"))


def rebound(results):
    """The cells' bounds again from their stored inputs (after a change to bound.py)."""
    import re
    import bound
    for c in results["cells"]:
        if c.get("fg_model"):
            c["bound"] = {t: bound.cell_bound(c, float(re.search(r"([0-9.]+)x$", t).group(1)))
                          for t in results["targets"]}


if __name__ == "__main__":
    redo = "--rebound" in sys.argv
    if redo:
        sys.argv.remove("--rebound")
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: report.py [--rebound] results.json [OUTDIR]")
    with open(sys.argv[1]) as f:
        res = json.load(f)
    if redo:
        rebound(res)
    outdir = sys.argv[2] if len(sys.argv) == 3 else os.path.dirname(os.path.abspath(sys.argv[1]))
    write_all(res, outdir)
    sys.stdout.write(markdown(res))
