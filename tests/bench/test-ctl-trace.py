#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Description: matrix-load's controller trace (bench/matrix/ctl_trace.h) on real files, no
# disk of its own: under `iotier run --target` the trace finds the shim's region in the
# process and every 100 ms bucket has a level (0..12) and probe flags, with the first
# baseline's probe among them; the misses per bucket add up to no more than the windows
# could have; without a target every bucket is unseen (-1). Needs no root: the files are in
# a temporary directory, buffered reads beside a buffered writer.
# Usage: test-ctl-trace.py IOTIER MATRIX_LOAD
import json
import os
import subprocess
import sys
import tempfile
import unittest

IOTIER, MATRIX_LOAD = (os.path.abspath(a) for a in sys.argv[1:3])
del sys.argv[1:3]
SECONDS = 2.0


def run(tmp, target):
    load = [MATRIX_LOAD, "--dir", tmp, "--seconds", str(SECONDS), "--pattern", "steady",
            "--read", "buf", "--bg", "bufsync", "--react-us", "500"]
    cmd = [IOTIER, "run", "--low", "bg-*", "--target", target, "--"] + load if target else load
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=60).stdout
    return json.loads(out)


class CtlTrace(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="iotier-ctl-trace.")
        for name in ("fg.dat", "bg.dat"):
            with open(os.path.join(cls.tmp.name, name), "wb") as f:
                f.write(os.urandom(1 << 20) * 16)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_under_target(self):
        d = run(self.tmp.name, "read.p99<=2x")
        buckets = int(SECONDS * 10)
        for key in ("ctl_level_min", "ctl_level_max", "ctl_misses", "ctl_queue_misses",
                    "ctl_probe"):
            self.assertEqual(len(d[key]), buckets, key)
        seen = [b for b in range(buckets) if d["ctl_level_min"][b] >= 0]
        # The sampler finds the region at the start and reads it every 10 ms.
        self.assertGreaterEqual(len(seen), buckets - 3)
        for b in seen:
            self.assertLessEqual(0, d["ctl_level_min"][b])
            self.assertLessEqual(d["ctl_level_min"][b], d["ctl_level_max"][b])
            self.assertLessEqual(d["ctl_level_max"][b], 12)
        self.assertIn(1, d["ctl_probe"])  # a relative target probes first
        self.assertTrue(set(d["ctl_probe"]) <= {0, 1})
        # A window is 100 ms at least; looks cut at most once per 10 ms look.
        self.assertLessEqual(sum(d["ctl_misses"]), buckets * 10)
        # A queue's miss is a miss, counted in the same step.
        for b in range(buckets):
            self.assertLessEqual(d["ctl_queue_misses"][b], d["ctl_misses"][b])

    def test_without_target(self):
        d = run(self.tmp.name, None)
        self.assertEqual(set(d["ctl_level_min"]), {-1})
        self.assertEqual(set(d["ctl_level_max"]), {-1})
        self.assertEqual(sum(d["ctl_misses"]), 0)
        self.assertEqual(sum(d["ctl_queue_misses"]), 0)
        self.assertEqual(sum(d["ctl_probe"]), 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
