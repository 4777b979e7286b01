/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * blk.bpf.h: the block-layer vocabulary both tracers share (iolat.bpf.c for `iotier lat`,
 * iotrack.bpf.c for `iotier check`), in the style of libbpf-tools' core_fixes.bpf.h: every
 * place where struct request or a tracepoint differs between kernels is bridged here once,
 * by CO-RE (a `___x` variant tested with bpf_core_field_exists()), each with a comment
 * naming the kernel change. Also here: the device filter, the submitter of a request on
 * kernels without block_io_start, a request's timestamps from start to completion, and
 * adding a latency to a histogram.
 *
 * Readers take @btf, a compile-time constant: with tp_btf the request pointer is BTF-typed
 * and fields are plain loads; with raw_tp it is a bare scalar and every field costs a
 * bpf_probe_read_kernel(). The dead branch is compiled away.
 */
#ifndef IOTIER_BLK_BPF_H
#define IOTIER_BLK_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "blk.h"
#include "iolat.h" /* IOLAT_OP_* and struct iolat_lat: the reported vocabulary */

#define BLK_MINORBITS 20
/* REQ_OP_BITS is a #define in include/linux/blk_types.h, unchanged since 4.10. */
#define BLK_REQ_OP_BITS 8
#define BLK_IOPRIO_CLASS_SHIFT 13
#define BLK_PF_KTHREAD 0x00200000
#define BLK_COMM_LEN 16
/* How far down rq->bio a submitter's bio is looked for: front merges put bios before it. */
#define BLK_BIO_WALK 8

/* Devices to trace (kernel dev_t), set by user space before load; none: every device. */
const volatile __u32 blk_ndevs = 0;
const volatile __u32 blk_devs[BLK_MAX_DEVS] = {};
/* enum blk_start: where a request is first followed, probed from BTF by user space. */
const volatile __u32 blk_start_at = BLK_START_IO_START;

/* ---- CO-RE fixes ---- */

/*
 * "block: remove the ioprio field from struct request" (6.13): before
 * it the request kept its own copy of the priority; since, the first bio's is the only one
 * (mq-deadline reads it there too).
 */
struct request___has_ioprio {
	unsigned short ioprio;
} __attribute__((preserve_access_index));

/*
 * "block: remove the ->rq_disk field in struct request" (5.17): the
 * disk is reached through the queue since.
 */
struct request___has_rq_disk {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

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

/* The whole disk of @rq, kernel dev_t (major << 20 | minor); 0 when it has none. */
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
		return ((__u32)disk->major << BLK_MINORBITS) | (__u32)disk->first_minor;
	return ((__u32)BPF_CORE_READ(disk, major) << BLK_MINORBITS) |
	       (__u32)BPF_CORE_READ(disk, first_minor);
}

/*
 * The partition (or disk) of a bio, kernel dev_t. bio->bi_bdev exists since 5.12 (commit
 * 309dca309fc3, "block: store a block_device pointer in struct bio"), older than any kernel
 * with the BTF these programs need. Not rq->part: block_io_start fires before it is set.
 */
static __always_inline __u32 bio_part_dev(struct bio *bio)
{
	struct block_device *bdev = bio ? BPF_CORE_READ(bio, bi_bdev) : NULL;

	return bdev ? BPF_CORE_READ(bdev, bd_dev) : 0;
}

/* The whole disk of a bio, kernel dev_t. */
static __always_inline __u32 bio_disk_dev(struct bio *bio)
{
	struct gendisk *disk = bio ? BPF_CORE_READ(bio, bi_bdev, bd_disk) : NULL;

	if (!disk)
		return 0;
	return ((__u32)BPF_CORE_READ(disk, major) << BLK_MINORBITS) |
	       (__u32)BPF_CORE_READ(disk, first_minor);
}

