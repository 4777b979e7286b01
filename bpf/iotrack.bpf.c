// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * iotrack.bpf.c: kernel side of `iotier check`. It follows one command's process tree and
 * counts every block request that tree causes, keyed by the thread that caused it, the
 * priority the request arrived with, its op and its cause, with a latency histogram.
 *
 * "Caused" goes beyond "submitted": the flusher's writeback and jbd2's writes are done by
 * kernel threads at their own priority, which is exactly how a low thread's buffered writes
 * escape its class. So the dirtying of page cache is recorded (inode -> dirtier, in the
 * dirtier's context), and a request issued from kernel context is attributed through its
 * first page's inode to the thread that dirtied it. Kernel I/O without a known dirtier is
 * counted as unattributed (tgid 0), never dropped.
 *
 * The request is attributed to the task that turned its bio into it: at block_io_start,
 * where current is that task (6.5 and later), or before 6.5 through the submitter noted per
 * bio at block_getrq and found again at the first insert or issue (blk.bpf.h). Latency is
 * `iotier lat`'s queue latency: first insert into the scheduler (or issue, or start) to
 * completion, so it includes the wait in the I/O scheduler, where priority classes act.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "blk.bpf.h"
#include "iotrack.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* The command's processes, shared by iotrack and iotitle (tracked.bpf.h). */
#include "tracked.bpf.h"

struct inode_key {
	__u32 dev;
	__u32 pad;
	__u64 ino;
};

struct dirtier {
	__u32 tgid;
	__u32 tid;
	char comm[IOTRACK_COMM_LEN];
	char pcomm[IOTRACK_COMM_LEN];
};

/* Last thread of the tree to dirty each inode; LRU so a long run cannot fill it up. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct inode_key);
	__type(value, struct dirtier);
} dirtiers SEC(".maps");

struct start {
	struct blk_times t;
	struct iotrack_key key;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);    /* struct request pointer */
	__type(value, struct start);
} starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct iotrack_key);
	__type(value, struct iotrack_stats);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, IOTRACK_NR_COUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, IOTRACK_MAX_DEV_OPS);
	__type(key, struct iotrack_dev_op);
	__type(value, __u64);
} completions SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

/* The template a new stats entry is copied from: too big for the 512-byte BPF stack. */
static const struct iotrack_stats zero_stats;

static __always_inline void count(__u32 which, __u64 n)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &which);

	if (c)
		__sync_fetch_and_add(c, n);
}

static __always_inline bool is_tracked(__u32 tgid)
{
	return bpf_map_lookup_elem(&tracked, &tgid) != NULL;
}

/* The inode of the page cache page at the start of @rq, if it is one. */
static __always_inline bool rq_inode(struct request *rq, struct inode_key *ik)
{
	struct page *page = BPF_CORE_READ(rq, bio, bi_io_vec, bv_page);
	unsigned long head, mapping;
	struct inode *host;

	if (!page)
		return false;
	/* A tail page of a large folio points at its head, which holds the mapping. */
	head = BPF_CORE_READ(page, compound_head);
	if (head & 1)
		page = (struct page *)(head - 1);
	mapping = (unsigned long)BPF_CORE_READ(page, mapping);
	/* Low bits set: anonymous or movable memory, not a file's page cache. */
	if (!mapping || (mapping & 3))
		return false;
	host = BPF_CORE_READ((struct address_space *)mapping, host);
	if (!host)
		return false;
	ik->dev = BPF_CORE_READ(host, i_sb, s_dev);
	ik->pad = 0;
	ik->ino = BPF_CORE_READ(host, i_ino);
	return true;
}

