// SPDX-License-Identifier: MIT
/*
 * check-adaptive-target.c: unit tests of IOTIER_TARGET's parser: every accepted form with
 * the exact value it yields, the canonical form printed back, and the exact error line for
 * each rejected token, through the configuration loader as the shim and CLI use it.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "core/adaptive_target.h"
#include "core/config.h"
#include "check_main.h"

static struct adaptive_target t;
static char err[512];

static const struct {
	const char *text;
	uint16_t permille;
	bool relative;
	uint32_t factor_milli;
	uint64_t latency_ns;
	const char *canonical;
} good[] = {
	{ "read.p99<=2x", 990, true, 2000, 0, "read.p99<=2x" },
	{ "read.p99<=1.5x", 990, true, 1500, 0, "read.p99<=1.5x" },
	{ " read.p99 <= 3x ", 990, true, 3000, 0, "read.p99<=3x" },
	{ "read.p99.9<=1.25x", 999, true, 1250, 0, "read.p99.9<=1.25x" },
	{ "read.p50<=1.1x", 500, true, 1100, 0, "read.p50<=1.1x" },
	{ "read.p90<=100x", 900, true, 100000, 0, "read.p90<=100x" },
	{ "read.p95<=2x", 950, true, 2000, 0, "read.p95<=2x" },
	{ "read.p99<=1.5ms", 990, false, 0, 1500000, "read.p99<=1500us" },
	{ "read.p99<=500us", 990, false, 0, 500000, "read.p99<=500us" },
	{ "read.p99.9<=2s", 999, false, 0, 2000000000, "read.p99.9<=2000000us" },
	{ "read.p50<=10000ns", 500, false, 0, 10000, "read.p50<=10us" },
	{ "read.p99<=0.25ms", 990, false, 0, 250000, "read.p99<=250us" },
};

START_TEST(test_good)
{
	char canonical[64];

	ck_assert_int_eq(adaptive_target_parse(good[_i].text, &t, err, sizeof(err)), 0);
	ck_assert(t.set);
	ck_assert_uint_eq(t.permille, good[_i].permille);
	ck_assert_int_eq(t.relative, good[_i].relative);
	ck_assert_uint_eq(t.factor_milli, good[_i].factor_milli);
	ck_assert_uint_eq(t.latency_ns, good[_i].latency_ns);
	adaptive_target_format(&t, canonical, sizeof(canonical));
	ck_assert_str_eq(canonical, good[_i].canonical);
	/* The canonical form parses back to the same target. */
	ck_assert_int_eq(adaptive_target_parse(canonical, &t, err, sizeof(err)), 0);
	ck_assert_uint_eq(t.factor_milli, good[_i].factor_milli);
	ck_assert_uint_eq(t.latency_ns, good[_i].latency_ns);
}
END_TEST

START_TEST(test_empty_is_off)
{
	ck_assert_int_eq(adaptive_target_parse("", &t, err, sizeof(err)), 0);
	ck_assert(!t.set);
	ck_assert_int_eq(adaptive_target_parse("  ", &t, err, sizeof(err)), 0);
	ck_assert(!t.set);
}
END_TEST

