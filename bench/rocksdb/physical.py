# SPDX-License-Identifier: MIT
"""physical.py: the sustained run's physical bound (issue 22), from the adaptive matrix's
model (bench/matrix/bound.py, its README's "The bound"), not measured.

The reader alone is a closed-loop QD1 reader of one RocksDB block per Get that misses the
cache: its preads per second and their P99 come from the alone phase's sampled reads. The
matrix's bound gives the most background bytes/s any scheduler could put on the reference
disk's model while each of those reads waits at most (k - 1) x its P99 alone. Compaction's
device bytes per byte the writer writes come from untagged's phase (the work compaction has
to do at that rate, done at its own pace). Their quotient is the fastest writer whose
compaction any scheduler could keep up with under k x: the physical W*(k). Assumed, and said
on the page: compaction's device bytes grow in proportion to the writer, pieces as small as
the bound's cost no more bytes, and the reader's gaps are regular.
"""
import importlib.util
import os
import re


def _load_matrix_bound():
    """bench/matrix/bound.py by its path: bench/matrix has a report.py of its own, which a
    directory on sys.path would put in the place of this one's."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "matrix", "bound.py")
    spec = importlib.util.spec_from_file_location("matrix_bound", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


matrix_bound = _load_matrix_bound()

KS = (1.5, 2.0, 3.0)
# A Get that misses the block cache reads one block: a 16 KiB value with its key and the
# block's trailer (bench/run's db_bench shape: --value_size 16384, no compression).
READ_SIZE = 16384 + 64
# Compaction's largest request at the disk: the loop device's 512 KiB (docs/refdisk.md), as
# for the matrix's buffered writer; writeback may fill every channel (depth None).
PIECE_MAX = 512 << 10
MODEL = re.compile(r"\bmodel (\d+) (\d+) (\d+)\b")


def disk_model(meta):
    """The reference disk's model from the run's rig text, or None (another disk)."""
    m = MODEL.search(meta.get("backing") or "") if meta.get("disk") == "ref" else None
    return ({"lat_us": int(m[1]), "bw": int(m[2]), "channels": int(m[3])} if m else None)


def physical_bound(model, reads_s, p99_us, amp, k, read_size=READ_SIZE):
    """The bound at k: the largest piece, the most compaction MiB/s and the fastest writer
    MiB/s (compaction's device MiB per writer MiB: amp)."""
    fg = {"kind": "closed", "qd": 1, "rate": reads_s, "p99_us": p99_us, "read_size": read_size}
    b = matrix_bound.bound(model, fg, k, PIECE_MAX, None)
    comp = b["busy_mb_s"] * 1e6 / 2**20
    return {"piece_bytes": b["piece_bytes"], "comp_mib_s": comp, "writer_mib_s": comp / amp}


def variant_k(vid):
    """The k an adaptive variant's target asks for (adaptive-1.5: 1.5), None for the rest."""
    if vid == "adaptive":
        return 2.0
    m = re.fullmatch(r"adaptive-([\d.]+)", vid)
    return float(m[1]) if m else None


def section(meta, s, labels):
    """Markdown lines: the bound at each k and each steady variant's compaction against it;
    [] when the rig is not the reference disk or the alone or untagged phase is missing."""
    model, a, u = disk_model(meta), s.get("alone") or {}, s.get("untagged") or {}
    reads, p99 = a.get("pread_rate"), a.get("get_p99_all")
    writer, comp = u.get("writer_mib_s"), u.get("comp_mib_s")
    if not (model and reads and p99 and writer and comp):
        return []
    amp = comp / writer
    L = ["### The physical bound", "",
         f"What any scheduler could do on this rig, from the matrix's model "
         f"(bench/matrix/bound.py; bench/rocksdb/physical.py says what it assumes): the reader "
         f"alone did {reads:.0f} preads/s of {READ_SIZE >> 10} KiB with a P99 of {p99:.0f} µs "
         f"on the model's {model['lat_us']} µs + size ÷ {model['bw'] / 1e6:.0f} MB/s, "
         f"{model['channels']} channel(s); compaction moved {amp:.1f} device MiB per MiB written "
         f"(untagged, {comp:.1f} MiB/s at {writer:.1f} MiB/s). *Most compaction* is the most "
         "background any scheduler could give while each read waits at most (k − 1)× its P99 "
         "alone; *fastest writer* is that over the MiB compaction needs per MiB written: the "
         "physical W*(k), which no setting can beat on this rig"
         + (f", and a generous one: untagged's own pending bytes grew "
            f"{u['pending_slope'] / 2**20:+.0f} MiB/min, so flat debt needs more than its pace."
            if (u.get("pending_slope") or 0) > 0 else "."), "",
         "| k | largest piece | most compaction MiB/s | fastest writer MiB/s |", "|---|---:|---:|---:|"]
    bounds = {k: physical_bound(model, reads, p99, amp, k) for k in KS}
    for k, b in bounds.items():
        L.append(f"| {k:g}× | {b['piece_bytes'] >> 10} KiB | {b['comp_mib_s']:.1f} | "
                 f"{b['writer_mib_s']:.2f} |")
    L.append("")
    for vid, label in labels:
        v, k = s.get(vid) or {}, variant_k(vid)
        if k is None or v.get("comp_mib_s") is None or not a.get("p99"):
            continue
        b = bounds.get(k) or physical_bound(model, reads, p99, amp, k)
        L.append(f"- {label}, steady: compaction {v['comp_mib_s']:.1f} MiB/s, "
                 f"{v['comp_mib_s'] / b['comp_mib_s']:.0%} of the bound at {k:g}×, with the "
                 f"reader's Get P99 at {v['p99'] / a['p99']:.2f}× alone.")
    return L + [""]