static __always_inline bool comm_starts(const char *comm, const char *prefix, int n)
{
	for (int i = 0; i < n; i++)
		if (comm[i] != prefix[i])
			return false;
	return true;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(iotrack_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	struct iotrack_event *e;
	__u8 one = 1;

	/* New threads share the tgid and are tracked with it. */
	if (ptgid == ctgid || !is_tracked(ptgid))
		return 0;
	bpf_map_update_elem(&tracked, &ctgid, &one, BPF_ANY);
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(IOTRACK_LOST_EVENTS, 1);
		return 0;
	}
	e->kind = IOTRACK_EV_FORK;
	e->tgid = ctgid;
	e->ppid = ptgid;
	e->cmdline_len = 0;
	BPF_CORE_READ_STR_INTO(&e->comm, child, comm);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(iotrack_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	unsigned long start, end, len;
	struct iotrack_event *e;

	if (!is_tracked(tgid))
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(IOTRACK_LOST_EVENTS, 1);
		return 0;
	}
	e->kind = IOTRACK_EV_EXEC;
	e->tgid = tgid;
	e->ppid = 0;
	BPF_CORE_READ_STR_INTO(&e->comm, p, comm);
	/* The arguments were just copied to the new stack: read them here, because a short-lived
	 * process may be gone before user space could open /proc/PID/cmdline. */
	start = BPF_CORE_READ(p, mm, arg_start);
	end = BPF_CORE_READ(p, mm, arg_end);
	len = end > start ? end - start : 0;
	if (len > IOTRACK_CMDLINE_MAX - 1)
		len = IOTRACK_CMDLINE_MAX - 1;
	len &= IOTRACK_CMDLINE_MAX - 1;
	if (bpf_probe_read_user(e->cmdline, len, (void *)start) < 0)
		len = 0;
	e->cmdline_len = (__u32)len;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* Only the task: the group_dead argument is newer than 6.12 (see task_group_dead()). */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(iotrack_exit, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);

	/* Forget the pid so that a later process reusing it is not taken for the command's. Its
	 * dirtied inodes stay in `dirtiers`, so its late writeback is still attributed. */
	if (task_group_dead(p))
		bpf_map_delete_elem(&tracked, &tgid);
	return 0;
}

/* A thread of the tree newly dirtied a page of @mapping's inode: remember it as the dirtier. */
SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(iotrack_dirty_folio, struct folio *folio, struct address_space *mapping)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct task_struct *task;
	struct inode_key ik = {};
	struct dirtier d = {};
	struct inode *host;

	if (!is_tracked(id >> 32) || !mapping)
		return 0;
	host = BPF_CORE_READ(mapping, host);
	if (!host)
		return 0;
	ik.dev = BPF_CORE_READ(host, i_sb, s_dev);
	ik.ino = BPF_CORE_READ(host, i_ino);
	d.tgid = id >> 32;
	d.tid = (__u32)id;
	bpf_get_current_comm(d.comm, sizeof(d.comm));
	task = (struct task_struct *)bpf_get_current_task();
	BPF_CORE_READ_STR_INTO(&d.pcomm, task, group_leader, comm);
	if (bpf_map_update_elem(&dirtiers, &ik, &d, BPF_ANY) < 0)
		count(IOTRACK_LOST_DIRTY, 1);
	return 0;
}

