// SPDX-License-Identifier: MIT
/*
 * check-config-paths.c: unit tests for the low-path settings (IOTIER_WRITEBACK,
 * IOTIER_WRITEBACK_STRICT, IOTIER_DROP_BEHIND, IOTIER_LOW_RATE): defaults, sizes with
 * suffixes, the file form, glob matching, and the exact error line for every bad form.
 */
#include <check.h>
#include <linux/ioprio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "check_main.h"

static struct config cfg; /* large: rule globs are inline */
static char err[RULE_ERROR_MAX + 64];

/* A fake environment: up to 4 KEY=VALUE pairs. */
static const char *env_keys[4], *env_values[4];

static const char *lookup(const char *key, void *ctx)
{
	(void)ctx;
	for (int i = 0; i < 4; i++)
		if (env_keys[i] && !strcmp(env_keys[i], key))
			return env_values[i];
	return NULL;
}

static void reset(void)
{
	memset(env_keys, 0, sizeof(env_keys));
	err[0] = '\0';
}

static int load1(const char *key, const char *value)
{
	env_keys[0] = key;
	env_values[0] = value;
	return config_load(&cfg, lookup, NULL, NULL, err, sizeof(err));
}

START_TEST(test_defaults)
{
	ck_assert_int_eq(config_load(&cfg, lookup, NULL, NULL, err, sizeof(err)), 0);
	ck_assert_uint_eq(cfg.writeback_bytes, 1u << 20);
	ck_assert(!cfg.writeback_strict);
	ck_assert_uint_eq(cfg.n_drop_globs, 0);
	ck_assert_uint_eq(cfg.low_rate, 0);
}
END_TEST

static const struct {
	const char *text;
	uint64_t bytes;
} good_sizes[] = {
	{ "0", 0 },
	{ "4096", 4096 },
	{ "64k", 64u << 10 },
	{ "8M", 8u << 20 },
	{ "2MiB", 2u << 20 },
	{ "1g", 1ull << 30 },
	{ "3GiB", 3ull << 30 },
	{ "1048576", 1u << 20 },
};

START_TEST(test_sizes)
{
	uint64_t n = 1;

	ck_assert_int_eq(config_parse_size(good_sizes[_i].text, &n, err, sizeof(err)), 0);
	ck_assert_uint_eq(n, good_sizes[_i].bytes);
}
END_TEST

static const struct {
	const char *key, *value, *error;
} bad[] = {
	{ "IOTIER_WRITEBACK", "1X", "IOTIER_WRITEBACK: bad size '1X': expected a byte count with "
				    "an optional K, M or G suffix" },
	{ "IOTIER_WRITEBACK", "", "IOTIER_WRITEBACK: bad size '': expected a byte count with an "
				  "optional K, M or G suffix" },
	{ "IOTIER_WRITEBACK", "-1", "IOTIER_WRITEBACK: bad size '-1': expected a byte count with "
				    "an optional K, M or G suffix" },
	{ "IOTIER_WRITEBACK", "1Mx", "IOTIER_WRITEBACK: bad size '1Mx': expected a byte count "
				     "with an optional K, M or G suffix" },
	{ "IOTIER_WRITEBACK", "99999999999999999999", "IOTIER_WRITEBACK: bad size "
		"'99999999999999999999': expected a byte count with an optional K, M or G suffix" },
	{ "IOTIER_WRITEBACK", "100", "IOTIER_WRITEBACK: bad size '100': 0 (off) or at least 4096 "
				     "bytes" },
	{ "IOTIER_WRITEBACK_STRICT", "yes", "IOTIER_WRITEBACK_STRICT: bad value 'yes': expected 0 "
					    "or 1" },
	{ "IOTIER_DROP_BEHIND", "*.log,,x", "IOTIER_DROP_BEHIND: bad glob list '*.log,,x': empty "
					    "glob at offset 6" },
	{ "IOTIER_DROP_BEHIND", "*.log, ", "IOTIER_DROP_BEHIND: bad glob list '*.log, ': empty "
					   "glob at offset 7" },
	{ "IOTIER_LOW_RATE", "10 M", "IOTIER_LOW_RATE: bad size '10 M': expected a byte count "
				     "with an optional K, M or G suffix" },
	{ "IOTIER_LOW_RATE", "1k", "IOTIER_LOW_RATE: bad rate '1k': 0 (off) or at least 4096 "
				   "bytes per second" },
};

START_TEST(test_bad_values)
{
	ck_assert_int_eq(load1(bad[_i].key, bad[_i].value), -1);
	ck_assert_str_eq(err, bad[_i].error);
}
END_TEST

START_TEST(test_too_many_globs)
{
	char list[DROP_GLOBS_MAX * 4 + 8] = "";

	for (int i = 0; i <= DROP_GLOBS_MAX; i++)
		strcat(list, i ? ",*.x" : "*.x");
	ck_assert_int_eq(load1("IOTIER_DROP_BEHIND", list), -1);
	ck_assert_str_eq(err, "IOTIER_DROP_BEHIND: bad glob list: more than 16 globs");
}
END_TEST

