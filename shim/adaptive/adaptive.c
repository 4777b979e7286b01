// SPDX-License-Identifier: MIT
/*
 * adaptive.c: the slow loop of the adaptive low tier, modelled on the kernel's
 * blk-iolatency: judge each window by the fraction of the high tier's reads over the target,
 * cut the low tier's bytes in flight in half on a miss, climb back one step at a time after
 * several good windows, and climb back slower still to a level that has missed before. Two
 * things iolatency does not need: a relative target re-measures its baseline by holding the
 * low tier briefly, and a floor rate, the database's L0 and a debt signal can overrule the
 * target, because a database whose compaction starves stalls its own writes. The fast path
 * (per request, in adaptive_region.h) applies this loop's allowance only while the
 * foreground is active. Its design follows; how to use it is docs/adaptive.md.
 */

/*
 * The adaptive low tier: its design, as in the kernel's block/blk-iolatency.c. How to use it
 * (the target, the settings, the state view, what it costs, the goals measured) is in
 * docs/adaptive.md; this is how it works and why.
 *
 * The pieces. The shim times the high tier's reads (preload/adaptive_hook.c) into a histogram in a
 * region shared by the whole process tree (adaptive_region.c). Once a window's deadline has
 * passed, whichever low thread finds it so (before its admission at the gate, after its
 * I/O, before each of its waits; a high thread never steps, its path is a few relaxed
 * atomics) steps this controller, which is pure arithmetic: no
 * clock, no syscall, no lock; the caller hands it one window at a time (the high tier's read
 * latencies in bpf/hist.h's buckets, the bytes the low tier moved, how many low I/Os the
 * limits held back, a debt flag, the database's L0 and its trigger, urgent threads' I/O
 * calls) and reads back two numbers: a cap on the low tier's I/Os in
 * flight (0 = held) for the gate (low_gate.c), and a chunk size for the splitter
 * (split_io.c) and the writeback push. Every low thread's I/O passes the gate; high threads
 * never touch it.
 *
 * Two speeds. This controller is the slow loop: it reacts by windows, and tunes the
 * allowance (cap and chunk) from what the foreground saw. The fast path reacts per request
 * and per device (the whole disk: ADAPTIVE_FG_DEVICES slots, then a catch-all the rest
 * share, clamped by more, never by less): a high read counts itself in flight on its device,
 * stamps its start and end, and keeps an EWMA (1/8) of its gap there (end to next start with
 * none in flight, each sample clipped to max(4 x the average, 1 ms) and 50 ms, so an idle
 * spell moves it by a fraction). A low piece goes at full, the allowance ignored
 * (adaptive_region_gate_enter_on, piece_allowance: 1 MiB pieces), once no read of its device
 * is in flight and the last ended over max(2 x the gap + 8 x its spread, 1 ms) ago (twice: a
 * reader's ordinary pause must not open the gate under its next read; the spread: random
 * arrivals may come at any time; 1 ms: a reader preempted for less is not idle; 50 ms in a
 * probe, whose baseline is the reads alone), or while only other devices are read; else the
 * allowance applies, from the first read after idle (tests/adaptive/fast-path.c: within
 * 1 ms; 50-65 ms before). Gaps are filled: a piece the allowance has no room for goes if
 * twice its expected service time (the low tier's own O_DIRECT pieces there: a fixed cost
 * plus a cost per byte) ends before the
 * reader's usual gap less max(1/4 of it, twice its spread) (adaptive_gap_fits says why), one
 * at a time, never in a probe. Released for want of reads (below), this loop shows full
 * while its allowance stays the level before.
 *
 * The ladder. The decision is one level, 0..ADAPTIVE_LEVEL_FULL (12); each step down halves
 * the low tier's bytes in flight, first by depth, then by request size, then it is held:
 *   12 unlimited; 11..8 cap 16, 8, 4, 2 at 1 MiB; 7 cap 1 at 1 MiB;
 *   6..1 cap 1 at 512 KiB .. 16 KiB; 0 held.
 * Depth goes first because one large request is cheaper per byte than two small ones; size
 * next because with one background thread the size of each request alone decides the
 * reader's tail (issue 12: 1 MiB 13.5x alone, 64 KiB 1.8x). Below 16 KiB a request costs
 * mostly its fixed setup and the low tier's throughput collapses for little latency gained,
 * so holding is the next step.
 *
 * Windows and the miss test. A window lasts max(100 ms, 16 x target), blk-iolatency's: a few
 * hundred reads at millisecond latencies, a reaction within a second. It is judged only with
 * max(32, 2 / (1 - percentile)) reads (200 for p99, 2000 for p99.9), so that the allowance
 * over the target is at least two reads and one stray slow read is not a miss; a window with
 * fewer is extended half a window at a time, up to 4 windows. One that still has fewer than
 * 8 reads (idle_reads) counts as a window without reads: those are stray reads, not a reader
 * (RocksDB's flush thread reads back each table it writes, O_DIRECT, slow; judged, one slow
 * read of one is a miss, and such reads kept the tier held for whole 10 s reader-off periods
 * of bench/rocksdb/burst). The price: a reader of under about 20 reads/s is not protected,
 * unless its few reads took half the window: that is a reader starved (reader_reads).
 * A miss is more than (1 - percentile) of the window's reads over the target, beyond the
 * share that is over it even with the low tier held (alone_permille, below). The bucket
 * that holds the target counts in proportion to its part above the target, so the bucket
 * width (6.25%) does not move the target.
 *
 * Looks: a window is not only judged at its end. Every look_ns (10 ms) the low thread that
 * finds a look due steps, and a window whose reads over the target already exceed what its
 * expected reads allow (look_early, expected_reads: a certain miss, had every read still to
 * come been fast) is judged then, as a window of its expected reads. A tier at full under a
 * QD1 reader at 6 ms a read shows its miss within about 50 ms (idle_reads reads); judged only
 * at the end, the window ran on to its 200 reads, up to 400 ms, every read over the target,
 * and the matrix's steady cell spent its first 2 s above it (docs/bench). A relative target's
 * first probe also starts at the first look with a reader, not after a window at full. A
 * good window is still judged at its end: looks only bring misses forward, the verdict is
 * the same the end would give. The cost: a step every 10 ms on a low thread's path.
 *
 * Cut, climb, hysteresis (cut, cut_at_least, climb_after_good, judge_idle).
 *  - A missed window: down log2 of how far it missed, at least one level (a level halves
 *    the bytes in flight, as blk-iolatency halves its depth; levels_to_cut): 28x alone
 *    under 2x, most reads over, cuts four levels in one window; a few spikes, one.
 *  - A search on deep misses (twice over or more by both measures): a second one in a row
 *    halves the level at least, and one above the highest level that held since (good_level)
 *    goes at least half way back to it. A level need not halve the delay (a device that
 *    serves large requests in parts: on the reference disk levels 8 to 4 all gave ~1 ms), so
 *    log2 alone walked down one level a window. A search never holds the tier, and a lone
 *    shallow miss at level 1 stays there (outside spikes; held, the climb back is slowest).
 *  - Held is alone (held_outside): under a relative target, a held window that misses anyway
 *    with the low tier moving nothing says the slow reads are the outside's, and the level
 *    that missed comes back at once; the first held window after a cut is the drain's.
 *  - Slow start (finish_probe): after a relative target's first baseline the tier starts at
 *    level 1 and climbs a level a good window until its first miss, instead of starting at
 *    full and searching down through missed windows.
 *  - A climb: after climb_windows (4) windows without a miss, one level up, if the streak as
 *    a whole kept to half the allowance. Summed over the streak, one slow read among a
 *    thousand does not stop a climb, while a level that only just meets the target is held,
 *    not left: the hysteresis band, miss above 1x the allowance, climb below 0.5x.
 *  - Climbing back to the level that missed last takes hysteresis_mult (4) times longer, and
 *    each new miss at that same level doubles the wait, up to backoff_max (32: 128 windows,
 *    about 13 s): that boundary is where oscillation would happen, and a level that keeps
 *    missing is probed rarely, each probe costing one missed window.
 *  - idle_windows (2) windows without reads: released, the level shows full (the fast path
 *    already gives the background the whole device while the reader is off) and the
 *    allowance stays the level held before (resume_level), which the fast path applies from
 *    the reader's first read back; the first window with reads returns to that level before
 *    it is judged, so a miss there cuts one below it (unrelease).
 *
 * Baseline, for a relative target (start_probe, finish_probe). The bound is a multiple of the
 * same percentile measured with the low tier held: a probe holds it for 50 ms of drain (reads
 * still queued behind its last I/Os are not "alone"; longer while the reader is still starved,
 * draining) and 250 ms of measure, extended half a measure at a time until it has
 * max(200, 2 / (1 - percentile)) reads (probe_min_reads), up to 1 s, or up to 2 s while its
 * rate so far would reach them by then (probe_fills: a reader at 200-odd reads a second is
 * not left a coin's toss from a baseline): from fewer, a p99 is the maximum (it took 32,
 * and one slow read was the baseline). A probe during which an urgent thread
 * (IOTIER_URGENT: RocksDB's flush) did any I/O call is void, in its drain or its measure:
 * the flush's writes were on the device while the low tier was held, so the reads were not
 * alone (the region counts urgent threads' calls, adaptive_region_note_urgent); it is
 * retried 5 s later. Probes come every 30 s (the
 * unloaded latency drifts slowly; 300 ms in 30 s is 1% of the time held); after a probe with
 * too few reads 5 s later, doubled for each such probe in a row up to 30 s (short_retry_ns: a
 * reader too slow for a baseline would have the tier held 1 s in every 6); the first 3 probes
 * 2 s apart so that a median exists at once. The baseline is the median of the last 5 probes:
 * one noisy probe, high or lucky, does not move it, a lasting change does once it is most of
 * them; the minimum would follow every lucky probe down and make the target stricter than
 * asked. Slow reads that are not the low tier's fault (an outside load) are over the target
 * even when it is held, and holding more cannot remove them: each probe counts its reads over
 * the target, and pooled over the recent probes (leaving out any whose baseline was over
 * twice the median) they give alone_permille, which a window must exceed by the allowance to
 * miss. Until a baseline exists a relative target judges nothing: it starts released at held
 * (adaptive_init: at full while nothing reads, held from the reader's first read), and a
 * probe that gives no baseline returns the tier to full, as for a reader too slow for one; a
 * probe starts at the first window with reads, never while the reader is idle, the debt is up
 * or the L0 floor is full, and either ends a probe under way.
 *
 * An open loop's queue (queue_over). The shim times calls, but a reader whose requests arrive
 * on their own clock (a server's clients, the matrix's Poisson reader) feels each request from
 * its arrival: a request that comes while its thread is still reading waits in the program,
 * where no timing sees it. That wait grows as 1 / (1 - utilisation): at 90% busy alone, reads
 * 5% slower double it; the matrix's Poisson cells met 2x in 21 of 48 (at 90% on `sata`: 237x
 * and 649x alone, the queue never emptied). What the shim can see is the queue's trace: a read
 * that begins as its thread's last one ends (within ADAPTIVE_QUEUED_GAP_NS, 20 us) was waiting
 * already. Of Poisson arrivals that share is the thread's utilisation (arrivals see time
 * averages), so its value alone, z0 (measured in the probes with the reads, pooled as
 * alone_permille is), and the window's, z, give the queue's growth. For a time from arrival to
 * end of M/M/1's form, S / (1 - z) with S the call's time and z = z0 S / S0, a request within
 * k x alone needs z <= k z0 / (1 + (k - 1) z0): 60% alone under 2x may become 75%, 90% only
 * 94.7%. A window over that (by more than chance) is a miss, cut as deep as the queue's wait is
 * over. A closed-loop reader shows z0 near 1 (it reads back to back) or near 0 (its gaps are
 * think time), and z stays there whatever the device does: it is left out (queue_over). Where a
 * program takes requests from a socket, parses and only then reads, the next read starts later
 * than 20 us after the last and the queue goes unseen: it has the call's bound only.
 *
 * Floor and debt: the database must not stall (judge_reads, apply_l0_floor, judge_debt). A
 * low tier held for the reader's sake can cause a worse outage, the database throttling its
 * own writes.
 *  - Floor (--low-min-rate): when the low tier was held back in a window and moved less
 *    than the floor, climb one level whatever the latency; refuse a cut that would halve a
 *    rate already under twice the floor; never hold (level 0) while a floor is set. The
 *    floor wins over the target; probes still hold.
 *  - L0 floor (adaptive_l0_floor, apply_l0_floor): debt_log.c reads L0 from the lsm_state of
 *    RocksDB's flush and compaction events and the triggers from the options it prints at
 *    open; T is the smaller of level0_slowdown_writes_trigger and _stop_. The floor is a
 *    level: none up to L0 = T/2, then rising by equal steps of level to full at T - 1, one
 *    file short of the slowdown. The curve: a level doubles the bytes in flight, so equal
 *    steps of level are a geometric ramp of bandwidth; the first files past half cost the
 *    reader little (16-64 KiB pieces one at a time), the last before the trigger give the
 *    compaction the whole device, what it has untagged (T = 20: 1.3 levels a file). From
 *    half, because RocksDB compacts L0 from 4 files (level0_file_num_compaction_trigger):
 *    below T/2 the compaction keeps up on the target's share or L0 is a passing burst, and
 *    half the way is left to react in, one file per flush. Each step applies it at once
 *    (not when a slow reader's window is judged): the level, and a release's allowance,
 *    rise to it. A cut at or under it is refused and is no miss_level to back off from (it
 *    says nothing of the reader's need), and a cut never goes under it, so the target and
 *    the floor do not take turns: the level sits on the floor while the target wants less,
 *    and moves with L0, by a file per flush or compaction, seconds apart. When L0 falls, the
 *    first miss returns to the level the target held before the floor lifted it, not one
 *    level a window down. No probe starts, and one under way ends, while the floor is full.
 *    Without both L0 and T (no log, a program that is not RocksDB, a log opened after its
 *    options were written) there is no L0 floor: the rate floor and the alarm only.
 *  - Debt, the alarm and the last resort (debt_log.c reads RocksDB's LOG for "Stalling
 *    writes" / "Stopping writes" lines, held up 2 s after the last one, since RocksDB writes
 *    none while it stays stopped and none when it resumes): a window with debt is not judged.
 *    A slowdown climbs one level a window (held to full in 12 windows, about 1.2 s, the
 *    reader keeping most of its protection while the level the database needs is found); a
 *    stop, where every write waits, goes straight to full. The first miss after the debt
 *    returns to one level above where the debt began: that level was too little for the
 *    database, and stepping down one level a window from full would cost the reader a missed
 *    window per level.
 *
 * The gate (low_gate.c). Admission is a compare-and-swap on the count in flight under the
 * cap; each admitted I/O records pid << 32 | tid in one of LOW_GATE_HOLDERS (64) slots, so
 * the largest finite cap is 64. A waiter sleeps on a shared futex word (bumped on every
 * release and cap change); every wait slice of 50 ms, or at its bound if sooner, it takes
 * back the slots of holders that cannot be doing their I/O: gone (tgkill(pid, tid, 0) =
 * ESRCH), a zombie or stopped (SIGSTOP, a tracer; the state in /proc/PID/task/TID/stat). A
 * stopped thread's I/O is not on the device (it stops at the syscall's return), so its slot
 * is free in fact; the ticket carries a hash of its holder, so its release after SIGCONT
 * finds the slot no longer its own and leaves the count alone. Chosen over a lease per
 * slot, which would take back the slot of a slow I/O still on the device. A process killed
 * or stopped inside an I/O cannot wedge the tree. The cap carries a lease that each step
 * renews to 1 s past the new window's end (ADAPTIVE_LEASE_NS; from the window's end, not the
 * step, since a window of 16 x a slow target outlasts 1 s and low threads step only once it
 * is due); once it lapses (no low thread calls, or the stepping
 * processes stopped or died) the cap counts as none, so the tier is never held forever,
 * and the next low call steps before it is admitted. A waiter steps the controller when
 * the window has ended: with every low thread held nobody else would, and before this a
 * release took 2-3 s of every reader-off period; before each wait it also asks the fast
 * path, and sleeps no longer than until the reader would be idle on its device
 * (adaptive_region_fg_opens_in_on: its last end + the quiet above, or 1 ms polls while a
 * read is in flight; a quarter of the gap, 0.1 to 1 ms, when its piece could fill one), so a
 * waiter goes at full about 1 ms after the reader fell idle, with nothing on the reader's
 * path to wake it. Every wait is bounded by IOTIER_GATE_WAIT
 * (20 ms): a held low thread may hold a lock a high thread waits for (PostgreSQL's
 * WALWrite), so "held" means paced, one call per bound per thread, never parked. A thread
 * already holding a slot passes (a signal handler's I/O inside an I/O). At full the gate is
 * one atomic load and a branch.
 *
 * The region (adaptive_region.c). The gate, this controller and the current window live in
 * one sealed MAP_SHARED memfd, iotier-adaptive, so one target governs a process tree:
 * forked children share the mapping, and exec'd programs adopt it again (preload/adaptive_tree.c,
 * wrap/wrap_exec.c, IOTIER_ADAPTIVE_FD). The window's histogram is kept per CPU slot
 * (ADAPTIVE_HIST_SLOTS, 16, on cache lines of their own, the slot sched_getcpu() modulo 16):
 * one shared histogram cost 20-90 ns a noted read with two threads noting at once
 * (bench/micro/note-cost.c); the stepper sums the slots. Any process (or root) can write the
 * region or stop while writing it, so nothing in it may wedge a process: the memfd is sealed
 * against shrinking and growing; the step lock is a lease (the stepper's pid and the
 * millisecond its step began; STEPPER_LEASE_NS, 200 ms, well under the cap's lease, and
 * taken over without a syscall, by a low thread at its next call); the seqlock moves by
 * compare-and-swap only, so a stale stepper that resumes fails its end CAS and publishes
 * nothing; every field is checked before use (low_gate_sane, adaptive_sane, the chunk a
 * power of two from 4 KiB to 1 GiB), and a region that fails is "no target" in this process
 * from then on. A torn step leaves each field old or new, both in range; only the level and
 * its cap and chunk can disagree, and every step recomputes those (adaptive_repair). Readers
 * in other processes (iotier threads, adaptive_view.c) copy under the seqlock.
 *
 * The splitter (split_io.c, whose head lists the rules). A large low pread, or an O_DIRECT
 * low pwrite, is cut into pieces of the chunk, each passing the gate, so a high read waits
 * behind one piece and not a whole compaction write; the chunk is asked again before every
 * piece, so a tier released mid-call sends the rest at once. A piece is never larger than
 * one request of the device (its queue's max_sectors_kb, read once per device by a low
 * thread, preload/adaptive_low.c): the kernel cuts a larger bio into several requests, and
 * the cap counts I/Os on the device, one slot one request. A split call must be
 * indistinguishable from the unsplit one (return value, errno, offset, content, POSIX's
 * atomicity); where that cannot be guaranteed the call is paced whole, one slot for the whole
 * transfer: read() and write() (a shared file position), O_APPEND or O_SYNC pwrites,
 * misaligned O_DIRECT, counts or offsets the kernel would refuse, a source not mapped end
 * to end, a write crossing RLIMIT_FSIZE or a device's end. Vectored calls pass whole. A
 * buffered write is a copy into memory: under a finite cap its device I/O is the shim's
 * writeback push, cut into chunk pieces that each hold a slot while they are submitted
 * (sync_file_range's WRITE) and are waited for without one, so the next low I/O is admitted
 * as soon as the device has the piece: "in flight" is "submitted", and a pushing thread,
 * waiting, adds at most one piece beyond the cap (preload/low_paths.c). A buffered pwrite
 * larger than the chunk is cut, each piece pushed as it is copied (split_io.c, rule 2: a
 * 1 MiB write makes a 1 MiB folio, written back whole). Held, the write
 * itself waits before it copies, or the flusher would write back a held tier's pages at the
 * default class. A low buffered read under a target reads what it asks: its fd is advised
 * POSIX_FADV_RANDOM at every level, an fd the program advised too, or the kernel's
 * readahead would leave whole windows in flight outside every slot, and at full a queue
 * that a returning reader waits behind (preload/adaptive_low.h). An io_uring or libaio
 * submission of N I/Os waits for min(N, cap) free slots and holds them while it submits
 * (low_gate_enter_n), as a push's piece does: its completions are reaped where the shim
 * cannot see them.
 *
 * What blk-iolatency does not need and this does: the baseline probes (a relative target),
 * the floor and the debt guard (a starved compaction stalls the database's own writes), and
 * a gate across processes in user space, with leases instead of a kernel that cannot die.
 */
