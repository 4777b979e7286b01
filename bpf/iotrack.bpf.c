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
 * The request is attributed at block_io_start, where current is the submitter. Latency is
 * `iotier lat`'s queue latency: first insert into the scheduler (or issue, or start) to
 * completion, so it includes the wait in the I/O scheduler, where priority classes act.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "filters.bpf.h"
#include "iotrack.h"
#include "lat_add.bpf.h"

#define PF_KTHREAD 0x00200000
#define REQ_OP_MASK 0xff
#define MINORBITS 20

/* Devices to trace, kernel dev_t; n_devs 0 traces all. Set before load. */
DEV_FILTER(IOTRACK_MAX_DEVS)

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* The command's processes: seeded by user space with the child's pid before it execs. */
TRACKED_MAP;

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
	__u64 start_ns, insert_ns, issue_ns;
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
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

/* The template a new stats entry is copied from: too big for the 512-byte BPF stack. */
static const struct iotrack_stats zero_stats;

/* Before 6.13 (commit "block: remove the ioprio field from struct request") the request
 * carried its own ioprio; since then it is read from the first bio, as mq-deadline does. */
struct request___x {
	unsigned short ioprio;
} __attribute__((preserve_access_index));

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

static __always_inline __u16 rq_ioprio(struct request *rq)
{
	struct request___x *old = (void *)rq;
	struct bio *bio;

	if (bpf_core_field_exists(old->ioprio))
		return BPF_CORE_READ(old, ioprio);
	bio = BPF_CORE_READ(rq, bio);
	return bio ? BPF_CORE_READ(bio, bi_ioprio) : 0;
}

/* The whole disk of @rq, kernel dev_t. */
static __always_inline __u32 rq_disk_dev(struct request *rq)
{
	struct gendisk *disk = BPF_CORE_READ(rq, q, disk);

	if (!disk)
		return 0;
	return ((__u32)BPF_CORE_READ(disk, major) << MINORBITS) | BPF_CORE_READ(disk, first_minor);
}

/* The partition (or disk) @rq is for. Not rq->part: block_io_start fires before it is set. */
static __always_inline __u32 rq_part_dev(struct request *rq, __u32 disk_dev)
{
	struct block_device *bdev = BPF_CORE_READ(rq, bio, bi_bdev);

	return bdev ? BPF_CORE_READ(bdev, bd_dev) : disk_dev;
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

SEC("tp_btf/sched_process_exit")
int BPF_PROG(iotrack_exit, struct task_struct *p, bool group_dead)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);

	/* Forget the pid so that a later process reusing it is not taken for the command's. Its
	 * dirtied inodes stay in `dirtiers`, so its late writeback is still attributed. */
	if (group_dead)
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

SEC("tp_btf/block_io_start")
int BPF_PROG(iotrack_io_start, struct request *rq)
{
	__u64 id = bpf_get_current_pid_tgid(), ptr = (__u64)rq;
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct start s = {};
	struct inode_key ik;
	struct dirtier *d;
	__u32 op, flags, disk_dev;
	char comm[IOTRACK_COMM_LEN];

	disk_dev = rq_disk_dev(rq);
	s.key.dev = rq_part_dev(rq, disk_dev);
	/* -d names a disk or a partition: either matches. */
	if (!dev_wanted(s.key.dev) && !dev_wanted(disk_dev))
		return 0;
	op = BPF_CORE_READ(rq, cmd_flags) & REQ_OP_MASK;
	s.key.op = op == 0 ? IOTRACK_READ : op == 1 ? IOTRACK_WRITE : IOTRACK_OP_OTHER;
	s.key.ioprio = rq_ioprio(rq);
	flags = BPF_CORE_READ(task, flags);
	bpf_get_current_comm(comm, sizeof(comm));

	if (!(flags & PF_KTHREAD) && is_tracked(id >> 32)) {
		s.key.cause = IOTRACK_SUBMIT;
		s.key.tgid = id >> 32;
		s.key.tid = (__u32)id;
		__builtin_memcpy(s.key.comm, comm, sizeof(comm));
		BPF_CORE_READ_STR_INTO(&s.key.pcomm, task, group_leader, comm);
	} else {
		if (!(flags & PF_KTHREAD))
			s.key.cause = IOTRACK_OTHER;
		else if (comm_starts(comm, "jbd2/", 5))
			s.key.cause = IOTRACK_JOURNAL;
		else if (comm_starts(comm, "kworker", 7) && s.key.op == IOTRACK_WRITE)
			s.key.cause = IOTRACK_WRITEBACK;
		else
			s.key.cause = IOTRACK_OTHER;
		d = rq_inode(rq, &ik) ? bpf_map_lookup_elem(&dirtiers, &ik) : NULL;
		if (d) {
			s.key.tgid = d->tgid;
			s.key.tid = d->tid;
			__builtin_memcpy(s.key.comm, d->comm, sizeof(s.key.comm));
			__builtin_memcpy(s.key.pcomm, d->pcomm, sizeof(s.key.pcomm));
		} else if (flags & PF_KTHREAD) {
			/* Unattributed: keep the kernel thread's name to say what it was. */
			__builtin_memcpy(s.key.comm, comm, sizeof(comm));
		} else {
			/* Another process's own I/O: not the command's, but not hidden either. */
			count(IOTRACK_FOREIGN_BYTES, BPF_CORE_READ(rq, __data_len));
			return 0;
		}
	}
	s.start_ns = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&starts, &ptr, &s, BPF_ANY) < 0)
		count(IOTRACK_LOST_START, 1);
	return 0;
}

SEC("tp_btf/block_rq_insert")
int BPF_PROG(iotrack_rq_insert, struct request *rq)
{
	__u64 ptr = (__u64)rq;
	struct start *s = bpf_map_lookup_elem(&starts, &ptr);

	/* A requeued request is inserted again: its queue time runs from the first insert. */
	if (s && !s->insert_ns)
		s->insert_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(iotrack_rq_issue, struct request *rq)
{
	__u64 ptr = (__u64)rq;
	struct start *s = bpf_map_lookup_elem(&starts, &ptr);

	if (s && !s->issue_ns)
		s->issue_ns = bpf_ktime_get_ns();
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

SEC("tp_btf/block_rq_complete")
int BPF_PROG(iotrack_rq_complete, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
	__u64 ptr = (__u64)rq, lat, now, qstart;
	struct iotrack_stats *st;
	struct start *s;

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
	if (nr_bytes < BPF_CORE_READ(rq, __data_len))
		return 0;
	now = bpf_ktime_get_ns();
	qstart = s->insert_ns ? s->insert_ns : s->issue_ns ? s->issue_ns : s->start_ns;
	lat = now > qstart ? now - qstart : 0;
	__sync_fetch_and_add(&st->count, 1);
	lat_add_shared(&st->lat, lat);
	bpf_map_delete_elem(&starts, &ptr);
	return 0;
}
