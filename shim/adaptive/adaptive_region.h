/* SPDX-License-Identifier: MIT */
/*
 * adaptive_region.h: the adaptive tier's shared state, one MAP_SHARED memfd mapping
 * ("iotier-adaptive") that a process tree inherits by fork: the low gate, the controller,
 * and the current window's measurements. Any thread of any process in the tree adds its
 * high reads to the window; the first low thread to find the window's deadline passed runs
 * the controller (a try-lock, never a wait) and sizes the gate: before its admission, after
 * its I/O, before each of its waits at the gate. A high thread never steps: its path is a
 * few relaxed atomics (adaptive_region_fg_*, adaptive_region_note_read). A cap carries a
 * lease, so if the steps stop (no low thread calls, or every process that drove them gone)
 * the low tier is released rather than held forever; the next low call steps before it is
 * admitted, so the lapsed lease lets no burst through.
 *
 * No process of the tree can wedge, crash or blind another through it (docs/adaptive.md,
 * "Nothing in the region can wedge a process"):
 * - The memfd is sealed at its size: truncating it through /proc/PID/fd fails (EPERM)
 *   instead of sending SIGBUS to every process on its next access.
 * - The step lock is a lease: the word holds the stepper's pid and the CLOCK_MONOTONIC
 *   millisecond its step began, and a step older than STEPPER_LEASE_NS (its stepper died,
 *   was stopped by SIGSTOP or a debugger, or stalls) is taken over by the next process
 *   that finds the window due. A step takes microseconds.
 * - The seqlock cannot stay odd: a step makes the count odd with a compare-and-swap and
 *   ends with one from its own odd value, so a taker that finds the count odd (the stepper
 *   it replaced never ended) moves it to the next odd value and ends even. A stale stepper
 *   that resumes finds its end's compare-and-swap failing: it publishes nothing and leaves
 *   the lock alone. Torn state: what it wrote of struct adaptive before it noticed is what
 *   the controller itself computed a window earlier, field by field in range; the next
 *   step checks every field (adaptive_sane) and recomputes the cap and chunk from the
 *   level, so the damage is at most one window's decision (and one view mixing two steps).
 * - Every field a process reads is checked against its range before use (the gate's in
 *   low_gate_sane, the controller's in adaptive_sane, the chunk in adaptive_region_chunk);
 *   a region that fails is "no target" for this process from then on, with one warning.
 * - Every wait at the gate has the caller's bound (IOTIER_GATE_WAIT).
 */
#ifndef IOTIER_ADAPTIVE_REGION_H
#define IOTIER_ADAPTIVE_REGION_H

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

/* glibc 2.35's rseq registration, where the compiler can find the thread pointer. */
#if defined(__has_include) && defined(__has_builtin)
#if __has_include(<sys/rseq.h>) && __has_builtin(__builtin_thread_pointer)
#include <sys/rseq.h>
#define ADAPTIVE_HAVE_RSEQ 1
#endif
#endif
#ifndef ADAPTIVE_HAVE_RSEQ
#define ADAPTIVE_HAVE_RSEQ 0
#endif

#include "adaptive.h"
#include "debt_log.h"
#include "low_gate.h"

#define ADAPTIVE_REGION_NAME "iotier-adaptive" /* /proc/PID/maps shows /memfd:NAME */
#define ADAPTIVE_LEASE_NS 1000000000ull /* a cap lapses 1 s after its window's end */
#define ADAPTIVE_LEASE_SPAN_MAX_NS 30000000000ull /* a window counts at most 30 s of it */
/*
 * The region's header lets a reader that did not create it trust it: a process after exec
 * that inherited the descriptor, and `iotier threads` reading another process's mapping.
 * The layout version changes whenever struct adaptive_region does.
 */
#define ADAPTIVE_REGION_MAGIC 0x444150414954ull /* "TIAPAD": iotier adaptive */
#define ADAPTIVE_REGION_LAYOUT 13u

/*
 * The window's histogram, one per CPU slot, summed by the stepper. With one shared
 * histogram, high threads on different CPUs noting reads at once pull the same cache line
 * back and forth: bench/micro/note-cost.c measures 20-90 ns more per noted read with two
 * threads (docs/bench/adaptive-measurements.md). A slot per CPU keeps each line on its CPU;
 * 16 slots cover most hosts a database shares with others, and beyond that two CPUs share a
 * slot, still correct.
 */
