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
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/sys.h"

void (*adaptive_region_mid_step)(void);
void (*adaptive_region_stepped)(uint64_t now_ns);

/* The region this process found corrupt; at most one per process, and for good. */
static _Atomic(const struct adaptive_region *) bad_region;

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

bool adaptive_region_bad(const struct adaptive_region *r)
{
	return atomic_load_explicit(&bad_region, memory_order_relaxed) == r;
}

/* @r is corrupt: no target here from now on, said once. */
static void refuse(struct adaptive_region *r, const char *why)
{
	const struct adaptive_region *none = NULL;

	if (atomic_compare_exchange_strong(&bad_region, &none, r))
		shim_warn_once(WARN_ADAPTIVE, "the adaptive tier's shared state is corrupt (%s): "
			       "this process applies no target from now on", why);
}

uint32_t adaptive_region_chunk(const struct adaptive_region *r)
{
	uint32_t chunk = atomic_load_explicit(&r->chunk, memory_order_relaxed);

	if (adaptive_region_bad(r) || chunk < 4096 || chunk > (1u << 30) || (chunk & (chunk - 1)))
		return ADAPTIVE_UNLIMITED;
	return chunk;
}

/*
 * The shared-files table: the key's own slot and the next ADAPTIVE_SHARED_PROBE - 1. No
 * field read here is an index or a length, so a garbled table can only make a write pass
 * ungated or gated, never crash or wait.
 */
void adaptive_region_note_shared(struct adaptive_region *r, uint64_t key)
{
	uint32_t home = (uint32_t)(key % ADAPTIVE_SHARED_FILES);

	for (uint32_t i = 0; i < ADAPTIVE_SHARED_PROBE; i++) {
		_Atomic uint64_t *slot = &r->shared_files[(home + i) % ADAPTIVE_SHARED_FILES];
		uint64_t was = 0;

		if (atomic_compare_exchange_strong(slot, &was, key)) {
			atomic_fetch_add(&r->shared_notes, 1);
			return;
		}
		if (was == key)
			return;
	}
	/* Full: this key replaces its home slot's (whose file, if live, is cached per fd). */
	atomic_store(&r->shared_files[home], key);
	atomic_fetch_add(&r->shared_notes, 1);
}

bool adaptive_region_file_shared(const struct adaptive_region *r, uint64_t key)
{
	uint32_t home = (uint32_t)(key % ADAPTIVE_SHARED_FILES);

	for (uint32_t i = 0; i < ADAPTIVE_SHARED_PROBE; i++) {
		uint64_t k = atomic_load_explicit(&r->shared_files[(home + i) % ADAPTIVE_SHARED_FILES],
						  memory_order_relaxed);

		if (k == key)
			return true;
		if (!k)
			return false;
	}
	return false;
}

uint32_t adaptive_region_dev_slot(struct adaptive_region *r, uint64_t key)
{
	for (uint32_t i = 0; i < ADAPTIVE_FG_DEVICES; i++) {
		uint64_t was = atomic_load_explicit(&r->fg_dev[i], memory_order_relaxed);

		/* Every taker tries the free slots in the same order: a key is in one at most. */
		if (was == key ||
		    (!was && (atomic_compare_exchange_strong(&r->fg_dev[i], &was, key) || was == key)))
			return i;
	}
	return ADAPTIVE_FG_CATCHALL;
}

/*
 * The quiet that makes @f idle: max(2 x its usual gap + 8 x the gaps' spread,
 * ADAPTIVE_IDLE_MIN_NS), at most 2 x ADAPTIVE_GAP_MAX_NS. The spread is for a reader of
 * random arrivals, whose next read may come at any time: the matrix's open-loop reader on
 * `sata` (gaps of 0.65 ms on average, a spread of 3/4 of that) had one gap in seven over
 * 2 x the mean, each let a 1 MiB piece go at full, and the 6 ms it took delayed the next
 * ten arrivals: 9.3x alone with the tier held. Exponential gaps pass 2 + 8 x 0.74 = 7.9
 * times their mean once in 2700; a reader of regular gaps has little spread and keeps
 * 2 x its gap. While a probe is under way (@in_probe), ADAPTIVE_GAP_MAX_NS at least, a reader
 * gone rather than between two reads. A probe measures the reads alone: the same reader got
 * a 1 MiB write let go at full in its gaps during the probe, 5.9 ms read behind it, and that
 * was its baseline: a target of 11.8 ms, which the tier at full met, while the arrivals
 * queued for seconds (2171x alone). A reader that does leave mid-probe costs the background
 * at most 50 ms more.
 */