#include "adaptive.h"
#include "adaptive_hist.h"

#include <string.h>

#define NONE UINT32_MAX
#define NS_PER_SEC 1000000000ull

void adaptive_params_default(struct adaptive_params *p)
{
	memset(p, 0, sizeof(*p));
	p->window_min_ns = 100000000;   /* 100 ms, blk-iolatency's minimum window */
	p->window_mult = 16;            /* blk-iolatency: 16 x target */
	p->window_max_mult = 4;
	p->min_samples = 32;
	p->climb_windows = 4;
	p->hysteresis_mult = 4;
	p->backoff_max = 32;
	p->idle_windows = 2;
	p->idle_reads = 8;              /* under 2 reads a window over 4 windows */
	p->probe_every_ns = 30 * NS_PER_SEC;
	p->probe_drain_ns = 50000000;    /* 50 ms */
	p->probe_measure_ns = 250000000; /* 250 ms: 300 ms held in all */
	p->probe_retry_ns = 5 * NS_PER_SEC;
	p->probe_warmup_ns = 2 * NS_PER_SEC;
	p->probe_min_reads = 200;        /* a p99 from fewer is a maximum */
	p->look_ns = 10000000;           /* 10 ms: a tenth of the shortest window */
}

void adaptive_level_limits(uint32_t level, uint32_t *cap, uint32_t *chunk)
{
	if (level >= ADAPTIVE_LEVEL_FULL) {
		*cap = ADAPTIVE_UNLIMITED;
		*chunk = ADAPTIVE_UNLIMITED;
	} else if (level == 0) {
		*cap = 0;
		*chunk = 1u << ADAPTIVE_CHUNK_MIN_SHIFT;
	} else if (level <= ADAPTIVE_LEVEL_CHUNKS) {
		*cap = 1;
		*chunk = 1u << (ADAPTIVE_CHUNK_MIN_SHIFT + level - 1);
	} else {
		*cap = 1u << (level - ADAPTIVE_LEVEL_CHUNKS);
		*chunk = 1u << ADAPTIVE_CHUNK_MAX_SHIFT;
	}
}