static const struct {
	const char *text, *error;
} bad[] = {
	{ "write.p99<=2x", "bad target 'write.p99<=2x': unknown metric 'write.p99': only "
	  "read.PERCENTILE (the high tier's reads) is timed" },
	{ "read.p98<=2x", "bad target 'read.p98<=2x': unknown percentile 'p98': expected p50, "
	  "p90, p95, p99 or p99.9" },
	{ "read.p999<=2x", "bad target 'read.p999<=2x': unknown percentile 'p999': expected "
	  "p50, p90, p95, p99 or p99.9" },
	{ "read.p99.5<=2x", "bad target 'read.p99.5<=2x': unknown percentile 'p99.5': expected "
	  "p50, p90, p95, p99 or p99.9" },
	{ "read.p99<2x", "bad target 'read.p99<2x': expected '<=' at '<2x'" },
	{ "read.p99", "bad target 'read.p99': expected '<=' at ''" },
	{ "read.p99<=", "bad target 'read.p99<=': bad bound '': expected a factor like 2x or a "
	  "latency like 1.5ms" },
	{ "read.p99<=x", "bad target 'read.p99<=x': bad bound 'x': expected a factor like 2x or "
	  "a latency like 1.5ms" },
	{ "read.p99<=2", "bad target 'read.p99<=2': bad unit in '2': expected x, ns, us, ms or s" },
	{ "read.p99<=2xx", "bad target 'read.p99<=2xx': bad unit in '2xx': expected x, ns, us, "
	  "ms or s" },
	{ "read.p99<=2 x", "bad target 'read.p99<=2 x': bad unit in '2': expected x, ns, us, ms "
	  "or s" },
	{ "read.p99<=1.5min", "bad target 'read.p99<=1.5min': bad unit in '1.5min': expected x, "
	  "ns, us, ms or s" },
	{ "read.p99<=1x", "bad target 'read.p99<=1x': factor '1x' is outside 1.1x to 100x" },
	{ "read.p99<=1000x", "bad target 'read.p99<=1000x': factor '1000x' is outside 1.1x to "
	  "100x" },
	{ "read.p99<=5us", "bad target 'read.p99<=5us': latency '5us' is outside 10us to 10s" },
	{ "read.p99<=11s", "bad target 'read.p99<=11s': latency '11s' is outside 10us to 10s" },
	{ "read.p99<=1.0000001ms", "bad target 'read.p99<=1.0000001ms': bad bound "
	  "'1.0000001ms': expected a factor like 2x or a latency like 1.5ms" },
	{ "read.p99<=-2x", "bad target 'read.p99<=-2x': bad bound '-2x': expected a factor like "
	  "2x or a latency like 1.5ms" },
	{ "read.p99<=99999999999999999999ms", "bad target 'read.p99<=99999999999999999999ms': "
	  "bad bound '99999999999999999999ms': expected a factor like 2x or a latency like "
	  "1.5ms" },
};

START_TEST(test_bad)
{
	ck_assert_int_eq(adaptive_target_parse(bad[_i].text, &t, err, sizeof(err)), -1);
	ck_assert_str_eq(err, bad[_i].error);
}
END_TEST

static const char *env_value;

static const char *lookup(const char *key, void *ctx)
{
	(void)ctx;
	return !strcmp(key, "IOTIER_TARGET") ? env_value : NULL;
}

/* Through the loader: the key exists, its errors carry its name, a file may set it. */
START_TEST(test_config_key)
{
	static struct config cfg;

	env_value = "read.p99<=2x";
	ck_assert_int_eq(config_load(&cfg, lookup, NULL, NULL, err, sizeof(err)), 0);
	ck_assert(cfg.target.set && cfg.target.relative);
	env_value = "read.p99<=1x";
	ck_assert_int_eq(config_load(&cfg, lookup, NULL, NULL, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "IOTIER_TARGET: bad target 'read.p99<=1x': factor '1x' is outside "
			 "1.1x to 100x");
	env_value = NULL;
	ck_assert_int_eq(config_load(&cfg, lookup, NULL, "IOTIER_TARGET=read.p90<=2ms\n"
				     "IOTIER_LOW_MIN_RATE=8M\n", err, sizeof(err)), 0);
	ck_assert_uint_eq(cfg.target.latency_ns, 2000000);
	ck_assert_uint_eq(cfg.low_min_rate, 8u << 20);
	ck_assert_int_eq(config_load(&cfg, lookup, NULL, NULL, err, sizeof(err)), 0);
	ck_assert(!cfg.target.set);
	ck_assert_uint_eq(cfg.low_min_rate, 0);
	ck_assert_int_eq(config_load(&cfg, lookup, NULL, "IOTIER_LOW_MIN_RATE=100\n", err,
				     sizeof(err)), -1);
	ck_assert_str_eq(err, "IOTIER_CONFIG line 1: IOTIER_LOW_MIN_RATE: bad rate '100': 0 (off) "
			 "or at least 4096 bytes per second");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("adaptive-target");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, test_good, 0, sizeof(good) / sizeof(good[0]));
	tcase_add_test(tc, test_empty_is_off);
	tcase_add_loop_test(tc, test_bad, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, test_config_key);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
