// SPDX-License-Identifier: MIT
/*
 * adaptive_view.c: the seqlock reader of the adaptive region (see adaptive_view.h). No
 * allocation, no lock, no syscall of its own, little stack: the shim calls it while writing
 * its state file, which may happen inside a signal handler.
 */
#include "adaptive_view.h"

#include <errno.h>
#include <stdatomic.h>

#include "adaptive_region.h"

#define FIELD(name) { #name, offsetof(struct adaptive_view, name) }
const struct adaptive_view_field adaptive_view_fields[ADAPTIVE_VIEW_NFIELDS] = {
	FIELD(creator_pid), FIELD(baseline_ns), FIELD(bound_ns), FIELD(level), FIELD(level_full),
	FIELD(cap), FIELD(chunk), FIELD(probing), FIELD(rate), FIELD(miss_permille),
	FIELD(held_ns), FIELD(windows), FIELD(misses), FIELD(probes), FIELD(floor_lifts),
	FIELD(debt_lifts), FIELD(l0_files), FIELD(l0_trigger), FIELD(l0_floor), FIELD(l0_lifts),
	FIELD(void_probes), FIELD(short_probes), FIELD(valid_probes), FIELD(baseline_reads),
	FIELD(last_step_ns), FIELD(slots_taken_back), FIELD(step_takeovers), FIELD(lease_ns),
	FIELD(early_misses), FIELD(outside_restores), FIELD(slow_start),
	FIELD(queued_alone_permille), FIELD(queue_misses),
};
#undef FIELD

int adaptive_view_copy_local(void *ctx, size_t off, void *dst, size_t len)
{
	const volatile char *src = (const volatile char *)ctx + off;
	char *out = dst;

	/* A word in one load, so the sequence is never torn; the rest byte by byte. */
	if (len == sizeof(uint32_t) && !((uintptr_t)src % sizeof(uint32_t)))
		*(uint32_t *)dst = __atomic_load_n((const uint32_t *)src, __ATOMIC_RELAXED);
	else if (len == sizeof(uint64_t) && !((uintptr_t)src % sizeof(uint64_t)))
		*(uint64_t *)dst = __atomic_load_n((const uint64_t *)src, __ATOMIC_RELAXED);
	else
		for (size_t i = 0; i < len; i++)
			out[i] = src[i];
	return 0;
}

/* Copy the member @m of the region into @dst, widened to uint64_t when it is narrower. */
#define COPY(m, dst)                                                                      \
	do {                                                                              \
		__typeof__(((struct adaptive_region *)0)->m) tmp_;                        \
		err = copy(ctx, offsetof(struct adaptive_region, m), &tmp_, sizeof(tmp_)); \
		if (err)                                                                  \
			return err;                                                       \
		(dst) = tmp_;                                                             \
	} while (0)

/* The fields, copied while the sequence is hopefully still @seq. */
static int copy_fields(adaptive_copy_fn copy, void *ctx, struct adaptive_view *v)
{
	uint32_t phase;
	int err;

	COPY(ctl.target, v->target);
	COPY(creator_pid, v->creator_pid);
	COPY(ctl.baseline_ns, v->baseline_ns);
	COPY(ctl.target_ns, v->bound_ns);
	COPY(ctl.level, v->level);
	COPY(ctl.cap, v->cap);
	COPY(ctl.chunk, v->chunk);
	COPY(ctl.phase, phase);
	COPY(ctl.rate, v->rate);
	COPY(ctl.miss_permille, v->miss_permille);
	COPY(ctl.held_ns, v->held_ns);
	COPY(ctl.windows, v->windows);
	COPY(ctl.misses, v->misses);
	COPY(ctl.probes, v->probes);
	COPY(ctl.floor_lifts, v->floor_lifts);
	COPY(ctl.debt_lifts, v->debt_lifts);
	COPY(ctl.l0_files, v->l0_files);
	COPY(ctl.l0_trigger, v->l0_trigger);
	COPY(ctl.l0_floor, v->l0_floor);
	COPY(ctl.l0_lifts, v->l0_lifts);
	COPY(ctl.void_probes, v->void_probes);
	COPY(ctl.short_probes, v->short_probes);
	COPY(ctl.valid_probes, v->valid_probes);
	COPY(ctl.probe_reads[0], v->baseline_reads); /* the latest valid probe's, first */
	COPY(ctl.last_step_ns, v->last_step_ns);
	COPY(ctl.early_misses, v->early_misses);
	COPY(ctl.outside_restores, v->outside_restores);
	COPY(ctl.slow_start, v->slow_start);
	COPY(ctl.queued_alone_permille, v->queued_alone_permille);
	COPY(ctl.queue_misses, v->queue_misses);
	/* Counters outside the controller, moved by atomics: as of the copy, not the step. */
	COPY(gate.reclaimed, v->slots_taken_back);
	COPY(takeovers, v->step_takeovers);
	COPY(gate.lease_ns, v->lease_ns);
	v->probing = phase; /* made a flag once the copy is kept and checked */
	v->level_full = ADAPTIVE_LEVEL_FULL;
	return 0;
}

/*
 * A kept copy whose level, phase or percentile is out of range came from a region written
 * by something other than the controller: shown as nothing rather than as numbers.
 */
static int check_kept(struct adaptive_view *v)
{
	if (v->level > ADAPTIVE_LEVEL_FULL || v->probing > PHASE_PROBE_MEASURE ||
	    v->l0_floor > ADAPTIVE_LEVEL_FULL ||
	    !v->target.permille || v->target.permille > TARGET_PERMILLE_MAX)
		return -ERANGE;
	v->probing = v->probing != PHASE_RUN;
	return 0;
}

int adaptive_view_read(adaptive_copy_fn copy, void *ctx, struct adaptive_view *v)
{
	for (unsigned try = 0; try < ADAPTIVE_VIEW_TRIES; try++) {
		uint32_t before, after;
		int err;

		COPY(seq, before);
		if (before & 1)
			continue; /* a step is writing */
		atomic_thread_fence(memory_order_acquire);
		err = copy_fields(copy, ctx, v);
		if (err)
			return err;
		atomic_thread_fence(memory_order_acquire);
		COPY(seq, after);
		if (after == before)
			return check_kept(v);
	}
	return -EAGAIN;
}

bool adaptive_view_stale(const struct adaptive_view *v, uint64_t now_ns, uint64_t slack_ns)
{
	if (v->lease_ns)
		return now_ns >= v->lease_ns + slack_ns;
	return adaptive_view_step_age_ns(v, now_ns) >= ADAPTIVE_VIEW_STALE_NS + slack_ns;
}
