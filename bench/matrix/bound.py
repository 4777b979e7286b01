# SPDX-License-Identifier: MIT
"""The physical bound of the adaptive matrix (bench/matrix/README.md, "The bound").

The most background MB/s that any scheduler could give on the reference disk's model while
every foreground read is delayed by at most the allowance D = (k - 1) x the reader's P99
alone. Computed from the model (latency L, bandwidth B per channel, N channels, FIFO,
non-preemptive) and the reader's figures alone (reads/s while busy, P99, queue depth, busy
share), never measured. Pure functions, so that tests/bench/test-matrix-bound.py can check
them on hand-computed cases.
"""

READ_SIZE = 4096
PIECE_MAX = 1 << 20  # the background's own request size: no piece is larger

# Each background as the disk sees it: its request size there (no piece can be larger) and
# how many requests it keeps on the disk at once (how many channels it can ever fill). A
# 1 MiB O_DIRECT write or read reaches refdisk as two 512 KiB requests (the loop device's
# limit, docs/refdisk.md); writeback queues as many as there are channels (depth None); the
# shared log writes 256 KiB and syncs before the next.
BACKGROUNDS = {
    "dio": {"piece": 512 << 10, "depth": 2},
    "bufsync": {"piece": 512 << 10, "depth": None},
    "seqread": {"piece": 512 << 10, "depth": 2},
    "wal": {"piece": 256 << 10, "depth": 1},
}


def service(size, lat_s, bw):
    """A request's time on a channel: latency + size / bandwidth (seconds)."""
    return lat_s + size / bw


def _fg_shape(model, fg):
    """(q, m, rate_c, r): channels the reader keeps busy, its reads per channel per cycle,
    its reads/s per channel alone, and one read's channel time."""
    n = model["channels"]
    qd = fg.get("qd", 1)
    q = min(qd, n)
    m = qd / q
    rate_c = fg["rate"] / q
    r = service(fg.get("read_size", READ_SIZE), model["lat_us"] / 1e6, model["bw"])
    return q, m, rate_c, r


def piece_closed(model, fg, s):
    """A closed-loop reader next to back-to-back background pieces of s bytes: the piece
    starts when the reader's m reads leave the channel, so it costs the reader only what it
    lasts beyond the channel's idle gap g. Returns (background bytes/s on the reader's
    channels, the delay d each read pays)."""
    q, m, rate_c, r = _fg_shape(model, fg)
    lat = model["lat_us"] / 1e6
    cycle_alone = m / rate_c
    gap = max(0.0, cycle_alone - m * r)
    d = max(0.0, service(s, lat, model["bw"]) - gap) if s > 0 else 0.0
    return (q * s / (cycle_alone + d) if s > 0 else 0.0), d


def full_rate(model, piece=PIECE_MAX):
    """One channel's bytes/s with nothing but pieces of `piece` bytes."""
    return piece / service(piece, model["lat_us"] / 1e6, model["bw"])


def bound(model, fg, k, piece_max=PIECE_MAX, depth=None):
    """The bound for one cell. model: lat_us, bw (bytes/s per channel), channels. fg: kind
    ('closed' or 'open'), qd, rate (reads/s while busy, alone), p99_us (alone), duty (busy
    share of the time, 1 unless bursty). piece_max and depth: the background's request size
    and how many channels it can fill at once (BACKGROUNDS; None: all). Returns piece_bytes
    (the largest piece that keeps the delay within the allowance), busy_mb_s, idle_mb_s,
    total_mb_s."""
    lat, bw, n = model["lat_us"] / 1e6, model["bw"], model["channels"]
    allow = (k - 1) * fg["p99_us"] / 1e6
    q, m, rate_c, r = _fg_shape(model, fg)
    if fg.get("kind", "closed") == "open":
        # Arrivals at random: no gap can be counted on, so every piece fits the allowance
        # and the pieces fill the time the reader leaves, on every channel.
        s = min(piece_max, max(0.0, (allow - lat) * bw))
        u = min(1.0, fg["rate"] * r / n)
        busy = n * (1 - u) * (s / service(s, lat, bw)) if s > 0 else 0.0
    else:
        gap = max(0.0, m / rate_c - m * r)
        s = min(piece_max, max(0.0, (gap + allow - lat) * bw))
        busy, _ = piece_closed(model, fg, s)
        busy += (n - q) * full_rate(model, piece_max)  # channels the reader never uses
    # a background that keeps only `depth` requests on the disk fills no more channels
    cap = min(n, depth or n) * full_rate(model, piece_max)
    busy = min(busy, cap)
    idle = cap
    duty = fg.get("duty", 1.0)
    return {
        "piece_bytes": int(s),
        "busy_mb_s": busy / 1e6,
        "idle_mb_s": idle / 1e6,
        "total_mb_s": (duty * busy + (1 - duty) * idle) / 1e6,
        "allowance_us": allow * 1e6,
    }


def cell_bound(cell, k):
    """bound() for a cell of results.json (its model, fg_model and background)."""
    bg = BACKGROUNDS[cell["bg"]]
    return bound(cell["model"], cell["fg_model"], k, bg["piece"], bg["depth"])


def predict_piece(model, fg, s):
    """What a static background of back-to-back s-byte pieces should give a closed-loop
    reader: background MB/s, the reader's reads/s, and its P50 and P99 (alone's plus the
    delay d each read pays). The check of the model against one measured cell."""
    busy, d = piece_closed(model, fg, s)
    q, m, rate_c, _ = _fg_shape(model, fg)
    cycle = m / rate_c
    out = {"bg_mb_s": busy / 1e6, "p99_us": fg["p99_us"] + d * 1e6,
           "reads_s": fg["rate"] * cycle / (cycle + d)}
    if "p50_us" in fg:
        out["p50_us"] = fg["p50_us"] + d * 1e6
    return out
