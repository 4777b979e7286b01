/* SPDX-License-Identifier: MIT */
/*
 * iotitle.h: types shared by bpf/iotitle.bpf.c and `iotier check` (tools/trace/check_trace.c).
 * The BPF side copies the title (argument area) of each process of the traced tree when
 * it submits I/O or dirties page cache and the title has changed since it last did, so
 * that cmdline: rules are applied to the command line the process had when it did the I/O:
 * a forked child that rewrites its title (PostgreSQL's autovacuum workers) is seen as the
 * shim sees it. Only fixed-width fields.
 */
#ifndef IOTIER_IOTITLE_H
#define IOTIER_IOTITLE_H

#define IOTITLE_MAX 4096   /* TITLE_MAX of shim/core/title.h: the bytes the shim looks at */

struct iotitle_event {
	__u32 tgid;
	__u32 arg_len;     /* arg_end - arg_start: the argument area, maybe larger than read */
	__u32 len;         /* bytes read from arg_start, the environment's first part included
			    * when the argument area does not end in a NUL */
	__u32 pad;
	char bytes[IOTITLE_MAX];
};

#endif
