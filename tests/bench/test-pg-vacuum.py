#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Description: bench/postgres/pg-vacuum without PostgreSQL: its report (bench/postgres/pg-vacuum-report.py) on
# canned pgbench logs (percentiles by nearest rank, only the transactions inside each run's
# window, failed ones left out, medians over rounds, the ratios to alone and untagged, the
# goal's verdicts, its section replaced in place in BENCHMARKS.md; issue 22: the P99 of
# every 10 s interval of a window, the share of intervals in which the goal held, the
# reader's wait events tabled per variant; --also-build's adaptive@LABEL, another build's
# controller, a row of its own right after adaptive in every table and verdict, named by its
# build's commit), and bad flags: one line, exit 2, nothing created (--also-build's too: a bad
# LABEL, a BUILDDIR not built, a second --also-build, IOTIER_SHIM set; and --only takes
# adaptive@LABEL).
# Usage: test-pg-vacuum.py BENCH_DIR
import json
import os
import subprocess
import sys
import tempfile
import unittest
import importlib.util

BENCH = os.path.abspath(sys.argv.pop(1))
spec = importlib.util.spec_from_file_location("pgvr", os.path.join(BENCH, "pg-vacuum-report.py"))
pgvr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pgvr)

T0 = 1_700_000_000  # the canned runs' epoch


def write_run(work, name, lats, win, before=(), failed=0):
    """runs/NAME with one pgbench log: lats (µs) spread over the window, `before` ones
    ending before it (the warm-up: must not count), `failed` failed transactions."""
    d = os.path.join(work, "runs", name)
    os.makedirs(d)
    lo = win["warm"] if win.get("vacuum_start") is None else win["vacuum_start"]
    hi = min(win["pgbench_end"], win.get("vacuum_end") or win["pgbench_end"])
    with open(os.path.join(d, "pgb.4242"), "w") as f:
        n = 0
        for us in before:
            f.write(f"0 {n} {us} 0 {T0} 500000\n")
            n += 1
        for i, us in enumerate(lats):
            t = lo + (hi - lo) * (i + 0.5) / len(lats)
            f.write(f"0 {n} {us} 0 {int(t)} {int((t % 1) * 1e6)}\n")
            n += 1
        for _ in range(failed):
            f.write(f"0 {n} failed 0 {int(lo) + 1} 0\n")
            n += 1
        # the last transaction: pgbench's own end
        f.write(f"0 {n} 1 0 {int(win['pgbench_end'])} 0\n")
    with open(os.path.join(d, "window.json"), "w") as f:
        json.dump(win, f)


def win(vs=None, ve=None, end=T0 + 45):
    return {"start": T0, "warm": T0 + 5, "vacuum_start": vs, "vacuum_end": ve,
            "pgbench_end": end, "rc": 0}