#define ADAPTIVE_HIST_SLOTS 16u

/*
 * Each bucket counts its reads in the low 32 bits and, of them, those that began queued
 * (struct adaptive_window's queued) in the high 32: one atomic add notes both, so the mark
 * costs a noted read no second add (5 ns in bench/micro/note-cost).
 */
#define ADAPTIVE_HIST_QUEUED_SHIFT 32
#define ADAPTIVE_HIST_READS(v) ((uint32_t)(v))
#define ADAPTIVE_HIST_QUEUED(v) ((uint32_t)((v) >> ADAPTIVE_HIST_QUEUED_SHIFT))

struct adaptive_hist_slot {
	_Alignas(64) _Atomic uint64_t count[HIST_NR_BUCKETS];
};

/*
 * The tree's shared files (docs/adaptive.md, "A lock holder is never held"): keys of files
 * (fd_file_key) that a high thread wrote or synced, in an open-addressed table searched
 * over at most ADAPTIVE_SHARED_PROBE slots from the key's own. A WAL rotated every few
 * minutes fills it in days: when a key's slots are all taken, it replaces the one at its
 * own slot, most likely a deleted file's.
 */
#define ADAPTIVE_SHARED_FILES 512u
#define ADAPTIVE_SHARED_PROBE 8u

/*
 * The fast path per device (docs/adaptive.md, "The fast path"): a slot for each of the first
 * ADAPTIVE_FG_DEVICES whole-disk devices the tree reads or writes (adaptive_region_dev_slot),
 * and a catch-all for every device after them. Devices in the catch-all clamp each other:
 * more clamping, never a low piece let go under a read of its own device.
 */
#define ADAPTIVE_FG_DEVICES 8u
#define ADAPTIVE_FG_CATCHALL ADAPTIVE_FG_DEVICES
#define ADAPTIVE_FG_SLOTS (ADAPTIVE_FG_DEVICES + 1u)
#define ADAPTIVE_DEV_ANY UINT32_MAX /* a low I/O of no known device: every slot is asked */

/*
 * The low tier's service time on a device, learnt from its own completed pieces: EWMAs
 * (ADAPTIVE_SVC_SHIFT) of a piece's size b (in ADAPTIVE_SVC_UNIT), its time t (ns), b^2 and
 * b x t, each kept x 2^ADAPTIVE_SVC_SCALE, from which adaptive_svc_predict fits a fixed cost
 * plus a cost per byte. Written by low threads only, with loads and stores: two threads'
 * samples at once lose one, and the fit is checked, never trusted.
 */
#define ADAPTIVE_SVC_SHIFT 3
#define ADAPTIVE_SVC_SCALE 4
#define ADAPTIVE_SVC_UNIT 512u
#define ADAPTIVE_SVC_MAX_BYTES (64ull << 20) /* a larger sample counts as this */
#define ADAPTIVE_SVC_MAX_NS 1000000000ull    /* a slower one as 1 s: it fits no gap anyway */

struct adaptive_svc {
	_Atomic uint64_t samples;
	_Atomic uint64_t b, t, bb, bt;
};

/* One device's slot: the foreground's line, then the low side's. */
struct adaptive_fg {
	/* Written by every high read on the device: two or three relaxed atomics. */
	_Alignas(64) _Atomic uint32_t inflight; /* high reads in flight */
	uint32_t reserved;
	_Atomic uint64_t last_ns; /* CLOCK_MONOTONIC of the last start or end; 0: none yet */
	_Atomic uint64_t gap_ns;  /* its usual gap: an EWMA of end-to-next-start, clipped */
	_Atomic uint64_t gap_dev_ns; /* its spread: an EWMA of |sample - gap_ns| */
	/* Written by low threads only, so a high read's line is not pulled away per piece. */
	_Alignas(64) _Atomic uint64_t gap_until_ns; /* the last gap piece is expected done then */
	struct adaptive_svc svc;
	/*
	 * The last low piece admitted here during a probe is expected done by then: a read
	 * that started before is not alone (adaptive_region_fg_alone). Written in probes only,
	 * so the line a high read loads it from stays clean the rest of the time.
	 */
	_Atomic uint64_t probe_low_until_ns;
};

