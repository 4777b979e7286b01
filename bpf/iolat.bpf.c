// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * iolat.bpf.c: kernel side of `iotier lat`. It times every block request from queue to
 * completion (Q2C) and from issue to completion (D2C) and counts it, with its bytes, in a
 * log-linear histogram keyed by device, operation, I/O priority class and level.
 *
 * When a filter on the submitter is set (tgids, cgroup), a request is attributed when it is
 * created: block_io_start fires in blk_mq_bio_to_request(), inside blk_mq_submit_bio(),
 * where `current` is the task that submitted the bio under every scheduler. Insert and
 * issue are not reliable for that: with a plug flushed from kblockd or a busy queue they run
 * in a worker, and completion runs in interrupt context (bcc issue #2941). Kernels without
 * block_io_start (before 6.5) attribute at the first insert or issue instead. Without such a
 * filter, block_io_start is not attached at all and a request is tracked from its first
 * insert or issue, which saves a hook and a map update per request. The priority is read
 * when tracking starts, because by completion the bio may be gone.
 *
 * Every handler exists twice, as tp_btf and raw_tp; user space loads the set that the
 * kernel's BTF supports. Both share one body, specialised at compile time (see rq_dev()).
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "iolat.h"

/* Filters and probed features, set by user space between open and load. */
const volatile __u32 ndevs = 0;                 /* 0: every device */
const volatile __u32 dev_list[IOLAT_MAX_DEVS] = {};
const volatile bool filter_tgid = false;
const volatile bool follow_forks = false;
const volatile bool filter_cgroup = false;
const volatile __u32 op_mask = (1u << IOLAT_NR_OPS) - 1;
/* block_io_start is attached: track (and attribute) there and nowhere else. */
const volatile bool start_at_io_start = true;
/* block_rq_complete carries nr_bytes (it has since 4.x; probed anyway). */
const volatile bool complete_has_nr_bytes = true;

/* Tests only (IOTIER_TEST_DROP_COMPLETIONS=N in lat_session.c): forget every Nth tracked
 * completion, so that a test can make the tracer lose events and see the coverage check
 * against diskstats notice. 0 in normal use, where the verifier removes the branch. */
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

/* Initial value for a new histogram: too big for the BPF stack. */
static const struct iolat_hist zero_hist;

/* request.ioprio was removed in 6.13 ("block: remove the ioprio field from struct
 * request"); before that it is the request's own copy, after it the bio's is the only one. */
struct request___has_ioprio {
	unsigned short ioprio;
} __attribute__((preserve_access_index));

/* request.rq_disk was removed in 5.17 ("block: remove the ->rq_disk field in struct
 * request"); the disk is reached through the queue since. */
struct request___has_rq_disk {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

/* REQ_OP_BITS is a #define in include/linux/blk_types.h, unchanged since 4.10. */
#define REQ_OP_BITS 8
#define IOPRIO_CLASS_SHIFT 13

static __always_inline void stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += 1;
}

/*
 * Every reader takes @btf, a compile-time constant: with tp_btf the request pointer is
 * BTF-typed and fields are plain loads (a few ns); with raw_tp it is a bare scalar and each
 * field costs a bpf_probe_read_kernel() call. The dead branch is compiled away.
 */
static __always_inline __u32 rq_dev(struct request *rq, const bool btf)
{
	struct gendisk *disk;

	if (bpf_core_field_exists(struct request___has_rq_disk, rq_disk))
		disk = btf ? ((struct request___has_rq_disk *)rq)->rq_disk :
			     BPF_CORE_READ((struct request___has_rq_disk *)rq, rq_disk);
	else
		disk = btf ? rq->q->disk : BPF_CORE_READ(rq, q, disk);
	if (!disk)
		return 0;
	if (btf)
		return ((__u32)disk->major << 20) | (__u32)disk->first_minor;
	return ((__u32)BPF_CORE_READ(disk, major) << 20) | (__u32)BPF_CORE_READ(disk, first_minor);
}

static __always_inline __u16 rq_ioprio(struct request *rq, const bool btf)
{
	struct bio *bio;

	if (bpf_core_field_exists(struct request___has_ioprio, ioprio))
		return btf ? ((struct request___has_ioprio *)rq)->ioprio :
			     BPF_CORE_READ((struct request___has_ioprio *)rq, ioprio);
	bio = btf ? rq->bio : BPF_CORE_READ(rq, bio);
	if (!bio)
		return 0; /* no bio, no priority: class none */
	return btf ? bio->bi_ioprio : BPF_CORE_READ(bio, bi_ioprio);
}

static __always_inline __u8 rq_op(struct request *rq, const bool btf)
{
	__u32 flags = btf ? rq->cmd_flags : BPF_CORE_READ(rq, cmd_flags);
	__u32 op = flags & ((1u << REQ_OP_BITS) - 1);

	if (op == bpf_core_enum_value(enum req_op, REQ_OP_READ))
		return IOLAT_OP_READ;
	if (op == bpf_core_enum_value(enum req_op, REQ_OP_WRITE)) {
		__u32 len = btf ? rq->__data_len : BPF_CORE_READ(rq, __data_len);

		/* fsync's cache flush arrives as an empty write with PREFLUSH set. */
		if (!len && (flags & (1u << bpf_core_enum_value(enum req_flag_bits, __REQ_PREFLUSH))))
			return IOLAT_OP_FLUSH;
		return IOLAT_OP_WRITE;
	}
	if (op == bpf_core_enum_value(enum req_op, REQ_OP_FLUSH))
		return IOLAT_OP_FLUSH;
	if (op == bpf_core_enum_value(enum req_op, REQ_OP_DISCARD))
		return IOLAT_OP_DISCARD;
	return IOLAT_OP_OTHER;
}

static __always_inline bool dev_wanted(__u32 dev)
{
	/* A short list of constants: cheaper than any map lookup on the hot path. */
	for (__u32 i = 0; i < IOLAT_MAX_DEVS; i++) {
		if (i >= ndevs)
			return false;
		if (dev_list[i] == dev)
			return true;
	}
	return false;
}

/* Create the in-flight entry of @rq, if it passes the filters: 0, -1 when filtered out, -2
 * when the map is full (counted as a drop). Runs where current is the submitter, or where
 * the request is first inserted or issued. */
static __always_inline int track(struct request *rq, __u64 now, const bool btf)
{
	struct iolat_inflight v = {};
	__u64 key = (__u64)rq;
	__u64 id;
	__u32 tgid;

	v.dev = rq_dev(rq, btf);
	if (ndevs && !dev_wanted(v.dev))
		return -1;
	v.op = rq_op(rq, btf);
	if (!(op_mask & (1u << v.op)))
		return -1;
	/* current is the submitter only where a submitter filter has us track; elsewhere the
	 * entry says "unknown" (0) rather than name whichever task runs the insert or issue. */
	if (filter_tgid || filter_cgroup || start_at_io_start) {
		id = bpf_get_current_pid_tgid();
		tgid = id >> 32;
		if (filter_tgid && !bpf_map_lookup_elem(&tgids, &tgid))
			return -1;
		if (filter_cgroup && bpf_current_task_under_cgroup(&cgroup_map, 0) != 1)
			return -1;
		v.tgid = tgid;
		v.tid = (__u32)id;
	}
	v.ioprio = rq_ioprio(rq, btf);
	v.start_ns = now;
	if (bpf_map_update_elem(&inflight, &key, &v, BPF_ANY)) {
		stat_inc(IOLAT_STAT_DROPS);
		return -2;
	}
	return 0;
}

static __always_inline int on_start(struct request *rq, const bool btf)
{
	track(rq, bpf_ktime_get_ns(), btf);
	return 0;
}

static __always_inline int on_insert(struct request *rq, const bool btf)
{
	__u64 key = (__u64)rq, now = bpf_ktime_get_ns();
	struct iolat_inflight *v = bpf_map_lookup_elem(&inflight, &key);

	/* Requests are recycled. An entry that was issued and not requeued since belongs to
	 * this request's previous life, whose completion was missed: start afresh. */
	if (v && v->issue_ns && !start_at_io_start)
		v = NULL;
	if (!v && !start_at_io_start) {
		int ret = track(rq, now, btf);
		__u8 one = 1;

		if (ret == -2) {
			bpf_map_update_elem(&dropped, &key, &one, BPF_ANY);
			insert_drops_seen = 1;
		}
		if (ret)
			return 0;
		v = bpf_map_lookup_elem(&inflight, &key);
	}
	/* A requeued request is inserted again: its queue time runs from the first insert. */
	if (v && !v->insert_ns)
		v->insert_ns = now;
	return 0;
}

static __always_inline int on_issue(struct request *rq, const bool btf)
{
	__u64 key = (__u64)rq, now = bpf_ktime_get_ns();
	struct iolat_inflight *v = bpf_map_lookup_elem(&inflight, &key);

	/* Issued twice without a requeue: a stale entry, as in on_insert(). */
	if (v && v->issue_ns && !start_at_io_start)
		v = NULL;
	if (!v && !start_at_io_start) {
		/* Dropped at insert already: counted once, not tracked from here. */
		if (insert_drops_seen && !bpf_map_delete_elem(&dropped, &key))
			return 0;
		if (track(rq, now, btf))
			return 0;
		v = bpf_map_lookup_elem(&inflight, &key);
	}
	if (v)
		v->issue_ns = now;
	return 0;
}

static __always_inline void lat_add(struct iolat_lat *l, __u64 ns)
{
	__u64 b = hist_bucket(ns);

	/* Cannot happen, but the verifier needs the bound on the very register used to index;
	 * the barrier stops clang from checking a copy. */
	barrier_var(b);
	if (b >= HIST_NR_BUCKETS)
		return;
	l->slots[b]++;
	l->count++;
	l->sum_ns += ns;
	if (!l->min_ns || ns < l->min_ns)
		l->min_ns = ns;
	if (ns > l->max_ns)
		l->max_ns = ns;
}

static __always_inline int on_complete(struct request *rq, unsigned int nr_bytes, const bool btf)
{
	__u64 key = (__u64)rq, now = bpf_ktime_get_ns(), qstart;
	struct iolat_inflight *v = bpf_map_lookup_elem(&inflight, &key);
	struct iolat_hist *h;
	struct iolat_key hk = {};
	__u32 left;

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
	if (test_drop_every &&
	    __sync_fetch_and_add(&test_completions, 1) % test_drop_every == test_drop_every - 1)
		goto out;
	hk.dev = v->dev;
	hk.epoch = epoch & 1;
	hk.op = v->op;
	hk.ioclass = (v->ioprio >> IOPRIO_CLASS_SHIFT) & 7;
	if (hk.ioclass >= IOLAT_NR_CLASSES)
		hk.ioclass = 0;
	hk.level = v->ioprio & 7;
	h = bpf_map_lookup_elem(&hists, &hk);
	if (!h) {
		bpf_map_update_elem(&hists, &hk, &zero_hist, BPF_NOEXIST);
		h = bpf_map_lookup_elem(&hists, &hk);
		if (!h) {
			stat_inc(IOLAT_STAT_HIST_DROPS);
			goto out;
		}
	}
	h->count++;
	h->bytes += v->bytes + nr_bytes;
	qstart = v->insert_ns ? v->insert_ns : v->issue_ns ? v->issue_ns : v->start_ns;
	if (now >= qstart)
		lat_add(&h->q2c, now - qstart);
	if (v->issue_ns && now >= v->issue_ns)
		lat_add(&h->d2c, now - v->issue_ns);
out:
	bpf_map_delete_elem(&inflight, &key);
	return 0;
}

static __always_inline int on_requeue(struct request *rq)
{
	__u64 key = (__u64)rq;
	struct iolat_inflight *v = bpf_map_lookup_elem(&inflight, &key);

	if (v) {
		/* It goes back to the queue and will be issued again; D2C restarts then. */
		v->issue_ns = 0;
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