/*
 * Released (no reads for a while), the level is full but the allowance stays the level
 * before: the fast path gives the low tier everything while the foreground is idle and
 * this allowance from its first read back, without waiting for a window.
 */
static void set_level(struct adaptive *c, uint32_t level)
{
	uint32_t busy;

	c->level = level > ADAPTIVE_LEVEL_FULL ? ADAPTIVE_LEVEL_FULL : level;
	busy = c->released && c->resume_level <= ADAPTIVE_LEVEL_FULL ? c->resume_level : c->level;
	adaptive_level_limits(busy, &c->cap, &c->chunk);
}

/* Reads or debt again after a release: back at the allowance the fast path was applying. */
static void unrelease(struct adaptive *c)
{
	uint32_t level = c->resume_level;

	if (!c->released)
		return;
	c->released = 0;
	c->resume_level = NONE;
	set_level(c, level <= ADAPTIVE_LEVEL_FULL ? level : c->level);
}

uint32_t adaptive_l0_floor(uint32_t l0_files, uint32_t trigger)
{
	uint64_t from = trigger / 2, full = trigger ? trigger - 1 : 0, step;

	if (!trigger || l0_files <= from)
		return 0;
	if (l0_files >= full)
		return ADAPTIVE_LEVEL_FULL;
	/* Rounded up: the first file past half already lifts the floor by a level. */
	step = (ADAPTIVE_LEVEL_FULL * (l0_files - from) + (full - from) - 1) / (full - from);
	return step < ADAPTIVE_LEVEL_FULL ? (uint32_t)step : ADAPTIVE_LEVEL_FULL - 1;
}

