// SPDX-License-Identifier: MIT
/*
 * check-cgroup-config.c: unit tests for the two cgroup settings, IOTIER_CGROUP and
 * IOTIER_LOW_WEIGHT: defaults, every accepted form, and the exact error line for each
 * rejected token, from the environment and from an IOTIER_CONFIG file alike; and whether
 * the weight was given (warned of when the kernel has no weight file) or only the default.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "check_main.h"

static struct config cfg;
static char err[512];
static const char *env_key, *env_value;

/* A one-variable environment: enough to drive config_load key by key. */
static const char *lookup(const char *key, void *ctx)
{
	(void)ctx;
	return env_key && !strcmp(key, env_key) ? env_value : NULL;
}

static int load(const char *key, const char *value)
{
	env_key = key;
	env_value = value;
	err[0] = '\0';
	return config_load(&cfg, lookup, NULL, NULL, err, sizeof(err));
}

START_TEST(test_defaults)
{
	ck_assert_int_eq(load(NULL, NULL), 0);
	ck_assert_int_eq(cfg.cgroup_mode, CGROUP_AUTO);
	ck_assert_uint_eq(cfg.low_weight, 10);
	ck_assert(!cfg.low_weight_given); /* the default: no warning without a weight file */
}
END_TEST

START_TEST(test_modes)
{
	ck_assert_int_eq(load("IOTIER_CGROUP", "off"), 0);
	ck_assert_int_eq(cfg.cgroup_mode, CGROUP_OFF);
	ck_assert_int_eq(load("IOTIER_CGROUP", "auto"), 0);
	ck_assert_int_eq(cfg.cgroup_mode, CGROUP_AUTO);
	ck_assert_int_eq(load("IOTIER_CGROUP", "v1"), 0);
	ck_assert_int_eq(cfg.cgroup_mode, CGROUP_V1);
	ck_assert_int_eq(load("IOTIER_CGROUP", "v2"), 0);
	ck_assert_int_eq(cfg.cgroup_mode, CGROUP_V2);
}
END_TEST

static const char *const bad_modes[] = { "", "V2", "v3", "on", "auto ", "2" };

START_TEST(test_bad_modes)
{
	char want[256];

	ck_assert_int_eq(load("IOTIER_CGROUP", bad_modes[_i]), -1);
	snprintf(want, sizeof(want),
		 "IOTIER_CGROUP: bad cgroup mode '%s': expected off, auto, v1 or v2", bad_modes[_i]);
	ck_assert_str_eq(err, want);
}
END_TEST

START_TEST(test_weights)
{
	ck_assert_int_eq(load("IOTIER_LOW_WEIGHT", "1"), 0);
	ck_assert_uint_eq(cfg.low_weight, 1);
	ck_assert(cfg.low_weight_given);
	ck_assert_int_eq(load("IOTIER_LOW_WEIGHT", "10"), 0); /* the default's value, but asked */
	ck_assert(cfg.low_weight_given);
	ck_assert_int_eq(load("IOTIER_LOW_WEIGHT", "10000"), 0);
	ck_assert_uint_eq(cfg.low_weight, 10000);
	ck_assert_int_eq(load("IOTIER_LOW_WEIGHT", "0100"), 0);
	ck_assert_uint_eq(cfg.low_weight, 100);
}
END_TEST

static const char *const bad_weights[] = {
	"", "0", "10001", "-5", "+5", "10x", " 10", "1e3", "99999999999999999999", "ten",
};

START_TEST(test_bad_weights)
{
	char want[256];

	ck_assert_int_eq(load("IOTIER_LOW_WEIGHT", bad_weights[_i]), -1);
	snprintf(want, sizeof(want),
		 "IOTIER_LOW_WEIGHT: bad weight '%s': expected an integer from 1 to 10000",
		 bad_weights[_i]);
	ck_assert_str_eq(err, want);
}
END_TEST

START_TEST(test_file_keys)
{
	env_key = NULL;
	ck_assert_int_eq(config_load(&cfg, lookup, NULL, "IOTIER_CGROUP = v1\nIOTIER_LOW_WEIGHT=50\n",
				     err, sizeof(err)), 0);
	ck_assert_int_eq(cfg.cgroup_mode, CGROUP_V1);
	ck_assert_uint_eq(cfg.low_weight, 50);
	ck_assert(cfg.low_weight_given);
	ck_assert_int_eq(config_load(&cfg, lookup, NULL, "\nIOTIER_LOW_WEIGHT=0\n", err,
				     sizeof(err)), -1);
	ck_assert_str_eq(err, "IOTIER_CONFIG line 2: IOTIER_LOW_WEIGHT: bad weight '0': "
			 "expected an integer from 1 to 10000");
}
END_TEST

START_TEST(test_environment_beats_file)
{
	env_key = "IOTIER_LOW_WEIGHT";
	env_value = "7";
	ck_assert_int_eq(config_load(&cfg, lookup, NULL, "IOTIER_LOW_WEIGHT=500\n", err,
				     sizeof(err)), 0);
	ck_assert_uint_eq(cfg.low_weight, 7);
}
END_TEST

START_TEST(test_keys_listed)
{
	bool mode = false, weight = false;
	const char *key;

	for (unsigned i = 0; (key = config_key_at(i)); i++) {
		mode |= !strcmp(key, "IOTIER_CGROUP");
		weight |= !strcmp(key, "IOTIER_LOW_WEIGHT");
	}
	ck_assert(mode);
	ck_assert(weight);
}
END_TEST

static Suite *cgroup_config_suite(void)
{
	Suite *s = suite_create("cgroup-config");
	TCase *mode = tcase_create("mode");
	TCase *weight = tcase_create("weight");
	TCase *sources = tcase_create("sources");

	tcase_add_test(mode, test_defaults);
	tcase_add_test(mode, test_modes);
	tcase_add_loop_test(mode, test_bad_modes, 0, sizeof(bad_modes) / sizeof(bad_modes[0]));
	suite_add_tcase(s, mode);

	tcase_add_test(weight, test_weights);
	tcase_add_loop_test(weight, test_bad_weights, 0,
			    sizeof(bad_weights) / sizeof(bad_weights[0]));
	suite_add_tcase(s, weight);

	tcase_add_test(sources, test_file_keys);
	tcase_add_test(sources, test_environment_beats_file);
	tcase_add_test(sources, test_keys_listed);
	suite_add_tcase(s, sources);
	return s;
}

int main(void)
{
	return check_run_suite(cgroup_config_suite());
}
