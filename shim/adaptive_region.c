// SPDX-License-Identifier: MIT
/*
 * adaptive_region.c: the controller and the gate in one shared mapping (see
 * adaptive_region.h). A step collects the window from the shared counters, runs
 * adaptive_step and hands the decision to the gate with a fresh lease.
 */
#include "adaptive_region.h"

#include <string.h>
#include <sys/mman.h>
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
	struct adaptive_region *r = shared_map_create(ADAPTIVE_REGION_NAME, sizeof(*r));

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

void adaptive_region_destroy(struct adaptive_region *r)
{
	if (r)
		munmap(r, sizeof(*r));
}

/* Take the window's counts out of the shared counters; new reads go to the next one. */
static void collect(struct adaptive_region *r, struct adaptive_window *w)
{
	uint64_t waits = atomic_load(&r->gate.waits), bytes = atomic_load(&r->gate.bytes);
	uint64_t splits = atomic_load(&r->splits);

	for (uint32_t i = 0; i < HIST_NR_BUCKETS; i++)
		w->hist[i] = atomic_load_explicit(&r->hist[i], memory_order_relaxed) ?
			     atomic_exchange_explicit(&r->hist[i], 0, memory_order_relaxed) : 0;
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
