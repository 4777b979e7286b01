/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * tracked.bpf.h: the map of the command's processes that `iotier check` follows. iotrack
 * owns it (user space seeds it with the child's pid before it execs, and iotrack adds each
 * forked child); iotitle reuses iotrack's map by fd, which libbpf allows only when both
 * definitions are identical: hence one definition, here.
 */
#ifndef IOTIER_TRACKED_BPF_H
#define IOTIER_TRACKED_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);   /* tgid */
	__type(value, __u8);
} tracked SEC(".maps");

#endif
