#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Description: the adaptive matrix without a disk: its bound (bench/matrix/bound.py) on two
# cases computed by hand (a closed-loop QD1 reader on the sata model, an open-loop reader on
# the cloud model), the prediction the bound is checked with, and the report
# (bench/matrix/report.py) on a canned results.json: the ratios over alone, the shares of
# untagged, the fraction of the bound, the reaction, the goals counted (bench/matrix/goals.py),
# the Markdown table and both heat maps.
# Usage: test-matrix.py BENCH_DIR
import importlib.machinery
import importlib.util
import os
import sys
import tempfile
import types
import unittest
import xml.dom.minidom

BENCH = os.path.abspath(sys.argv.pop(1))
sys.path.insert(0, os.path.join(BENCH, "matrix"))
import bound  # noqa: E402
import goals  # noqa: E402
import report  # noqa: E402

SATA = {"lat_us": 100, "bw": 200_000_000, "channels": 1}
CLOUD = {"lat_us": 1000, "bw": 32_000_000, "channels": 4}


class Bound(unittest.TestCase):
    def test_closed_qd1_sata(self):
        # r = 100 + 4096/200e6 s = 120.48 us; the cycle alone 1/4000 = 250 us, so the channel
        # idles g = 129.52 us per read; D = (2-1) x 500 us. The largest piece lasts g + D =
        # 629.52 us: (629.52 - 100) us x 200 MB/s = 105904 bytes, one per cycle of 250 + 500
        # us: 141.2 MB/s. Idle: 1 MiB / (100 us + 1 MiB / 200 MB/s) = 196.26 MB/s; duty 1/2.
        fg = {"kind": "closed", "qd": 1, "rate": 4000, "p99_us": 500, "duty": 0.5}
        b = bound.bound(SATA, fg, 2)
        self.assertAlmostEqual(b["piece_bytes"], 105904, delta=1)
        self.assertAlmostEqual(b["busy_mb_s"], 141.205, places=2)
        self.assertAlmostEqual(b["idle_mb_s"], 196.257, places=2)
        self.assertAlmostEqual(b["total_mb_s"], (141.205 + 196.257) / 2, places=2)
        # the check's prediction at that piece: same MB/s, P99 = 500 + 500 us
        p = bound.predict_piece(SATA, fg, 105904)
        self.assertAlmostEqual(p["bg_mb_s"], 141.205, places=2)
        self.assertAlmostEqual(p["p99_us"], 1000, delta=0.1)

    def test_open_cloud(self):
        # D = 2 ms; a piece of D = 2 ms carries (2 - 1) ms x 32 MB/s = 32000 bytes. The reader
        # (1000/s, r = 1 ms + 4096/32e6 s = 1.128 ms) keeps u = 1000 x 1.128e-3 / 4 = 0.282
        # of the four channels: 4 x 0.718 x 32000 B / 2 ms = 45.952 MB/s.
        b = bound.bound(CLOUD, {"kind": "open", "qd": 4, "rate": 1000, "p99_us": 2000}, 2)
        self.assertEqual(b["piece_bytes"], 32000)
        self.assertAlmostEqual(b["busy_mb_s"], 45.952, places=3)
        self.assertAlmostEqual(b["total_mb_s"], 45.952, places=3)

    def test_background_depth(self):
        # cloud, the O_DIRECT background (512 KiB at the disk, two at once): one channel at
        # full is 524288 B / (1 ms + 524288 / 32e6 s) = 30.159 MB/s, so it can never pass
        # 2 x 30.159 = 60.32 MB/s, though three channels are free of a QD1 reader
        cell = {"bg": "dio", "model": CLOUD,
                "fg_model": {"kind": "closed", "qd": 1, "rate": 800, "p99_us": 1500}}
        b = bound.cell_bound(cell, 2)
        self.assertAlmostEqual(b["idle_mb_s"], 60.319, places=2)
        self.assertAlmostEqual(b["busy_mb_s"], 60.319, places=2)
        self.assertLessEqual(b["piece_bytes"], 512 << 10)

    def test_no_allowance_no_piece(self):
        # k = 1 leaves no delay to spend: only the reader's own idle gap, shorter than L here
        fg = {"kind": "closed", "qd": 1, "rate": 1 / 150e-6, "p99_us": 500}
        self.assertEqual(bound.bound(SATA, fg, 1)["piece_bytes"], 0)
        self.assertEqual(bound.bound(SATA, fg, 1)["busy_mb_s"], 0)