class Report(unittest.TestCase):
    def test_percentile_nearest_rank(self):
        xs = list(range(1, 1001))
        self.assertEqual(pgvr.percentile(xs, 50), 500)
        self.assertEqual(pgvr.percentile(xs, 99), 990)
        self.assertEqual(pgvr.percentile(list(reversed(xs)), 99), 990)
        self.assertEqual(pgvr.percentile([7], 99), 7)
        self.assertIsNone(pgvr.percentile([], 50))
        # 1.5 -> rank 2 of [10, 20, 30]
        self.assertEqual(pgvr.percentile([30, 10, 20], 50), 20)

    def test_log_lines(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "pgb.1")
            with open(p, "w") as f:
                f.write("0 0 250 0 1700000000 250000\n0 1 failed 0 1700000001 0\n"
                               "0 2 skipped 0 1700000001 5\n1 3 900 0 1700000002 999999\n")
            self.assertEqual(pgvr.parse_pgbench_log(p),
                             [(1700000000.25, 250), (1700000002.999999, 900)])

    def canned(self, work):
        with open(os.path.join(work, "meta.json"), "w") as f:
            json.dump({"started": "x", "reps": 2, "commit": "11ae8d9", "also_build_label": "base",
                       "also_build_dir": "/work/base/build", "also_build_commit": "v0.9-3-gdeadbee"}, f)
        base = list(range(1, 1001))  # alone: P50 500 µs, P99 990 µs
        # alone, two rounds: the warm-up's slow reads must not count
        write_run(work, "alone.1", base, win(), before=[10**6] * 50)
        write_run(work, "alone.2", [x * 2 for x in base], win())  # P99 1980: median 1485
        # untagged: P99 9900, VACUUM 10 s and 12 s (median 11)
        write_run(work, "untagged.1", [x * 10 for x in base], win(T0 + 5, T0 + 15), before=[1] * 300)
        write_run(work, "untagged.2", [x * 10 for x in base], win(T0 + 5, T0 + 17))
        # what the reader waited on: 3 samples in untagged.1's window (one with no active
        # reader), one in untagged.2's, one before the window; and psql's other lines
        with open(os.path.join(work, "runs", "untagged.1", "waits"), "w") as f:
            f.write(f"NOTICE:  {T0 + 1}.5 CPU\nNOTICE:  {T0 + 6}.25 IO:DataFileRead\n"
                    f"NOTICE:  {T0 + 7}.0 LWLock:WALWrite\nNOTICE:  {T0 + 8}.0 <NULL>\nDO\n")
        with open(os.path.join(work, "runs", "untagged.2", "waits"), "w") as f:
            f.write(f"NOTICE:  {T0 + 6} IO:DataFileRead IO:DataFileRead\n")
        # adaptive: P99 1980 (1.33x), VACUUM 20 s (1.82x): met, with failed transactions ignored
        write_run(work, "adaptive.1", [x * 2 for x in base], win(T0 + 5, T0 + 25), failed=20)
        # adaptive@base, the other build: P99 2970 (2.00x), VACUUM 15 s (1.36x): missed; its
        # first 10 s (the lower two thirds of the latencies) held the goal, the last 5 s not;
        # the reader waited on the WAL lock in 2 of its 3 samples
        write_run(work, "adaptive@base.1", [x * 3 for x in base], win(T0 + 5, T0 + 20))
        with open(os.path.join(work, "runs", "adaptive@base.1", "waits"), "w") as f:
            f.write(f"NOTICE:  {T0 + 6} LWLock:WALWrite\nNOTICE:  {T0 + 7} LWLock:WALWrite\n"
                    f"NOTICE:  {T0 + 8} IO:DataFileRead\n")
        # low: P99 1.33x but VACUUM 30 s and it outlived the reader (ended at 40)
        write_run(work, "low.1", [x * 2 for x in base], dict(win(T0 + 5, T0 + 35, end=T0 + 30), vacuum_cancelled=True))
        # low-rate: P99 fine, VACUUM 3x: missed
        write_run(work, "low-rate.1", base, win(T0 + 5, T0 + 38))
        # not a variant, and a run without its window: both ignored
        os.makedirs(os.path.join(work, "runs", "bogus.1"))
        write_run(work, "adaptive@.1", base, win(T0 + 5, T0 + 20))
        os.makedirs(os.path.join(work, "runs", "alone.3"))

    def test_summary_and_verdicts(self):
        with tempfile.TemporaryDirectory() as work:
            self.canned(work)
            meta, runs = pgvr.load(work)
            self.assertEqual(len(runs["alone"]), 2)
            r = runs["alone"][0]
            self.assertEqual((r["tx"], r["p50_us"], r["p99_us"]), (1001, 500, 990))
            self.assertEqual(runs["untagged"][0]["tx"], 1000)
            self.assertEqual(runs["adaptive"][0]["tx"], 1000)  # failed ones left out
            self.assertAlmostEqual(runs["untagged"][0]["tps"], 100.0)
            self.assertAlmostEqual(runs["untagged"][0]["vacuum_s"], 10.0)
            s = pgvr.summarize(runs)
            self.assertEqual(s["alone"]["p99_us"], 1485)
            self.assertEqual(s["untagged"]["vacuum_s"], 11)
            self.assertAlmostEqual(s["untagged"]["p99_x"], 9900 / 1485)
            self.assertAlmostEqual(s["adaptive"]["p99_x"], 1980 / 1485)
            self.assertAlmostEqual(s["adaptive"]["vacuum_x"], 20 / 11)
            self.assertTrue(s["low"]["outlived"])
            self.assertEqual(s["untagged"]["waits"], {"IO:DataFileRead": 3, "LWLock:WALWrite": 1})
            self.assertEqual(pgvr.top_waits(s["untagged"]["waits"]), "IO:DataFileRead 75%, LWLock:WALWrite 25%")
            self.assertIsNone(pgvr.top_waits(s["alone"]["waits"]))
            self.assertFalse(s["adaptive"]["outlived"])
            self.assertEqual(pgvr.verdict(s["adaptive"])[0], "met")
            self.assertEqual(pgvr.verdict(s["untagged"])[0], "missed")
            self.assertEqual(pgvr.verdict(s["low-rate"])[0], "missed")
            self.assertIn("VACUUM 3.00x untagged (> 2.0x)", pgvr.verdict(s["low-rate"])[1])
            res, why = pgvr.verdict(s["low"])
            self.assertEqual(res, "missed")  # 30/11 > 2x even as a lower bound
            # a lower bound under the goal says nothing
            s["low"]["vacuum_x"] = 1.5
            self.assertEqual(pgvr.verdict(s["low"])[0], "inconclusive")
            s["low"]["vacuum_x"] = 30 / 11
            self.assertEqual(pgvr.verdict({"p99_x": None, "vacuum_x": 1.0})[0], "inconclusive")
            text = "\n".join(pgvr.render(meta, s))
            self.assertIn("- **adaptive** (the goal: a target): **met**: P99 1.33x alone", text)
            self.assertIn("| untagged |", text)
            self.assertIn("| ≥ 30.0 s (cancelled in 1 of 1) |", text)
            self.assertIn("- untagged: what the reader waited on in its window (sampled): IO:DataFileRead 75%", text)
            # what stood in the way: the starved VACUUM of low; the WAL lock of untagged
            self.assertIn("- **low**: **missed**: P99 1.33x alone (≤ 1.5x), VACUUM 2.73x untagged (> 2.0x).\n"
                          "  - VACUUM got little of the disk while the reader ran", text)
            self.assertEqual(pgvr.obstacles(s["low-rate"]), [])
            self.assertEqual(len(pgvr.obstacles(s["untagged"])), 1)
            self.assertIn("in 25% of its samples (LWLock:WALWrite 100%)", pgvr.obstacles(s["untagged"])[0])
            self.assertIn("| 11.0 s | 1.00× |", text)

    def test_other_build(self):
        # --also-build's adaptive@base: judged against the same alone and untagged as adaptive
        with tempfile.TemporaryDirectory() as work:
            self.canned(work)
            meta, runs = pgvr.load(work)
            self.assertNotIn("adaptive@", runs)
            self.assertEqual(len(runs["adaptive@base"]), 1)
            s = pgvr.summarize(runs)
            o = s["adaptive@base"]
            self.assertEqual(o["p99_us"], 2970)
            self.assertAlmostEqual(o["p99_x"], 2970 / 1485)
            self.assertAlmostEqual(o["vacuum_x"], 15 / 11)
            self.assertEqual(len(o["interval_p99s"]), 2)
            self.assertEqual(o["intervals_held"], 0.5)
            self.assertEqual(pgvr.verdict(o)[0], "missed")
            self.assertEqual(pgvr.variant_order(s),
                             ["alone", "untagged", "low", "low-rate", "adaptive", "adaptive@base"])
            L = pgvr.render(meta, s)
            text = "\n".join(L)
            # every table: the row right after adaptive's
            rows = [line for line in L if line.startswith("| adaptive")]
            self.assertEqual(len(rows), 6, rows)
            self.assertEqual([r.split(" |")[0] for r in rows], ["| adaptive", "| adaptive@base"] * 3)
            # the main table names both builds
            self.assertIn("| adaptive@base | as adaptive, with the iotier and libiotier.so of the build `base` "
                          "(commit `v0.9-3-gdeadbee`, `/work/base/build`) | 1.50 ms | 2.97 ms | 2.00× |", text)
            self.assertIn("; this tree's build (commit `11ae8d9`) |", text)
            self.assertIn("| 15.0 s | 1.36× |", text)
            # the 10 s intervals, the wait events, the verdict
            self.assertIn("| adaptive@base | 2 | 50% | 2.01× |", text)
            self.assertIn("| adaptive@base | 3 | 67% | 33% | 0% |", text)
            self.assertIn("- **adaptive@base** (the goal: a target, build `base` (commit `v0.9-3-gdeadbee`, "
                          "`/work/base/build`)): **missed**: P99 2.00x alone (> 1.5x), VACUUM 1.36x untagged", text)
            self.assertLess(text.index("- **adaptive**"), text.index("- **adaptive@base**"))
            self.assertLess(text.index("- **adaptive@base**"), text.index("- **low-rate**"))
            # without the script's meta, the label alone
            self.assertEqual(pgvr.build_name({}, "adaptive@new"), "`new`")

    def test_interval_p99s(self):
        # a 30 s window: 100 transactions of 1..100 µs in the first 10 s (P99 99), 98 of
        # 500 and 2 of 5000 in the next (P99 5000), 10 in the last (too few: not judged);
        # one at the window's very end falls in the last interval, one after it in none
        lo = T0 + 5.0
        tx = [(lo + i * 0.1, i + 1) for i in range(100)]
        tx += [(lo + 10 + i * 0.1, 5000 if i >= 98 else 500) for i in range(100)]
        tx += [(lo + 20 + i, 7) for i in range(9)] + [(lo + 30, 7), (lo + 31, 10**6)]
        got = pgvr.interval_p99s(tx, lo, lo + 30)
        self.assertEqual(got, [99, 5000, None])
        self.assertEqual(pgvr.interval_p99s(tx, lo, lo + 30, min_tx=10), [99, 5000, 7])
        self.assertEqual(pgvr.share_within(got, 1000), 0.5)
        self.assertEqual(pgvr.share_within(got, 5000), 1.0)
        self.assertIsNone(pgvr.share_within([None], 1000))
        # a window of 12 s: two intervals, the second 2 s long
        self.assertEqual(len(pgvr.interval_p99s(tx, lo, lo + 12)), 2)

    def test_interval_share_and_waits_table(self):
        with tempfile.TemporaryDirectory() as work:
            self.canned(work)
            meta, runs = pgvr.load(work)
            s = pgvr.summarize(runs)
            # goal 1.5 x 1485 µs: untagged's 10x latencies never hold (1 interval in
            # untagged.1's 10 s, 2 in untagged.2's 12 s); adaptive's 2x always do (20 s: 2)
            self.assertEqual(len(s["untagged"]["interval_p99s"]), 3)
            self.assertEqual(s["untagged"]["intervals_held"], 0.0)
            self.assertEqual(len(s["adaptive"]["interval_p99s"]), 2)
            self.assertEqual(s["adaptive"]["intervals_held"], 1.0)
            # low-rate: 33 s, 4 intervals, the last 3 s long but with enough transactions
            self.assertEqual(len(s["low-rate"]["interval_p99s"]), 4)
            # the worst interval of untagged: its second half's P99, 10 x 995... over 1485
            self.assertGreater(s["untagged"]["worst_interval_x"], 6.0)
            text = "\n".join(pgvr.render(meta, s))
            self.assertIn("| untagged | 3 | 0% |", text)
            self.assertIn("| adaptive | 2 | 100% |", text)
            # the wait events per variant: LWLock:WALWrite first, always
            self.assertIn("| variant | samples | LWLock:WALWrite | IO:DataFileRead | other |", text)
            self.assertIn("| untagged | 4 | 25% | 75% | 0% |", text)
            self.assertIn("| alone | 0 | — | — | — |", text)

    def test_write_in_place(self):
        with tempfile.TemporaryDirectory() as work:
            self.canned(work)
            md = os.path.join(work, "B.md")
            with open(md, "w") as f:
                f.write("# Benchmarks\n\n## A\n\na\n\n" + pgvr.HEADING + "\n\nthe old section\n\n## C\n\nc\n")
            for _ in range(2):  # twice: the second run replaces the first
                subprocess.run([sys.executable, os.path.join(BENCH, "pg-vacuum-report.py"), work,
                                "--write", md], check=True, capture_output=True)
            with open(md) as f:
                out = f.read()
            self.assertEqual(out.count(pgvr.HEADING), 1)
            self.assertNotIn("the old section", out)
            self.assertTrue(out.startswith("# Benchmarks\n\n## A\n\na\n\n" + pgvr.HEADING))
            self.assertTrue(out.endswith("\n## C\n\nc\n"))
            self.assertIn("**met**", out)


