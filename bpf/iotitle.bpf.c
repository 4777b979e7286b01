// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * iotitle.bpf.c: the titles of `iotier check`'s processes, read where they do I/O. Programs
 * such as PostgreSQL set a worker's title by overwriting argv in place after fork, with no
 * exec and no syscall to see, so the command line at exec time is not the one the shim
 * matches cmdline: rules against. This reads the argument area of the current process when
 * one of its threads submits a block request or dirties page cache (the moments iotrack
 * attributes I/O to it), and sends it to user space when it changed since the last time.
 *
 * It runs beside iotrack.bpf.c and shares its `tracked` map (user space hands iotrack's map
 * to this object before load), so both follow exactly the same processes.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "iotitle.h"

#define PF_KTHREAD 0x00200000
#define FNV_OFFSET 14695981039346656037ULL
#define FNV_PRIME 1099511628211ULL

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* iotrack's map of the command's processes (reused by fd: same definition). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u8);
} tracked SEC(".maps");

/* tgid -> hash of the title last sent, so an unchanged title costs no event. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u64);
} sent SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1024 * 1024);
} titles SEC(".maps");

/* Titles not sent because the ring buffer was full; user space reports them. */
__u64 lost = 0;

static __always_inline __u64 bytes_hash(const char *p, __u32 len)
{
	__u64 h = FNV_OFFSET ^ len;

	for (__u32 i = 0; i < IOTITLE_MAX; i++) {
		if (i >= len)
			break;
		h = (h ^ (__u8)p[i]) * FNV_PRIME;
	}
	return h;
}

/* Copy @n bytes (at most IOTITLE_MAX) of user memory at @from into the event. */
static __always_inline int read_user(struct iotitle_event *e, unsigned long from, __u64 n)
{
	barrier_var(n);
	if (n > IOTITLE_MAX)
		n = IOTITLE_MAX;
	barrier_var(n);
	e->len = (__u32)n;
	return bpf_probe_read_user(e->bytes, n, (const void *)from);
}

static __always_inline void title_check(void)
{
	__u64 id = bpf_get_current_pid_tgid(), h, *old;
	struct task_struct *task = bpf_get_current_task_btf();
	unsigned long arg_start, arg_end, env_end;
	struct iotitle_event *e;
	__u32 tgid = id >> 32;

	if (!bpf_map_lookup_elem(&tracked, &tgid) || (task->flags & PF_KTHREAD))
		return;
	arg_start = BPF_CORE_READ(task, mm, arg_start);
	arg_end = BPF_CORE_READ(task, mm, arg_end);
	env_end = BPF_CORE_READ(task, mm, env_end);
	if (arg_end <= arg_start)
		return;
	e = bpf_ringbuf_reserve(&titles, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&lost, 1);
		return;
	}
	e->tgid = tgid;
	e->arg_len = arg_end - arg_start > 0xffffffffUL ? 0xffffffffU : arg_end - arg_start;
	e->pad = 0;
	if (read_user(e, arg_start, arg_end - arg_start) < 0)
		goto discard; /* paged out: the next request tries again */
	/* A title that ran past argv goes on into the environment, as /proc/PID/cmdline. */
	if (e->len < IOTITLE_MAX && e->bytes[(e->len - 1) & (IOTITLE_MAX - 1)] &&
	    env_end > arg_end && read_user(e, arg_start, env_end - arg_start) < 0)
		goto discard;
	h = bytes_hash(e->bytes, e->len);
	old = bpf_map_lookup_elem(&sent, &tgid);
	if (old && *old == h)
		goto discard;
	bpf_map_update_elem(&sent, &tgid, &h, BPF_ANY);
	bpf_ringbuf_submit(e, 0);
	return;
discard:
	bpf_ringbuf_discard(e, 0);
}

SEC("tp_btf/block_io_start")
int BPF_PROG(iotitle_io_start, struct request *rq)
{
	title_check();
	return 0;
}

SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(iotitle_dirty_folio, struct folio *folio, struct address_space *mapping)
{
	title_check();
	return 0;
}

/* A new process reusing the pid starts with no title sent. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(iotitle_exit, struct task_struct *p, bool group_dead)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);

	if (group_dead)
		bpf_map_delete_elem(&sent, &tgid);
	return 0;
}
