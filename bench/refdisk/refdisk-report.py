#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""refdisk-report.py: the reference disk's own accuracy and overhead, from the fio jobs
`bench/refdisk/refdisk measure` ran. The FUSE round trip is QD1 4 KiB reads with the model off;
accuracy is QD1 4 KiB reads against the model's latency + 4096 / bandwidth, and sequential
1 MiB jobs against the model's throughput for the request size that actually reached the
daemon (the block layer and FUSE split requests; the daemon's counters say how).

usage: refdisk-report.py DIR 'LAT_US BW CHANNELS' OUT.json
"""
import json
import sys


def job(d, name, op):
    j = json.load(open(f"{d}/{name}"))[op]
    pct = j["clat_ns"]["percentile"]
    return {"mean_us": j["clat_ns"]["mean"] / 1e3, "p50_us": pct["50.000000"] / 1e3,
            "p99_us": pct["99.000000"] / 1e3, "iops": j["iops"], "mb_s": j["bw_bytes"] / 1e6}


def main():
    d, model, out = sys.argv[1], sys.argv[2], sys.argv[3]
    lat_us, bw, ch = (int(x) for x in model.split())
    stats = dict(line.split() for line in open(f"{d}/stats"))
    r = {"model": {"lat_us": lat_us, "bw": bw, "channels": ch}}
    r["roundtrip"] = job(d, "roundtrip", "read")
    r["qd1"] = job(d, "qd1", "read")
    r["qd1"]["model_us"] = lat_us + (4096 / bw * 1e6 if bw else 0)
    for op in ("write", "read"):
        s = job(d, "seq" + op, op)
        reqs, nbytes = (int(x) for x in open(f"{d}/seq{op}.count").read().split())
        size = nbytes / reqs if reqs else 0
        per_req_s = lat_us / 1e6 + (size / bw if bw else 0)
        s["request_kib"] = size / 1024
        s["model_mb_s"] = ch * size / per_req_s / 1e6 if per_req_s else None
        r["seq" + op] = s
    fin = int(stats.get("finished", 0))
    r["late_mean_us"] = int(stats.get("late_ns", 0)) / fin / 1e3 if fin else None
    r["late_max_us"] = int(stats.get("late_max_ns", 0)) / 1e3
    json.dump(r, open(out, "w"), indent=1)

    q = r["qd1"]
    print(f"model: {lat_us} us + size / {bw / 1e6:g} MB/s, {ch} channel(s)")
    print(f"FUSE round trip (model off), QD1 4 KiB read: mean {r['roundtrip']['mean_us']:.0f} us, "
          f"P50 {r['roundtrip']['p50_us']:.0f} us, P99 {r['roundtrip']['p99_us']:.0f} us")
    print(f"QD1 4 KiB read: model {q['model_us']:.0f} us; measured mean {q['mean_us']:.0f} us "
          f"({q['mean_us'] / q['model_us']:.2f}x), P50 {q['p50_us']:.0f} us "
          f"({q['p50_us'] / q['model_us']:.2f}x), P99 {q['p99_us']:.0f} us")
    for op in ("write", "read"):
        s = r["seq" + op]
        ratio = s["mb_s"] / s["model_mb_s"] if s["model_mb_s"] else float("nan")
        print(f"sequential 1 MiB {op}s, QD8: {s['mb_s']:.0f} MB/s, model {s['model_mb_s']:.0f} MB/s "
              f"for the {s['request_kib']:.0f} KiB requests that reached the daemon ({100 * ratio:.0f}%)")
    print(f"model sleeps woke late by {r['late_mean_us']:.1f} us on average, {r['late_max_us']:.0f} us at most")


if __name__ == "__main__":
    main()
