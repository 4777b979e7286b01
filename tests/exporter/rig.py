# SPDX-License-Identifier: MIT
"""rig.py: what the exporter tests share: skipping (exit 77, a failure under
IOTIER_TEST_STRICT=1, as tests/lib/test_env.h does for the C tests), throwaway loop devices,
exporters and Prometheus servers on 127.0.0.1 with ports chosen at run time, scraping and
parsing expositions, and a Rig that stops every process and removes every device and file
it made, whatever way the test ends."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

PASS, FAIL, SKIP = 0, 1, 77
failures = 0


def expect(cond, msg):
    """Check without stopping: print the failure and count it."""
    global failures
    if not cond:
        print("FAIL:", msg, file=sys.stderr)
        failures += 1
    return cond


def skip(why):
    strict = os.environ.get("IOTIER_TEST_STRICT", "") not in ("", "0")
    print(("FAIL (strict mode, would skip): " if strict else "SKIP: ") + why, file=sys.stderr)
    sys.exit(FAIL if strict else SKIP)


def need_root():
    if os.geteuid() != 0:
        skip("needs root (BPF, loop devices)")


def wait_for(what, fn, timeout=60.0, step=0.2):
    """Poll fn until it returns something true; that value, or None after timeout."""
    end = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() > end:
            print(f"timed out waiting for {what}", file=sys.stderr)
            return None
        time.sleep(step)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def http_get(url, accept=None, timeout=30):
    """(status, content type, body text)."""
    req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read().decode()


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? (\S+)')


def parse(text):
    """[(name, {label: value}, float)] of an exposition's samples."""
    out = []
    for line in text.splitlines():
        m = SAMPLE.match(line)
        if m:
            labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(3) or ""))
            out.append((m.group(1), labels, float(m.group(4))))
    return out


def value(samples, name, **labels):
    """The one sample of @name whose labels include @labels; None if none."""
    got = [v for n, l, v in samples if n == name and all(l.get(k) == w for k, w in labels.items())]
    return got[0] if len(got) == 1 else None


