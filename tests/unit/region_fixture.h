/* SPDX-License-Identifier: MIT */
/*
 * region_fixture.h: a fresh adaptive region for a unit test, with the default parameters
 * and the target @expr, started at @now_ns. Fails the test if it cannot be made.
 */
#ifndef IOTIER_REGION_FIXTURE_H
#define IOTIER_REGION_FIXTURE_H

#include <check.h>

#include "adaptive/adaptive_region.h"

static inline struct adaptive_region *region_fixture(const char *expr, uint64_t now_ns)
{
	struct adaptive_region *region;
	struct adaptive_params p;
	struct adaptive_target t;
	char err[128];

	adaptive_params_default(&p);
	ck_assert_msg(adaptive_target_parse(expr, &t, err, sizeof(err)) == 0, "%s", err);
	region = adaptive_region_create(&p, &t, now_ns);
	ck_assert_ptr_nonnull(region);
	return region;
}

#endif
