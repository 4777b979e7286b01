#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Description: bench/rocksdb/report.py on made-up sustained work directories (no root, no disk):
# pending compaction bytes from a stats dump's level table, compaction while the bursty
# reader is off, the frontier's hull over static settings only, issue 12's goals met and
# missed with their numbers, and --compare flagging a figure more than 25% apart between
# two runs and a changed ranking; a kernel without bfq or block debugfs: n/a rows and the
# rig paragraph saying how the driver depth was checked. Issue 22's per-interval view: the
# reader's P99 in each 10 s from sampled reads and the share in target, the least-squares
# slopes of L0 and pending bytes, when the writer would stall, the W* verdict and search on
# canned per-interval data, and the comparison flagging the new figures; the physical bound
# (bench/rocksdb/physical.py) on a case computed by hand, and no section without a model.
# Usage: test-report.py BENCH_DIR
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

BENCH = sys.argv.pop(1)
sys.path.insert(0, BENCH)
import sustained  # noqa: E402
import physical  # noqa: E402

ALONE_P99 = 1000.0
T0 = 1700000000.0


def level_table(levels):
    """A rocksdb.stats dump's level table: levels is [(files, 'SIZE UNIT')]."""
    rows = [f"  L{i}     {n}/0   {size}   1.0      0.0     0.0      0.0       0.2      0.2       0.0   1.0"
            for i, (n, size) in enumerate(levels)]
    return ("** Compaction Stats [default] **\n"
            "Level    Files   Size     Score Read(GB)  Rn(GB) Rnp1(GB) Write(GB)\n"
            + "-" * 60 + "\n" + "\n".join(rows) + "\n Sum     0/0   0.00 KB\n\n"
            "** Compaction Stats [default] **\nPriority    Files   Size     Score\n" + "-" * 60
            + "\nHigh      0/0    0.00 KB   0.0\n\n")