/* The REQ_OP_* of @rq, as the kernel numbers it (compare with bpf_core_enum_value()). */
static __always_inline __u32 rq_req_op(struct request *rq, const bool btf)
{
	__u32 flags = btf ? rq->cmd_flags : BPF_CORE_READ(rq, cmd_flags);

	return flags & ((1u << BLK_REQ_OP_BITS) - 1);
}

/* The operation of @rq as reported (IOLAT_OP_*). */
static __always_inline __u8 rq_op(struct request *rq, const bool btf)
{
	__u32 flags = btf ? rq->cmd_flags : BPF_CORE_READ(rq, cmd_flags);
	__u32 op = flags & ((1u << BLK_REQ_OP_BITS) - 1);

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

/* The rq_flags bit of a request inside a flush sequence: its data phase and the flushes the
 * flush machinery sends. RQF_* became enum rqf_flags in 6.8 ("block: convert RQF_* to an
 * enum"); before, RQF_FLUSH_SEQ was the #define (1 << 4). */
static __always_inline __u32 rqf_flush_seq(void)
{
	if (bpf_core_enum_value_exists(enum rqf_flags, __RQF_FLUSH_SEQ))
		return 1u << bpf_core_enum_value(enum rqf_flags, __RQF_FLUSH_SEQ);
	return 1u << 4;
}

/*
 * The diskstats column (BLK_DS_*) the kernel counts the completion of @rq for @nr_bytes in,
 * or -1 when it counts none there: once per request, when it ends outside a flush sequence
 * (blk_account_io_done() skips RQF_FLUSH_SEQ; a write carrying a flush is counted when its
 * sequence is done), by REQ_OP_* (an empty PREFLUSH write is a write). Partial completions
 * and other ops count nowhere.
 */
static __always_inline int blk_diskstats_op(struct request *rq, unsigned int nr_bytes)
{
	__u32 op;

	if (nr_bytes < BPF_CORE_READ(rq, __data_len) ||
	    (BPF_CORE_READ(rq, rq_flags) & rqf_flush_seq()))
		return -1;
	op = rq_req_op(rq, false);
	if (op == bpf_core_enum_value(enum req_op, REQ_OP_READ))
		return BLK_DS_READ;
	if (op == bpf_core_enum_value(enum req_op, REQ_OP_WRITE))
		return BLK_DS_WRITE;
	if (op == bpf_core_enum_value(enum req_op, REQ_OP_DISCARD))
		return BLK_DS_DISCARD;
	if (op == bpf_core_enum_value(enum req_op, REQ_OP_FLUSH))
		return BLK_DS_FLUSH;
	return -1;
}

/*
 * Whether @p's whole thread group is gone, read at sched_process_exit. The tracepoint gained
 * a group_dead argument after 6.12 (6.18 has it; 6.1 and 6.12 pass the task alone, and a
 * tp_btf program that reads a second argument does not load there). Every kernel decrements
 * signal->live before the tracepoint, and group_dead is exactly "it reached zero", so that
 * is read on all of them and the program takes the task only.
 */
static __always_inline bool task_group_dead(struct task_struct *p)
{
	return BPF_CORE_READ(p, signal, live.counter) == 0;
}

/* ---- the device filter ---- */

static __always_inline bool blk_dev_wanted(__u32 dev)
{
	if (!blk_ndevs)
		return true;
	/* A short list of constants: cheaper than any map lookup on the hot path. */
	for (__u32 i = 0; i < BLK_MAX_DEVS; i++) {
		if (i >= blk_ndevs)
			return false;
		if (blk_devs[i] == dev)
			return true;
	}
	return false;
}

/* ---- the submitter ---- */

/* Who turned a bio into a request. */
struct blk_submitter {
	__u32 tgid;
	__u32 tid;
	__u32 kthread;               /* PF_KTHREAD was set */
	__u32 pad;
	char comm[BLK_COMM_LEN];     /* the thread's name (only with @names) */
	char pcomm[BLK_COMM_LEN];    /* its group leader's name (only with @names) */
};

/* The submitter noted per bio at block_getrq (BLK_START_GETRQ), until its request is first
 * seen. LRU: a bio whose request is never seen (merged away) cannot fill it up. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);          /* struct bio pointer */
	__type(value, struct blk_submitter);
} bio_submitters SEC(".maps");

