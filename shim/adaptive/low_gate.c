// SPDX-License-Identifier: MIT
/*
 * low_gate.c: the low tier's cross-process admission gate (see low_gate.h). The count of
 * I/Os in flight moves only by compare-and-swap under the cap, and each admitted I/O records
 * its thread in a slot, so a holder that died or stopped can be found and its slot taken
 * back, and a release gives back only a slot that is still its own. Every
 * syscall goes through sys_call(): inside the shim, syscall() is our own wrapper.
 */
#include "low_gate.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/sys.h"

#define GATE_NAME "iotier-gate"

/*
 * Sealed at its size: any process of the tree (or root) can open the memfd through
 * /proc/PID/fd, and one that shrank it would kill every other with SIGBUS on its next
 * access of the mapping. F_SEAL_SEAL keeps the seals from being changed again.
 */
void *shared_map_create_fd(const char *name, size_t size, int *fd_out)
{
	long fd = sys_call(SYS_memfd_create, name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	void *p = MAP_FAILED;
	int saved;

	if (fd < 0)
		return NULL;
	/* MAP_SHARED: a forked child sees the same memory, not a copy. */
	if (sys_call(SYS_ftruncate, (int)fd, (off_t)size) == 0 &&
	    sys_call(SYS_fcntl, (int)fd, F_ADD_SEALS, LOW_GATE_SEALS) == 0)
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	saved = errno;
	if (p != MAP_FAILED && fd_out)
		*fd_out = (int)fd;
	else
		sys_call(SYS_close, (int)fd);
	errno = saved;
	return p == MAP_FAILED ? NULL : p;
}

void *shared_map_create(const char *name, size_t size)
{
	return shared_map_create_fd(name, size, NULL);
}

void low_gate_init(struct low_gate *g)
{
	atomic_store(&g->cap, LOW_GATE_UNLIMITED);
	atomic_store(&g->wait_slice_ns, LOW_GATE_WAIT_SLICE_NS);
}

struct low_gate *low_gate_create(void)
{
	struct low_gate *g = shared_map_create(GATE_NAME, sizeof(*g));

	if (g)
		low_gate_init(g);
	return g;
}

void low_gate_destroy(struct low_gate *g)
{
	if (g)
		munmap(g, sizeof(*g));
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Shared futexes (no FUTEX_PRIVATE_FLAG): the waiters are in several processes. */
static void futex_wake(_Atomic uint32_t *word, int n)
{
	sys_call(SYS_futex, (uint32_t *)word, FUTEX_WAKE, n, NULL, NULL, 0);
}

/* Returns false when the wait timed out. */
static bool futex_wait(_Atomic uint32_t *word, uint32_t seen, uint64_t timeout_ns)
{
	struct timespec ts = { .tv_sec = (time_t)(timeout_ns / 1000000000ull),
			       .tv_nsec = (long)(timeout_ns % 1000000000ull) };

	return sys_call(SYS_futex, (uint32_t *)word, FUTEX_WAIT, seen, &ts, NULL, 0) == 0 ||
	       errno != ETIMEDOUT;
}

static void bump_and_wake(struct low_gate *g, int n)
{
	atomic_fetch_add(&g->seq, 1);
	if (atomic_load(&g->waiters))
		futex_wake(&g->seq, n);
}

void low_gate_set_cap(struct low_gate *g, uint32_t cap, uint64_t lease_ns)
{
	int saved = errno;

	if (cap != LOW_GATE_UNLIMITED && cap > LOW_GATE_HOLDERS)
		cap = LOW_GATE_HOLDERS;
	atomic_store(&g->lease_ns, lease_ns);
	atomic_store(&g->cap, cap);
	bump_and_wake(g, INT_MAX);
	errno = saved;
}

/* The cap in force: none when the controller has not renewed its lease. */
static uint32_t cap_now(struct low_gate *g)
{
	uint32_t cap = atomic_load(&g->cap);
	uint64_t lease;

	if (cap == LOW_GATE_UNLIMITED)
		return cap;
	lease = atomic_load(&g->lease_ns);
	return lease && now_ns() >= lease ? LOW_GATE_UNLIMITED : cap;
}

/*
 * Take a free slot. One exists, since occupied slots never outnumber the count in flight,
 * unless another process wrote garbage into the table: then one pass finds none, and the
 * call goes without a slot rather than spin.
 */
static uint32_t claim_slot(struct low_gate *g, uint64_t id)
{
	for (uint32_t i = 0; i < LOW_GATE_HOLDERS; i++) {
		uint64_t free_slot = 0;

		if (atomic_compare_exchange_strong(&g->holders[i], &free_slot, id))
			return low_gate_ticket(i, id);
	}
	atomic_fetch_sub(&g->inflight, 1);
	return 0;
}

static bool holds_slot(struct low_gate *g, uint64_t id)
{
	for (uint32_t i = 0; i < LOW_GATE_HOLDERS; i++)
		if (atomic_load(&g->holders[i]) == id)
			return true;
	return false;
}

static bool try_admit(struct low_gate *g, uint32_t cap)
{
	uint32_t n = atomic_load(&g->inflight);

	while (n < cap)
		if (atomic_compare_exchange_weak(&g->inflight, &n, n + 1))
			return true;
	return false;
}

bool low_gate_sane(struct low_gate *g, uint64_t now)
{
	uint32_t cap = atomic_load(&g->cap);
	uint64_t lease = atomic_load(&g->lease_ns);

	return (cap <= LOW_GATE_HOLDERS || cap == LOW_GATE_UNLIMITED) &&
	       atomic_load(&g->inflight) <= LOW_GATE_HOLDERS &&
	       (!lease || lease <= now + LOW_GATE_LEASE_MAX_NS);
}

/*
 * How long the next wait may last: a slice, never past @until, and no longer than the
 * tick asked (@hint, 0: no wish), so a waiter wakes when the fast path would let it go.
 */
static uint64_t wait_for(struct low_gate *g, uint64_t now, uint64_t until, uint64_t hint)
{
	uint64_t slice = atomic_load(&g->wait_slice_ns), wait;

	if (!slice)
		slice = LOW_GATE_WAIT_SLICE_NS; /* 0 would spin */
	wait = until - now < slice ? until - now : slice;
	return hint && hint < wait ? hint : wait;
}

/* A slice since the last look (or the call's bound, if shorter): take back lost slots. */
static void reclaim_due(struct low_gate *g, uint64_t *next, uint64_t until)
{
	uint64_t now = now_ns(), slice = atomic_load(&g->wait_slice_ns);

	if (now < *next && now < until)
		return;
	low_gate_reclaim_dead(g);
	*next = now + (slice ? slice : LOW_GATE_WAIT_SLICE_NS);
}

/*
 * A wait's start and its bound: the first time (*@until 0) it counts the wait and sets the
 * bound and the first look for lost slots; true once @now has reached the bound, counted as
 * cut short: never held longer, whatever the cap says.
 */
static bool wait_bound_reached(struct low_gate *g, uint64_t now, uint64_t max_wait_ns,
			       uint64_t *until, uint64_t *next_reclaim)
{
	if (!*until) {
		atomic_fetch_add(&g->waits, 1);
		*until = now + (max_wait_ns < UINT64_MAX - now ? max_wait_ns : UINT64_MAX - now);
		*next_reclaim = now + wait_for(g, now, *until, 0);
	}
	if (now < *until)
		return false;
	atomic_fetch_add(&g->cut_short, 1);
	return true;
}

uint32_t low_gate_enter_ticking(struct low_gate *g, pid_t pid, pid_t tid, uint64_t max_wait_ns,
				low_gate_tick_fn *tick, void *arg)
{
	uint64_t id = (uint64_t)(uint32_t)pid << 32 | (uint32_t)tid, until = 0, next_reclaim = 0;
	int saved = errno;
	uint32_t ticket = 0;

	if (atomic_load(&g->cap) == LOW_GATE_UNLIMITED)
		return 0; /* the common case at full: one load, errno untouched */
	for (;;) {
		uint32_t seen = atomic_load(&g->seq), cap = cap_now(g);
		uint64_t now, hint = 0;

		if (cap == LOW_GATE_UNLIMITED)
			break;
		if (try_admit(g, cap)) {
			ticket = claim_slot(g, id);
			break;
		}
		/* Our own slot: a nested I/O (a signal handler's) must not wait for itself. */
		if (holds_slot(g, id))
			break;
		now = now_ns();
		if (wait_bound_reached(g, now, max_wait_ns, &until, &next_reclaim))
			break;
		if (tick && tick(arg, &hint))
			break;
		atomic_fetch_add(&g->waiters, 1);
		if (!futex_wait(&g->seq, seen, wait_for(g, now, until, hint)))
			reclaim_due(g, &next_reclaim, until);
		atomic_fetch_sub(&g->waiters, 1);
	}
	errno = saved;
	return ticket;
}

uint32_t low_gate_enter(struct low_gate *g, pid_t pid, pid_t tid, uint64_t max_wait_ns)
{
	return low_gate_enter_ticking(g, pid, tid, max_wait_ns, NULL, NULL);
}

static bool try_admit_n(struct low_gate *g, uint32_t cap, uint32_t need)
{
	uint32_t n = atomic_load(&g->inflight);

	while (n + need <= cap)
		if (atomic_compare_exchange_weak(&g->inflight, &n, n + need))
			return true;
	return false;
}

/* A poll of low_gate_enter_n: 1 ms, never past @until. */
#define GATE_POLL_NS 1000000ull

/*
 * A timed futex wait on a word of the caller's own that nobody wakes: a plain sleep, which
 * shows as a wait at the gate (in futex) to whoever looks, as every other waiter's does.
 */
static void poll_sleep(uint64_t now, uint64_t until)
{
	uint64_t ns = until - now < GATE_POLL_NS ? until - now : GATE_POLL_NS;
	struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)ns };
	uint32_t never = 0;

	sys_call(SYS_futex, &never, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
}

/*
 * low_gate_enter_ticking for @n slots at once; a held gate (cap 0) admits none. Under a
 * finite cap it polls (GATE_POLL_NS) instead of sleeping on the futex: a release wakes one
 * waiter, and a waiter that needs more slots than are free would swallow the wake a
 * single-slot waiter needs. Held, it sleeps on the futex as every waiter does.
 */
uint32_t low_gate_enter_n(struct low_gate *g, pid_t pid, pid_t tid, uint32_t n,
			  uint64_t max_wait_ns, low_gate_tick_fn *tick, void *arg,
			  uint32_t *tickets)
{
	uint64_t id = (uint64_t)(uint32_t)pid << 32 | (uint32_t)tid, until = 0, next_reclaim = 0;
	int saved = errno;
	uint32_t got = 0;

	if (!n || atomic_load(&g->cap) == LOW_GATE_UNLIMITED)
		return 0;
	for (;;) {
		uint32_t seen = atomic_load(&g->seq), cap = cap_now(g), need;
		uint64_t now, hint = 0;

		if (cap == LOW_GATE_UNLIMITED)
			break;
		need = n < cap ? n : cap;
		if (need && try_admit_n(g, cap, need)) {
			for (uint32_t i = 0; i < need; i++) {
				uint32_t ticket = claim_slot(g, id);

				if (ticket)
					tickets[got++] = ticket;
			}
			break;
		}
		if (holds_slot(g, id))
			break;
		now = now_ns();
		if (wait_bound_reached(g, now, max_wait_ns, &until, &next_reclaim))
			break;
		if (tick && tick(arg, &hint))
			break;
		if (!need) { /* held: no release can admit anyone, only a cap change (wakes all) */
			atomic_fetch_add(&g->waiters, 1);
			if (!futex_wait(&g->seq, seen, wait_for(g, now, until, hint)))
				reclaim_due(g, &next_reclaim, until);
			atomic_fetch_sub(&g->waiters, 1);
		} else {
			poll_sleep(now, until);
			reclaim_due(g, &next_reclaim, until); /* a wait slice's worth of polls */
		}
	}
	errno = saved;
	return got;
}

/*
 * Give the slot of @ticket back if it is still the ticket's: a holder whose slot a waiter
 * took back while it was stopped (low_gate_reclaim_dead) finds another id there, or none,
 * and leaves the slot and the count in flight alone. The same thread cannot hold the slot
 * again meanwhile (it is still inside the I/O the ticket admitted), so the id compared is
 * the holder's own or another's, never an older admission of its own.
 */
static bool release_slot(struct low_gate *g, uint32_t ticket)
{
	_Atomic uint64_t *slot = &g->holders[(ticket & LOW_GATE_TICKET_SLOT) - 1];
	uint64_t id = atomic_load(slot);

	if (!id || low_gate_ticket((ticket & LOW_GATE_TICKET_SLOT) - 1, id) != ticket ||
	    !atomic_compare_exchange_strong(slot, &id, 0))
		return false;
	atomic_fetch_sub(&g->inflight, 1);
	return true;
}

void low_gate_exit(struct low_gate *g, uint32_t ticket, uint64_t bytes)
{
	int saved = errno;

	if (bytes)
		atomic_fetch_add(&g->bytes, bytes);
	if ((ticket & LOW_GATE_TICKET_SLOT) && (ticket & LOW_GATE_TICKET_SLOT) <= LOW_GATE_HOLDERS &&
	    release_slot(g, ticket))
		bump_and_wake(g, 1);
	errno = saved;
}

/*
 * tgkill with signal 0 asks whether a thread exists. A zombie still does: its slot is
 * taken back by the state check below (low_gate_holder_stopped), or once it is reaped.
 */
bool low_gate_holder_dead(uint64_t id)
{
	pid_t pid = (pid_t)(id >> 32), tid = (pid_t)(id & 0xffffffffu);
	int saved = errno;
	bool dead = sys_call(SYS_tgkill, pid, tid, 0) < 0 && errno == ESRCH;

	errno = saved;
	return dead;
}

/*
 * The state letter of /proc/PID/task/TID/stat: the field after the command's last ')'
 * (a command may hold ')' itself). 0 when it cannot be read. Raw syscalls: inside the shim,
 * open and read are our own wrappers.
 */
static char holder_state(uint64_t id)
{
	char path[64], text[512];
	const char *p = NULL;
	long fd, n;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/stat", (unsigned)(id >> 32),
		 (unsigned)(id & 0xffffffffu));
	fd = sys_call(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = sys_call(SYS_read, (int)fd, text, sizeof(text) - 1);
	sys_call(SYS_close, (int)fd);
	if (n <= 0)
		return 0;
	text[n] = '\0';
	for (const char *q = text; (q = strchr(q, ')')); q++)
		p = q;
	return p && p[1] == ' ' ? p[2] : 0;
}

bool low_gate_holder_stopped(uint64_t id)
{
	int saved = errno;
	char state = holder_state(id);

	errno = saved;
	/* T: SIGSTOP or job control; t: a tracer's stop; Z, X: exited, not yet reaped. */
	return state == 'T' || state == 't' || state == 'Z' || state == 'X';
}

unsigned low_gate_reclaim_dead(struct low_gate *g)
{
	unsigned n = 0;
	int saved = errno;

	for (uint32_t i = 0; i < LOW_GATE_HOLDERS; i++) {
		uint64_t id = atomic_load(&g->holders[i]);

		if (!id || (!low_gate_holder_dead(id) && !low_gate_holder_stopped(id)) ||
		    !atomic_compare_exchange_strong(&g->holders[i], &id, 0))
			continue;
		atomic_fetch_sub(&g->inflight, 1);
		n++;
	}
	if (n) {
		atomic_fetch_add(&g->reclaimed, n);
		bump_and_wake(g, INT_MAX);
	}
	errno = saved;
	return n;
}