/* Start following @rq at @now, caused by @sub (the task that turned its bio into it). */
static __always_inline void start_request(struct request *rq, const struct blk_submitter *sub,
					  __u64 now)
{
	__u64 ptr = (__u64)rq;
	struct start s = {};
	struct inode_key ik;
	struct dirtier *d;
	__u32 op, disk_dev;

	disk_dev = rq_dev(rq, true);
	s.key.dev = bio_part_dev(rq->bio) ?: disk_dev;
	/* -d names a disk or a partition: either matches. */
	if (!blk_dev_wanted(s.key.dev) && !blk_dev_wanted(disk_dev))
		return;
	op = rq_req_op(rq, true);
	s.key.op = op == bpf_core_enum_value(enum req_op, REQ_OP_READ) ? IOTRACK_READ :
		   op == bpf_core_enum_value(enum req_op, REQ_OP_WRITE) ? IOTRACK_WRITE :
		   IOTRACK_OP_OTHER;
	s.key.ioprio = rq_ioprio(rq, true);

	if (!sub->kthread && is_tracked(sub->tgid)) {
		s.key.cause = IOTRACK_SUBMIT;
		s.key.tgid = sub->tgid;
		s.key.tid = sub->tid;
		__builtin_memcpy(s.key.comm, sub->comm, sizeof(s.key.comm));
		__builtin_memcpy(s.key.pcomm, sub->pcomm, sizeof(s.key.pcomm));
	} else {
		if (!sub->kthread)
			s.key.cause = IOTRACK_OTHER;
		else if (comm_starts(sub->comm, "jbd2/", 5))
			s.key.cause = IOTRACK_JOURNAL;
		else if (comm_starts(sub->comm, "kworker", 7) && s.key.op == IOTRACK_WRITE)
			s.key.cause = IOTRACK_WRITEBACK;
		else
			s.key.cause = IOTRACK_OTHER;
		d = rq_inode(rq, &ik) ? bpf_map_lookup_elem(&dirtiers, &ik) : NULL;
		if (d) {
			s.key.tgid = d->tgid;
			s.key.tid = d->tid;
			__builtin_memcpy(s.key.comm, d->comm, sizeof(s.key.comm));
			__builtin_memcpy(s.key.pcomm, d->pcomm, sizeof(s.key.pcomm));
		} else if (sub->kthread) {
			/* Unattributed: keep the kernel thread's name to say what it was. */
			__builtin_memcpy(s.key.comm, sub->comm, sizeof(s.key.comm));
		} else {
			/* Another process's own I/O: not the command's, but not hidden either. */
			count(IOTRACK_FOREIGN_BYTES, rq->__data_len);
			return;
		}
	}
	s.t.start_ns = now;
	if (bpf_map_update_elem(&starts, &ptr, &s, BPF_ANY) < 0)
		count(IOTRACK_LOST_START, 1);
}

/*
 * The entry of @rq at insert or issue. Before 6.5 (BLK_START_GETRQ) this is where a request
 * is first seen, and it starts here, caused by the submitter noted for its bio.
 */
static __always_inline struct start *seen(struct request *rq, __u64 now)
{
	__u64 ptr = (__u64)rq;
	struct start *s = bpf_map_lookup_elem(&starts, &ptr);
	struct blk_submitter sub;

	if (!blk_start_here(s ? &s->t : NULL))
		return s;
	if (s)
		bpf_map_delete_elem(&starts, &ptr); /* stale, even if not started again */
	if (!blk_take_submitter(rq, &sub))
		return NULL;
	start_request(rq, &sub, now);
	return bpf_map_lookup_elem(&starts, &ptr);
}

SEC("tp_btf/block_io_start")
int BPF_PROG(iotrack_io_start, struct request *rq)
{
	struct blk_submitter sub = {};

	blk_submitter_current(&sub, true);
	start_request(rq, &sub, bpf_ktime_get_ns());
	return 0;
}

SEC("tp_btf/block_getrq")
int BPF_PROG(iotrack_getrq, struct bio *bio)
{
	struct blk_submitter sub = {};

	if (!blk_dev_wanted(bio_part_dev(bio)) && !blk_dev_wanted(bio_disk_dev(bio)))
		return 0;
	blk_submitter_current(&sub, true);
	blk_note_bio(bio, &sub);
	return 0;
}