/* The current task as a submitter; its names only with @names (a compile-time constant). */
static __always_inline void blk_submitter_current(struct blk_submitter *s, const bool names)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 id = bpf_get_current_pid_tgid();

	s->tgid = id >> 32;
	s->tid = (__u32)id;
	s->kthread = !!(BPF_CORE_READ(task, flags) & BLK_PF_KTHREAD);
	if (names) {
		bpf_get_current_comm(s->comm, sizeof(s->comm));
		BPF_CORE_READ_STR_INTO(&s->pcomm, task, group_leader, comm);
	}
}

/* At block_getrq: @bio is about to become a request's first bio, submitted by @s. */
static __always_inline void blk_note_bio(struct bio *bio, const struct blk_submitter *s)
{
	__u64 key = (__u64)bio;

	bpf_map_update_elem(&bio_submitters, &key, s, BPF_ANY);
}

/*
 * The submitter noted for @rq's bio, taken out of the map; false when none was noted (a
 * request without a bio, such as a flush sequence's own, or one a filter left out). A bio
 * front-merged while the request waited in a plug sits before the noted one: walk a little.
 */
static __always_inline bool blk_take_submitter(struct request *rq, struct blk_submitter *out)
{
	struct bio *bio = BPF_CORE_READ(rq, bio);

	for (int i = 0; i < BLK_BIO_WALK && bio; i++) {
		__u64 key = (__u64)bio;
		struct blk_submitter *s = bpf_map_lookup_elem(&bio_submitters, &key);

		if (s) {
			*out = *s;
			bpf_map_delete_elem(&bio_submitters, &key);
			return true;
		}
		bio = BPF_CORE_READ(bio, bi_next);
	}
	return false;
}

/* ---- the request state machine ---- */

/*
 * Whether a request is (re)started at insert or issue, given the entry @t found for it
 * there (NULL: none). Requests are recycled: where tracking starts at the first sighting,
 * an entry that was issued and not requeued since belongs to the request's previous life,
 * whose completion was missed, so it starts afresh.
 */
static __always_inline bool blk_start_here(const struct blk_times *t)
{
	if (blk_start_at == BLK_START_IO_START)
		return false;
	return !t || t->issue_ns;
}

static __always_inline void blk_times_insert(struct blk_times *t, __u64 now)
{
	/* A requeued request is inserted again: its queue time runs from the first insert. */
	if (!t->insert_ns)
		t->insert_ns = now;
}

static __always_inline void blk_times_issue(struct blk_times *t, __u64 now)
{
	t->issue_ns = now;
}

static __always_inline void blk_times_requeue(struct blk_times *t)
{
	/* It goes back to the queue and will be issued again; the device time restarts then. */
	t->issue_ns = 0;
}

/* Where the queue time (Q2C) starts: first insert, else issue, else start. */
static __always_inline __u64 blk_times_qstart(const struct blk_times *t)
{
	return t->insert_ns ? t->insert_ns : t->issue_ns ? t->issue_ns : t->start_ns;
}

/* ---- histograms ---- */

/*
 * Count a latency of @ns in @l. @shared (a compile-time constant): @l is seen by every CPU,
 * so counts are added atomically; min and max stay racy by design, and may miss one of two
 * concurrent requests. Otherwise @l is a per-CPU value.
 */
static __always_inline void blk_lat_add(struct iolat_lat *l, __u64 ns, const bool shared)
{
	__u64 b = hist_bucket(ns);

	/* Cannot happen, but the verifier needs the bound on the very register used to index;
	 * the barrier stops clang from checking a copy. */
	barrier_var(b);
	if (b >= HIST_NR_BUCKETS)
		return;
	if (shared)
		iolat_lat_count_shared(l, b, ns);
	else
		iolat_lat_count(l, b, ns);
}

#endif
