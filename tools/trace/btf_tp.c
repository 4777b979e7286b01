// SPDX-License-Identifier: MIT
/*
 * btf_tp.c: read a tracepoint's signature from the kernel's BTF (its btf_trace_<name>
 * typedef), so a tracer picks its program by what the kernel says, never by a version.
 */
#include "btf_tp.h"

#include <bpf/btf.h>
#include <stdio.h>
#include <string.h>

int btf_tp_params(const struct btf *btf, const char *tp, const char *first)
{
	const struct btf_type *t, *proto;
	const struct btf_param *p;
	char name[128];
	int id;

	if (!btf)
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