struct adaptive_region {
	uint64_t magic;                /* ADAPTIVE_REGION_MAGIC once initialised */
	uint32_t layout;               /* ADAPTIVE_REGION_LAYOUT */
	uint32_t size;                 /* sizeof(struct adaptive_region) */
	int32_t creator_pid;           /* the process that created it: the tree's root */
	uint32_t reserved;
	struct low_gate gate;
	_Atomic uint64_t stepper;      /* pid << 32 | the ms its step began (stepper_id); 0: none */
	_Atomic uint32_t chunk;        /* the controller's chunk, for split_io */
	_Atomic uint64_t deadline_ns;  /* the controller's deadline, read without the lock */
	_Atomic uint64_t splits;       /* low I/Os cut into pieces, ever */
	_Atomic uint64_t pushes;       /* writeback push pieces that passed the gate, ever */
	_Atomic uint64_t level_changes;
	struct adaptive_hist_slot hist[ADAPTIVE_HIST_SLOTS]; /* the high tier's reads this window */
	/* Guarded by stepper. */
	uint64_t seen_waits, seen_bytes, seen_splits;
	struct adaptive_window window; /* the step's scratch: too large for a caller's stack */
	struct adaptive ctl;
	/* The debt guard's log (IOTIER_DEBT_LOG), noted by the open wrappers. */
	struct debt_log debt;
	/*
	 * Append new fields here, at the end, and bump ADAPTIVE_REGION_LAYOUT.
	 */
	_Atomic uint64_t takeovers;    /* steps taken from a stepper past its lease */
	/*
	 * The seqlock of ctl for readers that never take the lock (adaptive_view.h): odd while
	 * a step writes it.
	 */
	_Atomic uint32_t seq;
	/* Files a high thread wrote or synced (adaptive_region_note_shared); 0: a free slot. */
	_Atomic uint32_t shared_notes; /* keys stored, ever: a change means "look again" */
	_Atomic uint64_t shared_files[ADAPTIVE_SHARED_FILES];
	_Alignas(64) _Atomic uint64_t fast_full; /* low admissions at full, the foreground idle */
	/* I/O calls of urgent threads this window (adaptive_region_note_urgent): a probe void. */
	_Alignas(64) _Atomic uint64_t urgent_ios;
	/* The fast path per device (adaptive_region_fg_*): the table's keys, then its slots. */
	_Alignas(64) _Atomic uint64_t fg_dev[ADAPTIVE_FG_DEVICES]; /* adaptive_dev_key; 0: free */
	_Atomic uint64_t gap_fills;   /* low pieces admitted in a reader's gap, beyond the allowance */
	struct adaptive_fg fg[ADAPTIVE_FG_SLOTS];
};

/*
 * The fast path (docs/adaptive.md, "The fast path"), per device. The foreground is idle on a
 * device once no read of it has been in flight for longer than max(2 x its usual gap there
 * + 8 x the gaps' spread, ADAPTIVE_IDLE_MIN_NS), 50 ms in a probe (fg_quiet says why); then a
 * low piece to it goes at full, whatever the slow loop's allowance. A gap sample is clipped
 * to max(4 x the usual gap, ADAPTIVE_IDLE_MIN_NS) and to ADAPTIVE_GAP_MAX_NS, so that one
 * idle spell moves the average by a fraction, not to seconds. A count left up by a process
 * killed inside a read is trusted for ADAPTIVE_FG_STALE_NS after the last start or end.
 */
#define ADAPTIVE_IDLE_MIN_NS 1000000ull   /* 1 ms */
#define ADAPTIVE_GAP_MAX_NS 50000000ull   /* 50 ms: a slower reader is not protected anyway */
#define ADAPTIVE_FG_STALE_NS 1000000000ull
#define ADAPTIVE_GAP_SHIFT 3              /* the EWMA's weight: 1/8 */

/* The slot of @dev, clipped: a garbled number lands in the catch-all. A compare, no divide. */
static inline struct adaptive_fg *adaptive_region_fg(struct adaptive_region *r, uint32_t dev)
{
	return &r->fg[dev < ADAPTIVE_FG_SLOTS ? dev : ADAPTIVE_FG_CATCHALL];
}

