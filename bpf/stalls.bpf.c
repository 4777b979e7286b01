// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * stalls.bpf.c: kernel side of `iotier stalls`. It times where a user thread waits in the
 * write path, by cause, and counts who dirties page cache:
 *
 *  - dirty_throttle: writeback:balance_dirty_pages announces a pause just before the writer
 *    sleeps in io_schedule_timeout();
 *  - writeback_wait: writeback:folio_wait_writeback (wait_on_page_writeback before folios)
 *    announces a wait just before the thread sleeps on PG_writeback;
 *  - fsync: fsync, fdatasync and sync_file_range with a wait flag, from raw_syscalls
 *    sys_enter to sys_exit. Writeback waits inside such a call are part of it, not counted
 *    again, so the causes never overlap.
 *
 * The first two tracepoints mark only the start of a wait. Its end is the moment the thread
 * runs again after the sleep that follows: a voluntary sched_switch away marks it asleep, the
 * next sched_switch to it closes it. A wait that never slept (the page was clean by then)
 * is dropped when the thread next returns from a system call.
 *
 * Only tp_btf programs: they need no tracefs, and fentry/kprobes may not load.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "stalls.h"

#define PF_KTHREAD 0x00200000
#define MINORBITS 20
#define SYNC_FILE_RANGE_WAIT_BEFORE 1
#define SYNC_FILE_RANGE_WAIT_AFTER 4
#define PAGE_SIZE_BYTES 4096

/* Set before load. filter_tgids: only processes in `tracked` (--pid), else every process. */
const volatile bool filter_tgids = false;
const volatile bool follow_children = false;
const volatile __u32 n_devs = 0;
const volatile __u32 devs[STALLS_MAX_DEVS] = {};
/* Syscall numbers come from user space: they differ between architectures. */
const volatile __s64 nr_fsync = -1;
const volatile __s64 nr_fdatasync = -1;
const volatile __s64 nr_sync_file_range = -1;

/* Flipped by user space to read one interval while the next is counted. */
volatile __u32 epoch = 0;

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* --pid (and --children): the processes to trace; the same map as check's (tracked.bpf.h). */
#include "tracked.bpf.h"

struct pending {
	__u64 start_ns;
	__u32 tgid;
	__u8 cause;
	__u8 slept;
	__u16 pad;
};

/* A stall announced and not ended yet, per thread. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct pending);
} pending SEC(".maps");

/* Threads inside an fsync-like call: tid -> start. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} in_fsync SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, struct stalls_key);
	__type(value, struct stalls_stats);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, struct stalls_dirty_key);
	__type(value, struct stalls_dirty);
} dirtied SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, STALLS_NR_COUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* The template a new stats entry is copied from: too big for the 512-byte BPF stack. */
static const struct stalls_stats zero_stats;

static __always_inline void count(__u32 which, __u64 n)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &which);

	if (c)
		__sync_fetch_and_add(c, n);
}

static __always_inline bool dev_wanted(__u32 dev)
{
	if (!n_devs)
		return true;
	for (__u32 i = 0; i < STALLS_MAX_DEVS; i++) {
		if (i >= n_devs)
			return false;
		if (devs[i] == dev)
			return true;
	}
	return false;
}

static __always_inline bool tgid_wanted(__u32 tgid)
{
	return !filter_tgids || bpf_map_lookup_elem(&tracked, &tgid) != NULL;
}

/* Is @sb (a file system) on a wanted device? -d may name its partition or the whole disk. */
static __always_inline bool sb_wanted(struct super_block *sb)
{
	struct gendisk *disk;

	if (!n_devs)
		return true;
	if (!sb)
		return false;
	if (dev_wanted(BPF_CORE_READ(sb, s_dev)))
		return true;
	disk = BPF_CORE_READ(sb, s_bdev, bd_disk);
	return disk && dev_wanted(((__u32)BPF_CORE_READ(disk, major) << MINORBITS) |
				  BPF_CORE_READ(disk, first_minor));
}

static __always_inline bool mapping_wanted(struct address_space *mapping)
{
	if (!n_devs)
		return true;
	return mapping && sb_wanted(BPF_CORE_READ(mapping, host, i_sb));
}

/* Is the file behind @fd of the current task on a wanted device? */
static __always_inline bool fd_wanted(long fd)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct file **fds, *file = NULL;
	struct fdtable *fdt;

	if (!n_devs)
		return true;
	fdt = BPF_CORE_READ(task, files, fdt);
	if (!fdt || fd < 0 || fd >= BPF_CORE_READ(fdt, max_fds))
		return false;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]) < 0 || !file)
		return false;
	return sb_wanted(BPF_CORE_READ(file, f_inode, i_sb));
}

/* A user thread of a wanted process; kernel threads (the flusher) wait on their own work. */
static __always_inline bool current_wanted(__u64 id)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	if (BPF_CORE_READ(task, flags) & PF_KTHREAD)
		return false;
	return tgid_wanted(id >> 32);
}