START_TEST(test_good_values)
{
	env_keys[0] = "IOTIER_WRITEBACK";
	env_values[0] = "256K";
	env_keys[1] = "IOTIER_WRITEBACK_STRICT";
	env_values[1] = "1";
	env_keys[2] = "IOTIER_DROP_BEHIND";
	env_values[2] = " *.log , */pg_wal/* ";
	env_keys[3] = "IOTIER_LOW_RATE";
	env_values[3] = "20M";
	ck_assert_int_eq(config_load(&cfg, lookup, NULL, NULL, err, sizeof(err)), 0);
	ck_assert_uint_eq(cfg.writeback_bytes, 256u << 10);
	ck_assert(cfg.writeback_strict);
	ck_assert_uint_eq(cfg.n_drop_globs, 2);
	ck_assert_str_eq(cfg.drop_globs[0], "*.log");
	ck_assert_str_eq(cfg.drop_globs[1], "*/pg_wal/*");
	ck_assert_uint_eq(cfg.low_rate, 20u << 20);
}
END_TEST

START_TEST(test_off)
{
	ck_assert_int_eq(load1("IOTIER_WRITEBACK", "0"), 0);
	ck_assert_uint_eq(cfg.writeback_bytes, 0);
	ck_assert_int_eq(load1("IOTIER_DROP_BEHIND", ""), 0);
	ck_assert_uint_eq(cfg.n_drop_globs, 0);
}
END_TEST

START_TEST(test_file_form)
{
	const char *text = "IOTIER_WRITEBACK = 2M\nIOTIER_DROP_BEHIND=*/LOG*\nIOTIER_LOW_RATE=1G\n";

	env_keys[0] = "IOTIER_LOW_RATE"; /* the environment wins over the file */
	env_values[0] = "8M";
	ck_assert_int_eq(config_load(&cfg, lookup, NULL, text, err, sizeof(err)), 0);
	ck_assert_uint_eq(cfg.writeback_bytes, 2u << 20);
	ck_assert_uint_eq(cfg.n_drop_globs, 1);
	ck_assert_uint_eq(cfg.low_rate, 8u << 20);
	ck_assert_int_eq(config_load(&cfg, lookup, NULL, "IOTIER_WRITEBACK_STRICT=2\n", err,
				     sizeof(err)), -1);
	ck_assert_str_eq(err, "IOTIER_CONFIG line 1: IOTIER_WRITEBACK_STRICT: bad value '2': "
			      "expected 0 or 1");
}
END_TEST

/* Under a target the low class is be:7 unless one is given (docs/adaptive.md). */
START_TEST(test_target_low_class)
{
	const int idle = IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0);

	ck_assert_int_eq(config_load(&cfg, lookup, NULL, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(cfg.low_ioprio, idle);
	ck_assert_int_eq(load1("IOTIER_TARGET", "read.p99<=2x"), 0);
	ck_assert_int_eq(cfg.low_ioprio, IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 7));
	env_keys[1] = "IOTIER_LOW_CLASS";
	env_values[1] = "idle";
	ck_assert_int_eq(config_load(&cfg, lookup, NULL, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(cfg.low_ioprio, idle);
	env_values[1] = "be:3";
	ck_assert_int_eq(config_load(&cfg, lookup, NULL, "IOTIER_TARGET=read.p99<=1ms\n", err,
					 sizeof(err)), 0);
	ck_assert_int_eq(cfg.low_ioprio, IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 3));
	/* A class given in the file counts as given too. */
	env_keys[1] = NULL;
	ck_assert_int_eq(config_load(&cfg, lookup, NULL, "IOTIER_LOW_CLASS=idle\n", err,
					 sizeof(err)), 0);
	ck_assert_int_eq(cfg.low_ioprio, idle);
}
END_TEST

START_TEST(test_drop_matching)
{
	ck_assert_int_eq(load1("IOTIER_DROP_BEHIND", "*.log,*/pg_wal/*"), 0);
	ck_assert(config_drop_behind_matches(&cfg, "/var/lib/db/000012.log"));
	ck_assert(config_drop_behind_matches(&cfg, "app.log"));
	ck_assert(config_drop_behind_matches(&cfg, "/data/pg_wal/000000010000000000000001"));
	ck_assert(!config_drop_behind_matches(&cfg, "/var/lib/db/000012.sst"));
	ck_assert(!config_drop_behind_matches(&cfg, "/var/lib/db/log.old"));
}
END_TEST

static Suite *config_paths_suite(void)
{
	Suite *s = suite_create("config-paths");
	TCase *parse = tcase_create("parse");
	TCase *errors = tcase_create("errors");
	TCase *match = tcase_create("match");

	tcase_add_checked_fixture(parse, reset, NULL);
	tcase_add_test(parse, test_defaults);
	tcase_add_loop_test(parse, test_sizes, 0, sizeof(good_sizes) / sizeof(good_sizes[0]));
	tcase_add_test(parse, test_good_values);
	tcase_add_test(parse, test_off);
	tcase_add_test(parse, test_file_form);
	tcase_add_test(parse, test_target_low_class);
	suite_add_tcase(s, parse);

	tcase_add_checked_fixture(errors, reset, NULL);
	tcase_add_loop_test(errors, test_bad_values, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(errors, test_too_many_globs);
	suite_add_tcase(s, errors);

	tcase_add_checked_fixture(match, reset, NULL);
	tcase_add_test(match, test_drop_matching);
	suite_add_tcase(s, match);
	return s;
}

int main(void)
{
	return check_run_suite(config_paths_suite());
}
