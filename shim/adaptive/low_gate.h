/* SPDX-License-Identifier: MIT */
/*
 * low_gate.h: the cross-process gate every low-tier I/O passes, sized by the adaptive
 * controller (its cap: how many low I/Os may be on the device at once, 0 = held). It lives
 * in one shared mapping, inherited by fork, so one cap governs a whole process tree
 * (PostgreSQL's autovacuum workers). Waiting is a futex on that mapping. It cannot wedge:
 * every wait has a bound of the caller's (IOTIER_GATE_WAIT), after which the call goes
 * without a slot; a waiter takes back, every wait slice (LOW_GATE_WAIT_SLICE_NS) or at its
 * bound if that comes first, the slots of holders that died, exited unreaped, or are
 * stopped (SIGSTOP, a tracer): a stopped thread has no I/O of its slot on the device, and
 * when it resumes its release finds the slot no longer its own and leaves the count alone
 * (the ticket names the holder); a cap whose lease ran out (the controller stopped updating it)
 * counts as no cap; and a thread that already holds a slot (a signal handler's I/O inside an
 * I/O) passes through. The mapping is a sealed memfd: no process can shrink it under the
 * others (a SIGBUS on their next access). High-tier threads never call it.
 */
#ifndef IOTIER_LOW_GATE_H
#define IOTIER_LOW_GATE_H

#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define LOW_GATE_HOLDERS 64                 /* the largest finite cap */
#define LOW_GATE_UNLIMITED UINT32_MAX       /* no cap: the gate is a load and a branch */
#define LOW_GATE_WAIT_SLICE_NS 50000000ull  /* 50 ms between checks for dead holders */
#define LOW_GATE_LEASE_MAX_NS 60000000000ull /* a lease further ahead than this is garbage */
/* The seals every shared mapping carries: its size is fixed for good. */
#define LOW_GATE_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

struct low_gate {
	_Atomic uint32_t seq;      /* the futex word: bumped by every release and cap change */
	_Atomic uint32_t waiters;  /* threads in futex_wait, so a release knows to wake */
	_Atomic uint32_t cap;      /* 0..LOW_GATE_HOLDERS, or LOW_GATE_UNLIMITED */
	_Atomic uint32_t inflight; /* admitted and not yet released */
	_Atomic uint64_t lease_ns; /* CLOCK_MONOTONIC end of the cap's validity; 0 = forever */
	_Atomic uint64_t waits;    /* admissions that had to wait: the controller's demand signal */
	_Atomic uint64_t bytes;    /* bytes the low tier reported done */
	_Atomic uint64_t reclaimed; /* slots taken back from dead holders */
	_Atomic uint64_t wait_slice_ns; /* LOW_GATE_WAIT_SLICE_NS; tests lengthen it to prove
					   that a wake-up, not the slice, releases a waiter */
	/* Who holds each slot: pid << 32 | tid, 0 when free. Guarded by CAS, not a lock. */
	_Atomic uint64_t holders[LOW_GATE_HOLDERS];
	_Atomic uint64_t cut_short; /* admissions that went at their wait's bound, no slot */
};

/* A shared anonymous mapping (a memfd, so /proc/PID/maps names it); NULL with errno. */
struct low_gate *low_gate_create(void);
void low_gate_destroy(struct low_gate *g);

/* Make zeroed shared memory at @g a gate with no cap (for a gate inside a larger mapping). */
void low_gate_init(struct low_gate *g);

/*
 * A zeroed MAP_SHARED memfd mapping of @size bytes named @name, sealed (LOW_GATE_SEALS) so
 * that nobody can truncate it under its users; NULL with errno.
 */
void *shared_map_create(const char *name, size_t size);
/* The same, keeping its close-on-exec descriptor in *@fd_out (to hand across exec). */
void *shared_map_create_fd(const char *name, size_t size, int *fd_out);

/* The controller's side: set the cap, valid until @lease_ns (0: forever), and wake waiters. */
void low_gate_set_cap(struct low_gate *g, uint32_t cap, uint64_t lease_ns);

/*
 * Before a low I/O: wait until it may go, but never longer than @max_wait_ns (CLOCK_MONOTONIC;
 * past it the call goes without a slot, counted in cut_short). Returns the ticket to hand
 * to low_gate_exit (0 for an admission that holds no slot). @pid and @tid name the caller,
 * to find dead holders. Never fails and keeps errno.
 */
uint32_t low_gate_enter(struct low_gate *g, pid_t pid, pid_t tid, uint64_t max_wait_ns);

/*
 * low_gate_enter, calling @tick(@arg, &hint) before every wait: a held tier's waiters are
 * the only threads left to run the controller when the reader stops. A tick that returns
 * true ends the wait: the call goes without a slot (the fast path's "the foreground is
 * idle"); one that sets *hint (ns) makes the next wait no longer than that, so that the
 * waiter looks again when the fast path would open, not a slice later.
 */
typedef bool low_gate_tick_fn(void *arg, uint64_t *hint);
uint32_t low_gate_enter_ticking(struct low_gate *g, pid_t pid, pid_t tid, uint64_t max_wait_ns,
				low_gate_tick_fn *tick, void *arg);

/*
 * Admit @n I/Os at once (an asynchronous submission of @n): wait, as low_gate_enter_ticking
 * does, until min(@n, cap) slots are free, and take them all, their tickets in @tickets (room
 * for min(@n, LOW_GATE_HOLDERS)); returns how many it took, each for low_gate_exit. 0: the
 * gate is open, the wait reached its bound, the tick ended it, or the caller holds a slot.
 * Under a finite cap it polls every millisecond, so that it never takes a release's wake-up.
 */
uint32_t low_gate_enter_n(struct low_gate *g, pid_t pid, pid_t tid, uint32_t n,
			  uint64_t max_wait_ns, low_gate_tick_fn *tick, void *arg,
			  uint32_t *tickets);

/*
 * Are the gate's shared fields in their ranges at @now_ns (the cap, the count in flight, the
 * lease)? Another process of the tree, or root, can write anything there.
 */
bool low_gate_sane(struct low_gate *g, uint64_t now_ns);

/*
 * A ticket: the slot's index + 1 in its low 7 bits, a hash of its holder's id above, so
 * that a release finds whether the slot is still its own (never 0, never UINT32_MAX). Two
 * holders whose hashes agree (1 in 2^25) after a take-back: the resumed one frees the new
 * holder's slot early, the cap over by one for the rest of that I/O.
 */
#define LOW_GATE_TICKET_SLOT 0x7fu
static inline uint32_t low_gate_ticket(uint32_t index, uint64_t id)
{
	return (uint32_t)((id * 0x9e3779b97f4a7c15ull) >> 39) << 7 | (index + 1);
}

/*
 * After it: release @ticket and count @bytes done (a failed I/O reports 0); a slot taken
 * back meanwhile is left as it is. Keeps errno.
 */
void low_gate_exit(struct low_gate *g, uint32_t ticket, uint64_t bytes);

/*
 * Take back the slots of holders that cannot be doing their I/O: gone (a reaped process, an
 * ended thread), exited and not reaped, or stopped. A /proc read per live holder: called by
 * waiters only, every wait slice.
 */
unsigned low_gate_reclaim_dead(struct low_gate *g);

/* Is the thread @id (pid << 32 | tid) gone? A zombie is not. errno is kept. */
bool low_gate_holder_dead(uint64_t id);

/* Is it stopped (SIGSTOP, a tracer) or a zombie, by /proc/PID/task/TID/stat? errno kept. */
bool low_gate_holder_stopped(uint64_t id);

#endif
