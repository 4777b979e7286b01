// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * iolat.bpf.c: kernel side of `iotier lat`. It times every block request from queue to
 * completion (Q2C) and from issue to completion (D2C) and counts it, with its bytes, in a
 * log-linear histogram keyed by device, operation, I/O priority class and level.
 *
 * When a filter on the submitter is set (tgids, cgroup), a request is attributed where it
 * is created, in the submitter's context: block_io_start fires in blk_mq_bio_to_request(),
 * inside blk_mq_submit_bio(), where `current` is the task that submitted the bio under every
 * scheduler. Insert and issue are not reliable for that: with a plug flushed from kblockd
 * or a busy queue they run in a worker, and completion runs in interrupt context (bcc issue
 * #2941). Kernels without block_io_start (before 6.5) note the submitter per bio at
 * block_getrq, which fires in the same function just before, and find it again through
 * rq->bio at the first insert or issue (see blk.bpf.h). Without such a filter, neither is
 * attached and a request is tracked from its first insert or issue, which saves a hook and
 * a map update per request. The priority is read when tracking starts, because by
 * completion the bio may be gone.
 *
 * Every handler exists twice, as tp_btf and raw_tp; user space loads the set that the
 * kernel's BTF supports. Both share one body, specialised at compile time (blk.bpf.h).
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "blk.bpf.h"
#include "iolat.h"

/* Filters and probed features, set by user space between open and load (the device filter
 * and where tracking starts are blk.bpf.h's). */
const volatile bool filter_tgid = false;
const volatile bool follow_forks = false;
const volatile bool filter_cgroup = false;
const volatile __u32 op_mask = (1u << IOLAT_NR_OPS) - 1;
/* block_rq_complete carries nr_bytes (it has since 4.x; probed anyway). */
const volatile bool complete_has_nr_bytes = true;

/* Count every completion of the traced devices in dev_completions, tracked or not: set with
 * a submitter filter, where the rows cannot be held to diskstats but the device can. */
const volatile bool count_device = false;

/* Tests only (IOTIER_TEST_DROP_COMPLETIONS=N in lat_session.c): forget every Nth completion,
 * so that a test can make the tracer lose events and see the coverage check against
 * diskstats notice. Without count_device, every Nth tracked one; with it, every Nth the
 * device count sees (reads, writes, discards), forgotten there and in the rows alike, as
 * when the kernel does not run the program. 0 in normal use: the branch is removed. */
const volatile __u32 test_drop_every = 0;
__u64 test_completions;

/* Flipped by user space to read one interval's histograms while the next fills. */
volatile __u32 epoch;
/* Set once a request was dropped at insert: only then must issue consult `dropped`. */
volatile __u32 insert_drops_seen;

/* Tracked process ids; user space fills it, the fork hook adds children. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, IOLAT_MAX_TGIDS);
	__type(key, __u32);
	__type(value, __u8);
} tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_map SEC(".maps");

/* Requests between start and completion, keyed by the request pointer. Preallocated, so
 * the hot path never allocates; when full, the request is counted as a drop and I/O goes on. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, IOLAT_DEFAULT_INFLIGHT);
	__type(key, __u64);
	__type(value, struct iolat_inflight);
} inflight SEC(".maps");

/* Requests dropped at insert (map full), so that their issue neither tracks them with a
 * wrong queue time nor counts them as dropped a second time. LRU: it can never be full. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, __u8);
} dropped SEC(".maps");

/* Histograms are large (7 KiB per CPU), so they are allocated on first use, not upfront. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, IOLAT_MAX_HISTS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct iolat_key);
	__type(value, struct iolat_hist);
} hists SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, IOLAT_NR_STATS);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* Every completion of the traced devices, with count_device (count_device_completion()). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, IOLAT_MAX_DEV_OPS);
	__type(key, struct iolat_dev_op);
	__type(value, __u64);
} dev_completions SEC(".maps");

/* Completions whose histogram could not be created, for user space (spill_completion()). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} spills SEC(".maps");

/* Initial value for a new histogram: too big for the BPF stack. */
static const struct iolat_hist zero_hist;

static __always_inline void stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += 1;
}

