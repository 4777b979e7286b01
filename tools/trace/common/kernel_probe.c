// SPDX-License-Identifier: MIT
/*
 * kernel_probe.c: reads tracepoint signatures from the kernel's BTF (btf_trace_<name>
 * typedefs) for `iotier lat` and `iotier check`, and names what is missing in one line.
 */
#include "kernel_probe.h"

#include <bpf/btf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk.h"

/* The test hook: IOTIER_TEST_HIDE_BTF lists tracepoints to take as missing. */
static bool hidden(const char *tp)
{
	const char *list = getenv("IOTIER_TEST_HIDE_BTF");
	size_t n = strlen(tp);

	while (list && *list) {
		size_t len = strcspn(list, ",");

		if (len == n && !strncmp(list, tp, n))
			return true;
		list += len;
		list += *list == ',';
	}
	return false;
}

int kernel_tp_args(const struct btf *btf, const char *tp, const char *first)
{
	const struct btf_type *t, *proto;
	const struct btf_param *p;
	char name[128];
	int id;

	if (!btf || hidden(tp))
		return -1;
	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	id = btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF);
	if (id < 0)
		return -1;
	t = btf__type_by_id(btf, btf__type_by_id(btf, id)->type);
	if (!t || !btf_is_ptr(t))
		return -1;
	proto = btf__type_by_id(btf, t->type);
	/* The first parameter is the tracepoint's void *data; the real arguments follow. */
	if (!proto || !btf_is_func_proto(proto) || btf_vlen(proto) < 2)
		return -1;
	p = btf_params(proto);
	t = btf__type_by_id(btf, p[1].type);
	if (!t || !btf_is_ptr(t))
		return -1;
	id = btf__resolve_type(btf, t->type);
	t = id < 0 ? NULL : btf__type_by_id(btf, id);
	if (!t || !btf_is_struct(t) || strcmp(btf__name_by_offset(btf, t->name_off), first))
		return -1;
	return btf_vlen(proto) - 1;
}

int kernel_blk_start(const struct btf *btf, char *err, size_t errlen)
{
	if (kernel_tp_args(btf, "block_io_start", "request") == 1)
		return BLK_START_IO_START;
	/* block_getrq took (queue, bio, op) until 5.11; the bio alone since. */
	if (kernel_tp_args(btf, "block_getrq", "bio") == 1)
		return BLK_START_GETRQ;
	snprintf(err, errlen, "this kernel cannot name the task that submitted a request: it "
		 "lacks both the block_io_start tracepoint (Linux 6.5 and later) and block_getrq(bio) "
		 "(Linux 5.11 and later)");
	return -1;
}

/* A tracepoint `iotier check` needs, and the first kernel with the signature it reads. */
struct need {
	const char *tp, *first;
	int min_args;
	const char *since;
};

static const struct need check_needs[] = {
	{ "block_rq_insert", "request", 1, "5.11" },
	{ "block_rq_issue", "request", 1, "5.11" },
	{ "block_rq_requeue", "request", 1, "5.11" },
	{ "block_rq_merge", "request", 1, "5.11" },
	{ "block_rq_complete", "request", 3, "4.14" },
	{ "writeback_dirty_folio", "folio", 2, "5.18" },
	{ "sched_process_fork", "task_struct", 2, "4.14" },
	{ "sched_process_exec", "task_struct", 3, "4.14" },
	{ "sched_process_exit", "task_struct", 1, "4.14" },
};

int kernel_check_tracepoints(const struct btf *btf, char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof(check_needs) / sizeof(check_needs[0]); i++) {
		const struct need *n = &check_needs[i];

		if (kernel_tp_args(btf, n->tp, n->first) >= n->min_args)
			continue;
		snprintf(err, errlen, "this kernel lacks the %s tracepoint in its BTF (Linux %s and "
			 "later have it)", n->tp, n->since);
		return -1;
	}
	return kernel_blk_start(btf, err, errlen) < 0 ? -1 : 0;
}
