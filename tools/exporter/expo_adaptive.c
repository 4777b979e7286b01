// SPDX-License-Identifier: MIT
/*
 * expo_adaptive.c: the adaptive controllers in the shims' state files, published as
 * iotier_adaptive_* (docs/operations.md). The shim writes the controller's numbers into
 * its state file (shim/include/state_file_format.h), so the exporter needs no access to the processes'
 * memory: it runs with CAP_BPF and CAP_PERFMON only and could not read another user's
 * region anyway. One controller governs a whole process tree; the files of the tree's
 * processes name the same creator pid, and the freshest (the latest last step, then the
 * most windows) is kept (only from a file whose owner owns that tree's root, or root's).
 * The controller steps only while low threads call, so the numbers may be old: the age of
 * the last step, taken with the exporter's clock at each render, says by how much. The
 * series carry that pid, the tree root's, as their one label: at most EXPO_ADAPTIVE_MAX
 * controllers are published, however many processes there are.
 */
#include "expo_adaptive.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "adaptive/adaptive_tier.h"
#include "expo_state.h"
#include "state_file_format.h"

#define PREFIX "adaptive_"

bool expo_adaptive_line(struct adaptive_view *v, const char *line)
{
	unsigned long long n;
	char name[48];

	if (sscanf(line, PREFIX "%47s %llu", name, &n) != 2)
		return false;
	if (!strcmp(name, "target_permille"))
		v->target.permille = (uint16_t)n;
	else if (!strcmp(name, "target_factor_milli"))
		v->target.factor_milli = (uint32_t)n;
	else if (!strcmp(name, "target_latency_ns"))
		v->target.latency_ns = n;
	for (unsigned i = 0; i < ADAPTIVE_VIEW_NFIELDS; i++)
		if (!strcmp(name, adaptive_view_fields[i].name))
			*adaptive_view_at(v, i) = n;
	v->target.set = true;
	v->target.relative = v->target.factor_milli != 0;
	return true;
}

/*
 * May a file of @owner speak for the tree of @creator? Yes when the tree's root is that
 * user's (or the file is root's), or is gone (its children still run the controller): a
 * user cannot overwrite the controller of another user's live tree.
 */
static bool may_speak_for(uint64_t creator, uid_t owner)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%llu", (unsigned long long)creator);
	return owner == 0 || stat(path, &st) < 0 || st.st_uid == owner;
}

void expo_adaptive_add(struct expo_shim_totals *t, const struct adaptive_view *v, uid_t owner)
{
	size_t i;

	if (!v->target.set || !v->creator_pid || v->creator_pid > INT32_MAX ||
	    !may_speak_for(v->creator_pid, owner))
		return;
	for (i = 0; i < t->nadaptive && t->adaptive[i].creator_pid != v->creator_pid; i++)
		;
	if (i == t->nadaptive) {
		if (t->nadaptive == EXPO_ADAPTIVE_MAX)
			return;
		t->nadaptive++;
	} else if (t->adaptive[i].last_step_ns > v->last_step_ns ||
		   (t->adaptive[i].last_step_ns == v->last_step_ns &&
		    t->adaptive[i].windows > v->windows)) {
		return; /* another process of the tree wrote a fresher file */
	}
	t->adaptive[i] = *v;
}

/* A sample; "+Inf" for no limit, as both formats spell it. */
static void sample(FILE *out, const char *name, uint64_t pid, double v)
{
	if (isinf(v))
		fprintf(out, "%s{pid=\"%llu\"} +Inf\n", name, (unsigned long long)pid);
	else
		fprintf(out, "%s{pid=\"%llu\"} %.17g\n", name, (unsigned long long)pid, v);
}

static double limit(uint64_t v)
{
	return v == ADAPTIVE_UNLIMITED ? INFINITY : (double)v;
}