/* @level, or the L0 floor if that is higher. */
static uint32_t floored(const struct adaptive *c, uint32_t level)
{
	return level < c->l0_floor ? c->l0_floor : level;
}

/*
 * The L0 floor rose over the level: lift it there now. A released tier keeps showing full
 * and lifts the allowance it resumes at instead. The level the target had reached is kept
 * as where a miss returns to, once the floor has come down again.
 */
static void apply_l0_floor(struct adaptive *c)
{
	if (c->released) {
		if (c->resume_level <= ADAPTIVE_LEVEL_FULL && c->resume_level < c->l0_floor) {
			c->resume_level = c->l0_floor;
			set_level(c, c->level);
		}
		return;
	}
	if (c->level >= c->l0_floor)
		return;
	c->l0_lifts++;
	if (c->resume_level == NONE)
		c->resume_level = c->level;
	set_level(c, c->l0_floor);
}

static uint64_t window_len(const struct adaptive *c)
{
	uint64_t len = c->target_ns * c->p.window_mult;

	return len > c->p.window_min_ns ? len : c->p.window_min_ns;
}

/*
 * Enough reads that the allowance over the target is at least two reads: for p99, 200.
 * With fewer, a single stray slow read would be a miss.
 */
static uint64_t min_samples(const struct adaptive *c)
{
	uint64_t n = 2000 / (1000 - c->target.permille);

	return n > c->p.min_samples ? n : c->p.min_samples;
}

/* A baseline's reads: 2 / (1 - percentile) as for a window, and never under 200. */
static uint64_t probe_min_reads(const struct adaptive *c)
{
	uint64_t n = min_samples(c);

	return n > c->p.probe_min_reads ? n : c->p.probe_min_reads;
}

/*
 * The next step: a running window is looked at every look_ns before its end (a certain
 * miss is cut at once, adaptive_step); a probe's phases have nothing to look for early.
 */
static void next_look(struct adaptive *c, uint64_t now_ns)
{
	uint64_t look = now_ns + c->p.look_ns;

	c->deadline_ns = c->phase == PHASE_RUN && look < c->window_end_ns ? look : c->window_end_ns;
}

static void start_window(struct adaptive *c, uint64_t now_ns, uint64_t len)
{
	memset(&c->pending, 0, sizeof(c->pending));
	c->window_start_ns = now_ns;
	c->window_end_ns = now_ns + len;
	next_look(c, now_ns);
}

/* A window too short of reads to judge runs on for @len more. */
static void extend_window(struct adaptive *c, uint64_t now_ns, uint64_t len)
{
	c->window_end_ns = now_ns + len;
	next_look(c, now_ns);
}

void adaptive_init(struct adaptive *c, const struct adaptive_params *p,
		   const struct adaptive_target *t, uint64_t now_ns)
{
	memset(c, 0, sizeof(*c));
	c->p = *p;
	c->target = *t;
	c->target_ns = t->relative ? 0 : t->latency_ns;
	c->miss_level = c->resume_level = c->debt_level = c->good_level = NONE;
	c->next_probe_ns = now_ns; /* the first baseline as soon as the reader shows up */
	c->last_step_ns = now_ns;
	if (t->relative) {
		/*
		 * No baseline yet, so no bound: released at held. The level shows full and the
		 * fast path gives the low tier all of it while nothing reads (and before the
		 * first read ever); from the reader's first read the tier is held, until its
		 * first probe (at the first look that sees it) and the slow start after it. At
		 * full until that look, the matrix's open-loop reader got a third of its run's
		 * reads over 2x alone in the first 100 ms (the queue of arrivals behind 1 MiB
		 * writes), and a reader beside a sequential one waited 0.5 s for one read.
		 */
		c->released = 1;
		c->resume_level = 0;
	}
	set_level(c, ADAPTIVE_LEVEL_FULL);
	start_window(c, now_ns, window_len(c));
}

static void accumulate(struct adaptive_window *acc, const struct adaptive_window *w)
{
	for (uint32_t i = 0; i < HIST_NR_BUCKETS; i++)
		acc->hist[i] += w->hist[i];
	acc->low_bytes += w->low_bytes;
	acc->low_limited += w->low_limited;
	acc->urgent_ios += w->urgent_ios;
	acc->queued += w->queued;
	if (w->debt > acc->debt)
		acc->debt = w->debt; /* the worst of the window */
}

/*
 * The median of the recent probes' values (0 = no value): one noisy probe, high (an
 * outside load during it) or low (a lucky one), does not move it.
 */
static uint64_t median_of(const uint64_t *values)
{
	uint64_t v[ADAPTIVE_BASELINES];
	unsigned n = 0;

	for (unsigned i = 0; i < ADAPTIVE_BASELINES; i++) {
		uint64_t x = values[i];
		unsigned j = n;

		if (!x)
			continue;
		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
		n++;
	}
	return n ? v[(n - 1) / 2] : 0;
}

static void push_recent(uint64_t *values, uint64_t x)
{
	memmove(values + 1, values, (ADAPTIVE_BASELINES - 1) * sizeof(values[0]));
	values[0] = x;
}

/*
 * Pooled over the recent probes, since one probe holds only a few of the rare slow reads;
 * a probe whose baseline was more than twice the median (an outside load then) is left
 * out, as it is from the baseline.
 */
/*
 * The share of the recent probes' reads that @part counts (probe_over, probe_queued), in
 * thousandths, pooled over the probes whose baseline was at most twice the median.
 */
static uint32_t probes_permille(const struct adaptive *c, const uint64_t *part)
{
	uint64_t reads = 0, n = 0;

	for (unsigned i = 0; i < ADAPTIVE_BASELINES; i++)
		if (c->baselines[i] && c->baselines[i] <= 2 * c->baseline_ns) {
			reads += c->probe_reads[i];
			n += part[i];
		}
	return reads ? (uint32_t)(n * 1000 / reads) : 0;
}

static void start_probe(struct adaptive *c, uint64_t now_ns)
{
	/*
	 * Without a baseline yet the run's level is full (held from the first read only until
	 * this probe, adaptive_init): a probe too short or void for one goes back there, as a
	 * reader too slow for a baseline always did, and the first that gives one slow-starts.
	 */
	c->run_level = c->target_ns || !c->target.relative ? c->level : ADAPTIVE_LEVEL_FULL;
	set_level(c, 0);
	c->phase = PHASE_PROBE_DRAIN;
	c->probes++;
	start_window(c, now_ns, c->p.probe_drain_ns);
}