class Flags(unittest.TestCase):
    BAD = [["--bogus"], ["--scale"], ["--scale", "0"], ["--scale", "x"], ["--reps", "-1"],
           ["--seconds", "7"], ["--mem", "12Q"], ["--mem", "32M"], ["--low-rate", "fast"],
           ["--only", "alone,nosuch"], ["--disk", "floppy"], ["--disk", "ref:nosuch"],
           ["--workdir", "/nonexistent/iotier"], ["--clients", "1.5"]]

    def refused(self, args, env=None):
        """Run pg-vacuum with bad args: exit 2, one line, nothing started; its stderr."""
        with tempfile.TemporaryDirectory() as parent:
            extra = [] if "--workdir" in args else ["--workdir", parent]
            p = subprocess.run([os.path.join(BENCH, "pg-vacuum")] + extra + args,
                               capture_output=True, text=True, timeout=60, env=env)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertEqual(p.stdout, "")
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            self.assertTrue(p.stderr.startswith("bench/postgres/pg-vacuum: "), p.stderr)
            self.assertEqual(os.listdir(parent), [])  # nothing started
            return p.stderr

    def test_bad_flags_exit_2(self):
        for args in self.BAD:
            with self.subTest(args=args):
                self.refused(args)

    @staticmethod
    def fake_build(d, shim=True):
        """A BUILDDIR as far as the argument checks look: an executable tools/iotier (one
        that refuses to run, should a check let it through) and the shim beside it."""
        os.makedirs(os.path.join(d, "tools"))
        with open(os.path.join(d, "tools", "iotier"), "w") as f:
            f.write("#!/bin/sh\nexit 1\n")
        os.chmod(os.path.join(d, "tools", "iotier"), 0o755)
        if shim:
            os.makedirs(os.path.join(d, "shim"))
            open(os.path.join(d, "shim", "libiotier.so.0"), "w").close()

    def test_also_build_refused(self):
        with tempfile.TemporaryDirectory() as b, tempfile.TemporaryDirectory() as noshim:
            self.fake_build(b)
            self.fake_build(noshim, shim=False)
            cases = [
                (["--also-build", f"b@d={b}"], f"--also-build 'b@d={b}': want LABEL=BUILDDIR"),
                (["--also-build", b], "want LABEL=BUILDDIR"),
                (["--also-build", "old="], "want LABEL=BUILDDIR"),
                (["--also-build", "old=/nonexistent/iotier"], "/nonexistent/iotier/tools/iotier is not built"),
                (["--also-build", f"old={noshim}"], f"{noshim}/shim/libiotier.so.0 is not built"),
                (["--also-build", f"old={b}", "--also-build", f"new={b}"],
                 "only one --also-build (already 'old')"),
                (["--only", "adaptive@old"], "unknown variant 'adaptive@old'"),
                (["--also-build", f"old={b}", "--only", "adaptive@new"], "unknown variant 'adaptive@new'"),
                # accepted, with the variant in --only: only the --workdir after it is refused
                (["--also-build", f"old_2={b}", "--only", "adaptive,adaptive@old_2", "--workdir",
                  "/nonexistent/iotier"], "--workdir '/nonexistent/iotier' is not a directory"),
            ]
            for args, want in cases:
                with self.subTest(args=args):
                    self.assertIn(want, self.refused(args))
            err = self.refused(["--also-build", f"old={b}"], env=dict(os.environ, IOTIER_SHIM="/x/libiotier.so"))
            self.assertIn("IOTIER_SHIM is set", err)

    def test_help(self):
        p = subprocess.run([os.path.join(BENCH, "pg-vacuum"), "--help"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0)
        self.assertIn("variants: alone untagged low low-rate adaptive (and adaptive@LABEL with --also-build)", p.stdout)
        self.assertIn("--also-build LABEL=BUILDDIR", p.stdout)


if __name__ == "__main__":
    unittest.main()