/* A high read of device slot @dev starts at @now_ns (the clock it is timed with). */
static inline void adaptive_region_fg_begin(struct adaptive_region *r, uint32_t dev,
					    uint64_t now_ns)
{
	struct adaptive_fg *f = adaptive_region_fg(r, dev);
	uint64_t last, gap, spread, sample, clip;

	if (atomic_fetch_add_explicit(&f->inflight, 1, memory_order_relaxed))
		return; /* another read in flight: no gap, the foreground was busy */
	last = atomic_load_explicit(&f->last_ns, memory_order_relaxed);
	gap = atomic_load_explicit(&f->gap_ns, memory_order_relaxed);
	if (last && now_ns > last) {
		clip = 4 * gap > ADAPTIVE_IDLE_MIN_NS ? 4 * gap : ADAPTIVE_IDLE_MIN_NS;
		sample = now_ns - last < clip ? now_ns - last : clip;
		sample = sample < ADAPTIVE_GAP_MAX_NS ? sample : ADAPTIVE_GAP_MAX_NS;
		spread = atomic_load_explicit(&f->gap_dev_ns, memory_order_relaxed);
		atomic_store_explicit(&f->gap_ns, gap - (gap >> ADAPTIVE_GAP_SHIFT) +
				      (sample >> ADAPTIVE_GAP_SHIFT), memory_order_relaxed);
		sample = sample > gap ? sample - gap : gap - sample;
		atomic_store_explicit(&f->gap_dev_ns, spread - (spread >> ADAPTIVE_GAP_SHIFT) +
				      (sample >> ADAPTIVE_GAP_SHIFT), memory_order_relaxed);
	}
	atomic_store_explicit(&f->last_ns, now_ns, memory_order_relaxed);
}

#define ADAPTIVE_PROBE_MARK_MAX_NS 1000000000ull /* a mark further ahead is garbage */

/*
 * A probe's baseline is the reads alone, but a held low thread is paced, not parked: it
 * goes once per gate wait (IOTIER_GATE_WAIT, 20 ms), since it may hold a lock. Its pieces
 * then shared the device with about 1% of a probe's reads (a 16 KiB piece, 0.2 ms of the
 * channel, every 20 ms), exactly the tail a p99 is made of: on the issue12 disk the
 * baseline of a reader whose P99 alone was 355-365 us came out at 368-500 us in six runs.
 * Did the read that started at @start_ns on @dev overlap no such piece? One load of a line
 * low threads write in probes only.
 */
static inline bool adaptive_region_fg_alone(struct adaptive_region *r, uint32_t dev,
					    uint64_t start_ns)
{
	uint64_t until = atomic_load_explicit(&adaptive_region_fg(r, dev)->probe_low_until_ns,
					      memory_order_relaxed);

	/* A garbled region must not blind the window: a mark past a second is ignored. */
	return start_ns >= until || until - start_ns > ADAPTIVE_PROBE_MARK_MAX_NS;
}

/* It ended at @now_ns (0: the caller has no clock; the start's time stands). */
static inline void adaptive_region_fg_end(struct adaptive_region *r, uint32_t dev,
					  uint64_t now_ns)
{
	struct adaptive_fg *f = adaptive_region_fg(r, dev);

	atomic_fetch_sub_explicit(&f->inflight, 1, memory_order_relaxed);
	if (now_ns)
		atomic_store_explicit(&f->last_ns, now_ns, memory_order_relaxed);
}

/*
 * The slot of the whole-disk device @key (adaptive_dev_key): its own, found or taken now
 * (a few compare-and-swaps, once per device per process), or the catch-all once the table
 * is full. Slots are never given back, so a slot found once is the device's for good.
 */
static inline uint64_t adaptive_dev_key(uint32_t major, uint32_t minor)
{
	return 1ull << 63 | (uint64_t)major << 32 | minor;
}
uint32_t adaptive_region_dev_slot(struct adaptive_region *r, uint64_t key);

/*
 * Has the foreground been idle on device slot @dev at @now_ns for longer than its usual
 * gap there? A device it never read is idle once it reads another; before its first read
 * anywhere, only while the controller is released (a relative target starts released at
 * held, adaptive_init: the low tier at full until a reader shows up, held from its first
 * read, not from the first look at it); otherwise the slow loop's allowance stands.
 * ADAPTIVE_DEV_ANY (adaptive_region_fg_idle): idle on every device it read. Every field is
 * clipped, never trusted.
 */