static uint64_t fg_quiet(struct adaptive_fg *f, bool in_probe)
{
	uint64_t gap = atomic_load_explicit(&f->gap_ns, memory_order_relaxed);
	uint64_t spread = atomic_load_explicit(&f->gap_dev_ns, memory_order_relaxed);
	uint64_t quiet = 2 * (gap < ADAPTIVE_GAP_MAX_NS ? gap : ADAPTIVE_GAP_MAX_NS) +
			 8 * (spread < ADAPTIVE_GAP_MAX_NS ? spread : ADAPTIVE_GAP_MAX_NS);

	if (quiet > 2 * ADAPTIVE_GAP_MAX_NS)
		quiet = 2 * ADAPTIVE_GAP_MAX_NS;
	if (in_probe)
		return ADAPTIVE_GAP_MAX_NS > quiet ? ADAPTIVE_GAP_MAX_NS : quiet;
	return quiet < ADAPTIVE_IDLE_MIN_NS ? ADAPTIVE_IDLE_MIN_NS : quiet;
}

/* Is a baseline probe under way (read racily: a step may be changing it)? */
static bool probing(struct adaptive_region *r)
{
	return __atomic_load_n(&r->ctl.phase, __ATOMIC_RELAXED) != PHASE_RUN;
}

/* A count in flight to trust: not left by a reader killed mid-read (or garbage). */
static bool fg_busy(struct adaptive_fg *f, uint64_t last, uint64_t now_ns)
{
	uint32_t inflight = atomic_load_explicit(&f->inflight, memory_order_relaxed);

	return inflight && inflight <= (1u << 30) && now_ns - last < ADAPTIVE_FG_STALE_NS;
}

/* Was device slot @f ever read? */
static bool fg_read(struct adaptive_fg *f)
{
	return atomic_load_explicit(&f->last_ns, memory_order_relaxed) != 0;
}

/* Has the foreground read any device? */
static bool fg_read_anywhere(struct adaptive_region *r)
{
	for (uint32_t i = 0; i < ADAPTIVE_FG_SLOTS; i++)
		if (fg_read(&r->fg[i]))
			return true;
	return false;
}

/*
 * Nothing read anywhere yet counts as idle only while the controller's allowance waits for
 * a reader (released: as a relative target starts, adaptive_init): then the low tier goes at
 * full until a reader shows up and is held from its first read. Otherwise the allowance
 * stands (a cap a test pinned, an absolute target's).
 */
static bool awaits_reader(struct adaptive_region *r)
{
	return __atomic_load_n(&r->ctl.released, __ATOMIC_RELAXED) != 0;
}

/* Is slot @f idle at @now_ns (a slot never read is not)? */
static bool slot_idle(struct adaptive_fg *f, uint64_t now_ns, bool in_probe)
{
	uint64_t last = atomic_load_explicit(&f->last_ns, memory_order_relaxed);

	if (!last || now_ns <= last || fg_busy(f, last, now_ns))
		return false;
	return now_ns - last > fg_quiet(f, in_probe);
}

bool adaptive_region_fg_idle_on(struct adaptive_region *r, uint32_t dev, uint64_t now_ns)
{
	bool seen = false, in_probe = probing(r);

	if (dev < ADAPTIVE_FG_SLOTS)
		return fg_read(&r->fg[dev]) ? slot_idle(&r->fg[dev], now_ns, in_probe)
					    : fg_read_anywhere(r) || awaits_reader(r);
	for (uint32_t i = 0; i < ADAPTIVE_FG_SLOTS; i++) {
		if (!fg_read(&r->fg[i]))
			continue;
		if (!slot_idle(&r->fg[i], now_ns, in_probe))
			return false;
		seen = true;
	}
	return seen || awaits_reader(r);
}