def run(p50, p99, bg, busy, idle, react=None, **kw):
    d = {"reads": 1000, "reads_per_s": 500, "p50_us": p50, "p99_us": p99, "p999_us": p99 * 2,
         "bg_mb_s": bg, "bg_mb_s_busy": busy, "bg_mb_s_idle": idle, "busy_s": 4, "idle_s": 2,
         "reaction_ms": react or [], "lock_waits": 0}
    d.update(kw)
    return d


CELL = {"preset": "sata", "pattern": "bursty:2000:1000", "read": "dio", "bg": "dio",
        "variants": {"alone": run(200, 1000, 0, 0, 0),
                     "untagged": run(400, 8000, 150, 120, 200),
                     "idle": run(210, 1500, 100, 60, 180),
                     "static": run(200, 1100, 16, 16, 16),
                     "target:read.p99<=2x": run(300, 3000, 90, 60, 150, react=[10, 30, 200])},
        "bound": {"read.p99<=2x": {"total_mb_s": 120.0}}}
RESULTS = {"started": "2026-12-04 18:00 UTC", "targets": ["read.p99<=2x"],
           "static": "--low-rate 16M", "load": [3.0, 3.0, 3.0], "cells": [CELL], "check": {
               "cell": ["sata", "steady", "dio", "dio"], "k": 2, "piece_bytes": 102400,
               "predicted": {"bg_mb_s": 100.0, "p99_us": 1000.0}, "alone_p99_us": 500,
               "measured": {"bg_mb_s_busy": 90.0, "p99_us": 1100.0}}}


def read(path):
    with open(path) as f:
        return f.read()


class Report(unittest.TestCase):
    def test_figures(self):
        f = report.figures(CELL, "target:read.p99<=2x")
        self.assertAlmostEqual(f["p99x"], 3.0)
        self.assertAlmostEqual(f["p50x"], 1.5)
        self.assertAlmostEqual(f["busy_share"], 0.5)
        self.assertAlmostEqual(f["idle_share"], 0.75)
        self.assertAlmostEqual(f["frac_bound"], 0.75)
        self.assertEqual(f["react_ms"], 30)
        self.assertEqual(f["react_max_ms"], 200)

    def test_failed_variant(self):
        cell = dict(CELL, variants=dict(CELL["variants"], idle={"error": "exit 1"}))
        self.assertIsNone(report.figures(cell, "idle"))
        self.assertIn("| | idle | failed |", report.markdown(dict(RESULTS, cells=[cell])))

    def test_outputs(self):
        md = report.markdown(RESULTS)
        self.assertIn("| sata bursty:2000:1000 dio dio | alone | 0.20 ms | 1.00 ms |", md)
        self.assertIn("| | target:read.p99<=2x | 1.50 | 3.00 | 3.00 | 500 | 90.0 | 75% |", md)
        self.assertIn("measured against 100.0 predicted (-10%)", md)
        with tempfile.TemporaryDirectory() as d:
            report.write_all(RESULTS, d)
            svg, p99 = (read(os.path.join(d, n)) for n in ("frac-bound.svg", "p99.svg"))
            for doc in (svg, p99):  # well-formed: the target's "<=" is escaped
                xml.dom.minidom.parseString(doc)
            self.assertIn(">75%</text>", svg)
            self.assertIn(">3.00</text>", p99)

    def test_another_build(self):
        """--also-build old=DIR: every target again as target:T@old, judged against the same
        cell's bound and alone, in the table and the heat maps."""
        cell = dict(CELL, variants=dict(CELL["variants"], **{
            "target:read.p99<=2x@old": run(500, 9000, 60, 30, 150)}))
        res = dict(RESULTS, cells=[cell], builds={"old": "/x/build-old"})
        self.assertEqual(report.variant_names(res)[-2:], ["target:read.p99<=2x", "target:read.p99<=2x@old"])
        f = report.figures(cell, "target:read.p99<=2x@old")
        self.assertAlmostEqual(f["p99x"], 9.0)
        self.assertAlmostEqual(f["frac_bound"], 0.5)  # the target's bound, 120 MB/s
        self.assertIn("| | target:read.p99<=2x@old | 2.50 | 9.00 |", report.markdown(res))

    def test_resume_keeps_finished_cells(self):
        """--resume keeps a cell only when alone and every variant of this run's set ran."""
        loader = importlib.machinery.SourceFileLoader("matrix_run", os.path.join(BENCH, "matrix", "run"))
        mod = importlib.util.module_from_spec(importlib.util.spec_from_loader("matrix_run", loader))
        loader.exec_module(mod)
        args = types.SimpleNamespace(targets=["read.p99<=2x"], builds={})
        self.assertTrue(mod.cell_finished(CELL, args))
        broken = dict(CELL, variants=dict(CELL["variants"], idle={"error": "exit 1"}))
        self.assertFalse(mod.cell_finished(broken, args))
        # a build asked for now that the earlier run did not have: the cell is run again
        self.assertFalse(mod.cell_finished(CELL, types.SimpleNamespace(
            targets=["read.p99<=2x"], builds={"old": "/x"})))