/* The value of each series, for controller @v; NAN leaves the sample out. */
typedef double (*adaptive_value)(const struct adaptive_view *v);
static double v_level(const struct adaptive_view *v) { return (double)v->level; }
static double v_cap(const struct adaptive_view *v) { return limit(v->cap); }
static double v_chunk(const struct adaptive_view *v) { return limit(v->chunk); }
static double v_rate(const struct adaptive_view *v) { return (double)v->rate; }
static double v_miss(const struct adaptive_view *v) { return (double)v->miss_permille / 1000; }
static double v_probing(const struct adaptive_view *v) { return (double)v->probing; }
static double v_held(const struct adaptive_view *v) { return (double)v->held_ns / 1e9; }
static double v_bound(const struct adaptive_view *v)
{
	return v->bound_ns ? (double)v->bound_ns / 1e9 : NAN;
}
static double v_baseline(const struct adaptive_view *v)
{
	return v->target.relative && v->baseline_ns ? (double)v->baseline_ns / 1e9 : NAN;
}
static double v_windows(const struct adaptive_view *v) { return (double)v->windows; }
static double v_misses(const struct adaptive_view *v) { return (double)v->misses; }
static double v_probes(const struct adaptive_view *v) { return (double)v->probes; }
static double v_floor(const struct adaptive_view *v) { return (double)v->floor_lifts; }
static double v_debt(const struct adaptive_view *v) { return (double)v->debt_lifts; }
/* L0 and its trigger are absent while unknown (no log read, or not RocksDB's). */
static double v_l0(const struct adaptive_view *v)
{
	return v->l0_trigger ? (double)v->l0_files : NAN;
}
static double v_l0_trigger(const struct adaptive_view *v)
{
	return v->l0_trigger ? (double)v->l0_trigger : NAN;
}
static double v_l0_floor(const struct adaptive_view *v) { return (double)v->l0_floor; }
static double v_l0_lifts(const struct adaptive_view *v) { return (double)v->l0_lifts; }
static double v_void(const struct adaptive_view *v) { return (double)v->void_probes; }
static double v_valid(const struct adaptive_view *v) { return (double)v->valid_probes; }
static double v_short(const struct adaptive_view *v) { return (double)v->short_probes; }
static double v_baseline_reads(const struct adaptive_view *v)
{
	return v->target.relative && v->baseline_reads ? (double)v->baseline_reads : NAN;
}
static double v_taken_back(const struct adaptive_view *v) { return (double)v->slots_taken_back; }
static double v_takeovers(const struct adaptive_view *v) { return (double)v->step_takeovers; }
static double v_early(const struct adaptive_view *v) { return (double)v->early_misses; }
static double v_outside(const struct adaptive_view *v) { return (double)v->outside_restores; }
static double v_slow_start(const struct adaptive_view *v) { return (double)v->slow_start; }
static double v_queued_alone(const struct adaptive_view *v)
{
	return v->target.relative && v->valid_probes ? (double)v->queued_alone_permille / 1000
						     : NAN;
}
static double v_queue_misses(const struct adaptive_view *v) { return (double)v->queue_misses; }

/*
 * The series that depend on the time now: the age of the last step, @age_ns. Absent for a
 * file without adaptive_last_step_ns (an older shim's): its age would be the uptime.
 */
typedef double (*adaptive_aged)(const struct adaptive_view *v, uint64_t age_ns);
static double v_age(const struct adaptive_view *v, uint64_t age_ns)
{
	return v->last_step_ns ? (double)age_ns / 1e9 : NAN;
}
/* The file lags the controller by up to its refresh period: that much more is allowed. */
static double v_stale(const struct adaptive_view *v, uint64_t age_ns)
{
	return v->last_step_ns ? adaptive_view_stale(v, v->last_step_ns + age_ns,
						     STATE_FILE_ADAPTIVE_EVERY_NS) : NAN;
}

