/* SPDX-License-Identifier: MIT */
/*
 * filters.bpf.h: the process and device filters the tracers share, for the BPF programs
 * only. One definition each, so that a map handed from one object to another by fd
 * (iotitle takes iotrack's `tracked`) has the same shape by construction.
 *
 *  - TRACKED_MAP: the map of followed processes (tgid -> 1), filled by user space and by
 *    the programs' fork handlers.
 *  - DEV_FILTER(max): the rodata device list (kernel dev_t, n_devs 0: every device), set
 *    before load so the verifier drops the loop when it is unused, and dev_wanted().
 */
#ifndef IOTIER_FILTERS_BPF_H
#define IOTIER_FILTERS_BPF_H

#define TRACKED_MAP                                                                         \
	struct {                                                                            \
		__uint(type, BPF_MAP_TYPE_HASH);                                            \
		__uint(max_entries, 8192);                                                  \
		__type(key, __u32);                                                         \
		__type(value, __u8);                                                        \
	} tracked SEC(".maps")

#define DEV_FILTER(max)                                                                     \
	const volatile __u32 n_devs = 0;                                                    \
	const volatile __u32 devs[max] = {};                                                \
	static __always_inline bool dev_wanted(__u32 dev)                                   \
	{                                                                                   \
		if (!n_devs)                                                                \
			return true;                                                        \
		for (__u32 i = 0; i < (max); i++) {                                         \
			if (i >= n_devs)                                                    \
				break;                                                      \
			if (devs[i] == dev)                                                 \
				return true;                                                \
		}                                                                           \
		return false;                                                               \
	}

#endif