/*
 * Back to the run after a probe, at the level before it (or the L0 floor), and the next
 * probe in @after_ns.
 */
static void end_probe(struct adaptive *c, uint64_t now_ns, uint64_t after_ns)
{
	set_level(c, floored(c, c->run_level));
	c->phase = PHASE_RUN;
	c->next_probe_ns = now_ns + after_ns;
	start_window(c, now_ns, window_len(c));
}

/*
 * A probe with too few reads: again in probe_retry_ns, doubled after each such probe in a
 * row up to probe_every_ns, so that a reader too slow for a baseline does not get the low
 * tier held a second every 5 s.
 */
static uint64_t short_retry_ns(struct adaptive *c)
{
	uint64_t after = c->p.probe_retry_ns;

	for (uint32_t i = 0; i < c->short_probes && after < c->p.probe_every_ns; i++)
		after *= 2;
	c->short_probes++;
	return after < c->p.probe_every_ns ? after : c->p.probe_every_ns;
}

static void finish_probe(struct adaptive *c, uint64_t now_ns)
{
	const uint32_t *hist = c->pending.hist;
	uint64_t reads = adaptive_hist_count(hist);

	if (reads >= probe_min_reads(c)) {
		push_recent(c->baselines, adaptive_hist_percentile(hist, c->target.permille));
		c->baseline_ns = median_of(c->baselines);
		c->target_ns = c->baseline_ns * c->target.factor_milli / 1000;
		push_recent(c->probe_reads, reads);
		push_recent(c->probe_over, adaptive_hist_over(hist, c->target_ns));
		push_recent(c->probe_queued, c->pending.queued < reads ? c->pending.queued : reads);
		c->alone_permille = probes_permille(c, c->probe_over);
		c->queued_alone_permille = probes_permille(c, c->probe_queued);
		c->short_probes = 0;
		if (!c->valid_probes && !c->misses && c->run_level == ADAPTIVE_LEVEL_FULL) {
			/*
			 * Slow start, as TCP's: the first baseline gives a bound but says nothing
			 * of the device, and from full a steady QD1 reader paid three or four
			 * missed windows before the search found its level (every read over the
			 * target, the P99 of a short run spent); from the lowest level, climbing a
			 * level a good window, it pays one, at the first level too high, and the
			 * background gives up a few hundred milliseconds of share instead. An
			 * open loop's too: climbing at the usual pace instead put 6 of 18
			 * Poisson cells under 2x against 8 (docs/bench, the eighteenth run).
			 */
			c->run_level = 1;
			c->slow_start = 1;
		}
		end_probe(c, now_ns, ++c->valid_probes < ADAPTIVE_WARMUP_PROBES ?
			  c->p.probe_warmup_ns : c->p.probe_every_ns);
	} else {
		end_probe(c, now_ns, short_retry_ns(c));
	}
}

static void reset_streak(struct adaptive *c)
{
	c->good_streak = 0;
	c->streak_reads = c->streak_excess = 0;
}

/* floor(log2(@ratio)), at most a full ladder. */
static uint32_t halvings(uint64_t ratio)
{
	uint32_t n = 0;

	while (ratio >= 2 && n < ADAPTIVE_LEVEL_FULL) {
		ratio /= 2;
		n++;
	}
	return n;
}

/*
 * How many levels a miss cuts: a read waits behind the low tier's bytes in flight, and a
 * level halves them, so a window whose percentile is 27 allowances over alone needs about
 * log2(27) halvings, not 27 windows of one (from full under a steady reader, one level a
 * window spent most of a 6 s matrix run above its target). Both must be far over: the
 * percentile's excess over the allowance (over the baseline for a relative target) and the
 * share of reads over the target against the share allowed. A window that misses by a few
 * outside spikes has a percentile on a spike but barely more slow reads than allowed: one
 * level, as before. floor, not round: never more than halving predicts; the next window
 * cuts the rest. 0 is a shallow miss (under twice over by one measure): cut() makes it one.
 */
static uint32_t levels_to_cut(const struct adaptive *c, const uint32_t *hist, uint64_t reads,
			      uint64_t expect, uint64_t excess, uint64_t allowed)
{
	/*
	 * Judged early, the window holds @reads of the @expect it would have: the percentile
	 * is taken at the same rank from the top (the 3rd slowest of 30 for a p99 of 300),
	 * not at the same fraction, which would be the slowest read of the 30.
	 */
	uint64_t tail = (uint64_t)(1000 - c->target.permille) * expect / reads;
	uint64_t seen = adaptive_hist_percentile(hist, tail < 1000 ? 1000 - (uint32_t)tail : 0);
	uint64_t base = c->baseline_ns < c->target_ns ? c->baseline_ns : 0;
	uint32_t deep = halvings(seen > base ? (seen - base) / (c->target_ns - base) : 0);
	uint32_t broad = halvings(allowed ? excess / allowed : 0);

	return deep < broad ? deep : broad;
}

/*
 * At least how many levels a deep miss cuts (@deep: twice over or more by both of
 * levels_to_cut's measures), whatever its size said: a second deep miss in a row means the
 * cut before was too small (a level need not halve the delay: a device that serves large
 * requests in parts, or a delay set by depth rather than size), so from there the level is
 * at least halved, a search rather than a walk (from full to the level that holds in three
 * or four looks, where one level a window took nine windows); and a deep miss above a level
 * that held goes at least half way back to it. The cost of cutting too far is a climb back,
 * paid by the background; of cutting too little, another miss, paid by the reader. A
 * shallow miss (outside spikes, a level just over) cuts what it says, one level: searching
 * on those would sink the tier under every burst of noise. Nor does a lone shallow miss at
 * the lowest level hold the tier: a burst of outside spikes does that to a reader the low
 * tier barely touches, and the climb back from held is the slowest (hysteresis); a second
 * miss in a row there does hold.
 */
static uint32_t cut_at_least(struct adaptive *c, bool deep)
{
	uint32_t n = 0;

	if (c->good_level != NONE && c->good_level >= c->level)
		c->good_level = NONE; /* it held there once, not now: no longer evidence */
	if (!deep)
		return c->level == 1 && !c->miss_run ? 0 : 1;
	if (c->deep_run)
		n = c->level - c->level / 2;
	if (c->good_level != NONE && c->level - (c->level + c->good_level) / 2 > n)
		n = c->level - (c->level + c->good_level) / 2;
	/* Holding is for a miss whose own size asks for it (levels_to_cut), never a search's. */
	return n < c->level ? n : c->level ? c->level - 1 : 1;
}

/* @n levels down; back to where the reader last did fine if a release overshot. */
static void cut(struct adaptive *c, uint32_t n)
{
	uint32_t next, least = cut_at_least(c, n != 0);

	c->deep_run = n ? c->deep_run + 1 : 0;
	c->miss_run++;
	n = n ? (n > least ? n : least) : least;
	next = c->level > n ? c->level - n : 0;
	c->misses++;
	c->slow_start = 0;
	if (c->l0_floor && c->level <= c->l0_floor) {
		/*
		 * The database needs this level: the target cannot take it, and a miss here
		 * is no level to avoid later (it says nothing about the reader's need).
		 */
		c->l0_lifts++;
		reset_streak(c);
		return;
	}
	if (c->resume_level != NONE && c->resume_level < next)
		next = c->resume_level;
	if (next >= c->l0_floor)
		c->resume_level = NONE; /* reached; under the floor, kept for when it falls */
	if (c->p.floor_rate && next == 0)
		next = 1; /* with a floor the low tier is never held */
	next = floored(c, next);
	if (c->level == 0) {
		/* Held already: nothing to cut, and no level learnt; the one that held it stays. */
		reset_streak(c);
		return;
	}
	c->held_drain = next == 0;
	if (c->miss_level == c->level)
		c->backoff = c->backoff * 2 > c->p.backoff_max ? c->p.backoff_max : c->backoff * 2;
	else
		c->backoff = c->p.hysteresis_mult;
	c->miss_level = c->level;
	set_level(c, next);
	reset_streak(c);
}

