#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Description: iotier's exporter under Debian's real Prometheus server, and the files in
examples/prometheus/. `server`: Prometheus on 127.0.0.1 (temp config and storage, 1 s
scrapes, iotier-rules.yml and iotier-alerts.yml loaded) scrapes an exporter while known
I/O per class runs on a loop device; its HTTP API must give the exact counts per class and
the recording rules' results. `fleet`: three exporters as three hosts whose disks have
clearly different latencies; the ten-worst rule must rank them. `rules`: promtool's unit
tests (every *test*.yml). `dashboard`: the Grafana JSON parses and has its panels.
`systemd`: systemd-analyze verify passes on the exporter's unit.
Usage: test-prometheus.py MODE IOTIER EXAMPLES_DIR [DOCS_DIR]"""
import glob
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rig  # noqa: E402
from rig import expect, query  # noqa: E402


def rules_of(examples):
    return [os.path.abspath(os.path.join(examples, "prometheus", f))
            for f in ("iotier-rules.yml", "iotier-alerts.yml")]


def wait_vector(base, expr, ok, what, timeout=60):
    """Poll @expr until ok(vector) holds and return it; fail the test at once if it does not
    (the Rig still stops everything on the way out)."""
    last = []

    def check():
        nonlocal last
        last = query(base, expr)
        return ok(last)
    if not rig.wait_for(what, check, timeout=timeout, step=0.5):
        print(f"FAIL: {what}; last value of {expr}: {last}", file=sys.stderr)
        sys.exit(rig.FAIL)
    return last


def by(vector, label):
    return {m.get(label): v for m, v in vector}


def counts_match(base, dev, want):
    """A test for wait_vector: per-class counts as @want, exactly, except for requests the
    exporter itself reports missing (the kernel's lost completions, docs/lat.md): exactly
    that many, and only fewer, are excused."""
    def ok(vector):
        got = by(vector, "class")
        if set(got) != set(want):
            return False
        missing = query(base, f'iotier_trace_missing_requests{{device="{dev}"}}')
        allowed = missing[0][1] if len(missing) == 1 else 0
        short = [want[c] - got[c] for c in want]
        return all(d >= 0 for d in short) and sum(short) <= allowed
    return ok


def check_rule_health(base):
    status, _, body = rig.http_get(base + "/api/v1/rules")
    groups = json.loads(body)["data"]["groups"] if status == 200 else []
    rules = [r for g in groups for r in g["rules"]]
    expect(len(rules) == 8, f"{len(rules)} rules loaded, want 8")
    for r in rules:
        expect(r.get("health") == "ok", f"rule {r.get('name')}: {r.get('health')} {r.get('lastError')}")


def mode_server(iotier, examples):
    rig.need_root()
    with rig.Rig("prom") as r:
        dev = r.loop()
        _, url = r.exporter(iotier, "--by", "class", "-d", dev, "--no-shim")
        addr = url.split("/")[2]
        base = r.prometheus({"host-a": addr}, rules_of(examples))
        wait_vector(base, 'up{job="iotier"}', lambda v: v and v[0][1] == 1, "target up")
        sel = f'device="{dev}",op="read"'
        # A series starts with its first request, and rate() cannot see what its first
        # sample already holds (Prometheus 2.42 does not use _created): one request per
        # class first, scraped, and then the load the rules must see.
        rig.dd(dev, 1, ionice=("-c3",))
        rig.dd(dev, 1)
        wait_vector(base, f'iotier_block_requests_total{{{sel}}}',
                    lambda v: by(v, "class") == {"idle": 1, "be": 1}, "first request per class")
        rig.dd(dev, 300, ionice=("-c3",))
        rig.dd(dev, 200)
        got = wait_vector(base, f'iotier_block_requests_total{{{sel}}}',
                          counts_match(base, dev, {"idle": 301, "be": 201}), "counts per class")
        expect(all(m.get("instance") == "host-a" for m, _ in got), "instance label")
        wait_vector(base, f'iotier_block_queue_latency_seconds_count{{{sel}}}',
                    counts_match(base, dev, {"idle": 301, "be": 201}), "histogram counts")
        # The recording rules, per host, device and class.
        rate = wait_vector(base, f'instance_device_class:iotier_block_requests:rate5m{{device="{dev}"}}',
                           lambda v: set(by(v, "class")) == {"idle", "be"} and min(by(v, "class").values()) > 0,
                           "rate rule for both classes")
        q = {}
        for p in ("p50", "p99", "p999"):
            q[p] = by(wait_vector(base, f'instance_device_class:iotier_block_queue_latency_seconds:{p}_5m'
                                  f'{{device="{dev}",instance="host-a"}}',
                                  lambda v: set(by(v, "class")) == {"idle", "be"}, f"{p} rule"), "class")
        for cls in ("idle", "be"):
            vals = [q[p].get(cls, 0) for p in ("p50", "p99", "p999")]
            expect(0 < vals[0] <= vals[1] <= vals[2] < 69, f"{cls}: P50/P99/P99.9 {vals} not ordered")
        high = wait_vector(base, 'instance:iotier_block_queue_latency_seconds:p99_high_5m',
                           lambda v: len(v) == 1, "host high-class P99")
        # Only be counts here (the promtool tests prove idle is left out); rules evaluate at
        # slightly different times, so the two agree closely, not exactly.
        be99 = q["p99"].get("be", 0)
        expect(high and abs(high[0][1] - be99) <= 0.1 * be99,
               f"high-class P99 {high} is not be's {be99}")
        top = wait_vector(base, 'fleet:iotier_block_queue_latency_seconds:p99_high_5m_top10',
                          lambda v: len(v) == 1, "top-10 rule")
        expect(top and top[0][0].get("instance") == "host-a", f"top-10: {top}")
        print("rates:", by(rate, "class"), "P99:", q["p99"])
        check_rule_health(base)


# Three hosts, serial 4 KiB reads on each: of a sparse device's holes (no disk under them,
# so no throttle applies), and of data held to 50 and to 5 reads a second by a blkio
# throttle on the disk under the loop device. Past the throttle's first burst, each read
# waits about 20 ms and 200 ms: three P99s an order of magnitude apart, however busy the
# machine. (Without a throttle, latency differences from size or queue depth were within
# the noise of a shared machine.)
HOSTS = [("host-fast", False, None, 100), ("host-mid", True, 50, 40), ("host-slow", True, 5, 12)]


def mode_fleet(iotier, examples):
    rig.need_root()
    with rig.Rig("fleet") as r:
        targets, devs, cgroups = {}, {}, {}
        for host, data, iops, _ in HOSTS:
            devs[host] = r.loop(mib=16, data=data)
            cgroups[host] = r.throttled_cgroup(r.backing_disk(devs[host]), iops) if iops else None
            _, url = r.exporter(iotier, "--by", "class", "-d", devs[host], "--no-shim")
            targets[host] = url.split("/")[2]
        base = r.prometheus(targets, rules_of(examples))
        wait_vector(base, 'sum(up{job="iotier"})', lambda v: v and v[0][1] == 3, "three targets up")
        for host in devs:   # a first request each, scraped, as in mode_server
            rig.dd(devs[host], 1)
        wait_vector(base, 'sum by (instance) (iotier_block_requests_total{op="read",class="be"})',
                    lambda v: by(v, "instance") == {h: 1 for h in devs}, "first request per host")
        loads = [rig.dd(devs[h], n, skip_blocks=1, wait=False, rig=r, cgroup=cgroups[h])
                 for h, _, _, n in HOSTS]
        for p in loads:
            expect(p.wait(timeout=120) == 0, "a load failed")
        # Prometheus must come to hold what each exporter counted. Exact counts per class are
        # mode_server's and test-exporter's business; here one throttled read in a few dozen
        # runs went uncounted by the tracer itself (an open question, see the report), which
        # does not change the ranking this test is about.
        want = {}
        for h, _, _, n in HOSTS:
            s = rig.parse(rig.http_get(f"http://{targets[h]}/metrics")[2])
            want[h] = rig.value(s, "iotier_block_requests_total", device=devs[h], op="read",
                                **{"class": "be"})
            expect(want[h] is not None and n <= want[h] <= n + 1, f"{h}: {want[h]} reads, want {n + 1}")
        wait_vector(base, 'sum by (instance) (iotier_block_requests_total{op="read",class="be"})',
                    lambda v: by(v, "instance") == want, "every host's reads scraped")
        top = wait_vector(base, 'fleet:iotier_block_queue_latency_seconds:p99_high_5m_top10',
                          lambda v: len(v) == 3, "three hosts in the top ten")
        ranked = [m["instance"] for m, _ in sorted(top, key=lambda mv: -mv[1])]
        print("worst first:", [(m["instance"], v) for m, v in sorted(top, key=lambda mv: -mv[1])])
        expect(ranked == ["host-slow", "host-mid", "host-fast"], f"ranking {ranked}")


def mode_rules(examples):
    if not shutil.which("promtool"):
        rig.skip("no promtool (Debian package prometheus)")
    d = os.path.join(examples, "prometheus")
    tests = sorted(glob.glob(os.path.join(d, "*test*.yml")))
    expect(len(tests) >= 2, f"promtool tests: {tests}")
    r = subprocess.run(["promtool", "check", "rules", *rules_of(examples)], capture_output=True, text=True)
    expect(r.returncode == 0, "promtool check rules:\n" + r.stdout + r.stderr)
    r = subprocess.run(["promtool", "check", "config", "prometheus.yml"],
                       capture_output=True, text=True, cwd=d)
    expect(r.returncode == 0, "promtool check config:\n" + r.stdout + r.stderr)
    # Every rule has a unit test: its name appears in one of the test files.
    names = []
    for f in rules_of(examples):
        for line in open(f):
            line = line.strip()
            if line.startswith(("- record:", "- alert:")):
                names.append(line.split(":", 1)[1].strip())
    tested = "".join(open(t).read() for t in tests)
    for n in names:
        expect(n in tested, f"rule {n} has no promtool test")
    for t in tests:
        r = subprocess.run(["promtool", "test", "rules", os.path.basename(t)], cwd=d,
                           capture_output=True, text=True)
        expect(r.returncode == 0, f"promtool test rules {t}:\n{r.stdout}{r.stderr}")


def mode_dashboard(examples):
    path = os.path.join(examples, "prometheus", "grafana-dashboard.json")
    with open(path) as f:
        d = json.load(f)
    titles = [p.get("title") for p in d.get("panels", [])]
    for want in ("Latency per class (P50, P99, P99.9)", "Latency heatmap (high classes)",
                 "Ten worst hosts by high-class P99"):
        expect(want in titles, f"dashboard lacks panel {want!r}: {titles}")
    expect(any(p.get("type") == "heatmap" for p in d["panels"]), "no heatmap panel")
    ids = [p.get("id") for p in d["panels"]]
    expect(len(ids) == len(set(ids)), "panel ids repeat")
    exprs = " ".join(t["expr"] for p in d["panels"] for t in p.get("targets", []))
    recorded = [line.split(":", 1)[1].strip() for f in rules_of(examples) for line in open(f)
                if line.strip().startswith("- record:")]
    for n in ("fleet:iotier_block_queue_latency_seconds:p99_high_5m_top10",
              "instance_device_class:iotier_block_queue_latency_seconds:p99_5m"):
        expect(n in exprs and n in recorded, f"dashboard does not use rule {n}")


def mode_systemd(iotier, examples, docs):
    if not shutil.which("systemd-analyze"):
        rig.skip("no systemd-analyze")
    with rig.Rig("unit") as r:
        src = os.path.join(examples, "systemd", "iotier-exporter.service")
        text = open(src).read()
        expect("ExecStart=/usr/local/bin/iotier lat --listen" in text, "ExecStart changed?")
        for want in ("CapabilityBoundingSet=CAP_BPF CAP_PERFMON\n", "NoNewPrivileges=yes",
                     "ProtectSystem=strict", "RuntimeDirectoryMode=1733"):
            expect(want in text, f"unit lacks {want.strip()}")
        # verify wants the command to exist and the man page it cites to open.
        unit = os.path.join(r.tmp, "iotier-exporter.service")
        with open(unit, "w") as f:
            f.write(text.replace("/usr/local/bin/iotier", os.path.abspath(iotier)))
        man = os.path.join(r.tmp, "man", "man1")
        os.makedirs(man)
        os.symlink(os.path.join(os.path.abspath(docs), "iotier.1"), os.path.join(man, "iotier.1"))
        env = dict(os.environ, MANPATH=os.path.join(r.tmp, "man"), SYSTEMD_LOG_LEVEL="notice")
        if not shutil.which("man"):
            rig.skip("no man(1), which systemd-analyze verify runs for Documentation=man:")
        res = subprocess.run(["systemd-analyze", "verify", unit], capture_output=True, text=True, env=env)
        expect(res.returncode == 0 and not res.stderr.strip(),
               f"systemd-analyze verify: {res.returncode}\n{res.stdout}{res.stderr}")


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return rig.FAIL
    mode, iotier, examples = sys.argv[1:4]
    modes = {
        "server": lambda: mode_server(iotier, examples),
        "fleet": lambda: mode_fleet(iotier, examples),
        "rules": lambda: mode_rules(examples),
        "dashboard": lambda: mode_dashboard(examples),
        "systemd": lambda: mode_systemd(iotier, examples, sys.argv[4]),
    }
    if mode not in modes:
        print("unknown mode", mode, file=sys.stderr)
        return rig.FAIL
    modes[mode]()
    return rig.FAIL if rig.failures else rig.PASS


if __name__ == "__main__":
    sys.exit(main())
