// SPDX-License-Identifier: MIT
/*
 * threads_adaptive.c: the adaptive controller of a process under a target, for `iotier
 * threads`. The region is the process's /memfd:iotier-adaptive mapping; its header is
 * checked (adaptive_region_valid: the magic, this build's layout and size), then the
 * controller's fields are read through /proc/PID/mem with the seqlock reader the shim's
 * own state file uses (adaptive_view_read), so a step in progress is never half shown.
 * Only low threads step the controller: with none calling, the snapshot is the last step's,
 * so it is shown with its age, and as stale once the cap's lease has lapsed.
 */
#include "threads_adaptive.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adaptive/adaptive_tier.h"
#include "threads_memfd.h"

struct remote {
	int fd;
	uint64_t base;
};

static int remote_copy(void *ctx, size_t off, void *dst, size_t len)
{
	const struct remote *m = ctx;
	ssize_t n = pread(m->fd, dst, len, (off_t)(m->base + off));

	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EIO;
}

static const char *adaptive_unreadable(int err)
{
	if (err == EACCES || err == EPERM)
		return "adaptive: cannot read the controller: permission denied reading the "
		       "process's memory (needs root or ptrace access)";
	if (err == EAGAIN)
		return "adaptive: cannot read the controller: it kept changing while read";
	return "adaptive: cannot read the controller";
}

/*
 * Check the header, then take the snapshot; 0 or -errno (-EPROTO: another layout). Only the
 * header is copied for the check: adaptive_region_valid looks at nothing else.
 */
static int read_region(struct remote *m, uint64_t len, struct adaptive_view *v)
{
	struct adaptive_region *copy = calloc(1, sizeof(*copy));
	int err = copy ? remote_copy(m, 0, copy, offsetof(struct adaptive_region, gate)) : -ENOMEM;

	if (!err && !adaptive_region_valid(copy, (size_t)len))
		err = -EPROTO;
	free(copy);
	return err ? err : adaptive_view_read(remote_copy, m, v);
}

void threads_read_adaptive(struct threads_report *r)
{
	struct remote m = { .fd = -1 };
	uint64_t len = 0;
	char path[64];
	int err;

	r->adaptive_state = ADAPTIVE_NONE;
	if (threads_find_memfd(r->pid, ADAPTIVE_REGION_NAME, &m.base, &len))
		return; /* no target; or the maps are unreadable, which the header says already */
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)r->pid);
	m.fd = open(path, O_RDONLY | O_CLOEXEC);
	err = m.fd < 0 ? -errno : read_region(&m, len, &r->adaptive);
	if (m.fd >= 0)
		close(m.fd);
	if (!err) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		r->adaptive_read_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		r->adaptive_state = ADAPTIVE_READ;
		return;
	}
	r->adaptive_state = ADAPTIVE_UNREADABLE;
	r->adaptive_why = err == -EPROTO ? "adaptive: cannot read the controller: its region in "
					   "this process has another layout (another iotier version)" :
					   adaptive_unreadable(-err);
}

/* "412us", "1.50ms", "2.3s": three significant digits are plenty for a reader. */
static const char *duration(uint64_t ns, char *buf, size_t len)
{
	if (ns < 1000000)
		snprintf(buf, len, "%" PRIu64 "us", ns / 1000);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.2fms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.1fs", (double)ns / 1e9);
	return buf;
}

static const char *bytes(uint64_t b, const char *suffix, char *buf, size_t len)
{
	if (b < 1024)
		snprintf(buf, len, "%" PRIu64 " B%s", b, suffix);
	else if (b >= 1u << 20)
		snprintf(buf, len, "%.1f MiB%s", (double)b / (1u << 20), suffix);
	else
		snprintf(buf, len, "%.1f KiB%s", (double)b / 1024, suffix);
	return buf;
}

/*
 * What came with issue 23: the age of the last step (stale once the cap's lease lapsed),
 * the database's L0 and the floor it sets, the probes, the slots taken back.
 */