bool adaptive_region_fg_idle_on(struct adaptive_region *r, uint32_t dev, uint64_t now_ns);
static inline bool adaptive_region_fg_idle(struct adaptive_region *r, uint64_t now_ns)
{
	return adaptive_region_fg_idle_on(r, ADAPTIVE_DEV_ANY, now_ns);
}

/*
 * How long from @now_ns until the foreground would be idle on @dev if no read starts
 * meanwhile: 0 when it is; ADAPTIVE_BUSY_POLL_NS while a read is in flight (its end is not
 * known); before its first read anywhere UINT64_MAX (0 while released: idle then). A held
 * waiter sleeps no longer than this, so it goes at full within about a millisecond of the
 * fast path opening, with no wake-up from the reader. ADAPTIVE_DEV_ANY: the latest of the
 * devices it read.
 */
#define ADAPTIVE_BUSY_POLL_NS 1000000ull /* 1 ms */
uint64_t adaptive_region_fg_opens_in_on(struct adaptive_region *r, uint32_t dev,
					uint64_t now_ns);

/*
 * The piece a low I/O to device slot @dev may be cut to now, for a caller whose allowance is
 * @chunk: with the foreground idle there, at least ADAPTIVE_FAST_PIECE (so a returning
 * reader waits behind one piece, not the rest of the call), and *@idle true: the gate then
 * holds no slot for it, so the caller need not keep it to one device request; otherwise
 * @chunk. Reads the clock. ADAPTIVE_DEV_ANY: of no known device, idle only if idle
 * everywhere.
 */
#define ADAPTIVE_FAST_PIECE (1u << 20)
uint32_t adaptive_region_piece_on(struct adaptive_region *r, uint32_t dev, uint32_t chunk,
				  bool *idle);

/*
 * Gap filling (docs/adaptive.md, "The fast path"): a piece whose service time fits the
 * reader's gap costs it nothing. adaptive_svc_note learns a low piece of @bytes that took
 * @ns; adaptive_svc_predict says how long one of @bytes should take (0: nothing learnt).
 */
void adaptive_svc_note(struct adaptive_svc *s, uint64_t bytes, uint64_t ns);
uint64_t adaptive_svc_predict(struct adaptive_svc *s, uint64_t bytes);

/* A low piece of @bytes to device slot @dev completed in @ns: learnt for that device. */
static inline void adaptive_region_low_done(struct adaptive_region *r, uint32_t dev,
					    uint64_t bytes, uint64_t ns)
{
	if (dev < ADAPTIVE_FG_SLOTS && bytes)
		adaptive_svc_note(&r->fg[dev].svc, bytes, ns);
}

/*
 * Does a piece expected to take @svc_ns, going @since_ns after the reader's last
 * completion on its device, fit a gap whose usual length is @gap_ns, spread @spread_ns (the
 * mean deviation), with the margin? It must be done by the gap's end less
 * ADAPTIVE_GAP_FILL_EARLY, taking ADAPTIVE_GAP_FILL_COST times its expected time:
 *  - the next read is expected at the mean gap, and may come early: by a quarter of the gap
 *    (a reader whose gaps are its think time, 5 ms with some jitter, loses a quarter of
 *    each), or by twice the spread if more, so that a reader of irregular gaps, whose next
 *    read may come at any time (random arrivals: a spread of 3/4 of the mean), gets none
 *    filled;
 *  - twice the expected time: the piece may queue behind one of the allowance's pieces
 *    already on the device (a like piece: the same chunk), and its own time varies.
 * 0 (nothing learnt) fits nothing.
 */
#define ADAPTIVE_GAP_FILL_EARLY(gap, spread) ((gap) / 4 > 2 * (spread) ? (gap) / 4 : 2 * (spread))
#define ADAPTIVE_GAP_FILL_COST 2u
static inline bool adaptive_gap_fits(uint64_t since_ns, uint64_t gap_ns, uint64_t spread_ns,
				     uint64_t svc_ns)
{
	uint64_t early, end;

	if (gap_ns > ADAPTIVE_GAP_MAX_NS || spread_ns > ADAPTIVE_GAP_MAX_NS)
		return false; /* garbage: nothing fits */
	early = ADAPTIVE_GAP_FILL_EARLY(gap_ns, spread_ns);
	end = gap_ns > early ? gap_ns - early : 0;
	return svc_ns && svc_ns <= ADAPTIVE_SVC_MAX_NS && since_ns < end &&
	       ADAPTIVE_GAP_FILL_COST * svc_ns <= end - since_ns;
}