/*
 * Held, the reads are alone. A relative target's bound is k x the same percentile measured
 * held (the probes), so a held window that misses it says the slow reads are the outside's
 * (a host's hiccup, another program's I/O), and most likely so were those of the miss that
 * held the tier: back to the level that missed, its backoff forgotten. Without this, a burst
 * of outside spikes at level 1 held the tier for the whole hysteresis (16 windows and more:
 * 1.75 s of a 2 s burst in the matrix's bursty cell, the reads still slow while held). If
 * the low tier was at fault after all, that level misses again and holds it again. The first
 * judged window after a cut to held is the drain's (reads queued behind the last pieces):
 * not judged. Held is alone only if the low tier moved nothing (@low_bytes): a held call
 * still goes once its wait reaches IOTIER_GATE_WAIT, and a buffered writer's one push then
 * puts a whole folio on the device (1 MiB on ext4 with large folios, 6.16 and later), which
 * the reads of that window feel. An absolute target has no measure of alone: held it stays
 * (a target no read can meet holds the tier, as asked). True when the window was dealt
 * with here.
 */
static bool held_outside(struct adaptive *c, bool missed, uint64_t low_bytes)
{
	if (c->level != 0 || !c->target.relative)
		return false;
	if (c->held_drain) {
		c->held_drain = 0;
		reset_streak(c);
		return true;
	}
	if (!missed || low_bytes || c->miss_level == NONE || c->miss_level == 0)
		return false;
	c->outside_restores++;
	set_level(c, floored(c, c->miss_level));
	c->miss_level = NONE;
	c->miss_run = c->deep_run = 0;
	reset_streak(c);
	return true;
}

/*
 * A window that did not miss joins the streak. After enough of them, climb if the streak as
 * a whole kept to half the allowance: summed, a few hundred reads per window become a
 * thousand, and one stray slow read no longer decides (the hysteresis band).
 */
static void climb_after_good(struct adaptive *c, uint64_t reads, uint64_t excess)
{
	uint32_t need = c->slow_start ? 1 : c->p.climb_windows;

	c->miss_run = c->deep_run = 0;
	if (c->good_level == NONE || c->level > c->good_level)
		c->good_level = c->level;
	if (c->level + 1 == c->miss_level)
		need *= c->backoff;
	c->streak_reads += reads;
	c->streak_excess += excess;
	if (++c->good_streak < need)
		return;
	if (c->streak_excess * 2 <= c->streak_reads * (1000 - c->target.permille) &&
	    c->level < ADAPTIVE_LEVEL_FULL) {
		set_level(c, c->level + 1);
		c->resume_level = NONE; /* a level met for a streak: cut from here, one step */
	}
	reset_streak(c);
}

/* A window without reads: after a few in a row, give the low tier everything. */
static void judge_idle(struct adaptive *c)
{
	reset_streak(c);
	c->miss_run = c->deep_run = 0;
	if (++c->idle_streak >= c->p.idle_windows && c->level < ADAPTIVE_LEVEL_FULL) {
		c->resume_level = c->level;
		c->miss_level = NONE;
		c->released = 1;
		set_level(c, ADAPTIVE_LEVEL_FULL);
	}
}

/*
 * Has an open-loop reader's queue grown past what its target allows (adaptive.c's head, "An
 * open loop's queue")? Of the window's @reads, @queued began queued; alone, a share z0 of them
 * did (queued_alone_permille). Only for a relative target (k x alone) and an open loop (z0 from
 * 5% to 95%: adaptive_open_loop): a closed loop's count tells nothing. The limit is
 * k z0 / (1 + (k - 1) z0); a window is over it only by more than twice a binomial deviation at
 * z0 over @reads (200 reads at z0 = 60%: 7 points), so that a window's chance does not cut.
 * *@levels: how far over, as levels_to_cut counts: log2 of how many times the queue's wait
 * exceeds the limit's, (1 - limit) / (1 - z), 0 for a shallow miss.
 */
static bool queue_over(const struct adaptive *c, uint64_t reads, uint64_t queued,
		       uint32_t *levels)
{
	uint64_t z0 = c->queued_alone_permille, k = c->target.factor_milli, limit, z, d;

	if (!c->target.relative || !reads || !adaptive_open_loop(c->queued_alone_permille))
		return false;
	limit = k * z0 / (1000 + (k - 1000) * z0 / 1000);
	z = (queued < reads ? queued : reads) * 1000 / reads;
	if (z <= limit)
		return false;
	d = z - limit;
	if (d * d * reads <= 4 * z0 * (1000 - z0))
		return false;
	*levels = halvings((1000 - limit) / (z < 1000 ? 1000 - z : 1));
	return true;
}

/*
 * Judge a window with reads. A miss: more than (1 - percentile) of the reads over the
 * target beyond those that are over it even with the low tier held (alone_permille), or an
 * open-loop reader's queue over its limit (queue_over); a miss by both cuts the deeper of
 * the two. Anything else counts towards a climb (climb_after_good). The floor and the debt
 * signal overrule both.
 */
static void judge_reads(struct adaptive *c, uint64_t reads, uint64_t expect,
			const struct adaptive_window *w)
{
	uint64_t over = adaptive_hist_over(w->hist, c->target_ns) * 1000; /* thousandths of a read */
	uint64_t allowed = expect * (1000 - c->target.permille);
	uint64_t alone = expect * c->alone_permille;
	uint64_t excess = over > alone ? over - alone : 0;
	bool floor_set = c->p.floor_rate != 0;
	uint32_t levels = 0, queue_levels = 0;
	bool queued = queue_over(c, reads, w->queued, &queue_levels);

	c->miss_permille = (uint32_t)(over / reads);
	/*
	 * Held, a queue over its limit is no sign of the outside: it is the backlog the level
	 * that missed left, still draining (at 30% busy alone the probes' share is what the
	 * reader returns to only once its queue is empty). Only slow calls restore a level.
	 */
	if (held_outside(c, excess > allowed, w->low_bytes))
		return;
	if (floor_set && w->low_limited && c->rate < c->p.floor_rate) {
		c->floor_lifts++;
		reset_streak(c);
		set_level(c, c->level + 1);
	} else if (excess > allowed || queued) {
		if (floor_set && c->rate < 2 * c->p.floor_rate && w->low_limited) {
			c->floor_lifts++; /* halving would take the low tier under its floor */
			return;
		}
		if (excess > allowed)
			levels = levels_to_cut(c, w->hist, reads, expect, excess, allowed);
		if (queued) {
			c->queue_misses++;
			levels = levels > queue_levels ? levels : queue_levels;
		}
		cut(c, levels);
	} else {
		climb_after_good(c, reads, excess);
	}
}

/*
 * The database is falling behind: the debt overrules the target. A slowdown climbs one
 * level a window (the bytes in flight double each window); a stop, where every write of
 * the database waits, goes straight to full. Either way the first miss after the debt
 * returns to one level above where the debt began (that level was too little for the
 * database), not one level a window down from wherever the debt took it.
 */