/* adaptive_region_fg_opens_in for one slot; UINT64_MAX when it was never read. */
static uint64_t slot_opens_in(struct adaptive_fg *f, uint64_t now_ns, bool in_probe)
{
	uint64_t last = atomic_load_explicit(&f->last_ns, memory_order_relaxed), opens;

	if (!last)
		return UINT64_MAX;
	if (now_ns > last && fg_busy(f, last, now_ns))
		return ADAPTIVE_BUSY_POLL_NS;
	opens = last + fg_quiet(f, in_probe) + 1;
	return opens > now_ns ? opens - now_ns : 0;
}

uint64_t adaptive_region_fg_opens_in_on(struct adaptive_region *r, uint32_t dev, uint64_t now_ns)
{
	uint64_t latest = UINT64_MAX, opens;
	bool in_probe = probing(r);

	if (dev < ADAPTIVE_FG_SLOTS) {
		opens = slot_opens_in(&r->fg[dev], now_ns, in_probe);
		return opens != UINT64_MAX || (!fg_read_anywhere(r) && !awaits_reader(r)) ? opens
											      : 0;
	}
	for (uint32_t i = 0; i < ADAPTIVE_FG_SLOTS; i++) {
		opens = slot_opens_in(&r->fg[i], now_ns, in_probe);
		if (opens != UINT64_MAX && (latest == UINT64_MAX || opens > latest))
			latest = opens;
	}
	return latest == UINT64_MAX && awaits_reader(r) ? 0 : latest;
}

uint32_t adaptive_region_piece_on(struct adaptive_region *r, uint32_t dev, uint32_t chunk,
				  bool *idle)
{
	*idle = adaptive_region_fg_idle_on(r, dev, monotonic_ns());
	return *idle && chunk < ADAPTIVE_FAST_PIECE ? ADAPTIVE_FAST_PIECE : chunk;
}

/* ---- gap filling: the low tier's service time, and what fits a gap -------------------- */

/* avg' = avg - avg/8 + x/8, all kept x 2^ADAPTIVE_SVC_SCALE; the first sample sets it. */
static void svc_ewma(_Atomic uint64_t *avg, uint64_t x, bool first)
{
	uint64_t old = atomic_load_explicit(avg, memory_order_relaxed);

	x <<= ADAPTIVE_SVC_SCALE;
	atomic_store_explicit(avg, first ? x : old - (old >> ADAPTIVE_SVC_SHIFT) +
				  (x >> ADAPTIVE_SVC_SHIFT), memory_order_relaxed);
}

void adaptive_svc_note(struct adaptive_svc *s, uint64_t bytes, uint64_t ns)
{
	uint64_t b, t;
	bool first;

	if (!bytes)
		return;
	first = !atomic_fetch_add_explicit(&s->samples, 1, memory_order_relaxed);
	bytes = bytes < ADAPTIVE_SVC_MAX_BYTES ? bytes : ADAPTIVE_SVC_MAX_BYTES;
	b = (bytes + ADAPTIVE_SVC_UNIT - 1) / ADAPTIVE_SVC_UNIT;
	t = ns < ADAPTIVE_SVC_MAX_NS ? ns : ADAPTIVE_SVC_MAX_NS;
	t = t ? t : 1;
	svc_ewma(&s->b, b, first);
	svc_ewma(&s->t, t, first);
	svc_ewma(&s->bb, b * b, first);
	svc_ewma(&s->bt, b * t, first);
}

/*
 * The fit, t = fixed + slope x b, by least squares over the EWMAs; used only when the sizes
 * learnt spread enough to tell the two apart (a standard deviation of 1/8 of their mean).
 * Otherwise, and whenever the fit is out of range (two threads' samples mixed, a garbled
 * region), the bound t_mean x max(1, b / b_mean): never under fixed + slope x b for any
 * fixed and slope >= 0 that give the mean time at the mean size, so a size unlike those
 * learnt is never promised to be quicker than it is.
 */
