// SPDX-License-Identifier: MIT
/*
 * threads_json.c: `iotier threads --json`, the same facts as the table as one JSON document
 * (schema "iotier.threads/1", docs/threads-json.md). Names and cgroup paths go through
 * json_text.h, so a name that is not valid UTF-8 still gives valid JSON and its exact bytes.
 */
#include "threads_json.h"

#include <jansson.h>

#include "adaptive/adaptive_tier.h"
#include "core/core.h"
#include "trace/common/json_text.h"

#define THREADS_JSON_SCHEMA "iotier.threads/1"

static const char *const state_names[] = { "active", "not_loaded", "unknown" };

static json_t *maybe_string(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *row_json(const struct thread_row *row)
{
	json_t *o = json_object();
	char cls[16];
	int bad = !o;

	if (bad)
		return NULL;
	bad |= json_object_set_new(o, "tid", json_integer(row->tid));
	bad |= json_set_text(o, "name", row->name);
	bad |= json_object_set_new(o, "tier", maybe_string(row->tier));
	bad |= json_object_set_new(o, "by", maybe_string(row->by));
	bad |= json_object_set_new(o, "ioprio", row->ioprio < 0 ? json_null() :
				   json_string(ioprio_format(row->ioprio, cls, sizeof(cls))));
	bad |= json_object_set_new(o, "weight", row->weight ? json_integer(row->weight) :
				   json_null());
	if (row->cgroup_ok)
		bad |= json_set_text(o, "cgroup", row->cgroup);
	else
		bad |= json_object_set_new(o, "cgroup", json_null());
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The header's settings; nulls unless the table was read. */
static int set_header(json_t *root, const struct threads_report *r)
{
	const struct state_header *h = &r->header;
	bool active = r->state == THREADS_ACTIVE;
	char low[16], high[16];
	int bad = 0;

	bad |= json_object_set_new(root, "why", active ? json_null() : json_string(r->why));
	bad |= json_object_set_new(root, "low_class", active ?
				   json_string(ioprio_format(h->low_ioprio, low, sizeof(low))) :
				   json_null());
	bad |= json_object_set_new(root, "high_class", active ?
				   json_string(ioprio_format(h->high_ioprio, high, sizeof(high))) :
				   json_null());
	bad |= json_object_set_new(root, "process_tier", !active ? json_null() :
				   json_string(h->process_tier == IOTIER_LOW ? "low" :
					       h->process_tier == IOTIER_HIGH ? "high" : "-"));
	return bad ? -1 : 0;
}

static json_t *limit(uint64_t v, const char *zero)
{
	return v == ADAPTIVE_UNLIMITED ? json_string("unlimited") :
	       v == 0 && zero ? json_string(zero) : json_integer((json_int_t)v);
}

static json_t *known(uint64_t v, bool is)
{
	return is ? json_integer((json_int_t)v) : json_null();
}

/* The step's age, L0 and its floor, the probes, the slots taken back: 0 or -1. */
static int adaptive_more(json_t *o, const struct adaptive_view *v, uint64_t read_ns)
{
	uint64_t age = adaptive_view_step_age_ns(v, read_ns);
	int bad = 0;

	bad |= json_object_set_new(o, "last_step_age_seconds", json_real((double)age / 1e9));
	bad |= json_object_set_new(o, "stale", json_boolean(adaptive_view_stale(v, read_ns, 0)));
	bad |= json_object_set_new(o, "l0_files", known(v->l0_files, v->l0_trigger));
	bad |= json_object_set_new(o, "l0_trigger", known(v->l0_trigger, v->l0_trigger));
	bad |= json_object_set_new(o, "l0_floor", json_integer((json_int_t)v->l0_floor));
	bad |= json_object_set_new(o, "l0_lifts", json_integer((json_int_t)v->l0_lifts));
	bad |= json_object_set_new(o, "valid_probes", json_integer((json_int_t)v->valid_probes));
	bad |= json_object_set_new(o, "void_probes", json_integer((json_int_t)v->void_probes));
	bad |= json_object_set_new(o, "short_probes", json_integer((json_int_t)v->short_probes));
	bad |= json_object_set_new(o, "baseline_reads", known(v->baseline_reads,
							      v->baseline_reads != 0));
	bad |= json_object_set_new(o, "slots_taken_back",
				   json_integer((json_int_t)v->slots_taken_back));
	bad |= json_object_set_new(o, "step_takeovers", json_integer((json_int_t)v->step_takeovers));
	bad |= json_object_set_new(o, "early_misses", json_integer((json_int_t)v->early_misses));
	bad |= json_object_set_new(o, "outside_restores",
				   json_integer((json_int_t)v->outside_restores));
	bad |= json_object_set_new(o, "slow_start", json_boolean(v->slow_start != 0));
	bad |= json_object_set_new(o, "queued_alone_permille",
				   json_integer((json_int_t)v->queued_alone_permille));
	bad |= json_object_set_new(o, "queue_misses", json_integer((json_int_t)v->queue_misses));
	return bad ? -1 : 0;
}

/* The controller (docs/threads-json.md); NULL when out of memory. */
static json_t *adaptive_json(const struct adaptive_view *v, uint64_t read_ns)
{
	char target[64];
	json_t *o;

	adaptive_target_format(&v->target, target, sizeof(target));
	o = json_pack("{s:s, s:I, s:o, s:o, s:I, s:I, s:o, s:o, s:b, s:I, s:f, s:f, "
			 "s:I, s:I, s:I, s:I, s:I}",
			 "target", target, "creator_pid", (json_int_t)v->creator_pid,
			 "baseline_ns", v->target.relative && v->baseline_ns ?
			 json_integer((json_int_t)v->baseline_ns) : json_null(),
			 "bound_ns", v->bound_ns ? json_integer((json_int_t)v->bound_ns) : json_null(),
			 "level", (json_int_t)v->level, "level_full", (json_int_t)v->level_full,
			 "cap", limit(v->cap, "held"), "chunk_bytes", limit(v->chunk, NULL),
			 "probing", (int)v->probing, "low_rate_bytes", (json_int_t)v->rate,
			 "miss_ratio", (double)v->miss_permille / 1000,
			 "held_seconds", (double)v->held_ns / 1e9, "windows", (json_int_t)v->windows,
			 "misses", (json_int_t)v->misses, "probes", (json_int_t)v->probes,
			 "floor_lifts", (json_int_t)v->floor_lifts,
			 "debt_lifts", (json_int_t)v->debt_lifts);
	if (o && adaptive_more(o, v, read_ns)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int threads_report_json(FILE *out, const struct threads_report *r)
{
	json_t *root = json_object(), *threads = json_array();
	int bad = !root || !threads;

	for (size_t i = 0; !bad && i < r->n; i++)
		bad |= json_array_append_new(threads, row_json(&r->rows[i]));
	if (!bad) {
		bad |= json_object_set_new(root, "schema", json_string(THREADS_JSON_SCHEMA));
		bad |= json_object_set_new(root, "pid", json_integer(r->pid));
		bad |= json_object_set_new(root, "iotier", json_string(state_names[r->state]));
		bad |= set_header(root, r);
		bad |= json_object_set_new(root, "adaptive", r->adaptive_state == ADAPTIVE_READ ?
					   adaptive_json(&r->adaptive, r->adaptive_read_ns) :
					   json_null());
		bad |= json_object_set_new(root, "adaptive_why", r->adaptive_state ==
					   ADAPTIVE_UNREADABLE ? json_string(r->adaptive_why) :
					   json_null());
		bad |= json_object_set_new(root, "threads", threads);
		threads = NULL;
	}
	if (!bad)
		bad = json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0 ||
		      fputc('\n', out) == EOF;
	json_decref(threads);
	json_decref(root);
	fflush(out);
	return bad ? -1 : 0;
}