/*
 * May a low piece of @bytes to device slot @dev go now, beyond the allowance, in the
 * foreground's gap there? No read in flight on it, the piece fits what is left of its gap
 * (adaptive_gap_fits), no probe under way (the baseline is the reads alone), and the gap
 * piece admitted before it is expected done: one at a time a device, so that two do not
 * share one gap's room. Counted in gap_fills. False for ADAPTIVE_DEV_ANY or @bytes 0.
 */
bool adaptive_region_gap_admit(struct adaptive_region *r, uint32_t dev, uint64_t bytes,
			       uint64_t now_ns);

/* Map and start a region for @t at @now_ns; NULL with errno. */
struct adaptive_region *adaptive_region_create(const struct adaptive_params *p,
					       const struct adaptive_target *t, uint64_t now_ns);
/* The same, keeping its close-on-exec descriptor in *@fd_out, to hand to an exec'd image. */
struct adaptive_region *adaptive_region_create_fd(const struct adaptive_params *p,
						  const struct adaptive_target *t, uint64_t now_ns,
						  int *fd_out);
void adaptive_region_destroy(struct adaptive_region *r);

/*
 * Map the region behind @fd, inherited across exec from a process that created or adopted
 * it. NULL when @fd is not an open memfd named ADAPTIVE_REGION_NAME, sealed at its size
 * (LOW_GATE_SEALS), of this build's layout,
 * with *@why saying which; *@ours tells whether @fd is such a memfd at all (and so the
 * caller's to close), so a stray number never closes a descriptor of the program's.
 */
struct adaptive_region *adaptive_region_adopt(int fd, const char **why, bool *ours);

/* Is the mapping at @r, @len bytes long, a region of this build's layout? */
bool adaptive_region_valid(const struct adaptive_region *r, size_t len);

/*
 * Has this process found @r corrupt (a field out of its range)? Then it is "no target"
 * here from now on: the gate passes every call, nothing steps, the chunk is unlimited.
 */
bool adaptive_region_bad(const struct adaptive_region *r);

/*
 * The chunk, checked: a power of two from 4 KiB to 1 GiB, else ADAPTIVE_UNLIMITED (and so in
 * a region found bad). What a caller that cuts I/O into pieces should read, not r->chunk.
 */
uint32_t adaptive_region_chunk(const struct adaptive_region *r);

/*
 * A high-tier read took @ns, noted in histogram @slot (any number); @queued: it began within
 * ADAPTIVE_QUEUED_GAP_NS of its thread's last read's end. One atomic add.
 */
static inline void adaptive_region_note_read_queued_at(struct adaptive_region *r,
						       uint32_t slot, uint64_t ns, bool queued)
{
	atomic_fetch_add_explicit(&r->hist[slot % ADAPTIVE_HIST_SLOTS].count[hist_bucket(ns)],
				  1 + ((uint64_t)queued << ADAPTIVE_HIST_QUEUED_SHIFT),
				  memory_order_relaxed);
}

/* The same, not queued. */
static inline void adaptive_region_note_read_at(struct adaptive_region *r, uint32_t slot,
						uint64_t ns)
{
	adaptive_region_note_read_queued_at(r, slot, ns, false);
}

/*
 * The CPU this thread runs on, for a histogram slot (a stale answer only costs a shared
 * line): read straight from the thread's rseq area where glibc registered one (2.35 and
 * later: <sys/rseq.h>'s __rseq_offset from the thread pointer, a load, no call and no
 * errno), else sched_getcpu (the vDSO, no syscall), errno as it was.
 */
static inline uint32_t adaptive_this_cpu(void)
{
	int saved, cpu;

#if ADAPTIVE_HAVE_RSEQ
	if (__builtin_expect(__rseq_size >= 8, 1)) {
		cpu = *(volatile int32_t *)((char *)__builtin_thread_pointer() + __rseq_offset +
					     offsetof(struct rseq, cpu_id));
		/* -1: not registered yet, -2: registration failed */
		if (__builtin_expect(cpu >= 0, 1))
			return (uint32_t)cpu;
	}
#endif
	saved = errno;
	cpu = sched_getcpu();
	errno = saved;
	return (uint32_t)cpu;
}

