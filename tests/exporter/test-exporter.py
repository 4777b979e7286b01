#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Description: `iotier lat --listen/--textfile`, the Prometheus exporter, end to end with
real components: known I/O per class on loop devices, scraped over HTTP in both formats,
checked with promtool; the textfile; disks that come and go; concurrent scrapes; SIGTERM;
the shims' state files; running with only CAP_BPF and CAP_PERFMON; bad input refused
before tracing. Usage: test-exporter.py MODE IOTIER [LIBIOTIER]"""
import os
import pwd
import re
import signal
import shutil
import stat
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rig  # noqa: E402
from rig import expect, parse, value, http_get  # noqa: E402

OM = "application/openmetrics-text; version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"


def mode_usage(iotier):
    """Bad input: one line naming it, exit 2, nothing traced (this runs without root)."""
    tmp = rig.Rig("usage")
    with tmp:
        holder = __import__("socket").socket()
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        busy = holder.getsockname()[1]
        cases = [
            (["--listen", "nonsense"], "bad --listen 'nonsense'"),
            (["--listen", "127.0.0.1:70000"], "bad --listen '127.0.0.1:70000'"),
            (["--listen", "no.such.host.invalid:9586"], "not a numeric IP address"),
            (["--listen", "300.1.1.1:9586"], "not a numeric IP address"),
            (["--listen", f"127.0.0.1:{busy}"], "Address already in use"),
            (["--textfile", "/nonexistent/dir/x.prom"], "cannot write --textfile '/nonexistent/dir/x.prom'"),
            (["--textfile", ""], "--textfile needs a path"),
            (["--listen", "127.0.0.1:0", "--format", "json"], "--format json does not apply"),
            (["--listen", "127.0.0.1:0", "--interval", "1", "--count", "2"], "--count does not apply"),
            (["--listen", "127.0.0.1:0", "--no-shim", "--shim-dir", "/tmp"], "exclude each other"),
        ]
        for args, want in cases:
            r = subprocess.run([iotier, "lat", *args], capture_output=True, text=True, timeout=30)
            expect(r.returncode == 2, f"lat {args}: exit {r.returncode}, want 2")
            expect(len(r.stderr.splitlines()) == 1, f"lat {args}: want one line, got {r.stderr!r}")
            expect(want in r.stderr, f"lat {args}: stderr {r.stderr!r} lacks {want!r}")
            expect("Tracing" not in r.stderr and "Serving" not in r.stderr, f"lat {args} started")
        holder.close()
        r = subprocess.run([iotier, "lat", "--help"], capture_output=True, text=True)
        for opt in ("--listen", "--textfile", "--shim-dir", "--no-shim"):
            expect(opt in r.stdout, f"lat --help lacks {opt}")


def check_histograms(s, dev, counts):
    """Exact counts per class, and each histogram cumulative with +Inf == _count.

    The kernel sometimes does not run the completion program (docs/lat.md, "Lost
    completions"); the exporter then says so in iotier_trace_missing_requests. Exactly that
    many requests, and only fewer, are excused; with none reported missing, counts are exact.
    """
    missing = value(s, "iotier_trace_missing_requests", device=dev) or 0
    short_total = 0
    for cls, n in counts.items():
        lab = dict(device=dev, op="read", **{"class": cls})
        got = value(s, "iotier_block_requests_total", **lab) or 0
        short_total += n - got
        expect(0 <= n - got and short_total <= missing,
               f"{dev} {cls}: requests {got}, want {n} ({missing} reported missing)")
        expect(value(s, "iotier_block_queue_latency_seconds_count", **lab) == got,
               f"{dev} {cls}: histogram count, want {got}")
        expect(value(s, "iotier_block_bytes_total", **lab) == 4096 * got, f"{dev} {cls}: bytes")
        buckets = [(float(l["le"]), v) for nm, l, v in s if nm.endswith("_bucket") and
                   all(l.get(k) == w for k, w in lab.items())]
        buckets.sort()
        expect(buckets and buckets[-1][1] == got, f"{dev} {cls}: +Inf bucket")
        expect(all(a[1] <= b[1] for a, b in zip(buckets, buckets[1:])), f"{dev} {cls}: not cumulative")
    if short_total:
        print(f"note: {dev}: {short_total} requests short, excused by the {missing} the exporter "
              "reported missing")


def promtool_check(text):
    if not shutil.which("promtool"):
        rig.skip("no promtool (Debian package prometheus)")
    r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    expect(r.returncode == 0, f"promtool check metrics: {r.stdout}{r.stderr}")


def check_openmetrics(url, dev, start):
    status, ctype, body = http_get(url, accept=OM)
    expect(status == 200 and ctype.startswith("application/openmetrics-text"), f"OM: {status} {ctype}")
    expect(body.endswith("# EOF\n"), "OpenMetrics exposition does not end with # EOF")
    expect("# TYPE iotier_block_requests counter" in body, "OM: counter family without _total")
    s = parse(body)
    created = value(s, "iotier_block_requests_created", device=dev, op="read", **{"class": "idle"})
    expect(created is not None and start - 5 <= created <= time.time() + 5,
           f"OM: _created {created} not near the start {start}")
    expect(value(s, "iotier_block_queue_latency_seconds_created", device=dev, op="read",
                 **{"class": "be"}) is not None, "OM: histogram without _created")


def concurrent_scrapes(url):
    """Many scrapes at once: every answer is whole (200) or refused (503) and counted."""
    results = []

    def worker():
        for _ in range(5):
            results.append(http_get(url)[0])
    threads = [threading.Thread(target=worker) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expect(all(r in (200, 503) for r in results), f"concurrent scrapes: {sorted(set(results))}")
    s = parse(http_get(url)[2])
    expect(value(s, "iotier_exporter_requests_dropped_total") == results.count(503),
           "dropped requests not counted")
    expect(value(s, "iotier_exporter_requests_in_flight") == 1, "in flight: only this scrape")
    expect(value(s, "iotier_exporter_scrape_duration_seconds_count") >= results.count(200),
           "scrape durations not counted")


def mode_http(iotier):
    rig.need_root()
    with rig.Rig("http") as r:
        dev = r.loop()
        textfile = os.path.join(r.tmp, "iotier.prom")
        start = time.time()
        p, url = r.exporter(iotier, "--by", "class", "--textfile", textfile, "--interval", "1",
                            "--no-shim")
        rig.dd(dev, 300, ionice=("-c3",))
        rig.dd(dev, 200)
        status, ctype, body = http_get(url)
        expect(status == 200 and ctype.startswith("text/plain; version=0.0.4"), f"/metrics: {status} {ctype}")
        check_histograms(parse(body), dev, {"idle": 300, "be": 200})
        promtool_check(body)
        expect("iotier_shim_" not in body, "--no-shim still publishes shim metrics")
        check_openmetrics(url, dev, start)
        status, ctype, body = http_get(url.replace("/metrics", "/"))
        expect(status == 200 and "text/html" in ctype and 'href="/metrics"' in body, "/ page")
        expect(http_get(url.replace("/metrics", "/nope"))[0] == 404, "unknown path not 404")
        concurrent_scrapes(url)

        # A disk that appears is picked up; one that goes away is dropped.
        late = r.loop()
        rig.dd(late, 50)
        s_late = parse(http_get(url)[2])
        got = value(s_late, "iotier_block_requests_total", device=late, op="read",
                    **{"class": "be"}) or 0
        missing = value(s_late, "iotier_trace_missing_requests", device=late) or 0
        expect(50 - missing <= got <= 50,
               f"new disk {late} not picked up: {got} of 50 requests ({missing} reported missing)")
        r.unloop(late)
        # Detaching finishes in the kernel a little after losetup returns: scrape until the
        # disk is gone (size 0), for at most 10 s, then judge the last scrape.
        for _ in range(100):
            body = http_get(url)[2]
            if f'device="{late}"' not in body:
                break
            time.sleep(0.1)
        if open(f"/sys/block/{late}/size").read().strip() != "0":
            print(f"note: {late} was attached again by someone else; not judging its removal")
        else:
            left = [line for line in body.splitlines() if f'device="{late}"' in line]
            expect(not left, f"disk {late} gone but still exported: {left[:3]}")

        # The textfile: complete, valid, and no temp file left beside it.
        rig.wait_for("a textfile write after the I/O",
                     lambda: value(parse(open(textfile).read()), "iotier_block_requests_total",
                                   device=dev, op="read", **{"class": "idle"}) == 300, timeout=30)
        text = open(textfile).read()
        check_histograms(parse(text), dev, {"idle": 300, "be": 200})
        promtool_check(text)

        p.send_signal(signal.SIGTERM)
        expect(p.wait(timeout=30) == 0, f"SIGTERM: exit {p.returncode}, want 0")
        leftovers = [f for f in os.listdir(r.tmp) if f.startswith("iotier.prom.")]
        expect(not leftovers, f"temp files left: {leftovers}")


def shim_run(r, lib, state, argv, user=None, **kw):
    """Run @argv under the shim (and not setpriv, which would leave a file of its own)."""
    env = dict(os.environ, IOTIER_STATE_DIR=state, IOTIER_LOW="comm:sleep")
    argv = ["env", f"LD_PRELOAD={lib}", *argv]
    if user:
        pw = pwd.getpwnam(user)
        argv = ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--clear-groups", *argv]
    return r.spawn(argv, env=env, **kw)


def state_files(state):
    return sorted(f for f in os.listdir(state) if f.endswith(".state"))


def check_adaptive(r, lib, state, url):
    """A process under a target: its controller as iotier_adaptive_*{pid=ROOT}, in both
    formats, promtool clean; processes without one have no such series."""
    aim = shim_run(r, lib, state, ["env", "IOTIER_TARGET=read.p99<=1.5ms", "sleep", "60"])
    rig.wait_for("the target's state file", lambda: f"{aim.pid}.state" in state_files(state), timeout=30)
    body = http_get(url)[2]
    s = parse(body)
    pid = str(aim.pid)
    expect(value(s, "iotier_adaptive_info", pid=pid, target="read.p99<=1500us") == 1,
           "no iotier_adaptive_info for the target's process")
    expect(value(s, "iotier_adaptive_target_seconds", pid=pid) == 0.0015, "target_seconds")
    expect(value(s, "iotier_adaptive_level", pid=pid) == 12, "level, want 12 (full)")
    expect(value(s, "iotier_adaptive_cap", pid=pid) == float("inf"), "cap, want +Inf")
    expect(value(s, "iotier_adaptive_chunk_bytes", pid=pid) == float("inf"), "chunk, want +Inf")
    for name in ("windows", "misses", "probes", "floor_lifts", "debt_lifts", "held_seconds"):
        expect(value(s, f"iotier_adaptive_{name}_total", pid=pid) == 0, f"{name}_total, want 0")
    expect(value(s, "iotier_adaptive_baseline_seconds", pid=pid) is None,
           "an absolute target has no baseline series")
    others = [n for n, l, _ in s if n.startswith("iotier_adaptive_") and l.get("pid") != pid]
    expect(not others, f"adaptive series of processes without a target: {others}")
    promtool_check(body)
    status, ctype, om = http_get(url, accept=OM)
    expect(status == 200 and om.endswith("# EOF\n"), "OM scrape")
    expect("# TYPE iotier_adaptive_windows counter" in om and
           f'iotier_adaptive_windows_total{{pid="{pid}"}} 0' in om, "OM: adaptive counter family")
    expect("# UNIT iotier_adaptive_held_seconds seconds" in om, "OM: held_seconds unit")
    check_adaptive_issue23(s, body, pid)
    aim.terminate()
    aim.wait()
    check_adaptive_log_writer(r, lib, state, url)
    check_adaptive_older_file(r, state, url)


ISSUE23 = [("last_step_age_seconds", "gauge"), ("stale", "gauge"), ("l0_files", "gauge"),
           ("l0_trigger_files", "gauge"), ("l0_floor_level", "gauge"), ("l0_lifts", "counter"),
           ("valid_probes", "counter"), ("void_probes", "counter"),
           ("short_probe_streak", "gauge"), ("baseline_reads", "gauge"),
           ("slots_taken_back", "counter"), ("step_takeovers", "counter"),
           ("early_misses", "counter"), ("outside_restores", "counter"), ("slow_start", "gauge"),
           ("queued_alone_ratio", "gauge"), ("queue_misses", "counter")]


def check_adaptive_issue23(s, body, pid):
    """Issue 23's series, each with HELP and TYPE; for a process that never steps (sleep):
    no L0 (unknown), no floor, no probes or slots, and the age of its start."""
    for name, kind in ISSUE23:
        family = f"iotier_adaptive_{name}" + ("_total" if kind == "counter" else "")
        expect(f"# HELP {family} " in body and f"# TYPE {family} {kind}\n" in body,
               f"no HELP/TYPE for {family}")
    for name in ("l0_lifts", "valid_probes", "void_probes", "slots_taken_back", "step_takeovers",
                 "early_misses", "outside_restores", "queue_misses"):
        expect(value(s, f"iotier_adaptive_{name}_total", pid=pid) == 0, f"{name}_total, want 0")
    for name in ("l0_files", "l0_trigger_files", "baseline_reads", "queued_alone_ratio"):
        expect(value(s, f"iotier_adaptive_{name}", pid=pid) is None, f"{name}: unknown, yet shown")
    expect(value(s, "iotier_adaptive_l0_floor_level", pid=pid) == 0, "l0_floor_level, want 0")
    expect(value(s, "iotier_adaptive_short_probe_streak", pid=pid) == 0, "short_probe_streak")
    expect(value(s, "iotier_adaptive_slow_start", pid=pid) == 0, "slow_start, want 0")
    age = value(s, "iotier_adaptive_last_step_age_seconds", pid=pid)
    expect(age is not None and 0 <= age < 60, f"last_step_age_seconds {age}")
    expect(age is not None and value(s, "iotier_adaptive_stale", pid=pid) == (age > 2),
           "stale vs age")


# A low writer of RocksDB's LOG: its triggers (20, 36) and a flush event with 15 files in L0,
# then a block every 20 ms, so the controller steps, until a line on stdin stops it.
LOG_WRITER = r'''
import os, select, sys
d = sys.argv[1]
log = os.open(d + "/LOG", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
os.write(log, b"2026/12/04-20:44:01.453339 1 Options.level0_slowdown_writes_trigger: 20\n"
              b"2026/12/04-20:44:01.453340 1 Options.level0_stop_writes_trigger: 36\n"
              b'2026/12/04-20:44:01.477931 2 EVENT_LOG_v1 {"time_micros": 1, "job": 2, '
              b'"event": "flush_finished", "lsm_state": [15, 4, 0, 0, 0, 0, 0]}\n')
data = os.open(d + "/data", os.O_RDWR | os.O_CREAT, 0o644)
while not select.select([sys.stdin], [], [], 0.02)[0]:
    os.pwrite(data, b"x" * 4096, 0)
sys.stdin.readline()
sys.stdin.read()
'''


def check_adaptive_older_file(r, state, url):
    """A live process's file from an older shim (no adaptive_last_step_ns): its controller is
    shown, but no age (it would be the uptime) and no stale flag."""
    old = r.spawn(["sleep", "60"])
    with open(f"/proc/{old.pid}/stat") as f:
        start = int(f.read().rsplit(")", 1)[1].split()[19])   # field 22
    with open(os.path.join(state, f"{old.pid}.state"), "w") as f:
        f.write(f"iotier-shim-state 1\npid {old.pid}\nstarttime {start}\nprocess_tier low\n"
                f"adaptive_target_permille 990\nadaptive_target_factor_milli 0\n"
                f"adaptive_target_latency_ns 1500000\nadaptive_creator_pid {old.pid}\n"
                "adaptive_level 12\nadaptive_level_full 12\nadaptive_windows 3\n")
    s = parse(http_get(url)[2])
    pid = str(old.pid)
    expect(value(s, "iotier_adaptive_windows_total", pid=pid) == 3, "the older file's controller")
    expect(value(s, "iotier_adaptive_last_step_age_seconds", pid=pid) is None,
           "an age for a file without adaptive_last_step_ns")
    expect(value(s, "iotier_adaptive_stale", pid=pid) is None,
           "a stale flag for a file without adaptive_last_step_ns")
    old.kill()
    old.wait()


def check_adaptive_log_writer(r, lib, state, url):
    """Issue 23: L0, its trigger and the floor level from the state file of a low writer
    of a LOG; fresh while it writes, stale once it stopped for longer than the cap's lease
    and the file's refresh (2 s)."""
    d = os.path.join(r.tmp, "db")
    os.mkdir(d)
    w = shim_run(r, lib, state, ["env", "IOTIER_TARGET=read.p99<=1.5ms", "IOTIER_LOW=comm:python3*",
                                 "IOTIER_DEBT_LOG=*/LOG", sys.executable, "-c", LOG_WRITER, d],
                 stdin=subprocess.PIPE)
    pid = str(w.pid)

    def l0_known():
        s = parse(http_get(url)[2])
        return s if value(s, "iotier_adaptive_l0_files", pid=pid) == 15 else None
    s = rig.wait_for("the writer's L0 in the metrics", l0_known, timeout=30)
    expect(s is not None, "no iotier_adaptive_l0_files 15 for the LOG writer")
    if s:
        expect(value(s, "iotier_adaptive_l0_trigger_files", pid=pid) == 20, "l0_trigger_files, want 20")
        expect(value(s, "iotier_adaptive_l0_floor_level", pid=pid) == 7, "l0_floor_level, want 7")
        expect(value(s, "iotier_adaptive_windows_total", pid=pid) > 0, "the writer never stepped")
        expect(value(s, "iotier_adaptive_stale", pid=pid) == 0, "stale while the writer steps")
        age = value(s, "iotier_adaptive_last_step_age_seconds", pid=pid)
        expect(age is not None and age <= 2, f"last_step_age_seconds {age} while it steps")
    w.stdin.write(b"stop\n")
    w.stdin.flush()
    time.sleep(3)   # past the lease (1 s) and the file's refresh (1 s), with room
    body = http_get(url)[2]
    s = parse(body)
    age = value(s, "iotier_adaptive_last_step_age_seconds", pid=pid)
    expect(age is not None and age > 2, f"last_step_age_seconds {age}, 3 s after the writer stopped")
    expect(value(s, "iotier_adaptive_stale", pid=pid) == 1, "not stale 3 s after the writer stopped")
    expect(value(s, "iotier_adaptive_l0_files", pid=pid) == 15, "L0 gone once stale")
    promtool_check(body)
    w.stdin.close()
    w.wait()


def mode_shim(iotier, lib):
    rig.need_root()
    with rig.Rig("shim") as r:
        state = os.path.join(r.tmp, "state")
        p, url = r.exporter(iotier, "--shim-dir", state, "-d", r.loop())
        mode = stat.S_IMODE(os.stat(state).st_mode)
        expect(mode == 0o1733, f"state directory mode {mode:o}, want 1733")

        # A process that died without cleaning up: its file is ignored, then removed.
        dead = subprocess.Popen(["true"])
        dead.wait()
        with open(os.path.join(state, f"{dead.pid}.state"), "w") as f:
            f.write(f"iotier-shim-state 1\npid {dead.pid}\nstarttime 1\nprocess_tier low\n"
                    "threads low idle 5\n")
        # Two shimmed processes tagged low by comm:sleep, one of them another user's.
        mine = shim_run(r, lib, state, ["sleep", "60"])
        theirs = shim_run(r, lib, state, ["sleep", "60"], user="nobody")
        rig.wait_for("both state files", lambda: {f"{mine.pid}.state", f"{theirs.pid}.state"} <=
                     set(state_files(state)), timeout=30)
        # A shimmed process killed by SIGKILL leaves its file; a file naming a live pid that
        # started at another time is an earlier holder's (a reused pid); temp files of a
        # publish that never finished: all removed by the next scan. A fresh temp file of a
        # live process (a publish in progress) stays.
        killed = shim_run(r, lib, state, ["sleep", "60"])
        rig.wait_for("the killed process's file", lambda: f"{killed.pid}.state" in
                     state_files(state), timeout=30)
        killed.kill()
        killed.wait()
        reuser = r.spawn(["sleep", "60"])   # not under the shim: no file of its own
        with open(f"/proc/{reuser.pid}/stat") as f:
            start = int(f.read().rsplit(")", 1)[1].split()[19])   # field 22
        with open(os.path.join(state, f"{reuser.pid}.state"), "w") as f:
            f.write(f"iotier-shim-state 1\npid {reuser.pid}\nstarttime {start + 1000}\n"
                    "process_tier low\nthreads low idle 3\n")
        stale_temps = [f".{dead.pid}.{dead.pid}.tmp", f".{mine.pid}.1.tmp"]
        fresh_temp = f".{theirs.pid}.2.tmp"
        for name in stale_temps + [fresh_temp]:
            with open(os.path.join(state, name), "w") as f:
                f.write("iotier-shim-state 1\n")
        old = time.time() - 120
        os.utime(os.path.join(state, f".{mine.pid}.1.tmp"), (old, old))
        # Another user posing as a root process (the exporter), start time and all, is not
        # believed: the file is not the process owner's.
        forge = (f"printf 'iotier-shim-state 1\\npid {p.pid}\\nstarttime %s\\nprocess_tier low\\n"
                 f"threads low idle 7\\n' $(awk '{{print $22}}' /proc/{p.pid}/stat) > {state}/{p.pid}.state")
        shim_run(r, lib, state, ["sh", "-c", forge], user="nobody").wait()
        expect(f"{p.pid}.state" in state_files(state), "the forged file was not even written")
        s = parse(http_get(url)[2])
        expect(value(s, "iotier_shim_processes") == 2, f"processes {value(s, 'iotier_shim_processes')}, want 2")
        expect(value(s, "iotier_shim_tagged_processes", tier="low") == 2, "tagged low processes")
        expect(value(s, "iotier_shim_threads", tier="low", **{"class": "idle"}) == 2, "low idle threads")
        expect(value(s, "iotier_shim_threads", tier="high", **{"class": "be"}) == 0, "high be threads")
        # The dead file may have gone in a periodic scan before this scrape: the forged stays.
        expect(value(s, "iotier_shim_state_files_ignored") >= 1, "forged file not ignored")
        expect(f"{dead.pid}.state" not in state_files(state), "dead process's file not removed")
        expect(f"{killed.pid}.state" not in state_files(state), "a SIGKILLed process's file stays")
        expect(f"{reuser.pid}.state" not in state_files(state),
               "a file of a reused pid (another start time) stays")
        left = os.listdir(state)
        expect(not [n for n in stale_temps if n in left], f"abandoned temp files stay: {left}")
        expect(fresh_temp in left, "a live process's fresh temp file was removed")
        expect({f"{mine.pid}.state", f"{theirs.pid}.state"} <= set(left),
               f"a live process's file was removed: {left}")
        reuser.kill()
        reuser.wait()
        series = [n for n, _, _ in s if n.startswith("iotier_shim_")]
        expect(len(series) <= 13, f"shim series unbounded: {len(series)}")

        check_adaptive(r, lib, state, url)

        # A process that exits removes its own file.
        ends = shim_run(r, lib, state, ["sh", "-c", "exit 0"])
        ends.wait()
        expect(f"{ends.pid}.state" not in state_files(state), "exited process left its file")
        for q in (mine, theirs):
            q.terminate()
            q.wait()
        s = parse(http_get(url)[2])
        expect(value(s, "iotier_shim_processes") == 0, "killed processes still counted")
        p.send_signal(signal.SIGTERM)
        expect(p.wait(timeout=30) == 0, "SIGTERM")


def mode_caps(iotier):
    """The systemd unit's capabilities, CAP_BPF and CAP_PERFMON alone, are enough."""
    rig.need_root()
    if not shutil.which("setpriv"):
        rig.skip("no setpriv (util-linux)")
    with rig.Rig("caps") as r:
        dev = r.loop()
        wrapped = os.path.join(r.tmp, "iotier-capped")
        with open(wrapped, "w") as f:
            f.write("#!/bin/sh\nexec setpriv --bounding-set=-all,+bpf,+perfmon --inh-caps=-all "
                    f"--no-new-privs {iotier} \"$@\"\n")
        os.chmod(wrapped, 0o755)
        p, url = r.exporter(wrapped, "--by", "class", "-d", dev, "--shim-dir", r.tmp + "/state")
        caps = open(f"/proc/{p.pid}/status").read()
        eff = int(re.search(r"CapEff:\s*(\w+)", caps).group(1), 16)
        expect(eff == (1 << 38) | (1 << 39), f"exporter runs with CapEff {eff:x}")
        rig.dd(dev, 100)
        expect(value(parse(http_get(url)[2]), "iotier_block_requests_total", device=dev, op="read",
                     **{"class": "be"}) == 100, "capped exporter miscounts")
        p.send_signal(signal.SIGTERM)
        expect(p.wait(timeout=30) == 0, "SIGTERM")


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return rig.FAIL
    mode, iotier = sys.argv[1], sys.argv[2]
    if mode == "usage":
        mode_usage(iotier)
    elif mode == "http":
        mode_http(iotier)
    elif mode == "shim":
        mode_shim(iotier, sys.argv[3])
    elif mode == "caps":
        mode_caps(iotier)
    else:
        print("unknown mode", mode, file=sys.stderr)
        return rig.FAIL
    return rig.FAIL if rig.failures else rig.PASS


if __name__ == "__main__":
    sys.exit(main())