uint64_t adaptive_svc_predict(struct adaptive_svc *s, uint64_t bytes)
{
	double b_mean = (double)atomic_load_explicit(&s->b, memory_order_relaxed);
	double t_mean = (double)atomic_load_explicit(&s->t, memory_order_relaxed);
	double bb = (double)atomic_load_explicit(&s->bb, memory_order_relaxed);
	double bt = (double)atomic_load_explicit(&s->bt, memory_order_relaxed);
	double b = (double)((bytes < ADAPTIVE_SVC_MAX_BYTES ? bytes : ADAPTIVE_SVC_MAX_BYTES) +
			    ADAPTIVE_SVC_UNIT - 1) / ADAPTIVE_SVC_UNIT, var, slope, fixed, t;

	if (!atomic_load_explicit(&s->samples, memory_order_relaxed) || !bytes || b_mean < 1 ||
	    t_mean < 1)
		return 0;
	b_mean /= 1 << ADAPTIVE_SVC_SCALE;
	t_mean /= 1 << ADAPTIVE_SVC_SCALE;
	bb /= 1 << ADAPTIVE_SVC_SCALE;
	bt /= 1 << ADAPTIVE_SVC_SCALE;
	var = bb - b_mean * b_mean;
	t = t_mean * (b > b_mean ? b / b_mean : 1);
	if (var * 64 >= b_mean * b_mean) {
		slope = (bt - b_mean * t_mean) / var;
		slope = slope > 0 ? slope : 0;
		fixed = t_mean - slope * b_mean;
		if (fixed >= 0 && fixed + slope * b > 0)
			t = fixed + slope * b;
	}
	return t < (double)ADAPTIVE_SVC_MAX_NS ? (uint64_t)t + 1 : ADAPTIVE_SVC_MAX_NS;
}

bool adaptive_region_gap_admit(struct adaptive_region *r, uint32_t dev, uint64_t bytes,
			       uint64_t now_ns)
{
	struct adaptive_fg *f;
	uint64_t last, gap, svc, until;

	if (dev >= ADAPTIVE_FG_SLOTS || !bytes || probing(r))
		return false;
	f = &r->fg[dev];
	last = atomic_load_explicit(&f->last_ns, memory_order_relaxed);
	if (!last || now_ns <= last || fg_busy(f, last, now_ns))
		return false;
	gap = atomic_load_explicit(&f->gap_ns, memory_order_relaxed);
	svc = adaptive_svc_predict(&f->svc, bytes);
	if (!adaptive_gap_fits(now_ns - last, gap,
			       atomic_load_explicit(&f->gap_dev_ns, memory_order_relaxed), svc))
		return false;
	/* The piece before, expected done? A time past the longest gap is garbage: ignored. */
	until = atomic_load_explicit(&f->gap_until_ns, memory_order_relaxed);
	if ((now_ns < until && until - now_ns <= ADAPTIVE_GAP_MAX_NS) ||
	    !atomic_compare_exchange_strong(&f->gap_until_ns, &until, now_ns + svc))
		return false;
	atomic_fetch_add_explicit(&r->gap_fills, 1, memory_order_relaxed);
	return true;
}

/*
 * The cap holds until ADAPTIVE_LEASE_NS after the window's end, not after the step: a window
 * can outlast the lease (16 x a target over 62.5 ms, extended up to 4 times), and low
 * threads step only once it is due, so a lease from the step would lapse mid-window and let
 * the low tier go at full while they keep calling. Clamped to ADAPTIVE_LEASE_SPAN_MAX_NS,
 * well inside what the gate takes for sane (LOW_GATE_LEASE_MAX_NS).
 */
static uint64_t lease_until(uint64_t now_ns, uint64_t deadline_ns)
{
	uint64_t window = deadline_ns > now_ns ? deadline_ns - now_ns : 0;

	if (window > ADAPTIVE_LEASE_SPAN_MAX_NS)
		window = ADAPTIVE_LEASE_SPAN_MAX_NS;
	return now_ns + window + ADAPTIVE_LEASE_NS;
}