/* Whether the current task passes the submitter filters; call only where it submits. */
static __always_inline bool current_wanted(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (filter_tgid && !bpf_map_lookup_elem(&tgids, &tgid))
		return false;
	if (filter_cgroup && bpf_current_task_under_cgroup(&cgroup_map, 0) != 1)
		return false;
	return true;
}

/* Create the in-flight entry of @rq, if it passes the filters, for submitter @sub (NULL:
 * not known, which no submitter filter lets pass): 0, -1 when filtered out, -2 when the map
 * is full (counted as a drop). */
static __always_inline int track(struct request *rq, __u64 now, const struct blk_submitter *sub,
				 const bool btf)
{
	struct iolat_inflight v = {};
	__u64 key = (__u64)rq;

	v.dev = rq_dev(rq, btf);
	if (!blk_dev_wanted(v.dev))
		return -1;
	v.op = rq_op(rq, btf);
	if (!(op_mask & (1u << v.op)))
		return -1;
	if (sub) {
		v.tgid = sub->tgid;
		v.tid = sub->tid;
	} else if (filter_tgid || filter_cgroup) {
		return -1;
	}
	v.ioprio = rq_ioprio(rq, btf);
	v.t.start_ns = now;
	if (bpf_map_update_elem(&inflight, &key, &v, BPF_ANY)) {
		stat_inc(IOLAT_STAT_DROPS);
		return -2;
	}
	return 0;
}

/* Track @rq from its first insert or issue: with its submitter noted at getrq, if any. */
static __always_inline int track_here(struct request *rq, __u64 now, const bool btf)
{
	struct blk_submitter sub;

	if (blk_start_at != BLK_START_GETRQ)
		return track(rq, now, NULL, btf);
	if (!blk_take_submitter(rq, &sub))
		return -1;
	return track(rq, now, &sub, btf);
}

static __always_inline int on_start(struct request *rq, const bool btf)
{
	struct blk_submitter sub;

	if (!current_wanted())
		return 0;
	blk_submitter_current(&sub, false);
	track(rq, bpf_ktime_get_ns(), &sub, btf);
	return 0;
}

static __always_inline int on_getrq(struct bio *bio)
{
	struct blk_submitter sub;

	if (!blk_dev_wanted(bio_disk_dev(bio)) || !current_wanted())
		return 0;
	blk_submitter_current(&sub, false);
	blk_note_bio(bio, &sub);
	return 0;
}

static __always_inline int on_insert(struct request *rq, const bool btf)
{
	__u64 key = (__u64)rq, now = bpf_ktime_get_ns();
	struct iolat_inflight *v = bpf_map_lookup_elem(&inflight, &key);

	if (blk_start_here(v ? &v->t : NULL)) {
		int ret;
		__u8 one = 1;

		if (v)
			bpf_map_delete_elem(&inflight, &key); /* stale, even if not tracked again */
		ret = track_here(rq, now, btf);

		if (ret == -2) {
			bpf_map_update_elem(&dropped, &key, &one, BPF_ANY);
			insert_drops_seen = 1;
		}
		if (ret)
			return 0;
		v = bpf_map_lookup_elem(&inflight, &key);
	}
	if (v)
		blk_times_insert(&v->t, now);
	return 0;
}

static __always_inline int on_issue(struct request *rq, const bool btf)
{
	__u64 key = (__u64)rq, now = bpf_ktime_get_ns();
	struct iolat_inflight *v = bpf_map_lookup_elem(&inflight, &key);

	if (blk_start_here(v ? &v->t : NULL)) {
		/* Dropped at insert already: counted once, not tracked from here. */
		if (insert_drops_seen && !bpf_map_delete_elem(&dropped, &key))
			return 0;
		if (v)
			bpf_map_delete_elem(&inflight, &key); /* stale, even if not tracked again */
		if (track_here(rq, now, btf))
			return 0;
		v = bpf_map_lookup_elem(&inflight, &key);
	}
	if (v)
		blk_times_issue(&v->t, now);
	return 0;
}

/*
 * A completion whose histogram could not be created: a new histogram is allocated while
 * the request completes, and the kernel's BPF allocator can run dry for a moment in a burst
 * (seen on 6.1 under qemu). The completion goes to user space instead, which adds it to the
 * same row; only a full ring buffer loses it, and that is counted.
 */