SEC("tp_btf/block_rq_insert")
int BPF_PROG(iotrack_rq_insert, struct request *rq)
{
	__u64 now = bpf_ktime_get_ns();
	struct start *s = seen(rq, now);

	if (s)
		blk_times_insert(&s->t, now);
	return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(iotrack_rq_issue, struct request *rq)
{
	__u64 now = bpf_ktime_get_ns();
	struct start *s = seen(rq, now);

	if (s)
		blk_times_issue(&s->t, now);
	return 0;
}

SEC("tp_btf/block_rq_requeue")
int BPF_PROG(iotrack_rq_requeue, struct request *rq)
{
	__u64 ptr = (__u64)rq;
	struct start *s = bpf_map_lookup_elem(&starts, &ptr);

	if (s)
		blk_times_requeue(&s->t);
	return 0;
}

SEC("tp_btf/block_rq_merge")
int BPF_PROG(iotrack_rq_merge, struct request *rq)
{
	__u64 ptr = (__u64)rq;

	/* Merged into another request and freed without completing; its bytes complete with
	 * the survivor, attributed to the survivor's submitter. */
	if (!bpf_map_delete_elem(&starts, &ptr))
		count(IOTRACK_MERGED, 1);
	return 0;
}

/* Tests only (IOTIER_TEST_DROP_COMPLETIONS=N, tools/trace/diskstats.h): forget every Nth
 * completion altogether, in the coverage count and in the tiers, as when the kernel does not
 * run the program for it (docs/lat.md), so that a test can see the coverage check notice and
 * its exact counts come up short. 0 in normal use, where the verifier removes the branch. */
const volatile __u32 test_drop_every = 0;
__u64 test_completions;

/*
 * Count the completion of @rq for the coverage check, as diskstats counts it: once per
 * request, when it ends outside a flush sequence (blk_account_io_done() skips RQF_FLUSH_SEQ;
 * a write carrying a flush is counted when its sequence is done). Returns true when the test
 * knob says to forget this completion.
 */
static __always_inline bool count_completion(struct request *rq, unsigned int nr_bytes)
{
	struct iotrack_dev_op k = {};
	__u32 disk_dev = rq_dev(rq, false);
	struct block_device *part;
	__u64 one = 1, *n;
	int op = blk_diskstats_op(rq, nr_bytes);

	if (op < 0)
		return false;
	part = BPF_CORE_READ(rq, part);
	k.dev = part ? BPF_CORE_READ(part, bd_dev) : disk_dev;
	if (!blk_dev_wanted(k.dev) && !blk_dev_wanted(disk_dev))
		return false;
	k.op = (__u32)op;
	/* Numbered among the compared ops only, not flushes: a test then knows exactly how
	 * many of the completions diskstats compares were forgotten (check-test coverage). */
	if (test_drop_every && op != BLK_DS_FLUSH &&
	    __sync_fetch_and_add(&test_completions, 1) % test_drop_every == test_drop_every - 1)
		return true;
	n = bpf_map_lookup_elem(&completions, &k);
	if (n)
		__sync_fetch_and_add(n, 1);
	else if (bpf_map_update_elem(&completions, &k, &one, BPF_NOEXIST) &&
		 (n = bpf_map_lookup_elem(&completions, &k)))
		__sync_fetch_and_add(n, 1);
	return false;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(iotrack_rq_complete, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
	__u64 ptr = (__u64)rq, now, qstart;
	struct iotrack_stats *st;
	struct start *s;

	if (count_completion(rq, nr_bytes)) {
		bpf_map_delete_elem(&starts, &ptr);
		return 0;
	}
	s = bpf_map_lookup_elem(&starts, &ptr);
	if (!s)
		return 0;
	st = bpf_map_lookup_elem(&stats, &s->key);
	if (!st) {
		if (bpf_map_update_elem(&stats, &s->key, &zero_stats, BPF_NOEXIST) < 0 &&
		    bpf_map_lookup_elem(&stats, &s->key) == NULL) {
			count(IOTRACK_LOST_STATS, 1);
			bpf_map_delete_elem(&starts, &ptr);
			return 0;
		}
		st = bpf_map_lookup_elem(&stats, &s->key);
		if (!st)
			return 0;
	}
	__sync_fetch_and_add(&st->bytes, nr_bytes);
	/* A partial completion: the rest of the request is still in flight. */
	if (nr_bytes < rq->__data_len)
		return 0;
	now = bpf_ktime_get_ns();
	qstart = blk_times_qstart(&s->t);
	__sync_fetch_and_add(&st->count, 1);
	blk_lat_add(&st->lat, now > qstart ? now - qstart : 0, true);
	bpf_map_delete_elem(&starts, &ptr);
	return 0;
}