def db_bench_log(p99, comp_gb, stall_s=0.0, keys=24000, levels=((2, "32.00 MB"),)):
    return (level_table(levels) + "Cumulative compaction: %.2f GB write, 1.0 MB/s write, %.2f GB read\n"
            % (comp_gb, comp_gb) + level_table(levels)
            + "readwhilewriting :     357.1 micros/op 2800 ops/sec 40.000 seconds 112000 operations;\n"
            "Microseconds per read:\nCount: 112000 Average: 357.1  StdDev: 10.00\n"
            f"Percentiles: P50: {p99 / 4:.2f} P75: {p99 / 2:.2f} P99: {p99:.2f} P99.9: {2 * p99:.2f} "
            f"P99.99: {3 * p99:.2f}\n"
            f"rocksdb.number.keys.written COUNT : {keys}\n"
            f"rocksdb.stall.micros COUNT : {int(stall_s * 1e6)}\n")


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def make_run(work, name, p99, comp_gb, stall_s=0.0, off_mib=None):
    """One run directory; with off_mib, a bursty one: reader on 10 s, off 10 s, twice, and
    compaction at 1 MiB/s while it is on, off_mib MiB/s while it is off."""
    d = os.path.join(work, "runs", name)
    os.makedirs(d)
    write(os.path.join(d, "db_bench.log"), db_bench_log(p99, comp_gb, stall_s))
    write(os.path.join(d, "rc"), "0\n")
    write(os.path.join(d, "wall"), f"{T0} {T0 + 40}\n")
    if off_mib is not None:
        write(os.path.join(d, "burst.log"), 
            "".join(f"{T0 + t} {s}\n" for t, s in ((0, "on"), (10, "off"), (20, "on"), (30, "off"))))
        b, lines = 0, []
        for t in range(41):
            lines.append(f"{T0 + t} {b}\n")
            b += int((1 if (t // 10) % 2 == 0 else off_mib) * 2**20)
        write(os.path.join(d, "low-io.log"), "".join(lines))


STATIC = {  # id: (P99 over alone, compaction share of untagged, stall %)
    "untagged": (5.0, 1.0, 0.0),
    "rocksdb-prio": (1.5, 0.8, 0.0),
    "rocksdb-auto": (3.0, 0.5, 0.0),
    "low-rate-8": (1.2, 0.1, 0.0),
    "bfq-be7": (2.5, 0.4, 0.0),
}


def make_work(root, name, adaptive=(1.3, 0.6, 0.5), adaptive_off=9.5, prio_p99=1.5):
    """A sustained work directory; untagged compacts 10 GB and does 10 MiB/s reader-off."""
    work = os.path.join(root, name)
    variants = dict(STATIC, adaptive=adaptive)
    variants["rocksdb-prio"] = (prio_p99, 0.8, 0.0)
    make_run(work, "alone.1", ALONE_P99, 0.0)
    for vid, (r, share, stall) in variants.items():
        make_run(work, f"{vid}.1", r * ALONE_P99, 10 * share, stall * 0.4)
    make_run(work, "untagged~bursty.1", 5 * ALONE_P99, 10.0, 0, off_mib=10)
    make_run(work, "adaptive~bursty.1", 1.5 * ALONE_P99, 6.0, 0, off_mib=adaptive_off)
    meta = {"started": "2026-01-01T00:00:00Z", "finished": "2026-01-01T00:25:00Z", "quick": 0,
            "reps": 1, "seconds": 40, "keys": 100000, "rate": 10 << 20, "sustained": 1,
            "variants": "alone " + " ".join(variants), "device": "loop9", "backing": "a test disk",
            "disk": "ref", "disk_preset": "sata", "depths": "4 256", "kernel": "6.18", "cpus": 2,
            "db_bench": "7.8.3", "have_lat": 0, "have_check": 0, "have_cgroup": 1, "have_rate": 1,
            "have_target": 1, "have_debt": 0, "bursty_variants": "untagged adaptive",
            "estimate_s": 1500, "elapsed_s": 1490, "load_start": "1.0", "load_end": "2.0", "commit": "abc"}
    write(os.path.join(work, "meta.json"), json.dumps(meta))
    return work


def report(*args):
    p = subprocess.run([sys.executable, os.path.join(BENCH, "report.py"), *args],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise AssertionError(f"report.py {args}: exit {p.returncode}: {p.stderr}")
    return p.stdout


def line(text, start):
    got = [x for x in text.splitlines() if x.startswith(start)]
    if not got:
        raise AssertionError(f"no line starting {start!r} in:\n{text}")
    return got[0]


class Report(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="iotier-test-report.")
        self.root = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_pending_bytes(self):
        # L0 over its trigger (5 files >= 4): all of L0 and L1 are due, and L1's excess over
        # 64 MiB, with L2's fan-out: 80 + 100 + (180 - 64) * (200 / 180 + 1) MiB
        text = level_table([(5, "80.00 MB"), (3, "100.00 MB"), (7, "200.00 MB")])
        l0, pend = sustained.debt_series(text)
        self.assertEqual(l0, [5])
        self.assertAlmostEqual(pend[0] / 2**20, 80 + 100 + 116 * (200 / 180 + 1), delta=0.01)
        # under the trigger and every level under its target: nothing pending
        l0, pend = sustained.debt_series(level_table([(2, "32.00 MB"), (1, "10.00 MB")]))
        self.assertEqual((l0, pend), ([2], [0]))

    def test_off_compaction(self):
        make_run(self.root, "x~bursty.1", 1.0, 1.0, off_mib=10)
        d = os.path.join(self.root, "runs", "x~bursty.1")
        got = sustained.off_compaction(os.path.join(d, "burst.log"), os.path.join(d, "low-io.log"))
        self.assertAlmostEqual(got["off_bps"] / 2**20, 10, delta=0.01)
        self.assertAlmostEqual(got["on_bps"] / 2**20, 1, delta=0.01)
        self.assertAlmostEqual(got["off_s"], 20, delta=0.01)

    def test_hull_static_only_and_goals_met(self):
        # adaptive at 1.3x and 60% lies below the line from low-rate-8 to rocksdb-prio: a hull
        # point if it counted: the hull is the static settings' alone
        work = make_work(self.root, "met")
        md = os.path.join(self.root, "BENCHMARKS.md")
        out = report(work, "--write", md, "--svg-dir", os.path.join(self.root, "svg"))
        hull = out.split("On the static hull", 1)[1].split("Best static setting", 1)[0]
        self.assertNotIn("adaptive", hull)
        self.assertIn("`rocksdb-prio`", hull)
        with open(os.path.join(self.root, "svg", "rocksdb-sustained-frontier.svg")) as f:
            svg = f.read()
        self.assertEqual(svg.count('class="adaptive"'), 1)
        with open(md) as f:
            self.assertIn("## RocksDB under compaction, sustained", f.read())
        self.assertIn("**Steady phase: met.** Read P99 1.30× alone", out)
        self.assertIn("compaction 60% of untagged", line(out, "- **Steady phase"))
        self.assertIn("**Reader-off phases: met.** Compaction 10 MiB/s", out)
        self.assertIn("95% (goal ≥ 90%)", line(out, "- **Reader-off"))
        self.assertIn("**Frontier, `adaptive`: met.**", out)
        self.assertIn("**Against RocksDB's auto-tuned limiter: met.** `adaptive` 1.30× alone at "
                      "60% compaction, against 3.00× at 50%", out)
        # prio keeps 80% and no adaptive point does: not at equal compaction, missed
        self.assertIn("**Against `--enable_io_prio`: missed.** No adaptive point compacts as much", out)
        # the best static setting at each share
        self.assertIn("- compaction from 0% to 10% of untagged: **`low-rate-8`**, read P99 1.20× alone.", out)
        self.assertIn("- compaction from 10% to 80% of untagged: **`rocksdb-prio`**", out)
        self.assertIn("| L0 files | pending compaction MiB |", out)

    def test_goals_missed(self):
        work = make_work(self.root, "missed", adaptive=(2.6, 0.3, 3.0), adaptive_off=5)
        out = report(work)
        self.assertIn("**Steady phase: missed.** Read P99 2.60× alone (goal ≤ 2×), compaction 30%", out)
        self.assertIn("stall 3.0% of the run", line(out, "- **Steady phase"))
        self.assertIn("**Reader-off phases: missed.**", out)
        self.assertIn("50% (goal ≥ 90%)", line(out, "- **Reader-off"))
        # bfq-be7 (2.5x at 40%) and rocksdb-prio (1.5x at 80%) are better on both axes; the
        # report names the one with the lowest P99
        self.assertIn("**Frontier, `adaptive`: missed.**", out)
        self.assertIn("`rocksdb-prio` is better on both axes (80%, 1.50×)", line(out, "- **Frontier, `adaptive`"))

    def test_steady_goal_each_bound(self):
        # each bound alone decides: on it is met, just past it is missed
        for adaptive, verdict in (((2.0, 0.5, 1.0), "met"), ((2.1, 0.6, 0.5), "missed"),
                                  ((1.3, 0.45, 0.5), "missed"), ((1.3, 0.6, 1.5), "missed")):
            work = make_work(self.root, "bound-%g-%g-%g" % adaptive, adaptive=adaptive)
            self.assertIn(f"- **Steady phase: {verdict}.**", report(work), adaptive)

    def test_compare(self):
        # run 2: prio's P99 1.5x -> 2.6x (73% apart, and it falls behind bfq-be7 in the
        # ranking); everything else the same
        w1 = make_work(self.root, "one")
        w2 = make_work(self.root, "two", prio_p99=2.6)
        md = os.path.join(self.root, "BENCHMARKS.md")
        write(md, "# Benchmarks\n\n## RocksDB under compaction, sustained\n\nold\n\n## Next\n\nkept\n")
        out = report("--compare", w1, w2, "--write", md, "--svg-dir", os.path.join(self.root, "svg"))
        prio = line(out, "| RocksDB --enable_io_prio | steady |")
        self.assertIn("1.50× / 2.60×", prio)
        self.assertTrue(prio.endswith("| p99 ÷ alone |"), prio)
        auto = line(out, "| RocksDB auto-tuned rate limiter | steady |")
        self.assertTrue(auto.endswith("| - |"), auto)
        self.assertIn("**Ranking: not the same.**", out)
        self.assertIn("`rocksdb-prio` (3 against 4), `bfq-be7` (4 against 3)", line(out, "- **Ranking"))
        self.assertIn("More than 25% apart: `rocksdb-prio` steady (p99 ÷ alone).",
                      line(out, "- **Figures within 25%"))
        with open(md) as f:
            text = f.read()
        self.assertNotIn("old", text)
        self.assertIn("## Next\n\nkept", text)
        self.assertEqual(text.count("## RocksDB under compaction, sustained"), 1)
        for i in (1, 2):
            self.assertTrue(os.path.exists(os.path.join(self.root, "svg", f"rocksdb-sustained-frontier-{i}.svg")))
        # within 25% (1.5x against 1.8x: 20%): not flagged
        w3 = make_work(self.root, "three", prio_p99=1.8)
        out = report("--compare", w1, w3)
        self.assertTrue(line(out, "| RocksDB --enable_io_prio | steady |").endswith("| - |"))

    def test_rate_given_replaces_calibration(self):
        import report
        meta = {"rate": 10 << 20, "seconds": 40, "variants": "untagged adaptive",
                "bursty_variants": "untagged"}
        calibrated = report.sustained_text(dict(meta, calibration={"sustained_mib_s": 16}))
        given = report.sustained_text(dict(meta, calibration={"given": True}))
        self.assertIn("untagged sustained 16 MiB/s", calibrated)
        self.assertIn("given with `--rate` (no calibration", given)
        self.assertNotIn("calibrated first", given)
        for text in (calibrated, given):
            self.assertIn("Each phase is 40 s", text)
            self.assertIn("10.0 MiB/s", text)

    def test_cdfs_of_bursty_phases(self):
        """One sustained run written alone draws a CDF per phase, bursty ones included
        (report.py once failed on the phase's run id, 'adaptive~bursty')."""
        hist = ("------------------------------------------------------\n"
                "[       0,       1 ]      100  50.000%  50.000% ##########\n"
                "(       1,       2 ]      100  50.000% 100.000% ##########\n\n")
        with tempfile.TemporaryDirectory() as root:
            work = make_work(root, "run")
            for run in ("alone.1", "adaptive~bursty.1"):
                log = os.path.join(work, "runs", run, "db_bench.log")
                head, _, tail = open(log).read().partition("rocksdb.number.keys.written")
                write(log, head + hist + "rocksdb.number.keys.written" + tail)
            md = os.path.join(root, "B.md")
            write(md, "# Benchmarks\n")
            report(work, "--write", md, "--svg-dir", os.path.join(root, "svg"))
            svg = os.path.join(root, "svg", "rocksdb-sustained-adaptive~bursty.svg")
            self.assertTrue(os.path.exists(svg), os.listdir(os.path.join(root, "svg")))
            self.assertIn("bursty reader", open(svg).read())

    def test_kernel_without_bfq_or_block_debugfs(self):
        """A run on a kernel without bfq and block debugfs: its bfq variant is an n/a row
        (bench/run writes runs/ID.na/why and runs nothing), the other rows are there, and
        the rig paragraph says how the driver depth was checked and that bfq is missing."""
        work = make_work(self.root, "nobfq")
        shutil.rmtree(os.path.join(work, "runs", "bfq-be7.1"))
        os.makedirs(os.path.join(work, "runs", "bfq-be7.na"))
        write(os.path.join(work, "runs", "bfq-be7.na", "why"), "n/a: no bfq in this kernel\n")
        meta = json.load(open(os.path.join(work, "meta.json")))
        meta.update(depths="4 256 inflight", have_bfq=0)
        write(os.path.join(work, "meta.json"), json.dumps(meta))
        out = report(work)
        self.assertIn("n/a: no bfq in this kernel", out)
        self.assertIn("/sys/block/DEV/inflight", line(out, "**Rig.**"))
        self.assertIn("This kernel has no bfq", line(out, "**Rig.**"))
        self.assertIn("scheduler's own depth: 256", line(out, "**Rig.**"))
        self.assertNotIn("inflight)", line(out, "**Rig.**"))
        # the other variants still have their rows
        self.assertIn("| iotier adaptive", out)

    def test_run_without_untagged(self):
        """`bench/run --only alone,adaptive` (a controller measured on its own, next to
        another run): reported, its compaction share said to be unknown, not guessed."""
        work = make_work(self.root, "nountagged")
        for d in ("untagged.1", "untagged~bursty.1"):
            shutil.rmtree(os.path.join(work, "runs", d))
        out = report(work)
        self.assertIn("compaction share unknown (no untagged run)", out)
        self.assertIn("| iotier adaptive", out)

    def test_interrupted_run(self):
        """A kept run stopped before its end (bench/run's cleanup writes meta.json with
        finished null): reported with what ran, and said to be interrupted."""
        work = make_work(self.root, "stopped")
        meta = json.load(open(os.path.join(work, "meta.json")))
        meta.update(finished=None, interrupted=True)
        write(os.path.join(work, "meta.json"), json.dumps(meta))
        out = report(work)
        self.assertIn("– **interrupted** (stopped before its end", out)
        self.assertIn("| iotier adaptive", out)

    def test_compare_wants_two_sustained_runs(self):
        w1 = make_work(self.root, "one")
        p = subprocess.run([sys.executable, os.path.join(BENCH, "report.py"), "--compare", w1],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 2)
        self.assertIn("two work directories", p.stderr)


def reads_log(p99s, per=100):
    """A sampler log (bench/run's read_timer): per reads in each 10 s interval whose P99 is
    the given value (None: 5 reads, an interval the report must not judge). Each interval
    has 98% of its reads at a tenth of the P99, and its two slowest at the P99."""
    lines = []
    for i, p in enumerate(p99s):
        n = per if p is not None else 5
        for j in range(n):
            lat = p if p is not None and j >= n - 2 else (p or 1000) // 10
            lines.append(f"{int((i * 10 + j * 9.0 / n) * 1e6)} {int(lat)}\n")
    return "".join(lines)


def dumps(l0s, stalls=None):
    """Periodic stats dumps: L0 files from l0s (32 MiB each; L1 at 60 MiB), each with an
    "Interval stall" line."""
    out = []
    for i, n in enumerate(l0s):
        st = (stalls or [0.0] * len(l0s))[i]
        out.append(f"Interval stall: 00:00:0.000 H:M:S, {st:.1f} percent\n"
                   + level_table([(n, f"{32 * n:.2f} MB"), (3, "60.00 MB")]))
    return "".join(out)


def make_interval_run(work, name, p99s, l0s, stall_s=0.0, stalls=None, rc=0):
    d = os.path.join(work, name)
    os.makedirs(d)
    write(os.path.join(d, "db_bench.log"), dumps(l0s, stalls) + db_bench_log(1000, 1.0, stall_s))
    write(os.path.join(d, "reads.log"), reads_log(p99s))
    write(os.path.join(d, "rc"), f"{rc}\n")
    write(os.path.join(d, "wall"), f"{T0} {T0 + 40}\n")
    return d


class Intervals(unittest.TestCase):
    """The per-interval math of issue 22 (bench/sustained.py)."""

    def test_interval_p99_and_share(self):
        # 4 intervals; the third has too few reads (the reader frozen) and is not judged
        samples = sustained.read_samples_text(reads_log([1000, 3000, None, 1500]))
        got = sustained.interval_p99s(samples)
        self.assertEqual(got, [1000, 3000, None, 1500])
        # a last interval whose reads span under 5 s (the phase ended 2 s into it): left out
        tail = samples + [(40 + j * 0.02, 99999) for j in range(100)]
        self.assertEqual(sustained.interval_p99s(tail), [1000, 3000, None, 1500])
        self.assertEqual(sustained.interval_p99s(tail + [(46.0, 1)])[-1], 99999)
        # limit 2000 (2x of 1000): 2 of the 3 judged intervals
        self.assertAlmostEqual(sustained.in_target_share(got, 2000), 2 / 3)
        self.assertIsNone(sustained.in_target_share([None, None], 2000))
        # nearest rank: of 100 values 1..100, P99 is 99; of 10 values, the largest
        self.assertEqual(sustained.p99(range(1, 101)), 99)
        self.assertEqual(sustained.p99(range(1, 11)), 10)

    def test_slopes(self):
        # one more L0 file every 10 s: 6 per minute; a flat oscillation: zero
        self.assertAlmostEqual(sustained.slope_per_min([4, 5, 6, 7, 8]), 6.0)
        self.assertAlmostEqual(sustained.slope_per_min([4, 6, 4, 6, 4, 6, 4, 6, 4, 6, 4, 6]), 6 / 143 * 6, places=6)
        self.assertLess(abs(sustained.slope_per_min([4, 6] * 30)), 0.05)
        self.assertIsNone(sustained.slope_per_min([4, 5]))
        self.assertAlmostEqual(sustained.fitted_end([1, 2, 3, 4]), 4.0)

    def test_stall_eta(self):
        # pending: 10 GiB growing 1 GiB a minute (1/6 GiB each 10 s) for 5 minutes: ends at
        # 15 GiB, soft limit 64 GiB in 49 min, hard 128 in 113; L0 flat at 4
        g = 1 << 30
        pend = [10 * g + i * g // 6 for i in range(31)]
        eta = sustained.stall_eta([4] * 31, pend)
        self.assertAlmostEqual(eta["soft_min"], 49, delta=0.01)
        self.assertAlmostEqual(eta["hard_min"], 113, delta=0.01)
        self.assertIsNone(eta["l0_slowdown_min"])
        self.assertEqual(sustained.eta_text(eta), "soft pending limit in 49 min")
        # L0 from 4 growing 0.5 a minute: slowdown (20) 32 min after it reached 4 + 2.5
        eta = sustained.stall_eta([4 + i / 12 for i in range(31)], [0] * 31)
        self.assertAlmostEqual(eta["l0_slowdown_min"], (20 - 6.5) / 0.5, delta=0.01)
        self.assertEqual(sustained.eta_text(eta), "L0 slowdown in 27 min")
        # nothing grows: no stall; L0 past its stop trigger: now
        self.assertEqual(sustained.eta_text(sustained.stall_eta([4] * 10, [g] * 10)), "not growing")
        self.assertEqual(sustained.eta_text(sustained.stall_eta([40] * 10, [0] * 10)), "L0 stop now")

    def test_wstar_verdict(self):
        ok20 = [1000] * 19 + [3000]          # 95% of 20 intervals within 2x of 1000
        ok, share, why = sustained.wstar_verdict(ok20, 1000, 2, 0.5, 0.1)
        self.assertTrue(ok, why)
        self.assertAlmostEqual(share, 0.95)
        # 94%: one interval too many over
        ok, share, why = sustained.wstar_verdict([1000] * 47 + [3000] * 3, 1000, 2, 0.0, 0.0)
        self.assertFalse(ok)
        self.assertIn("94% of intervals", why[0])
        # each other bound alone decides
        self.assertFalse(sustained.wstar_verdict(ok20, 1000, 2, 1.1, 0.0)[0])
        self.assertFalse(sustained.wstar_verdict(ok20, 1000, 2, 0.0, 0.25)[0])
        self.assertTrue(sustained.wstar_verdict(ok20, 1000, 2, 1.0, 0.2)[0])
        # intervals not judged do not count against (or for) it
        self.assertTrue(sustained.wstar_verdict(ok20 + [None] * 5, 1000, 2, 0, 0)[0])
        self.assertFalse(sustained.wstar_verdict([None] * 5, 1000, 2, 0, 0)[0])

    def test_wstar_search(self):
        mib = 1 << 20

        def search(truth):
            probes = []
            while (nxt := sustained.wstar_next(probes)) is not None:
                probes.append((nxt, nxt <= truth))
            return [r / mib for r, _ in probes], sustained.wstar_value(probes) / mib
        # doubling to the first failure, then bisection to within 20%
        self.assertEqual(search(20 * mib), ([8, 16, 32, 24, 20], 20))
        self.assertEqual(search(3 * mib), ([8, 4, 2, 3, 3.5], 3))
        # the top of the range holds: 128; nothing holds down to 1/4 MiB/s: 0
        self.assertEqual(search(500 * mib), ([8, 16, 32, 64, 128], 128))
        self.assertEqual(search(0), ([8, 4, 2, 1, 0.5, 0.25], 0))
        # below 1 MiB/s, in quarter MiB/s steps
        self.assertEqual(search(0.5 * mib), ([8, 4, 2, 1, 0.5, 0.75], 0.5))
        # noise: 12 failed but 14 held: the bracket stays under the lowest failure
        probes = [(8 * mib, True), (16 * mib, False), (12 * mib, False), (14 * mib, True)]
        self.assertEqual(sustained.wstar_bracket(probes), (8 * mib, 12 * mib))
        self.assertEqual(sustained.wstar_next(probes), 10 * mib)
        self.assertEqual(sustained.wstar_value(probes), 8 * mib)

    def test_wstar_probe_cli(self):
        """bench/run's probe verdict: canned runs, JSON out, exit 0 when it holds."""
        alone = make_interval_run(self.tmp, "alone", [1000] * 4, [2] * 4)
        good = make_interval_run(self.tmp, "good", [1500] * 4, [4, 5, 5, 4])
        # debt grows: one more L0 file every 10 s, no stall yet, every interval in target
        # (the canned log's run is 40 s: 4 periodic dumps, the final `stats` left out)
        bad = make_interval_run(self.tmp, "bad", [1500] * 4, [4, 5, 6, 7])
        cmd = [sys.executable, os.path.join(BENCH, "report.py"), "--wstar-probe"]
        p = subprocess.run(cmd + [good, alone, "2", str(8 << 20), "60"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(json.loads(p.stdout)["share"], 1.0)
        p = subprocess.run(cmd + [bad, alone, "2", str(8 << 20), "60"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("L0 slope +6.00/min", json.loads(p.stdout)["why"][0])
        jl = os.path.join(self.tmp, "probes.jsonl")
        write(jl, p.stdout)
        p = subprocess.run([sys.executable, os.path.join(BENCH, "report.py"), "--wstar-next", jl],
                           capture_output=True, text=True)
        self.assertEqual(p.stdout.strip(), str(4 << 20))

    def setUp(self):
        self._t = tempfile.TemporaryDirectory(prefix="iotier-test-intervals.")
        self.tmp = self._t.name

    def tearDown(self):
        self._t.cleanup()


class IntervalReport(unittest.TestCase):
    """The per-interval table, the W* section and the comparison's new figures."""

    def setUp(self):
        self._t = tempfile.TemporaryDirectory(prefix="iotier-test-intervals.")
        self.root = self._t.name

    def tearDown(self):
        self._t.cleanup()

    def work(self, name, adaptive_p99s, adaptive_l0):
        w = make_work(self.root, name)
        runs = os.path.join(w, "runs")
        shutil.rmtree(os.path.join(runs, "alone.1"))
        shutil.rmtree(os.path.join(runs, "adaptive.1"))
        make_interval_run(runs, "alone.1", [1000] * 4, [2] * 4)
        make_interval_run(runs, "adaptive.1", adaptive_p99s, adaptive_l0, stalls=[0, 0, 2.5, 0])
        return w

    def test_interval_table_and_wstar(self):
        w = self.work("one", [1500, 1500, 2500, 1500], [4, 6, 8, 10])
        os.makedirs(os.path.join(w, "wstar", "adaptive"))
        write(os.path.join(w, "wstar", "k"), "2\n")
        probes = [{"rate": 8 << 20, "ok": True, "share": 1.0, "stall_pct": 0.0, "l0_slope": 0.0, "why": [],
                   "alone_p99": 1000},
                  {"rate": 16 << 20, "ok": False, "share": 0.5, "stall_pct": 3.0, "l0_slope": 1.0,
                   "why": ["stall 3.0% (> 1%)"], "alone_p99": 1000}]
        write(os.path.join(w, "wstar", "adaptive", "probes.jsonl"), "".join(json.dumps(p) + "\n" for p in probes))
        os.makedirs(os.path.join(w, "wstar", "low"))
        write(os.path.join(w, "wstar", "low", "probes.jsonl"), json.dumps(dict(probes[0], rate=12 << 20)) + "\n")
        # the reader alone again after the search: P99 1250 against the probes' 1000
        make_interval_run(os.path.join(w, "runs"), "alone.2", [1250] * 4, [2] * 4)
        out = report(w)
        self.assertIn("measured again after the search: 1250 µs (+25%", out)
        row = line(out, "| iotier adaptive, P99 ≤ 2× | steady | 4 |")
        # alone's P99 is the median of its two runs, 1125: 3 of 4 intervals within 2x of
        # it; median interval P99 1500 (1.33x), worst 2500 (2.22x); one interval stalled;
        # L0 +12/min, from 10 to the slowdown trigger 20 in under a minute
        self.assertIn("| 75% | 1.33× (2.22×) | 1 of 4 | +12.00 |", row)
        self.assertIn("L0 slowdown in 0.8 min", row)
        self.assertIn("| iotier adaptive, P99 ≤ 2× | 8.00 | 8 ✓, 16 ✗ |", out)
        self.assertIn("Best static setting: **`low`**, W* 12.00 MiB/s", out)
        self.assertIn("failed: stall 3.0% (> 1%)", out)
        # nothing held down to the lowest rate tried: below it, not a W* of 0
        self.assertEqual(sustained.wstar_text(0, [dict(probes[1], rate=1 << 20)]), "< 1")
        # one run's probes only: one reference, no word of a resumed search
        self.assertNotIn("resumed across runs", out)
        self.assertIn("| 0.0% | +0.00 | 1000 | held |", out)

    def test_wstar_resumed(self):
        """A search resumed across runs (bench/run --wstar-resume): each probe keeps its own
        run's reader alone, and the page says the references differ."""
        w = self.work("resumed", [1500] * 4, [4, 5, 4, 5])
        os.makedirs(os.path.join(w, "wstar", "low"))
        write(os.path.join(w, "wstar", "k"), "2\n")
        old = {"rate": 8 << 20, "ok": True, "share": 1.0, "stall_pct": 0.0, "l0_slope": 0.0,
               "why": [], "alone_p99": 900}
        new = dict(old, rate=16 << 20, ok=False, share=0.5, why=["P99 <= 2x alone in 50% of intervals (< 95%)"],
                   alone_p99=1100)
        write(os.path.join(w, "wstar", "low", "probes.jsonl"), json.dumps(old) + "\n" + json.dumps(new) + "\n")
        out = report(w)
        self.assertIn("resumed across runs (bench/run --wstar-resume)", out)
        self.assertIn("every probe's reference: each probe's own run's", out)
        self.assertIn("(900, 1100 µs)", out)
        self.assertIn("| 8 | 100% | 0.0% | +0.00 | 900 | held |", out)
        self.assertIn("| 16 | 50% | 0.0% | +0.00 | 1100 | failed: P99 <= 2x alone in 50%", out)

    def test_compare_interval_figures(self):
        w1 = self.work("one", [1500] * 4, [4, 5, 4, 5])
        w2 = self.work("two", [1500, 2500, 2500, 1500], [5, 4, 5, 4])
        out = report("--compare", w1, w2)
        row = line(out, "| iotier adaptive, P99 ≤ 2× | steady |")
        # in target 100% against 50%: flagged; L0 slopes of +-0.6/min: over the bound, and
        # of opposite sign: flagged too
        self.assertIn("100% / 50%", row)
        # pending bytes at ±38 MiB/min: under 64 in both, the same
        self.assertTrue(row.endswith("| intervals in target, L0 slope |"), row)
        w3 = self.work("three", [1500] * 4, [4, 4, 4, 4])
        w4 = self.work("four", [1500] * 4, [4, 4, 4, 4])
        row = line(report("--compare", w3, w4), "| iotier adaptive, P99 ≤ 2× | steady |")
        self.assertTrue(row.endswith("| - |"), row)


class PhysicalBound(unittest.TestCase):
    """The sustained run's physical bound (bench/rocksdb/physical.py) on a case computed by
    hand: the sata model, a reader alone at 2000 preads/s of 16448 bytes, P99 500 us, and
    compaction moving 10 device MiB per MiB written."""
    SATA = {"lat_us": 100, "bw": 200_000_000, "channels": 1}

    def test_bound_by_hand(self):
        # A read lasts 100 + 16448 / 200e6 s = 182.24 us of the channel; the cycle alone is
        # 500 us, so it idles 317.76 us; k = 2 allows 500 us more. The largest piece lasts
        # 317.76 + 500 us: (817.76 - 100) us x 200 MB/s = 143552 bytes, one per cycle of
        # 500 + 500 us: 143.552 MB/s = 136.90 MiB/s, so a writer of 13.69 MiB/s at most.
        b = physical.physical_bound(self.SATA, 2000, 500, 10.0, 2)
        self.assertAlmostEqual(b["piece_bytes"], 143552, delta=1)
        self.assertAlmostEqual(b["comp_mib_s"], 143.552e6 / 2**20, places=2)
        self.assertAlmostEqual(b["writer_mib_s"], 13.690, places=2)
        # a tighter k gives a smaller piece, less compaction, a slower writer
        tight = physical.physical_bound(self.SATA, 2000, 500, 10.0, 1.5)
        self.assertLess(tight["writer_mib_s"], b["writer_mib_s"])

    def run_state(self, disk="ref"):
        meta = {"disk": disk, "backing": "the reference disk, preset `sata` (model 100 200000000 1: ...)"}
        s = {"alone": {"pread_rate": 2000, "get_p99_all": 500, "p99": 400},
             "untagged": {"writer_mib_s": 9.6, "comp_mib_s": 96.0, "p99": 8000},
             "adaptive": {"comp_mib_s": 68.45, "p99": 1000}}
        return meta, s

    def test_section(self):
        meta, s = self.run_state()
        text = "\n".join(physical.section(meta, s, [("untagged", "untagged"), ("adaptive", "adaptive 2x")]))
        self.assertIn("| 2× | 140 KiB | 136.9 | 13.69 |", text)
        self.assertIn("10.0 device MiB per MiB written", text)
        # 68.45 of 136.90 MiB/s: half the bound, and the reader at 1000 / 400 us
        self.assertIn("- adaptive 2x, steady: compaction 68.5 MiB/s, 50% of the bound at 2×", text)
        self.assertIn("2.50× alone", text)
        self.assertNotIn("- untagged", text)

    def test_no_model_no_section(self):
        meta, s = self.run_state(disk="loop")
        self.assertEqual(physical.section(meta, s, []), [])
        meta, s = self.run_state()
        del s["alone"]["pread_rate"]  # a run without the sampler
        self.assertEqual(physical.section(meta, s, []), [])
        self.assertEqual(physical.variant_k("adaptive-1.5"), 1.5)
        self.assertIsNone(physical.variant_k("low-rate-32"))


if __name__ == "__main__":
    unittest.main(argv=[os.path.basename(__file__)])