static void publish(struct adaptive_region *r, uint64_t now_ns)
{
	uint64_t deadline = adaptive_deadline(&r->ctl);

	atomic_store(&r->chunk, r->ctl.chunk);
	low_gate_set_cap(&r->gate, r->ctl.cap, lease_until(now_ns, deadline));
	atomic_store(&r->deadline_ns, deadline);
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
	long seals;

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
	/* Raw: fcntl() is the shim's own wrapper (wrap_fd.c), a layer above this one */
	seals = sys_call(SYS_fcntl, fd, F_GET_SEALS);
	if (seals < 0 || (seals & LOW_GATE_SEALS) != LOW_GATE_SEALS) {
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
			_Atomic uint64_t *c = &r->hist[s].count[i];
			uint64_t v;

			/* Load first: most buckets are empty, and a load does not take the line. */
			if (!atomic_load_explicit(c, memory_order_relaxed))
				continue;
			v = atomic_exchange_explicit(c, 0, memory_order_relaxed);
			w->hist[i] += ADAPTIVE_HIST_READS(v);
			w->queued += ADAPTIVE_HIST_QUEUED(v);
		}
	w->low_bytes = bytes - r->seen_bytes;
	w->low_limited = (waits - r->seen_waits) + (splits - r->seen_splits);
	r->seen_bytes = bytes;
	r->seen_waits = waits;
	r->seen_splits = splits;
	if (atomic_load_explicit(&r->urgent_ios, memory_order_relaxed))
		w->urgent_ios = atomic_exchange_explicit(&r->urgent_ios, 0, memory_order_relaxed);
}

/*
 * The lock word: who steps (the pid, for a reader) and since when (the low 32 bits of the
 * CLOCK_MONOTONIC millisecond, never 0). Unique per step: one process steps at most once
 * a window, and two of its threads cannot both hold the word.
 */
static uint64_t stepper_id(pid_t pid, uint64_t now_ns)
{
	uint32_t ms = (uint32_t)(now_ns / 1000000);

	return (uint64_t)(uint32_t)pid << 32 | (ms ? ms : 1);
}

/* Past its lease? Signed: a taker's coarse clock may run a little behind the holder's. */
static bool stepper_stale(uint64_t holder, uint64_t now_ns)
{
	int32_t age_ms = (int32_t)((uint32_t)(now_ns / 1000000) - (uint32_t)holder);

	return age_ms >= (int32_t)(STEPPER_LEASE_NS / 1000000);
}

/*
 * The try-lock. A step past its lease is taken over, whatever became of its stepper (dead,
 * stopped, stalled): the controller would otherwise stop for the whole tree, the cap's
 * lease run out and the low tier go free. No syscall: a waiter at the gate may be the
 * caller, between two checks of the foreground.
 */
static bool take_stepper(struct adaptive_region *r, uint64_t now_ns, uint64_t id)
{
	uint64_t holder = 0;

	if (atomic_compare_exchange_strong(&r->stepper, &holder, id))
		return true;
	if (!stepper_stale(holder, now_ns) ||
	    !atomic_compare_exchange_strong(&r->stepper, &holder, id))
		return false;
	atomic_fetch_add(&r->takeovers, 1);
	return true;
}

/* Let the lock go if it is still ours: a stale stepper must not free its taker's. */
static void release_stepper(struct adaptive_region *r, uint64_t id)
{
	atomic_compare_exchange_strong(&r->stepper, &id, 0);
}

/*
 * Make the seqlock odd for this step, into *@odd. An odd count here is a step that never
 * ended (its stepper died or was taken over): the next odd value, so that its stepper, if
 * it resumes, cannot end ours. False when a stale stepper moved it at that very moment.
 */
static bool begin_write(struct adaptive_region *r, uint32_t *odd)
{
	uint32_t seq = atomic_load(&r->seq);

	*odd = seq & 1 ? seq + 2 : seq + 1;
	if (!atomic_compare_exchange_strong(&r->seq, &seq, *odd))
		return false;
	atomic_thread_fence(memory_order_release);
	return true;
}

/* Even again; false when the step is no longer ours (taken over while we were away). */
static bool end_write(struct adaptive_region *r, uint32_t odd)
{
	return atomic_compare_exchange_strong_explicit(&r->seq, &odd, odd + 1,
						       memory_order_release, memory_order_relaxed);
}