static void judge_debt(struct adaptive *c, enum adaptive_debt debt)
{
	c->debt_lifts++;
	c->slow_start = 0;
	reset_streak(c);
	c->miss_run = c->deep_run = 0;
	if (c->debt_level == NONE)
		c->debt_level = c->level;
	set_level(c, debt == ADAPTIVE_DEBT_STOP ? ADAPTIVE_LEVEL_FULL : c->level + 1);
	c->resume_level = c->debt_level + 1 < c->level ? c->debt_level + 1 : c->level;
}

/*
 * Is the reader still there at @now_ns: reads in the last half window? A window that ends
 * short of reads is extended for a slow reader, not for one that has stopped (its last
 * reads and then nothing: extended up to 400 ms, it kept the tier at its level into the
 * reader's idle spell, then started a probe there, which holds the tier; the matrix's
 * bursty cell lost a third of its reader-off second to it). Nor does a probe start without
 * a reader: its baseline would be no one's.
 */
static bool reading(const struct adaptive *c, uint64_t now_ns)
{
	return now_ns - c->last_read_ns < window_len(c) / 2;
}

/*
 * A window reaches judgement with fewer than min_samples reads only once it has been
 * extended to its longest (or its reader has stopped, reading()). Fewer than idle_reads
 * there are stray reads, not a reader: a flush thread reading back the table it just wrote,
 * a stats thread. They say nothing about a percentile (one slow one would be a miss), and
 * judged, they would keep a low tier held long after the reader stopped: treated as a
 * window without reads. Unless those few reads took half the window or more (@elapsed):
 * that is a reader starved, not a stray one. A QD1 reader next to a buffered sequential
 * reader on the matrix's `cloud` disk got 4-98 reads a second with the tier at full (its
 * reads 10-250 ms, 1.6 ms alone); each window held a read or two, counted as no reader,
 * and the tier stayed at full for the whole run, the reader at 337-361x alone. A stray
 * read that slow is judged too: a high read that waited half a window is a miss however it
 * came (an urgent thread's reads are not timed at all, preload/adaptive_hook.c).
 */
static uint64_t reader_reads(const struct adaptive *c, const struct adaptive_window *w,
			     uint64_t elapsed)
{
	uint64_t reads = adaptive_hist_count(w->hist);

	if (reads >= c->p.idle_reads)
		return reads;
	return reads && adaptive_hist_time_floor(w->hist) * 2 >= elapsed ? reads : 0;
}

/*
 * Judge the window, at its end or at a look (@expect: the reads it would have had by its
 * end; @reads otherwise).
 */
static void judge_window(struct adaptive *c, uint64_t now_ns, uint64_t expect)
{
	const struct adaptive_window *w = &c->pending;
	uint64_t reads = reader_reads(c, w, now_ns - c->window_start_ns);
	bool judged = c->target_ns != 0;

	c->windows++;
	if (w->debt || reads)
		unrelease(c);
	if (w->debt) {
		judge_debt(c, (enum adaptive_debt)w->debt);
	} else if (!reads) {
		judge_idle(c);
	} else {
		c->idle_streak = 0;
		if (judged)
			judge_reads(c, reads, expect > reads ? expect : reads, w);
	}
	if (!w->debt)
		c->debt_level = NONE;
	/*
	 * No probe with L0 one file short of the trigger: a held compaction would stall it. A
	 * starved reader (fewer than idle_reads reads, reader_reads) is there even between its
	 * reads: a probe is what gives it a baseline (its drain waits for the queue, draining).
	 */
	if (c->target.relative && !w->debt && reads &&
	    (reading(c, now_ns) || reads < c->p.idle_reads) &&
	    c->l0_floor < ADAPTIVE_LEVEL_FULL && now_ns >= c->next_probe_ns)
		start_probe(c, now_ns);
	else
		start_window(c, now_ns, window_len(c));
}

#define HOUR_NS (3600 * NS_PER_SEC)
#define IN(v, lo, hi) ((v) >= (lo) && (v) <= (hi))
#define LEVEL_OR_NONE(v) ((v) <= ADAPTIVE_LEVEL_FULL || (v) == NONE)

/* set read as a byte: a bool holding anything but 0 or 1 must not be loaded as one. */
static bool target_sane(const struct adaptive_target *t)
{
	unsigned char set, relative;

	memcpy(&set, &t->set, 1);
	memcpy(&relative, &t->relative, 1);
	return set == 1 && relative <= 1 && IN(t->permille, 1, TARGET_PERMILLE_MAX) &&
	       (t->relative ? IN(t->factor_milli, TARGET_FACTOR_MIN_MILLI, TARGET_FACTOR_MAX_MILLI)
			    : IN(t->latency_ns, TARGET_ABS_MIN_NS, TARGET_ABS_MAX_NS));
}

/* Far wider than any default or test: they only keep the arithmetic finite. */
static bool params_sane(const struct adaptive_params *p)
{
	return IN(p->window_min_ns, 1000000, 60 * NS_PER_SEC) && IN(p->window_mult, 1, 1024) &&
	       IN(p->window_max_mult, 1, 64) && IN(p->min_samples, 1, 1000000) &&
	       IN(p->climb_windows, 1, 1024) && IN(p->hysteresis_mult, 1, 1024) &&
	       IN(p->backoff_max, 1, 65536) && IN(p->idle_windows, 1, 1024) &&
	       p->idle_reads <= 1000000 && IN(p->probe_every_ns, 1000000, HOUR_NS) &&
	       IN(p->probe_drain_ns, 1000000, HOUR_NS) &&
	       IN(p->probe_measure_ns, 1000000, HOUR_NS) &&
	       IN(p->probe_retry_ns, 1000000, HOUR_NS) && IN(p->probe_warmup_ns, 1000000, HOUR_NS) &&
	       p->probe_min_reads <= 1000000 && IN(p->look_ns, 100000, HOUR_NS);
}

/* Times are set from a step's now plus at most a window or a probe period. */
static bool times_sane(const struct adaptive *c, uint64_t now_ns)
{
	uint64_t horizon = now_ns + 24 * HOUR_NS;

	return c->window_start_ns <= horizon && c->deadline_ns <= horizon &&
	       c->window_end_ns <= horizon && c->last_read_ns <= horizon &&
	       c->last_step_ns <= horizon && c->next_probe_ns <= horizon;
}

bool adaptive_sane(const struct adaptive *c, uint64_t now_ns, const char **why)
{
	/* A target bound: 10 s absolute, or 100x a baseline that the histogram caps at 69 s. */
	const uint64_t bound_max = 100 * 100 * NS_PER_SEC;

	*why = NULL;
	if (!target_sane(&c->target))
		*why = "its target is out of range";
	else if (!params_sane(&c->p))
		*why = "its controller's parameters are out of range";
	else if (c->level > ADAPTIVE_LEVEL_FULL || c->run_level > ADAPTIVE_LEVEL_FULL ||
		 !LEVEL_OR_NONE(c->miss_level) || !LEVEL_OR_NONE(c->resume_level) ||
		 !LEVEL_OR_NONE(c->debt_level) || !LEVEL_OR_NONE(c->good_level) ||
		 c->miss_run > 1000000 || c->deep_run > 1000000 || c->held_drain > 1 ||
		 c->slow_start > 1 ||
		 c->l0_floor > ADAPTIVE_LEVEL_FULL ||
		 c->phase > PHASE_PROBE_MEASURE ||
		 c->backoff > 65536 || c->pending.debt > ADAPTIVE_DEBT_STOP || c->released > 1)
		*why = "its controller's level or phase is out of range";
	else if (c->target_ns > bound_max || c->baseline_ns > bound_max ||
		 c->alone_permille > 1000 || c->queued_alone_permille > 1000)
		*why = "its controller's bound is out of range";
	else if (!times_sane(c, now_ns))
		*why = "its controller's times are out of range";
	return !*why;
}