static __always_inline void stall_begin(__u64 id, __u8 cause)
{
	struct pending p = { .start_ns = bpf_ktime_get_ns(), .tgid = id >> 32, .cause = cause };
	__u32 tid = (__u32)id;

	if (bpf_map_update_elem(&pending, &tid, &p, BPF_ANY) < 0)
		count(STALLS_LOST_PENDING, 1);
}

/* Add one stall of @ns by @task to its row. */
static __always_inline void stall_record(struct task_struct *task, __u8 cause, __u64 ns)
{
	struct stalls_key key = {};
	struct stalls_stats *st;
	__u64 b;

	key.epoch = epoch;
	key.tgid = BPF_CORE_READ(task, tgid);
	key.tid = BPF_CORE_READ(task, pid);
	key.cause = cause;
	key.ioprio = BPF_CORE_READ(task, io_context, ioprio);
	BPF_CORE_READ_STR_INTO(&key.comm, task, comm);
	BPF_CORE_READ_STR_INTO(&key.pcomm, task, group_leader, comm);
	st = bpf_map_lookup_elem(&stats, &key);
	if (!st) {
		if (bpf_map_update_elem(&stats, &key, &zero_stats, BPF_NOEXIST) < 0 &&
		    bpf_map_lookup_elem(&stats, &key) == NULL) {
			count(STALLS_LOST_STATS, 1);
			return;
		}
		st = bpf_map_lookup_elem(&stats, &key);
		if (!st)
			return;
	}
	b = hist_bucket(ns);
	/* One register for the check and the index, or the verifier sees an unchecked copy. */
	barrier_var(b);
	if (b < HIST_NR_BUCKETS)
		iolat_lat_count_shared(&st->lat, (__u32)b, ns);
}

/*
 * The writer is about to sleep for @pause jiffies. The argument list is the one of 4.11 and
 * later (wb, dtc, ...); user space checks it in BTF before it loads this program. A pause of
 * zero or less does not sleep.
 */
SEC("tp_btf/balance_dirty_pages")
int BPF_PROG(stalls_dirty_throttle, struct bdi_writeback *wb, struct dirty_throttle_control *dtc,
	     unsigned long dirty_ratelimit, unsigned long task_ratelimit, unsigned long dirtied,
	     unsigned long period, long pause, unsigned long start_time)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct device *owner;

	if (pause <= 0 || !current_wanted(id))
		return 0;
	if (n_devs) {
		/* The disk behind the bdi (bdi_set_owner()); a bdi without one is no disk's. */
		owner = BPF_CORE_READ(wb, bdi, owner);
		if (!owner || !dev_wanted(BPF_CORE_READ(owner, devt)))
			return 0;
	}
	stall_begin(id, STALL_DIRTY_THROTTLE);
	return 0;
}

static __always_inline int writeback_wait(struct address_space *mapping)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;

	/* Inside fsync the wait is the fsync's; counting it twice would double the time. */
	if (bpf_map_lookup_elem(&in_fsync, &tid) || !current_wanted(id) || !mapping_wanted(mapping))
		return 0;
	stall_begin(id, STALL_WRITEBACK_WAIT);
	return 0;
}

SEC("tp_btf/folio_wait_writeback")
int BPF_PROG(stalls_folio_wait, struct folio *folio, struct address_space *mapping)
{
	return writeback_wait(mapping);
}

/* Before 5.16 ("mm/writeback: Add wait_on_page_writeback() tracepoint" became the folio
 * one); user space loads this one only where the folio tracepoint is missing. */