static const struct {
	const char *name, *type, *help;
	adaptive_value value;
	adaptive_aged aged;     /* instead of value, for the age and what follows from it */
} series[] = {
	{ "iotier_adaptive_level", "gauge", "The controller's level: 0 holds the low tier, the "
	  "highest lifts every limit.", v_level, NULL },
	{ "iotier_adaptive_cap", "gauge", "Low-tier I/Os allowed in flight: 0 held, +Inf no cap.",
	  v_cap, NULL },
	{ "iotier_adaptive_chunk_bytes", "gauge", "Largest low-tier request, bigger ones are "
	  "split; +Inf no limit.", v_chunk, NULL },
	{ "iotier_adaptive_low_rate_bytes_per_second", "gauge", "What the low tier moved in the "
	  "last window, per second.", v_rate, NULL },
	{ "iotier_adaptive_miss_ratio", "gauge", "Share of the last judged window's high reads "
	  "over the bound.", v_miss, NULL },
	{ "iotier_adaptive_probing", "gauge", "1 while the low tier is held to measure the "
	  "baseline.", v_probing, NULL },
	{ "iotier_adaptive_target_seconds", "gauge", "The latency bound in force (absent while "
	  "a relative target has no baseline).", v_bound, NULL },
	{ "iotier_adaptive_baseline_seconds", "gauge", "Relative targets: the reads' latency "
	  "measured with the low tier held.", v_baseline, NULL },
	{ "iotier_adaptive_held_seconds", "counter", "Time the low tier was held, probes "
	  "included.", v_held, NULL },
	{ "iotier_adaptive_windows", "counter", "Windows the controller closed.", v_windows, NULL },
	{ "iotier_adaptive_misses", "counter", "Windows judged over the target.", v_misses, NULL },
	{ "iotier_adaptive_probes", "counter", "Baseline probes taken.", v_probes, NULL },
	{ "iotier_adaptive_floor_lifts", "counter", "Climbs forced by the --low-min-rate floor.",
	  v_floor, NULL },
	{ "iotier_adaptive_debt_lifts", "counter", "Climbs forced by the debt signal.", v_debt, NULL },
	{ "iotier_adaptive_last_step_age_seconds", "gauge", "Time since the controller last "
	  "stepped: only low threads' calls step it, and the state file lags up to a second.",
	  NULL, v_age },
	{ "iotier_adaptive_stale", "gauge", "1 when the controller has not stepped for longer "
	  "than its cap's lease: the gate applies no cap until a low thread calls.", NULL,
	  v_stale },
	{ "iotier_adaptive_l0_files", "gauge", "The database's L0 files at the last step "
	  "(RocksDB's LOG; absent while unknown).", v_l0, NULL },
	{ "iotier_adaptive_l0_trigger_files", "gauge", "The L0 trigger the floor keeps under: "
	  "the smaller of RocksDB's slowdown and stop triggers (absent while unknown).",
	  v_l0_trigger, NULL },
	{ "iotier_adaptive_l0_floor_level", "gauge", "The level L0 imposes as a floor: 0 none, "
	  "the highest no limit.", v_l0_floor, NULL },
	{ "iotier_adaptive_l0_lifts", "counter", "Windows in which the L0 floor raised the level "
	  "or refused a cut.", v_l0_lifts, NULL },
	{ "iotier_adaptive_valid_probes", "counter", "Baseline probes that gave a baseline.",
	  v_valid, NULL },
	{ "iotier_adaptive_void_probes", "counter", "Baseline probes voided because urgent "
	  "threads (a flush) did I/O during them.", v_void, NULL },
	{ "iotier_adaptive_short_probe_streak", "gauge", "Baseline probes in a row with too "
	  "few reads for a baseline.", v_short, NULL },
	{ "iotier_adaptive_baseline_reads", "gauge", "Relative targets: the reads of the last "
	  "probe that gave a baseline.", v_baseline_reads, NULL },
	{ "iotier_adaptive_slots_taken_back", "counter", "Gate slots taken back from holders "
	  "that died or were stopped.", v_taken_back, NULL },
	{ "iotier_adaptive_step_takeovers", "counter", "Steps taken over from a stepper past its "
	  "lease (dead, stopped or stalled).", v_takeovers, NULL },
	{ "iotier_adaptive_early_misses", "counter", "Misses cut at a look, before their "
	  "window's end (a certain miss).", v_early, NULL },
	{ "iotier_adaptive_outside_restores", "counter", "Held windows that missed with the low "
	  "tier moving nothing: the slow reads were the outside's, the level restored.",
	  v_outside, NULL },
	{ "iotier_adaptive_slow_start", "gauge", "1 from the first baseline to the first miss, "
	  "while a good window climbs a level.", v_slow_start, NULL },
	{ "iotier_adaptive_queued_alone_ratio", "gauge", "Relative targets: the share of the "
	  "probes' reads that began as their thread's last one ended (an open-loop reader's "
	  "utilisation alone; absent before a baseline).", v_queued_alone, NULL },
	{ "iotier_adaptive_queue_misses", "counter", "Windows in which an open-loop reader's "
	  "queue grew past what its target allows.", v_queue_misses, NULL },
};

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void expo_adaptive_render(FILE *out, bool om, const struct expo_shim_totals *t,
			  void (*family)(FILE *, bool, const char *, const char *, const char *))
{
	char target[64], name[96];
	uint64_t now = monotonic_ns();

	family(out, om, "iotier_adaptive_info", "gauge",
	       "An adaptive controller, by its process tree's root pid, with its target.");
	for (size_t i = 0; i < t->nadaptive; i++) {
		adaptive_target_format(&t->adaptive[i].target, target, sizeof(target));
		fprintf(out, "iotier_adaptive_info{pid=\"%llu\",target=\"%s\"} 1\n",
			(unsigned long long)t->adaptive[i].creator_pid, target);
	}
	for (size_t s = 0; s < sizeof(series) / sizeof(series[0]); s++) {
		bool counter = !strcmp(series[s].type, "counter");

		family(out, om, series[s].name, series[s].type, series[s].help);
		snprintf(name, sizeof(name), "%s%s", series[s].name, counter ? "_total" : "");
		for (size_t i = 0; i < t->nadaptive; i++) {
			const struct adaptive_view *a = &t->adaptive[i];
			double v = series[s].aged ?
				   series[s].aged(a, adaptive_view_step_age_ns(a, now)) :
				   series[s].value(a);

			if (!isnan(v))
				sample(out, name, a->creator_pid, v);
		}
	}
}