void adaptive_repair(struct adaptive *c)
{
	set_level(c, c->level);
}

/*
 * The reads a window that has @reads after @elapsed will have when judged, at this rate:
 * at its end, or at the end of the half windows it is extended by until it has min_samples
 * (adaptive_step), so that a look counts against the same number a window's end would.
 */
static uint64_t expected_reads(const struct adaptive *c, uint64_t reads, uint64_t elapsed)
{
	uint64_t len = window_len(c), end = len, last = len * c->p.window_max_mult;
	uint64_t expect = (uint64_t)((unsigned __int128)reads * end / elapsed);

	for (; expect < min_samples(c) && end < last; end += len / 2)
		expect = (uint64_t)((unsigned __int128)reads * (end + len / 2) / elapsed);
	return expect > reads ? expect : reads;
}

/*
 * A look before the window's end (look_ns): is there already something to act on? 0: no,
 * look again; otherwise judge now, as a window of that many reads (judge_window's @expect).
 *  - A certain miss: more reads over the target than the window could allow, had every read
 *    still to come been fast. Its reads are counted as the window's expected total
 *    (expected_reads), so a look cuts no sooner than the window's end would, only
 *    earlier: under a tier at full a reader at 6 ms a read shows three reads over the
 *    target within 20 ms, where a window of 200 reads took up to 400 ms to come to the
 *    same verdict, all of it over the target.
 *  - The first baseline of a relative target: a reader has shown up, so probe now, not at
 *    the end of a window spent at full with nothing to judge it by.
 * Either needs idle_reads reads: fewer are stray reads, as at a window's end.
 */
static uint64_t look_early(const struct adaptive *c, uint64_t now_ns, uint64_t elapsed)
{
	const uint32_t *hist = c->pending.hist;
	uint64_t reads = adaptive_hist_count(hist), expect, over;

	if (reads < c->p.idle_reads || c->pending.debt || !elapsed)
		return 0;
	if (!c->target_ns)
		return c->target.relative && now_ns >= c->next_probe_ns &&
		       c->l0_floor < ADAPTIVE_LEVEL_FULL ? reads : 0;
	expect = expected_reads(c, reads, elapsed);
	over = adaptive_hist_over(hist, c->target_ns) * 1000;
	return over > expect * (1000 - c->target.permille + c->alone_permille) ? expect : 0;
}

/*
 * Does a probe short of reads after @elapsed of measure go on? Up to its usual longest
 * (measure x window_max_mult, 1 s), and on to twice that while the reads so far, at their
 * rate, would reach probe_min_reads by then. The matrix's open-loop reader at 30% on the
 * `cloud` disk reads 224-237 times a second: a probe short by a few reads at 1 s left the
 * tier at full until the retry 5 s later (17.6x and 21.2x alone: 2 of 12 runs of the cell,
 * 0 of 8 with this; docs/bench/adaptive-matrix-2026-12-07-held-climb.md). A reader too
 * slow to get there by 2 s stops at 1 s as before: nothing is held longer for a probe that
 * cannot succeed.
 */
static bool probe_fills(const struct adaptive *c, uint64_t elapsed)
{
	uint64_t usual = c->p.probe_measure_ns * c->p.window_max_mult, longest = 2 * usual;
	uint64_t reads = adaptive_hist_count(c->pending.hist);

	if (elapsed < usual)
		return true;
	return elapsed < longest &&
	       (unsigned __int128)reads * longest >= (unsigned __int128)probe_min_reads(c) * elapsed;
}

/*
 * Is the device still emptying what the low tier queued before the probe held it, after
 * @elapsed of drain? Fewer than idle_reads reads so far: the reader is still starved. A
 * sequential reader's readahead can leave tens of MiB in the scheduler (its queue holds 256
 * requests): on `sata` a probe measured after the fixed 50 ms took the tail of that queue
 * for the baseline, hundreds of times the true one, and the target with it. The drain goes
 * on half a drain at a time, up to 8 drains (400 ms); a reader that is simply gone costs
 * the probe that much more held, once a probe period.
 */
static bool draining(const struct adaptive *c, uint64_t elapsed)
{
	return adaptive_hist_count(c->pending.hist) < c->p.idle_reads &&
	       elapsed < c->p.probe_drain_ns * 8;
}

void adaptive_step(struct adaptive *c, uint64_t now_ns, const struct adaptive_window *w)
{
	uint64_t elapsed, expect = 0;
	uint64_t reads, misses;

	if (now_ns < c->last_step_ns)
		now_ns = c->last_step_ns; /* a caller's clock never runs backwards here */
	if (c->cap == 0 && !c->released) /* released, the cap is for the reader's return */
		c->held_ns += now_ns - c->last_step_ns;
	c->last_step_ns = now_ns;
	accumulate(&c->pending, w);
	if (adaptive_hist_count(w->hist))
		c->last_read_ns = now_ns;
	/* The database's state now, not summed: each window carries the latest. */
	c->l0_files = w->l0_files;
	c->l0_trigger = w->l0_trigger;
	c->l0_floor = adaptive_l0_floor(w->l0_files, w->l0_trigger);
	if (c->phase == PHASE_RUN)
		apply_l0_floor(c); /* at once, not when a slow reader's window is judged */
	if (now_ns < c->deadline_ns)
		return;
	elapsed = now_ns - c->window_start_ns;
	if (c->phase == PHASE_RUN && now_ns < c->window_end_ns) {
		expect = look_early(c, now_ns, elapsed);
		if (!expect) {
			next_look(c, now_ns);
			return;
		}
	}
	c->rate = elapsed ? (uint64_t)((unsigned __int128)c->pending.low_bytes * NS_PER_SEC /
				       elapsed) : 0;
	if (c->phase != PHASE_RUN && c->pending.debt) {
		/* A probe holds the low tier: not while the database falls behind. */
		set_level(c, floored(c, c->run_level));
		c->phase = PHASE_RUN;
		c->next_probe_ns = now_ns + c->p.probe_retry_ns;
	}
	if (c->phase != PHASE_RUN &&
	    (c->pending.urgent_ios || c->l0_floor >= ADAPTIVE_LEVEL_FULL)) {
		/*
		 * A flush thread's I/O was on the device while the low tier was held: the reads
		 * were not alone. Void; again after probe_retry_ns, when the flush has ended.
		 * Nor does a probe go on holding a compaction that L0 needs at full.
		 */
		c->void_probes += c->pending.urgent_ios != 0;
		end_probe(c, now_ns, c->p.probe_retry_ns);
		return;
	}
	switch (c->phase) {
	case PHASE_PROBE_DRAIN: /* reads still queued behind the low tier's I/O: not alone */
		if (draining(c, elapsed)) {
			extend_window(c, now_ns, c->p.probe_drain_ns / 2);
			return;
		}
		c->phase = PHASE_PROBE_MEASURE;
		start_window(c, now_ns, c->p.probe_measure_ns);
		return;
	case PHASE_PROBE_MEASURE:
		if (adaptive_hist_count(c->pending.hist) < probe_min_reads(c) &&
		    probe_fills(c, elapsed)) {
			extend_window(c, now_ns, c->p.probe_measure_ns / 2); /* a slow reader */
			return;
		}
		finish_probe(c, now_ns);
		return;
	case PHASE_RUN:
		break;
	}
	reads = adaptive_hist_count(c->pending.hist);
	if (!expect && reads && reads < min_samples(c) && !c->pending.debt &&
	    elapsed < window_len(c) * c->p.window_max_mult && reading(c, now_ns)) {
		extend_window(c, now_ns, window_len(c) / 2); /* too few reads to judge yet */
		return;
	}
	misses = c->misses;
	judge_window(c, now_ns, expect);
	c->early_misses += expect && c->misses != misses;
}