static __always_inline void spill_completion(const struct iolat_key *hk,
					     const struct iolat_inflight *v, __u32 nr_bytes,
					     __u64 q2c, __u64 d2c)
{
	struct iolat_spill *e = bpf_ringbuf_reserve(&spills, sizeof(*e), 0);

	if (!e) {
		stat_inc(IOLAT_STAT_HIST_DROPS);
		return;
	}
	e->key = *hk;
	e->has_d2c = v->t.issue_ns != 0;
	e->bytes = v->bytes + nr_bytes;
	e->q2c_ns = q2c;
	e->d2c_ns = d2c;
	bpf_ringbuf_submit(e, 0);
}

/*
 * Count the completion of @rq on its device as diskstats counts it (blk_diskstats_op()),
 * flushes aside, whether or not the report tracks it. Returns true when the test knob says
 * to forget it.
 */
static __always_inline bool count_device_completion(struct request *rq, unsigned int nr_bytes)
{
	struct iolat_dev_op k = { .dev = rq_dev(rq, false) };
	int op = blk_diskstats_op(rq, complete_has_nr_bytes ? nr_bytes :
				  BPF_CORE_READ(rq, __data_len));
	__u64 one = 1, *n;

	if (op < 0 || op == BLK_DS_FLUSH || !blk_dev_wanted(k.dev))
		return false;
	if (test_drop_every &&
	    __sync_fetch_and_add(&test_completions, 1) % test_drop_every == test_drop_every - 1)
		return true;
	k.op = (__u32)op;
	n = bpf_map_lookup_elem(&dev_completions, &k);
	if (n)
		__sync_fetch_and_add(n, 1);
	else if (bpf_map_update_elem(&dev_completions, &k, &one, BPF_NOEXIST) &&
		 (n = bpf_map_lookup_elem(&dev_completions, &k)))
		__sync_fetch_and_add(n, 1);
	return false;
}

static __always_inline int on_complete(struct request *rq, unsigned int nr_bytes, const bool btf)
{
	__u64 key = (__u64)rq, now = bpf_ktime_get_ns(), qstart, q2c, d2c;
	struct iolat_inflight *v;
	struct iolat_hist *h;
	struct iolat_key hk = {};
	__u32 left;

	if (count_device && count_device_completion(rq, nr_bytes)) {
		bpf_map_delete_elem(&inflight, &key);
		return 0;
	}
	v = bpf_map_lookup_elem(&inflight, &key);
	if (!v)
		return 0;
	left = btf ? rq->__data_len : BPF_CORE_READ(rq, __data_len);
	if (!complete_has_nr_bytes)
		nr_bytes = left;
	/* A partial completion: the request stays in flight for the rest of its bytes. */
	if (nr_bytes < left) {
		v->bytes += nr_bytes;
		return 0;
	}
	if (test_drop_every && !count_device &&
	    __sync_fetch_and_add(&test_completions, 1) % test_drop_every == test_drop_every - 1)
		goto out;
	hk.dev = v->dev;
	hk.epoch = epoch & 1;
	hk.op = v->op;
	hk.ioclass = (v->ioprio >> BLK_IOPRIO_CLASS_SHIFT) & 7;
	if (hk.ioclass >= IOLAT_NR_CLASSES)
		hk.ioclass = 0;
	hk.level = v->ioprio & 7;
	qstart = blk_times_qstart(&v->t);
	q2c = now >= qstart ? now - qstart : 0;
	d2c = v->t.issue_ns && now >= v->t.issue_ns ? now - v->t.issue_ns : 0;
	h = bpf_map_lookup_elem(&hists, &hk);
	if (!h) {
		bpf_map_update_elem(&hists, &hk, &zero_hist, BPF_NOEXIST);
		h = bpf_map_lookup_elem(&hists, &hk);
	}
	if (!h) {
		spill_completion(&hk, v, nr_bytes, q2c, d2c);
		goto out;
	}
	h->count++;
	h->bytes += v->bytes + nr_bytes;
	if (now >= qstart)
		blk_lat_add(&h->q2c, q2c, false);
	if (v->t.issue_ns && now >= v->t.issue_ns)
		blk_lat_add(&h->d2c, d2c, false);
out:
	bpf_map_delete_elem(&inflight, &key);
	return 0;
}