SEC("tp_btf/wait_on_page_writeback")
int BPF_PROG(stalls_page_wait, struct page *page, struct address_space *mapping)
{
	return writeback_wait(mapping);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(stalls_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 prev_tid = BPF_CORE_READ(prev, pid), next_tid = BPF_CORE_READ(next, pid);
	struct pending *p;

	/* Going to sleep of its own accord: the announced wait has begun. */
	if (!preempt) {
		p = bpf_map_lookup_elem(&pending, &prev_tid);
		if (p)
			p->slept = 1;
	}
	/* Running again after that sleep: the wait is over. */
	p = bpf_map_lookup_elem(&pending, &next_tid);
	if (p && p->slept) {
		__u64 now = bpf_ktime_get_ns();

		stall_record(next, p->cause, now > p->start_ns ? now - p->start_ns : 0);
		bpf_map_delete_elem(&pending, &next_tid);
	}
	return 0;
}

static __always_inline bool is_fsync_call(struct pt_regs *regs, long nr)
{
	if (nr == nr_fsync || nr == nr_fdatasync)
		return true;
	/* sync_file_range(fd, offset, nbytes, flags): WRITE alone starts writeback, no wait. */
	return nr == nr_sync_file_range &&
	       (PT_REGS_PARM4_CORE_SYSCALL(regs) &
		(SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WAIT_AFTER));
}

SEC("tp_btf/sys_enter")
int BPF_PROG(stalls_sys_enter, struct pt_regs *regs, long nr)
{
	__u64 id, now;
	__u32 tid;

	if (nr != nr_fsync && nr != nr_fdatasync && nr != nr_sync_file_range)
		return 0;
	id = bpf_get_current_pid_tgid();
	if (!is_fsync_call(regs, nr) || !current_wanted(id) ||
	    !fd_wanted((long)PT_REGS_PARM1_CORE_SYSCALL(regs)))
		return 0;
	tid = (__u32)id;
	now = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&in_fsync, &tid, &now, BPF_ANY) < 0)
		count(STALLS_LOST_PENDING, 1);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(stalls_sys_exit, struct pt_regs *regs, long ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct pending *p = bpf_map_lookup_elem(&pending, &tid);
	__u64 *start;

	/* An announced wait that never slept did not stall: forget it before it is misread. */
	if (p && !p->slept)
		bpf_map_delete_elem(&pending, &tid);
	start = bpf_map_lookup_elem(&in_fsync, &tid);
	if (start) {
		__u64 now = bpf_ktime_get_ns();

		stall_record((struct task_struct *)bpf_get_current_task(), STALL_FSYNC,
			     now > *start ? now - *start : 0);
		bpf_map_delete_elem(&in_fsync, &tid);
	}
	return 0;
}

/* A large folio's size: folio->_nr_pages where the kernel has it (64-bit, recent kernels),
 * else the order in the low byte of _flags_1, as folio_large_order() reads it. */
struct folio___old {
	unsigned long _flags_1;
} __attribute__((preserve_access_index));

static __always_inline __u64 folio_bytes(struct folio *folio)
{
	struct folio___old *old = (void *)folio;
	unsigned long flags = 0;

	/* The flags word is the folio's first (memdesc_flags_t since 6.18, a plain long before). */
	bpf_probe_read_kernel(&flags, sizeof(flags), folio);
	if (!(flags & (1UL << bpf_core_enum_value(enum pageflags, PG_head))))
		return PAGE_SIZE_BYTES;
	if (bpf_core_field_exists(folio->_nr_pages))
		return (__u64)BPF_CORE_READ(folio, _nr_pages) * PAGE_SIZE_BYTES;
	return (__u64)PAGE_SIZE_BYTES << (BPF_CORE_READ(old, _flags_1) & 0xff);
}

static __always_inline void count_dirtied(struct address_space *mapping, __u64 bytes)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct stalls_dirty_key key = {};
	struct stalls_dirty *d, init = {};

	/* Every process: whoever fills memory may throttle the traced ones. */
	if (!mapping_wanted(mapping))
		return;
	key.epoch = epoch;
	key.tgid = id >> 32;
	key.tid = (__u32)id;
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	BPF_CORE_READ_STR_INTO(&key.pcomm, task, group_leader, comm);
	d = bpf_map_lookup_elem(&dirtied, &key);
	if (!d) {
		if (bpf_map_update_elem(&dirtied, &key, &init, BPF_NOEXIST) < 0 &&
		    !bpf_map_lookup_elem(&dirtied, &key)) {
			count(STALLS_LOST_DIRTY, 1);
			return;
		}
		d = bpf_map_lookup_elem(&dirtied, &key);
		if (!d)
			return;
	}
	__sync_fetch_and_add(&d->bytes, bytes);
	__sync_fetch_and_add(&d->folios, 1);
}

SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(stalls_dirty_folio, struct folio *folio, struct address_space *mapping)
{
	count_dirtied(mapping, folio_bytes(folio));
	return 0;
}

/* Before 5.16: one page at a time. Loaded only where the folio tracepoint is missing. */
SEC("tp_btf/writeback_dirty_page")
int BPF_PROG(stalls_dirty_page, struct page *page, struct address_space *mapping)
{
	count_dirtied(mapping, PAGE_SIZE_BYTES);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(stalls_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	__u8 one = 1;

	if (!follow_children || ptgid == ctgid ||
	    !bpf_map_lookup_elem(&tracked, &ptgid))
		return 0;
	bpf_map_update_elem(&tracked, &ctgid, &one, BPF_ANY);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(stalls_exit, struct task_struct *p, bool group_dead)
{
	__u32 tgid = BPF_CORE_READ(p, tgid), tid = BPF_CORE_READ(p, pid);

	bpf_map_delete_elem(&pending, &tid);
	bpf_map_delete_elem(&in_fsync, &tid);
	/* Forget the pid so that a later process reusing it is not taken for a traced one. */
	if (filter_tgids && group_dead)
		bpf_map_delete_elem(&tracked, &tgid);
	return 0;
}