static void print_issue23(FILE *out, const struct threads_report *r)
{
	const struct adaptive_view *v = &r->adaptive;
	uint64_t age = adaptive_view_step_age_ns(v, r->adaptive_read_ns);
	char ago[24];

	fprintf(out, "adaptive: last step %s ago%s\n", duration(age, ago, sizeof(ago)),
		adaptive_view_stale(v, r->adaptive_read_ns, 0) ? ", stale: no low thread has called since, and the "
		"gate applies no cap until one does" : "");
	if (v->l0_trigger)
		fprintf(out, "adaptive: L0 %" PRIu64 " files, trigger %" PRIu64 ", floor level %"
			PRIu64 "; %" PRIu64 " L0 lifts\n", v->l0_files, v->l0_trigger, v->l0_floor,
			v->l0_lifts);
	else
		fprintf(out, "adaptive: L0 unknown, no L0 floor; %" PRIu64 " L0 lifts\n",
			v->l0_lifts);
	fprintf(out, "adaptive: %" PRIu64 " probes gave a baseline", v->valid_probes);
	if (v->baseline_reads)
		fprintf(out, " (the last from %" PRIu64 " reads)", v->baseline_reads);
	fprintf(out, ", %" PRIu64 " void (urgent threads' I/O), %" PRIu64 " short in a row\n",
		v->void_probes, v->short_probes);
	fprintf(out, "adaptive: %" PRIu64 " gate slots taken back from dead or stopped holders, %"
		PRIu64 " steps taken over\n", v->slots_taken_back, v->step_takeovers);
	fprintf(out, "adaptive: %" PRIu64 " misses cut at a look, %" PRIu64 " held windows missed "
		"anyway (the outside's: level restored)%s\n", v->early_misses, v->outside_restores,
		v->slow_start ? "; slow start" : "");
	if (v->target.relative && v->valid_probes)
		fprintf(out, "adaptive: %" PRIu64 ".%" PRIu64 "%% of the reads began queued alone "
			"(%s), %" PRIu64 " queue misses\n", v->queued_alone_permille / 10,
			v->queued_alone_permille % 10,
			adaptive_open_loop((uint32_t)v->queued_alone_permille)
				? "an open loop: its queue is held too"
				: "a closed loop: judged by its reads' latency only",
			v->queue_misses);
}

void threads_print_adaptive(FILE *out, const struct threads_report *r)
{
	const struct adaptive_view *v = &r->adaptive;
	char target[64], base[24], bound[24], chunk[24], rate[32], held[24], cap[24];

	if (r->adaptive_state == ADAPTIVE_UNREADABLE)
		fprintf(out, "%s\n", r->adaptive_why);
	if (r->adaptive_state != ADAPTIVE_READ)
		return;
	adaptive_target_format(&v->target, target, sizeof(target));
	snprintf(cap, sizeof(cap), v->cap == 0 ? "held" : v->cap == ADAPTIVE_UNLIMITED ?
		 "unlimited" : "%" PRIu64 " in flight", v->cap);
	fprintf(out, "adaptive: target %s, baseline %s, bound %s, tree root pid %" PRIu64 "%s\n",
		target, !v->target.relative ? "-" : v->baseline_ns ?
		duration(v->baseline_ns, base, sizeof(base)) : "not measured yet",
		v->bound_ns ? duration(v->bound_ns, bound, sizeof(bound)) : "none yet",
		v->creator_pid, v->probing ? ", probing the baseline" : "");
	fprintf(out, "adaptive: level %" PRIu64 "/%" PRIu64 ", cap %s, chunk %s, low rate %s, "
		"%.1f%% of the last window's reads missed\n", v->level, v->level_full, cap,
		v->chunk == ADAPTIVE_UNLIMITED ? "unlimited" : bytes(v->chunk, "", chunk, sizeof(chunk)),
		bytes(v->rate, "/s", rate, sizeof(rate)), (double)v->miss_permille / 10);
	fprintf(out, "adaptive: held %s in all; %" PRIu64 " windows, %" PRIu64 " missed, %" PRIu64
		" probes, %" PRIu64 " floor lifts, %" PRIu64 " debt lifts\n",
		duration(v->held_ns, held, sizeof(held)), v->windows, v->misses, v->probes,
		v->floor_lifts, v->debt_lifts);
	print_issue23(out, r);
}
