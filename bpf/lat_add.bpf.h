/* SPDX-License-Identifier: MIT */
/*
 * lat_add.bpf.h: add one latency to a shared struct iolat_lat (a hash map value that
 * several CPUs update at once), for the BPF programs only. iolat's own maps are per-CPU
 * and add without atomics.
 */
#ifndef IOTIER_LAT_ADD_BPF_H
#define IOTIER_LAT_ADD_BPF_H

#include "iolat.h"

static __always_inline void lat_add_shared(struct iolat_lat *l, __u64 ns)
{
	__u64 b = hist_bucket(ns);

	/* One register for the check and the index, or the verifier sees an unchecked copy. */
	barrier_var(b);
	if (b >= HIST_NR_BUCKETS)
		return;
	__sync_fetch_and_add(&l->slots[b], 1);
	__sync_fetch_and_add(&l->count, 1);
	__sync_fetch_and_add(&l->sum_ns, ns);
	/* Racy by design: min and max may miss one of two concurrent updates. */
	if (!l->min_ns || ns < l->min_ns)
		l->min_ns = ns;
	if (ns > l->max_ns)
		l->max_ns = ns;
}

#endif
