#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""frontier.py: the trade-off every static setting sits on, as an SVG. Each variant (and
sweep point) of a bench/run is one point: compaction as a share of untagged (x, more is
better) against read P99 as a multiple of the reader alone (y, less is better). The
frontier is the lower-right hull of those points: the best any static setting reaches,
the line an adaptive tier has to get beyond. The adaptive variants (ids adaptive*) are
drawn as their own kind of point and never make the hull: it is the static settings' line.

As a library: frontier(points) -> the hull's points, left to right (pass only the static
points: static(points)). As a program:
    frontier.py SUMMARY.json OUT.svg
reads the summary.json that bench/rocksdb/report.py leaves in a bench/run work directory.
"""
import json
import sys


def dominates(a, b):
    """a is at least as good as b on both axes and better on one."""
    return a[0] >= b[0] and a[1] <= b[1] and (a[0] > b[0] or a[1] < b[1])


def is_adaptive(vid):
    """An adaptive variant (bench/run's adaptive, adaptive-K): not a static setting."""
    return str(vid).startswith("adaptive")


def static(points):
    """The points of static settings: every point but the adaptive ones."""
    return [p for p in points if not (len(p) > 2 and is_adaptive(p[2]))]


def pareto(points):
    """The points no other point beats on both axes (more compaction, lower P99), one per
    position, sorted by compaction share."""
    best = [p for p in points if not any(dominates(q, p) for q in points)]
    return sorted({(p[0], p[1]): p for p in best}.values(), key=lambda p: (p[0], p[1]))


def frontier(points):
    """The Pareto set reduced to its convex lower-right hull, sorted by compaction share.
    points: [(share, ratio, ...)]."""
    hull = []
    for p in pareto(points):
        # drop the last point while it lies on or above the segment from its predecessor to
        # p: the line between them reaches a lower ratio at that share (convex from below)
        while len(hull) >= 2:
            (x1, y1), (x2, y2) = hull[-2][:2], hull[-1][:2]
            cross = (x2 - x1) * (p[1] - y1) - (y2 - y1) * (p[0] - x1)
            if cross <= 0:
                hull.pop()
            else:
                break
        hull.append(p)
    return hull


def points_from_summary(summary):
    """(share, ratio, id) for every variant with the figures, from report.py's summary."""
    s = summary["summary"]
    alone, untagged = s.get("alone", {}), s.get("untagged", {})
    base_p99 = alone.get("p99")
    base_comp = untagged.get("comp_dev_gib") or untagged.get("comp_gb")
    key = "comp_dev_gib" if untagged.get("comp_dev_gib") else "comp_gb"
    out = []
    for vid, v in s.items():
        if vid == "alone" or "~" in vid or not v or not v.get("p99") or v.get(key) is None or not base_p99 or not base_comp:
            continue
        out.append((v[key] / base_comp, v["p99"] / base_p99, vid))
    return out


def svg(points, hull, title="read P99 ÷ alone against compaction share"):
    """A plain SVG scatter (no plotting library): points, their labels, the hull."""
    w, h, m = 720, 480, 60
    xmax = max([1.0] + [p[0] for p in points]) * 1.05
    ymax = max([2.0] + [p[1] for p in points]) * 1.1

    def X(x):
        return m + x / xmax * (w - 2 * m)

    def Y(y):
        return h - m - y / ymax * (h - 2 * m)

    e = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
         f'font-family="sans-serif" font-size="11">',
         f'<rect width="{w}" height="{h}" fill="white"/>',
         f'<text x="{w / 2}" y="20" text-anchor="middle" font-size="14">{title}</text>',
         f'<line x1="{m}" y1="{h - m}" x2="{w - m}" y2="{h - m}" stroke="black"/>',
         f'<line x1="{m}" y1="{m}" x2="{m}" y2="{h - m}" stroke="black"/>',
         f'<text x="{w / 2}" y="{h - 15}" text-anchor="middle">compaction, share of untagged '
         '(more is better)</text>',
         f'<text x="15" y="{h / 2}" text-anchor="middle" transform="rotate(-90 15 {h / 2})">'
         'read P99 ÷ alone (less is better)</text>']
    for i in range(6):
        x = xmax * i / 5
        e.append(f'<text x="{X(x):.1f}" y="{h - m + 15}" text-anchor="middle">{100 * x:.0f}%</text>')
        y = ymax * i / 5
        e.append(f'<text x="{m - 5}" y="{Y(y) + 4:.1f}" text-anchor="end">{y:.1f}×</text>')
        e.append(f'<line x1="{m}" y1="{Y(y):.1f}" x2="{w - m}" y2="{Y(y):.1f}" stroke="#eee"/>')
    if len(hull) > 1:
        pts = " ".join(f"{X(p[0]):.1f},{Y(p[1]):.1f}" for p in hull)
        e.append(f'<polyline points="{pts}" fill="none" stroke="#c33" stroke-width="2"/>')
    on = {(p[0], p[1]) for p in hull}
    for p in points:
        label = p[2] if len(p) > 2 else ""
        x, y = X(p[0]), Y(p[1])
        if is_adaptive(label):
            # a green diamond: the controller's operating point, not a setting
            e.append(f'<path class="adaptive" d="M{x:.1f},{y - 6:.1f} L{x + 6:.1f},{y:.1f} '
                     f'L{x:.1f},{y + 6:.1f} L{x - 6:.1f},{y:.1f} Z" fill="#2a2"/>')
        else:
            colour = "#c33" if (p[0], p[1]) in on else "#36c"
            e.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{colour}"/>')
        e.append(f'<text x="{x + 6:.1f}" y="{y - 6:.1f}">{label}</text>')
    e.append(f'<text x="{w - m}" y="{m - 10}" text-anchor="end"><tspan fill="#c33">● on the '
             'static hull</tspan>  <tspan fill="#36c">● static</tspan>  '
             '<tspan fill="#2a2">◆ adaptive</tspan></text>')
    e.append("</svg>")
    return "\n".join(e) + "\n"


def main():
    if len(sys.argv) != 3:
        print("usage: frontier.py SUMMARY.json OUT.svg", file=sys.stderr)
        sys.exit(2)
    pts = points_from_summary(json.load(open(sys.argv[1])))
    hull = frontier(static(pts))
    open(sys.argv[2], "w").write(svg(pts, hull))
    for p in hull:
        print(f"frontier: {p[2]}: compaction {100 * p[0]:.0f}%, read P99 {p[1]:.2f}x alone")


if __name__ == "__main__":
    main()