STEADY = {"preset": "cloud", "pattern": "steady", "read": "dio", "bg": "bufsync",
          "variants": {"alone": run(1000, 1500, 0, 0, 0, idle_s=0),
                       "untagged": run(9000, 12000, 90, 90, 0, idle_s=0),
                       "idle": run(1000, 1500, 0, 0, 0, idle_s=0),
                       "static": run(1000, 1600, 16, 16, 0, idle_s=0),
                       "target:read.p99<=2x": run(1200, 2700, 60, 40, 0, idle_s=0)},
          "bound": {"read.p99<=2x": {"total_mb_s": 80.0}}}


class Goals(unittest.TestCase):
    """Issue 23's goals counted over the cells (bench/matrix/goals.py), into results.md."""

    def test_counts(self):
        names = report.variant_names(RESULTS)
        t = goals.tally([CELL, STEADY], names, RESULTS["targets"], report.figures)
        target = t["target:read.p99<=2x"]
        # bursty: 3.0x, 75% of the bound, 50% busy, 75% idle, 30 ms; steady: 1.8x, 75%, 44%
        self.assertEqual(target["met"], {"p99": 1, "bound": 2, "busy": 2, "idle": 0,
                                         "react": 0, "all": 1})
        self.assertEqual(target["of"]["idle"], 1)  # the bursty cell only
        self.assertEqual(t["idle"]["met"]["p99"], 2)  # judged at the first target's 2x
        self.assertEqual(t["idle"]["met"]["idle"], 1)  # 180 of untagged's 200 idle: 90%, met
        self.assertEqual(t["idle"]["met"]["all"], 1)  # bursty: 1.5x, 83% of the bound, 50%
        self.assertEqual(goals.k_of("target:read.p99<=1.5x@old", ["read.p99<=2x"]), 1.5)
        self.assertEqual(goals.k_of("untagged", ["read.p99<=3x"]), 3.0)

    def test_reaction_read_by_read(self):
        """A run with reaction_fine_ms is judged on it, not on the 10 ms steps."""
        fine = dict(CELL, variants=dict(CELL["variants"]))
        fine["variants"]["target:read.p99<=2x"] = run(300, 3000, 90, 60, 150, react=[10, 10, 20],
                                                      reaction_fine_ms=[0.4, 0.6, 5.0])
        f = report.figures(fine, "target:read.p99<=2x")
        self.assertEqual((f["react_ms"], f["react_max_ms"]), (0.6, 5.0))
        self.assertTrue(goals.judge(f, 2.0, True)["react"])
        self.assertEqual(report.figures(CELL, "target:read.p99<=2x")["react_ms"], 30)

    def test_markdown(self):
        md = report.markdown(dict(RESULTS, cells=[CELL, STEADY]))
        self.assertIn("| foreground P99 ≤ k× alone | 0 of 2 | 2 of 2 | 2 of 2 | 1 of 2 |", md)
        self.assertIn("| P99, bound and busy share at once | 0 of 2 | 1 of 2 | 0 of 2 | 1 of 2 |", md)
        self.assertIn("| median P99 ÷ alone / of the bound / busy share | 8.00× / 119% / 100% |", md)
        # per group: P99, bound, busy and all three met; median P99 over alone, of the bound
        self.assertIn("| dio | 1 | 0, 1, 1, 0; 3.00×, 75% |", md)
        self.assertIn("| bufsync | 1 | 1, 1, 1, 1; 1.80×, 75% |", md)
        self.assertIn("| bursty | 1 | 0, 1, 1, 0; 3.00×, 75% |", md)
        self.assertIn("| cloud | 1 | 1, 1, 1, 1; 1.80×, 75% |", md)
        self.assertIn("| dio | 2 | 1, 2, 2, 1; 2.40×, 75% |", md)  # both read O_DIRECT
        self.assertLess(md.index("Goals (issue 23)"), md.index("| cell | variant |"))

if __name__ == "__main__":
    unittest.main(verbosity=2)