static __always_inline int on_requeue(struct request *rq)
{
	__u64 key = (__u64)rq;
	struct iolat_inflight *v = bpf_map_lookup_elem(&inflight, &key);

	if (v) {
		blk_times_requeue(&v->t);
		stat_inc(IOLAT_STAT_REQUEUES);
	}
	return 0;
}

static __always_inline int on_merge(struct request *rq)
{
	__u64 key = (__u64)rq;

	/* @rq was merged into another request and is freed without completing: its bytes
	 * complete as part of the survivor, so only forget it. */
	if (!bpf_map_delete_elem(&inflight, &key))
		stat_inc(IOLAT_STAT_MERGES);
	else if (insert_drops_seen)
		bpf_map_delete_elem(&dropped, &key);
	return 0;
}

static __always_inline int on_fork(struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid, ctgid;
	__u8 one = 1;

	if (!filter_tgid || !follow_forks)
		return 0;
	ptgid = BPF_CORE_READ(parent, tgid);
	ctgid = BPF_CORE_READ(child, tgid);
	if (ptgid != ctgid && bpf_map_lookup_elem(&tgids, &ptgid))
		bpf_map_update_elem(&tgids, &ctgid, &one, BPF_ANY);
	return 0;
}

/* BTF-typed attach (tp_btf). */
SEC("tp_btf/block_io_start")
int BPF_PROG(btf_io_start, struct request *rq) { return on_start(rq, true); }
SEC("tp_btf/block_getrq")
int BPF_PROG(btf_getrq, struct bio *bio) { return on_getrq(bio); }
SEC("tp_btf/block_rq_insert")
int BPF_PROG(btf_rq_insert, struct request *rq) { return on_insert(rq, true); }
SEC("tp_btf/block_rq_issue")
int BPF_PROG(btf_rq_issue, struct request *rq) { return on_issue(rq, true); }
SEC("tp_btf/block_rq_complete")
int BPF_PROG(btf_rq_complete, struct request *rq, int error, unsigned int nr_bytes)
{
	return on_complete(rq, complete_has_nr_bytes ? nr_bytes : 0, true);
}
SEC("tp_btf/block_rq_requeue")
int BPF_PROG(btf_rq_requeue, struct request *rq) { return on_requeue(rq); }
SEC("tp_btf/block_rq_merge")
int BPF_PROG(btf_rq_merge, struct request *rq) { return on_merge(rq); }
SEC("tp_btf/sched_process_fork")
int BPF_PROG(btf_fork, struct task_struct *parent, struct task_struct *child)
{
	return on_fork(parent, child);
}

/* Raw tracepoints: the same handlers where BTF-typed attach is unavailable. */
SEC("raw_tp/block_io_start")
int BPF_PROG(raw_io_start, struct request *rq) { return on_start(rq, false); }
SEC("raw_tp/block_getrq")
int BPF_PROG(raw_getrq, struct bio *bio) { return on_getrq(bio); }
SEC("raw_tp/block_rq_insert")
int BPF_PROG(raw_rq_insert, struct request *rq) { return on_insert(rq, false); }
SEC("raw_tp/block_rq_issue")
int BPF_PROG(raw_rq_issue, struct request *rq) { return on_issue(rq, false); }
SEC("raw_tp/block_rq_complete")
int BPF_PROG(raw_rq_complete, struct request *rq, int error, unsigned int nr_bytes)
{
	return on_complete(rq, complete_has_nr_bytes ? nr_bytes : 0, false);
}
SEC("raw_tp/block_rq_requeue")
int BPF_PROG(raw_rq_requeue, struct request *rq) { return on_requeue(rq); }
SEC("raw_tp/block_rq_merge")
int BPF_PROG(raw_rq_merge, struct request *rq) { return on_merge(rq); }
SEC("raw_tp/sched_process_fork")
int BPF_PROG(raw_fork, struct task_struct *parent, struct task_struct *child)
{
	return on_fork(parent, child);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