/* Under the lock, the seqlock odd: check, collect, step. False: the region is bad. */
static bool step_locked(struct adaptive_region *r, uint64_t now_ns)
{
	struct adaptive_window *w = &r->window;
	const char *why;

	if (!adaptive_sane(&r->ctl, now_ns, &why) || !low_gate_sane(&r->gate, now_ns) ||
	    !memchr(r->debt.path, 0, sizeof(r->debt.path)) ||
	    !memchr(r->debt.cur_path, 0, sizeof(r->debt.cur_path))) {
		refuse(r, why ? why : "its gate's fields or its log's path are out of range");
		return false;
	}
	adaptive_repair(&r->ctl); /* a torn step's level, cap and chunk made to agree */
	memset(w, 0, sizeof(*w));
	collect(r, w);
	w->debt = (uint8_t)debt_log_poll(&r->debt, now_ns);
	debt_log_fill(&r->debt, w);
	adaptive_step(&r->ctl, now_ns, w);
	if (adaptive_region_mid_step)
		adaptive_region_mid_step();
	return true;
}

int adaptive_region_maybe_step(struct adaptive_region *r, uint64_t now_ns, pid_t pid, pid_t tid)
{
	uint64_t id = stepper_id(pid, now_ns);
	uint32_t level, odd;
	bool ok;

	(void)tid;
	if (!adaptive_region_due(r, now_ns) || adaptive_region_bad(r) ||
	    !take_stepper(r, now_ns, id))
		return 0;
	if (!adaptive_region_due(r, now_ns) || !begin_write(r, &odd)) {
		release_stepper(r, id); /* someone stepped just before us */
		return 0;
	}
	if (atomic_load(&r->stepper) != id) { /* stopped since the lock, and taken over */
		end_write(r, odd);
		return 0;
	}
	level = r->ctl.level;
	ok = step_locked(r, now_ns);
	/* Taken over while stopped or stalled: the taker publishes, not us. */
	if (!end_write(r, odd))
		return 0;
	if (ok && r->ctl.level != level)
		atomic_fetch_add(&r->level_changes, 1);
	if (ok)
		publish(r, now_ns);
	release_stepper(r, id);
	if (ok && adaptive_region_stepped)
		adaptive_region_stepped(now_ns);
	return ok;
}

struct gate_waiter {
	struct adaptive_region *r;
	pid_t pid, tid;
	uint32_t dev;   /* the piece's device slot, or ADAPTIVE_DEV_ANY */
	uint64_t bytes; /* its size; 0: not known (no gap filling) */
};

static uint64_t coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * How often a waiter whose piece could fit a gap of the reader's looks for one: a quarter
 * of the gap (so it finds most of each gap left), between 100 us and 1 ms. 0: it could not
 * (no device, no size, nothing learnt, or a piece too slow for even a whole gap).
 */
static uint64_t gap_poll_ns(const struct gate_waiter *w)
{
	struct adaptive_fg *f;
	uint64_t gap, poll;

	if (w->dev >= ADAPTIVE_FG_SLOTS || !w->bytes)
		return 0;
	f = &w->r->fg[w->dev];
	gap = atomic_load_explicit(&f->gap_ns, memory_order_relaxed);
	if (!adaptive_gap_fits(0, gap, atomic_load_explicit(&f->gap_dev_ns, memory_order_relaxed),
			       adaptive_svc_predict(&f->svc, w->bytes)))
		return 0;
	poll = gap / 4;
	return poll < 100000 ? 100000 : poll < ADAPTIVE_BUSY_POLL_NS ? poll : ADAPTIVE_BUSY_POLL_NS;
}

/*
 * A held thread's tick, before each wait: step if the window ended (the coarse clock, as
 * after a low I/O), go at full if the foreground has gone idle on the piece's device, go in
 * its gap if the piece fits there, and otherwise sleep no longer than until the fast path
 * would open (adaptive_region_fg_opens_in), or than the next look for a gap: nothing on the
 * reader's path wakes a waiter, so the waiter keeps the time.
 */
