#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Description: the frontier of bench/rocksdb/frontier.py, on made-up points: dominated points and
# points above the hull are left out, the hull runs left to right, ties and a single point
# are handled, the SVG draws every point and the hull, and report.py's summary is read
# with compaction and P99 taken relative to untagged and alone. The adaptive variants are
# drawn as their own points and never make the static hull.
# Usage: test-frontier.py BENCH_DIR
import os
import sys
import unittest

sys.path.insert(0, sys.argv.pop(1))
from frontier import frontier, pareto, points_from_summary, static, svg  # noqa: E402


class Frontier(unittest.TestCase):
    def test_dominated_left_out(self):
        pts = [(0.2, 1.5, "a"), (0.5, 3.0, "b"), (0.4, 4.0, "dominated"), (1.0, 10.0, "u")]
        self.assertEqual([p[2] for p in frontier(pts)], ["a", "b", "u"])

    def test_above_hull_left_out(self):
        # c is on no one's bad side (Pareto), but the line a-u passes below it
        pts = [(0.0, 1.0, "a"), (0.5, 6.0, "c"), (1.0, 8.0, "u")]
        self.assertEqual([p[2] for p in frontier(pts)], ["a", "u"])

    def test_collinear_middle_dropped(self):
        pts = [(0.0, 1.0, "a"), (0.5, 2.0, "mid"), (1.0, 3.0, "u")]
        self.assertEqual([p[2] for p in frontier(pts)], ["a", "u"])

    def test_single_and_ties(self):
        self.assertEqual([p[2] for p in frontier([(0.3, 2.0, "x")])], ["x"])
        self.assertEqual(len(frontier([(0.3, 2.0, "x"), (0.3, 2.0, "y")])), 1)
        self.assertEqual(frontier([]), [])

    def test_svg(self):
        pts = [(0.2, 1.5, "a"), (0.5, 3.0, "b"), (0.4, 4.0, "d")]
        out = svg(pts, frontier(pts))
        self.assertTrue(out.startswith("<svg"))
        self.assertEqual(out.count("<circle"), 3)
        self.assertEqual(out.count("<polyline"), 1)

    def test_adaptive_not_on_static_hull(self):
        # the adaptive point beats every static one; the static hull must not bend to it
        pts = [(0.1, 1.2, "low-rate-8"), (0.8, 1.5, "rocksdb-prio"), (1.0, 5.0, "untagged"),
               (0.6, 1.1, "adaptive"), (0.9, 1.4, "adaptive-3")]
        self.assertEqual([p[2] for p in static(pts)], ["low-rate-8", "rocksdb-prio", "untagged"])
        hull = frontier(static(pts))
        self.assertEqual([p[2] for p in hull], ["low-rate-8", "rocksdb-prio", "untagged"])
        out = svg(pts, hull)
        # static points are circles, adaptive ones diamonds
        self.assertEqual(out.count("<circle"), 3)
        self.assertEqual(out.count('class="adaptive"'), 2)
        self.assertIn(">adaptive-3<", out)

    def test_pareto(self):
        pts = [(0.2, 1.5, "a"), (0.5, 3.0, "b"), (0.4, 4.0, "dominated"), (0.2, 1.5, "same")]
        self.assertEqual([p[:2] for p in pareto(pts)], [(0.2, 1.5), (0.5, 3.0)])

    def test_summary(self):
        summary = {"summary": {
            "alone": {"p99": 100.0, "comp_dev_gib": 0.0},
            "untagged": {"p99": 1000.0, "comp_dev_gib": 4.0},
            "low": {"p99": 200.0, "comp_dev_gib": 2.0},
            "broken": {"p99": None},
        }}
        pts = sorted(points_from_summary(summary))
        self.assertEqual(pts, [(0.5, 2.0, "low"), (1.0, 10.0, "untagged")])


if __name__ == "__main__":
    unittest.main(argv=[os.path.basename(__file__)])