class Rig:
    """Owns the test's processes, loop devices and files; close() undoes all of it."""

    def __init__(self, name):
        self.tmp = tempfile.mkdtemp(prefix=f"iotier-{name}-{os.getpid()}-")
        os.chmod(self.tmp, 0o755)
        self.procs = []
        self.loops = []
        self.cgroups = []
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, self._on_signal)

    def _on_signal(self, sig, frame):
        self.close()
        sys.exit(FAIL)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.procs = []
        for dev, backing in self.loops:
            subprocess.run(["losetup", "-d", dev], stderr=subprocess.DEVNULL)
            os.unlink(backing)
        self.loops = []
        for cg in self.cgroups:
            try:
                os.rmdir(cg)
            except OSError as e:
                print(f"cannot remove {cg}: {e}", file=sys.stderr)
        self.cgroups = []
        shutil.rmtree(self.tmp, ignore_errors=True)

    def spawn(self, args, **kw):
        p = subprocess.Popen(args, **kw)
        self.procs.append(p)
        return p

    def loop(self, mib=64, data=False, scheduler="mq-deadline"):
        """A loop device (direct I/O) over a new file in /var/tmp: sparse, or full of data
        so that reads reach the disk under it. Its name, as in /sys/block."""
        fd, backing = tempfile.mkstemp(prefix=f"iotier-expo-{os.getpid()}-", dir="/var/tmp")
        with os.fdopen(fd, "wb") as f:
            if data:
                chunk = os.urandom(1 << 20)
                for _ in range(mib):
                    f.write(chunk)
                f.flush()
                os.fsync(f.fileno())
            else:
                f.truncate(mib << 20)
        r = subprocess.run(["losetup", "-f", "--show", "--direct-io=on", backing],
                           capture_output=True, text=True)
        if r.returncode:
            os.unlink(backing)
            skip("no loop device: " + r.stderr.strip())
        dev = r.stdout.strip()
        self.loops.append((dev, backing))
        name = os.path.basename(dev)
        try:
            with open(f"/sys/block/{name}/queue/scheduler", "w") as f:
                f.write(scheduler)
        except OSError:
            pass
        return name

    def backing_disk(self, name):
        """MAJ:MIN of the whole disk under loop device @name's backing file."""
        backing = [b for d, b in self.loops if os.path.basename(d) == name][0]
        st = os.stat(backing)
        sysdev = f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
        if not os.path.exists(sysdev):
            skip(f"the backing file {backing} is not on a block device")
        if os.path.exists(sysdev + "/partition"):
            sysdev += "/.."
        return open(sysdev + "/dev").read().strip()

    def throttled_cgroup(self, disk, read_iops):
        """A blkio (v1) cgroup whose reads from @disk (MAJ:MIN) are held to @read_iops.
        A loop device's worker charges its backing I/O to the submitter's cgroup, so this
        adds a known delay to every request of a loop device over a file on @disk."""
        root = "/sys/fs/cgroup/blkio"
        if not os.path.exists(root + "/blkio.throttle.read_iops_device"):
            skip("no cgroup v1 blkio controller with throttling")
        cg = f"{root}/iotier-expo-{os.getpid()}-{len(self.cgroups)}"
        os.mkdir(cg)
        self.cgroups.append(cg)
        with open(cg + "/blkio.throttle.read_iops_device", "w") as f:
            f.write(f"{disk} {read_iops}")
        return cg

    def unloop(self, name):
        for i, (dev, backing) in enumerate(self.loops):
            if os.path.basename(dev) == name:
                subprocess.run(["losetup", "-d", dev], check=True)
                os.unlink(backing)
                del self.loops[i]
                return

    def exporter(self, iotier, *args):
        """Start `iotier lat --listen 127.0.0.1:0 ARGS`; (process, URL of /metrics)."""
        err = open(os.path.join(self.tmp, f"exporter-{len(self.procs)}.err"), "w+")
        p = self.spawn([iotier, "lat", "--listen", "127.0.0.1:0", *args], stderr=err)

        def url():
            err.seek(0)
            m = re.search(r"Serving .* on (http://\S+)", err.read())
            if m:
                return m.group(1)
            if p.poll() is not None:
                err.seek(0)
                text = err.read()
                if "CAP_BPF" in text or "BTF" in text:
                    skip("cannot trace here: " + text.strip())
                print("exporter exited:", text, file=sys.stderr)
                sys.exit(FAIL)
            return None
        u = wait_for("the exporter to listen", url)
        if not u:
            sys.exit(FAIL)
        return p, u

    def prometheus(self, targets, rule_files=()):
        """A real Prometheus on 127.0.0.1 scraping @targets ({instance: host:port}) every
        second, with @rule_files evaluated every second. Its base URL."""
        if not shutil.which("prometheus"):
            skip("no prometheus server (Debian package prometheus)")
        cfg = os.path.join(self.tmp, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n")
            f.write("rule_files:\n" + "".join(f"  - {r}\n" for r in rule_files))
            f.write("scrape_configs:\n  - job_name: iotier\n    static_configs:\n")
            for inst, addr in targets.items():
                f.write(f"      - targets: ['{addr}']\n        labels:\n"
                        f"          instance: {inst}\n")
        for attempt in range(3):   # the port may be taken between choosing and binding
            port = free_port()
            store = os.path.join(self.tmp, f"tsdb-{attempt}")
            log = open(os.path.join(self.tmp, f"prometheus-{attempt}.log"), "w+")
            p = self.spawn(["prometheus", f"--config.file={cfg}", f"--storage.tsdb.path={store}",
                            f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                           stdout=log, stderr=log)
            base = f"http://127.0.0.1:{port}"

            def ready():
                if p.poll() is not None:
                    return "exited"
                try:
                    return http_get(base + "/-/ready", timeout=5)[0] == 200
                except OSError:
                    return False
            r = wait_for("prometheus to be ready", ready)
            if r is True:
                return base
            log.seek(0)
            print("prometheus did not start:", log.read()[-2000:], file=sys.stderr)
        sys.exit(FAIL)


def query(base, expr):
    """The instant vector of @expr from Prometheus' HTTP API: [(labels, float)]."""
    url = base + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    status, _, body = http_get(url)
    if status != 200:
        return []
    data = json.loads(body)["data"]["result"]
    return [(r["metric"], float(r["value"][1])) for r in data]


def dd(dev, count, bs="4k", ionice=("-c2", "-n0"), skip_blocks=0, wait=True, rig=None,
       cgroup=None):
    """Read @count blocks of @bs from /dev/@dev with O_DIRECT, one request each, in the
    I/O class @ionice gives (and in @cgroup, if given)."""
    args = ["ionice", *ionice, "dd", f"if=/dev/{dev}", "of=/dev/null", f"bs={bs}",
            f"count={count}", f"skip={skip_blocks}", "iflag=direct", "status=none"]
    if cgroup:
        args = ["sh", "-c", f'echo $$ > {cgroup}/cgroup.procs && exec "$@"', "dd", *args]
    if wait:
        subprocess.run(args, check=True)
        return None
    return rig.spawn(args)
