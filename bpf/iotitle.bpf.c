// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * iotitle.bpf.c: the titles of `iotier check`'s processes, read where they do I/O. Programs
 * such as PostgreSQL set a worker's title by overwriting argv in place after fork, with no
 * exec and no syscall to see, so the command line at exec time is not the one the shim
 * matches cmdline: rules against. This reads the argument area of the current process when
 * one of its threads submits a block request (block_io_start, or block_getrq before 6.5) or
 * dirties page cache (the moments iotrack attributes I/O to it), and sends it to user space when it changed since the last time.
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

/* The command's processes, shared by iotrack and iotitle (tracked.bpf.h). */
#include "tracked.bpf.h"

/*
 * When the title is looked at, as the shim does it (process_identity.c): on each of a
 * process's first TITLE_EAGER_CALLS I/O calls, where programs set their titles, then on
 * every TITLE_EVERY-th. Looking costs a copy of the argument area and a hash; the rest of
 * the time the cost is this map lookup and an increment.
 */
#define TITLE_EAGER_CALLS 4096
#define TITLE_EVERY 64

struct title_state {
	__u64 hash;   /* of the title last sent */
	__u64 calls;  /* submissions and dirtyings seen */
};

/* A process, not a pid: a new process reusing the pid starts with no title sent. */
struct proc_key {
	__u32 tgid;
	__u32 pad;
	__u64 start_time; /* the group leader's, in ns since boot */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct proc_key);
	__type(value, struct title_state);
} sent SEC(".maps");

/* The event is built here (too big for the stack) and copied out only when it changed. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct iotitle_event);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1024 * 1024);
} titles SEC(".maps");

/* Titles not sent because the ring buffer was full; user space reports them. */
__u64 lost = 0;

struct hash_ctx {
	__u32 len;
	__u64 h;
};

/* One step of FNV-1a over the scratch event's bytes, a word at a time, the tail masked. */
static long hash_word(__u32 i, struct hash_ctx *c)
{
	__u32 zero = 0, rest = c->len - i * 8;
	struct iotitle_event *e = bpf_map_lookup_elem(&scratch, &zero);
	__u64 v;

	if (!e)
		return 1;
	/* i < IOTITLE_MAX / 8 (len is at most IOTITLE_MAX); the mask tells the verifier. */
	barrier_var(i);
	v = ((const __u64 *)e->bytes)[i & (IOTITLE_MAX / 8 - 1)];
	if (rest < 8)
		v &= (1ULL << (rest * 8)) - 1;
	c->h = (c->h ^ v) * FNV_PRIME;
	return 0;
}

/* A hash of the scratch event's first @len bytes (bpf_loop: verified once, not per word). */
static __always_inline __u64 bytes_hash(__u32 len)
{
	struct hash_ctx c = { .len = len, .h = FNV_OFFSET ^ len };

	bpf_loop((len + 7) / 8, hash_word, &c, 0);
	return c.h;
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

/* Is this one of the calls on which the title is looked at? Counts the call. */
static __always_inline bool title_due(const struct proc_key *pk, struct title_state **st)
{
	__u64 calls;

	*st = bpf_map_lookup_elem(&sent, pk);
	if (!*st)
		return true;
	calls = __sync_fetch_and_add(&(*st)->calls, 1);
	return calls < TITLE_EAGER_CALLS || calls % TITLE_EVERY == 0;
}

/* Copy the argument area of the current process into @e, as /proc/PID/cmdline reads it. */
static __always_inline int read_title(struct iotitle_event *e, struct task_struct *task)
{
	unsigned long arg_start = BPF_CORE_READ(task, mm, arg_start);
	unsigned long arg_end = BPF_CORE_READ(task, mm, arg_end);
	unsigned long env_end = BPF_CORE_READ(task, mm, env_end);

	if (arg_end <= arg_start)
		return -1;
	e->arg_len = arg_end - arg_start > 0xffffffffUL ? 0xffffffffU : arg_end - arg_start;
	e->pad = 0;
	if (read_user(e, arg_start, arg_end - arg_start) < 0)
		return -1; /* paged out: a later call tries again */
	/* A title that ran past argv goes on into the environment, as /proc/PID/cmdline. */
	if (e->len < IOTITLE_MAX && e->bytes[(e->len - 1) & (IOTITLE_MAX - 1)] &&
	    env_end > arg_end && read_user(e, arg_start, env_end - arg_start) < 0)
		return -1;
	return 0;
}

static __always_inline void title_check(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, zero = 0;
	struct title_state *st, fresh = {};
	struct proc_key pk = { .tgid = tgid };
	struct iotitle_event *e;
	__u64 h;

	if (!bpf_map_lookup_elem(&tracked, &tgid) || (task->flags & PF_KTHREAD))
		return;
	pk.start_time = BPF_CORE_READ(task, group_leader, start_time);
	if (!title_due(&pk, &st))
		return;
	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e || read_title(e, task) < 0)
		return;
	e->tgid = tgid;
	h = bytes_hash(e->len);
	if (st && st->hash == h)
		return;
	if (bpf_ringbuf_output(&titles, e, sizeof(*e), 0) < 0) {
		__sync_fetch_and_add(&lost, 1);
		return; /* not remembered as sent: the next due call tries again */
	}
	if (st) {
		st->hash = h;
	} else {
		fresh.hash = h;
		fresh.calls = 1;
		bpf_map_update_elem(&sent, &pk, &fresh, BPF_ANY);
	}
}

SEC("tp_btf/block_io_start")
int BPF_PROG(iotitle_io_start, struct request *rq)
{
	title_check();
	return 0;
}

/* Before 6.5 (no block_io_start): block_getrq fires at the same point of blk_mq_submit_bio(),
 * in the submitter's context, just before the bio becomes the request (blk.h). */
SEC("tp_btf/block_getrq")
int BPF_PROG(iotitle_getrq, struct bio *bio)
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