static bool step_while_held(void *arg, uint64_t *hint)
{
	const struct gate_waiter *w = arg;
	uint64_t now, opens, poll;

	adaptive_region_maybe_step(w->r, coarse_ns(), w->pid, w->tid);
	now = monotonic_ns();
	opens = adaptive_region_fg_opens_in_on(w->r, w->dev, now);
	if (opens == 0 && adaptive_region_fg_idle_on(w->r, w->dev, now)) {
		atomic_fetch_add_explicit(&w->r->fast_full, 1, memory_order_relaxed);
		return true;
	}
	if (adaptive_region_gap_admit(w->r, w->dev, w->bytes, now))
		return true;
	*hint = opens == UINT64_MAX ? 0 : opens ? opens : ADAPTIVE_BUSY_POLL_NS;
	poll = gap_poll_ns(w);
	if (poll && (!*hint || poll < *hint))
		*hint = poll;
	return false;
}

/*
 * Gap filling happens only in the ticks, where the allowance has no room for the piece: a
 * piece the allowance admits is no admission beyond it.
 */
/*
 * A low piece of @bytes for @dev goes now, in a probe: a read that starts before it is
 * expected done, twice its learnt service time (it may queue; 2 ms when none is learnt, as
 * for a writeback push), is left out of the probe (adaptive_region_fg_alone). A piece of
 * no known device marks every slot. Never later than the time already there.
 */
#define PROBE_PIECE_UNKNOWN_NS 2000000ull

static void mark_probe_piece(struct adaptive_region *r, uint32_t dev, uint64_t bytes)
{
	uint64_t now;

	if (!bytes || !probing(r))
		return;
	now = monotonic_ns();
	for (uint32_t d = 0; d < ADAPTIVE_FG_SLOTS; d++) {
		struct adaptive_fg *f = &r->fg[d];
		uint64_t svc, until, was;

		if (dev != ADAPTIVE_DEV_ANY && f != adaptive_region_fg(r, dev))
			continue;
		svc = adaptive_svc_predict(&f->svc, bytes);
		svc = svc ? 2 * svc : PROBE_PIECE_UNKNOWN_NS;
		until = now + (svc < ADAPTIVE_PROBE_MARK_MAX_NS ? svc : ADAPTIVE_PROBE_MARK_MAX_NS);
		was = atomic_load_explicit(&f->probe_low_until_ns, memory_order_relaxed);
		while (was < until && !atomic_compare_exchange_weak(&f->probe_low_until_ns, &was,
								     until))
			;
	}
}

uint32_t adaptive_region_gate_enter_on(struct adaptive_region *r, pid_t pid, pid_t tid,
				       uint64_t max_wait_ns, uint32_t dev, uint64_t bytes)
{
	struct gate_waiter w = { .r = r, .pid = pid, .tid = tid, .dev = dev, .bytes = bytes };
	uint64_t now;
	uint32_t ticket;

	if (adaptive_region_bad(r))
		return 0;
	/*
	 * The step first: after a quiet spell the cap's lease has lapsed, and admitting on it
	 * would let a burst through at full until the next step renewed it.
	 */
	adaptive_region_maybe_step(r, coarse_ns(), pid, tid);
	now = monotonic_ns();
	if (!low_gate_sane(&r->gate, now)) {
		refuse(r, "its gate's cap, count in flight or lease is out of range");
		return 0;
	}
	/* The fast path: the foreground idle, the slow loop's allowance does not apply. */
	if (atomic_load_explicit(&r->gate.cap, memory_order_relaxed) != LOW_GATE_UNLIMITED &&
	    adaptive_region_fg_idle_on(r, dev, now)) {
		atomic_fetch_add_explicit(&r->fast_full, 1, memory_order_relaxed);
		mark_probe_piece(r, dev, bytes);
		return 0;
	}
	ticket = low_gate_enter_ticking(&r->gate, pid, tid, max_wait_ns, step_while_held, &w);
	/* Held in a probe, it still goes once its wait is up: paced, never parked. */
	mark_probe_piece(r, dev, bytes);
	return ticket;
}
