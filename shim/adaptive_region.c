// SPDX-License-Identifier: MIT
/*
 * adaptive_region.c: the controller and the gate in one shared mapping (see
 * adaptive_region.h). A step collects the window from the shared counters, runs
 * adaptive_step and hands the decision to the gate with a fresh lease.
 */
#include "adaptive_region.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void publish(struct adaptive_region *r, uint64_t now_ns)
{
	atomic_store(&r->chunk, r->ctl.chunk);
	low_gate_set_cap(&r->gate, r->ctl.cap, now_ns + ADAPTIVE_LEASE_NS);
	atomic_store(&r->deadline_ns, adaptive_deadline(&r->ctl));
}

struct adaptive_region *adaptive_region_create(const struct adaptive_params *p,
					       const struct adaptive_target *t, uint64_t now_ns)
{
	return adaptive_region_create_fd(p, t, now_ns, NULL);
}

struct adaptive_region *adaptive_region_create_fd(const struct adaptive_params *p,
						  const struct adaptive_target *t, uint64_t now_ns,
						  int *fd_out)
{
	struct adaptive_region *r = shared_map_create_fd(ADAPTIVE_REGION_NAME, sizeof(*r), fd_out);

	if (!r)
		return NULL;
	r->layout = ADAPTIVE_REGION_LAYOUT;
	r->size = sizeof(*r);
	r->creator_pid = getpid();
	low_gate_init(&r->gate);
	adaptive_init(&r->ctl, p, t, now_ns);
	publish(r, now_ns);
	/* Last: a reader that sees the magic sees an initialised region. */
	atomic_store((_Atomic uint64_t *)&r->magic, ADAPTIVE_REGION_MAGIC);
	return r;
}

bool adaptive_region_valid(const struct adaptive_region *r, size_t len)
{
	return len >= sizeof(*r) &&
	       atomic_load((_Atomic uint64_t *)&r->magic) == ADAPTIVE_REGION_MAGIC &&
	       r->layout == ADAPTIVE_REGION_LAYOUT && r->size == sizeof(*r);
}

/* Does @fd name a memfd called ADAPTIVE_REGION_NAME? /proc says: "/memfd:NAME (deleted)". */
static bool named_region(int fd)
{
	static const char want[] = "/memfd:" ADAPTIVE_REGION_NAME;
	char path[32], link[64];
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	len = readlink(path, link, sizeof(link) - 1);
	if (len < (ssize_t)sizeof(want) - 1)
		return false;
	link[len] = '\0';
	return !strncmp(link, want, sizeof(want) - 1) &&
	       (link[sizeof(want) - 1] == '\0' || link[sizeof(want) - 1] == ' ');
}

struct adaptive_region *adaptive_region_adopt(int fd, const char **why, bool *ours)
{
	struct adaptive_region *r;
	struct stat st;

	*ours = false;
	if (fd < 0 || fstat(fd, &st) != 0) {
		*why = "not an open descriptor";
		return NULL;
	}
	if (!S_ISREG(st.st_mode) || !named_region(fd)) {
		*why = "not the adaptive tier's memfd";
		return NULL;
	}
	*ours = true;
	if (st.st_size != (off_t)sizeof(*r)) {
		*why = "a region of another build of iotier (its size differs)";
		return NULL;
	}
	if ((fcntl(fd, F_GET_SEALS) & LOW_GATE_SEALS) != LOW_GATE_SEALS) {
		*why = "its memfd is not sealed against resizing (any process could truncate it)";
		return NULL;
	}
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r == MAP_FAILED) {
		*why = "cannot map it";
		return NULL;
	}
	if (!adaptive_region_valid(r, sizeof(*r))) {
		munmap(r, sizeof(*r));
		*why = "a region of another build of iotier (its header differs)";
		return NULL;
	}
	return r;
}

void adaptive_region_destroy(struct adaptive_region *r)
{
	if (r)
		munmap(r, sizeof(*r));
}

/*
 * Take the window's counts out of the shared counters (the histogram summed over its
 * slots; w is zeroed by the caller); new reads go to the next one.
 */
static void collect(struct adaptive_region *r, struct adaptive_window *w)
{
	uint64_t waits = atomic_load(&r->gate.waits), bytes = atomic_load(&r->gate.bytes);
	uint64_t splits = atomic_load(&r->splits);

	for (uint32_t s = 0; s < ADAPTIVE_HIST_SLOTS; s++)
		for (uint32_t i = 0; i < HIST_NR_BUCKETS; i++) {
			_Atomic uint32_t *c = &r->hist[s].count[i];

			/* Load first: most buckets are empty, and a load does not take the line. */
			if (atomic_load_explicit(c, memory_order_relaxed))
				w->hist[i] += atomic_exchange_explicit(c, 0, memory_order_relaxed);
		}
	w->low_bytes = bytes - r->seen_bytes;
	w->low_limited = (waits - r->seen_waits) + (splits - r->seen_splits);
	r->seen_bytes = bytes;
	r->seen_waits = waits;
	r->seen_splits = splits;
}

/*
 * The try-lock. A holder that is gone (tgkill says ESRCH) while the window it was closing
 * is long over died inside a step: its lock is taken over, or the controller would stop
 * for good (the lease would release the low tier, but no target would hold again).
 */
static bool take_stepper(struct adaptive_region *r, uint64_t now_ns, uint64_t id)
{
	uint64_t holder = 0;

	if (atomic_compare_exchange_strong(&r->stepper, &holder, id))
		return true;
	if (now_ns < atomic_load(&r->deadline_ns) + STEPPER_STALE_NS ||
	    !low_gate_holder_dead(holder))
		return false;
	return atomic_compare_exchange_strong(&r->stepper, &holder, id);
}

int adaptive_region_maybe_step(struct adaptive_region *r, uint64_t now_ns, pid_t pid, pid_t tid)
{
	struct adaptive_window *w = &r->window;
	uint64_t id = (uint64_t)(uint32_t)pid << 32 | (uint32_t)tid;
	uint32_t level;

	if (!adaptive_region_due(r, now_ns) || !take_stepper(r, now_ns, id))
		return 0;
	if (!adaptive_region_due(r, now_ns)) { /* someone stepped just before us */
		atomic_store(&r->stepper, 0);
		return 0;
	}
	memset(w, 0, sizeof(*w));
	collect(r, w);
	w->debt = (uint8_t)debt_log_poll(&r->debt, now_ns);
	level = r->ctl.level;
	/* Odd while ctl changes: adaptive_view_read retries rather than keep a torn copy. */
	atomic_store_explicit(&r->seq, atomic_load_explicit(&r->seq, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	adaptive_step(&r->ctl, now_ns, w);
	atomic_fetch_add_explicit(&r->seq, 1, memory_order_release);
	if (r->ctl.level != level)
		atomic_fetch_add(&r->level_changes, 1);
	publish(r, now_ns);
	atomic_store(&r->stepper, 0);
	return 1;
}

struct gate_waiter {
	struct adaptive_region *r;
	pid_t pid, tid;
};

/* A held thread's tick: step if the window ended (the coarse clock, as after a low I/O). */
static void step_while_held(void *arg)
{
	const struct gate_waiter *w = arg;
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	adaptive_region_maybe_step(w->r, (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec,
				   w->pid, w->tid);
}

uint32_t adaptive_region_gate_enter(struct adaptive_region *r, pid_t pid, pid_t tid,
				    uint64_t max_wait_ns)
{
	struct gate_waiter w = { .r = r, .pid = pid, .tid = tid };

	return low_gate_enter_ticking(&r->gate, pid, tid, max_wait_ns, step_while_held, &w);
}