/* A high-tier read took @ns: noted in this CPU's slot, @queued or not. errno as it was. */
static inline void adaptive_region_note_read_queued(struct adaptive_region *r, uint64_t ns,
						    bool queued)
{
	adaptive_region_note_read_queued_at(r, adaptive_this_cpu(), ns, queued);
}

static inline void adaptive_region_note_read(struct adaptive_region *r, uint64_t ns)
{
	adaptive_region_note_read_queued(r, ns, false);
}

/*
 * An urgent thread (IOTIER_URGENT: a flush) does I/O: a baseline probe under way is not
 * the foreground alone. One relaxed add on a line of its own; urgent threads are few.
 */
static inline void adaptive_region_note_urgent(struct adaptive_region *r)
{
	atomic_fetch_add_explicit(&r->urgent_ios, 1, memory_order_relaxed);
}

/*
 * A high thread wrote or synced the file of @key (nonzero): note it for every process of
 * the tree. A few compare-and-swaps, once per high fd.
 */
void adaptive_region_note_shared(struct adaptive_region *r, uint64_t key);

/* Is the file of @key one a high thread wrote or synced? At most ADAPTIVE_SHARED_PROBE loads. */
bool adaptive_region_file_shared(const struct adaptive_region *r, uint64_t key);

/* Has the window ended by @now_ns? One relaxed load: callers ask before anything else. */
static inline bool adaptive_region_due(struct adaptive_region *r, uint64_t now_ns)
{
	return now_ns >= atomic_load_explicit(&r->deadline_ns, memory_order_relaxed);
}

/*
 * Run the controller if its window ended by @now_ns and nobody else is: returns 1 when
 * this call stepped, 0 otherwise. @pid identifies the caller in the try-lock (@tid is kept
 * for the callers' symmetry); a step that began STEPPER_LEASE_NS or more before @now_ns is
 * taken over, whether its stepper died, stopped or stalls.
 */
int adaptive_region_maybe_step(struct adaptive_region *r, uint64_t now_ns, pid_t pid, pid_t tid);

/* Well under the cap's lease (ADAPTIVE_LEASE_NS): a taker renews the cap before it lapses. */
#define STEPPER_LEASE_NS 200000000ull

/*
 * Test-only (docs/adaptive.md): called in the middle of every step, with the controller
 * half written and the seqlock odd, so that a test can kill, stop or stall a stepper there.
 * NULL outside tests; the shim sets it from IOTIER_TEST_STEP (adaptive_tree.c).
 */
extern void (*adaptive_region_mid_step)(void);

/*
 * Called by the thread that stepped, after a step it published (the state file's refresh,
 * preload/adaptive_hook.c). Always a low thread's call.
 */
extern void (*adaptive_region_stepped)(uint64_t now_ns);

/*
 * Before a low I/O of @bytes (0: not known) to device slot @dev (ADAPTIVE_DEV_ANY: not
 * known): step the controller if the window has ended, then the gate's low_gate_enter (never
 * longer than @max_wait_ns, and not at all in a region found bad), except that while it
 * waits the caller steps the controller whenever the window has ended, goes at full once
 * the foreground is idle on the device, waking for it (adaptive_region_fg_opens_in_on) rather
 * than at the end of a wait slice, and goes in the reader's gap when the piece fits it
 * (adaptive_region_gap_admit; never with @dev or @bytes unknown). With every low thread
 * held at the gate, nothing else steps: high threads never do.
 */
uint32_t adaptive_region_gate_enter_on(struct adaptive_region *r, pid_t pid, pid_t tid,
				       uint64_t max_wait_ns, uint32_t dev, uint64_t bytes);

/* The same for a low I/O of no known device or size: idle only if idle everywhere. */
static inline uint32_t adaptive_region_gate_enter(struct adaptive_region *r, pid_t pid,
						  pid_t tid, uint64_t max_wait_ns)
{
	return adaptive_region_gate_enter_on(r, pid, tid, max_wait_ns, ADAPTIVE_DEV_ANY, 0);
}

#endif
