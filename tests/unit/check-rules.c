// SPDX-License-Identifier: MIT
/*
 * check-rules.c: unit tests for rule and class parsing and for glob matching: every invalid
 * form has its exact error text pinned, since that line is all a user sees of a bad setting.
 */
#include <check.h>
#include <linux/ioprio.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rules.h"
#include "check_main.h"

static struct rule_set set;
static char err[RULE_ERROR_MAX];

/*
 * Count the program's mallocs, glibc's own included (its internal calls go through the
 * interposable symbol), to show matching allocates nothing. Not under ASan or TSan, whose
 * runtimes own malloc themselves.
 */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define COUNTS_MALLOC 1
extern void *__libc_malloc(size_t size);
static unsigned mallocs;

void *malloc(size_t size)
{
	mallocs++;
	return __libc_malloc(size);
}
#endif

static void reset(void)
{
	err[0] = '\0';
}

START_TEST(test_default_kind_is_thread)
{
	ck_assert_int_eq(rule_set_parse("rocksdb:low*", &set, err, sizeof(err)), 0);
	ck_assert_uint_eq(set.count, 1);
	ck_assert_int_eq(set.rules[0].kind, RULE_THREAD);
	ck_assert_str_eq(set.rules[0].glob, "rocksdb:low*");
}
END_TEST

START_TEST(test_kinds_and_whitespace)
{
	ck_assert_int_eq(rule_set_parse(" thread:a* , comm:pg_dump,cmdline:postgres: *vacuum*",
					&set, err, sizeof(err)), 0);
	ck_assert_uint_eq(set.count, 3);
	ck_assert_int_eq(set.rules[0].kind, RULE_THREAD);
	ck_assert_str_eq(set.rules[0].glob, "a*");
	ck_assert_int_eq(set.rules[1].kind, RULE_COMM);
	ck_assert_str_eq(set.rules[1].glob, "pg_dump");
	ck_assert_int_eq(set.rules[2].kind, RULE_CMDLINE);
	ck_assert_str_eq(set.rules[2].glob, "postgres: *vacuum*");
	ck_assert_uint_eq(set.kind_mask, 7);
}
END_TEST

START_TEST(test_empty_list_is_valid)
{
	ck_assert_int_eq(rule_set_parse("", &set, err, sizeof(err)), 0);
	ck_assert_uint_eq(set.count, 0);
	ck_assert_int_eq(rule_set_parse(NULL, &set, err, sizeof(err)), 0);
}
END_TEST

static const struct {
	const char *input;
	const char *error;
} bad_rules[] = {
	{ "a,,b", "bad rule list 'a,,b': empty rule at offset 2" },
	{ "a,", "bad rule list 'a,': empty rule at offset 2" },
	{ "thread:", "bad rule 'thread:': empty glob after 'thread:'" },
	{ "cmdline:", "bad rule 'cmdline:': empty glob after 'cmdline:'" },
	{ "comm:[abc", "bad rule 'comm:[abc': unclosed '[' in glob" },
	/* fnmatch accepts these and never matches anything with them */
	{ "comm:[[:alpha:]", "bad rule 'comm:[[:alpha:]': unclosed '[' in glob" },
	{ "low\\", "bad rule 'low\\': glob ends in a lone '\\'" },
	{ "x[[:dgit:]]", "bad rule 'x[[:dgit:]]': unknown [:class:] in glob" },
	{ "thread:abcdefghijklmnop",
	  "bad rule 'thread:abcdefghijklmnop': a thread name has at most 15 characters, so it can never match" },
	{ "comm:abcdefghijklmnop*",
	  "bad rule 'comm:abcdefghijklmnop*': a process name has at most 15 characters, so it can never match" },
};

START_TEST(test_bad_rules)
{
	ck_assert_int_eq(rule_set_parse(bad_rules[_i].input, &set, err, sizeof(err)), -1);
	ck_assert_str_eq(err, bad_rules[_i].error);
}
END_TEST

/* A POSIX class is one character, however long its name: these fit in 15. */
START_TEST(test_posix_classes)
{
	ck_assert_int_eq(rule_set_parse("compaction-[[:digit:]][[:digit:]][[:digit:]]", &set, err,
					sizeof(err)), 0);
	ck_assert(rule_set_matches(&set, RULE_THREAD, "compaction-042"));
	ck_assert(!rule_set_matches(&set, RULE_THREAD, "compaction-04x"));
	ck_assert_int_eq(rule_set_parse("comm:[![:space:]]*[]x]", &set, err, sizeof(err)), 0);
	ck_assert(rule_set_matches(&set, RULE_COMM, "db]"));
	ck_assert_int_eq(rule_set_parse("a\\[", &set, err, sizeof(err)), 0);
	ck_assert(rule_set_matches(&set, RULE_THREAD, "a["));
}
END_TEST

START_TEST(test_too_many_rules)
{
	char *text = malloc(RULES_MAX * 3 + 8);
	size_t n = 0;

	for (int i = 0; i <= RULES_MAX; i++)
		n += (size_t)sprintf(text + n, "%sa", i ? "," : "");
	ck_assert_int_eq(rule_set_parse(text, &set, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "bad rule list: more than 128 rules");
	free(text);
}
END_TEST

START_TEST(test_cmdline_may_be_long)
{
	ck_assert_int_eq(rule_set_parse("cmdline:/usr/lib/postgresql/15/bin/postgres*", &set, err,
					sizeof(err)), 0);
}
END_TEST

START_TEST(test_classes)
{
	ck_assert_int_eq(low_class_parse("idle", err, sizeof(err)),
			 IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0));
	ck_assert_int_eq(low_class_parse("be:7", err, sizeof(err)),
			 IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 7));
	ck_assert_int_eq(low_class_parse("be:0", err, sizeof(err)),
			 IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 0));
	ck_assert_int_eq(high_class_parse("keep", err, sizeof(err)), IOPRIO_KEEP);
	ck_assert_int_eq(high_class_parse("rt:0", err, sizeof(err)),
			 IOPRIO_PRIO_VALUE(IOPRIO_CLASS_RT, 0));
	ck_assert_int_eq(high_class_parse("be:3", err, sizeof(err)),
			 IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 3));
}
END_TEST

static const char *const bad_low[] = { "be:8", "be:", "be", "rt:0", "idle:1", "be:-1", "be:1x",
				       "", "IDLE" };

START_TEST(test_bad_low_class)
{
	char want[128];

	ck_assert_int_eq(low_class_parse(bad_low[_i], err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "bad low class '%s': expected idle or be:0 to be:7",
		 bad_low[_i]);
	ck_assert_str_eq(err, want);
}
END_TEST

static const char *const bad_high[] = { "idle", "rt:8", "be", "kept", "rt:", "" };

START_TEST(test_bad_high_class)
{
	char want[128];

	ck_assert_int_eq(high_class_parse(bad_high[_i], err, sizeof(err)), -2);
	snprintf(want, sizeof(want),
		 "bad high class '%s': expected keep, be:0 to be:7 or rt:0 to rt:7", bad_high[_i]);
	ck_assert_str_eq(err, want);
}
END_TEST

START_TEST(test_format)
{
	char buf[16];

	ck_assert_str_eq(ioprio_format(IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0), buf, sizeof(buf)),
			 "idle");
	ck_assert_str_eq(ioprio_format(IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 4), buf, sizeof(buf)),
			 "be:4");
	ck_assert_str_eq(ioprio_format(0, buf, sizeof(buf)), "none");
	ck_assert_str_eq(ioprio_format(IOPRIO_KEEP, buf, sizeof(buf)), "keep");
}
END_TEST

START_TEST(test_glob_matching)
{
	ck_assert_int_eq(rule_set_parse("rocksdb:low*,comp[0-9],cmdline:*autovacuum*", &set, err,
					sizeof(err)), 0);
	ck_assert(rule_set_matches(&set, RULE_THREAD, "rocksdb:low"));
	ck_assert(rule_set_matches(&set, RULE_THREAD, "rocksdb:low12"));
	ck_assert(!rule_set_matches(&set, RULE_THREAD, "rocksdb:high0"));
	ck_assert(rule_set_matches(&set, RULE_THREAD, "comp7"));
	ck_assert(!rule_set_matches(&set, RULE_THREAD, "compX"));
	ck_assert(!rule_set_matches(&set, RULE_COMM, "rocksdb:low"));
	ck_assert(rule_set_matches(&set, RULE_CMDLINE, "postgres: 15/main: autovacuum worker"));
	ck_assert(!rule_set_matches(&set, RULE_CMDLINE, NULL));
}
END_TEST

/*
 * A program in a UTF-8 locale: matching a 3000-byte command line must not malloc (a signal
 * handler may be doing the I/O that triggers it), and globs match bytes there as in "C".
 */
START_TEST(test_glob_matching_ignores_program_locale)
{
	static char cmdline[3000];

	ck_assert_ptr_nonnull(setlocale(LC_ALL, "C.UTF-8"));
	memset(cmdline, 'x', sizeof(cmdline) - 1);
	memcpy(cmdline + 2000, "--compact", 9);
	ck_assert_int_eq(rule_set_parse("cmdline:*--compact*,cmdline:*zzz*,caf?", &set, err,
					sizeof(err)), 0);
	/* Both results are taken before asserting: Check's asserts allocate themselves. */
#ifdef COUNTS_MALLOC
	mallocs = 0;
#endif
	bool found = rule_set_matches(&set, RULE_CMDLINE, cmdline);
	bool absent = !glob_match("*zzz*", cmdline);
#ifdef COUNTS_MALLOC
	ck_assert_uint_eq(mallocs, 0);
#endif
	ck_assert(found);
	ck_assert(absent);
	/* "é" is two bytes: one '?' does not cover it in any locale. */
	ck_assert(!rule_set_matches(&set, RULE_THREAD, "caf\xc3\xa9"));
	ck_assert(glob_match("caf??", "caf\xc3\xa9"));
	ck_assert(rule_set_matches(&set, RULE_THREAD, "cafe"));
	setlocale(LC_ALL, "C");
}
END_TEST

START_TEST(test_precedence)
{
	struct tier_rules *r = calloc(1, sizeof(*r));

	ck_assert_int_eq(rule_set_parse("comm:db,thread:bg*,thread:x*", &r->low, err, sizeof(err)), 0);
	ck_assert_int_eq(rule_set_parse("thread:bgfast,thread:x*", &r->high, err, sizeof(err)), 0);
	/* high beats low at the same level */
	ck_assert_int_eq(tier_from_thread_rules(r, "x1"), IOTIER_HIGH);
	ck_assert_int_eq(tier_from_thread_rules(r, "bgslow"), IOTIER_LOW);
	ck_assert_int_eq(tier_from_thread_rules(r, "bgfast"), IOTIER_HIGH);
	ck_assert_int_eq(tier_from_thread_rules(r, "main"), IOTIER_DEFAULT);
	ck_assert_int_eq(tier_from_process_rules(r, "db", "db --flag"), IOTIER_LOW);
	/* a thread rule beats a process rule, an explicit call beats both */
	ck_assert_int_eq(tier_resolve(IOTIER_DEFAULT, IOTIER_HIGH, IOTIER_LOW), IOTIER_HIGH);
	ck_assert_int_eq(tier_resolve(IOTIER_DEFAULT, IOTIER_DEFAULT, IOTIER_LOW), IOTIER_LOW);
	ck_assert_int_eq(tier_resolve(IOTIER_LOW, IOTIER_HIGH, IOTIER_HIGH), IOTIER_LOW);
	free(r);
}
END_TEST

static Suite *rules_suite(void)
{
	Suite *s = suite_create("rules");
	TCase *parse = tcase_create("parse");
	TCase *classes = tcase_create("classes");
	TCase *match = tcase_create("match");

	tcase_add_checked_fixture(parse, reset, NULL);
	tcase_add_test(parse, test_default_kind_is_thread);
	tcase_add_test(parse, test_kinds_and_whitespace);
	tcase_add_test(parse, test_empty_list_is_valid);
	tcase_add_loop_test(parse, test_bad_rules, 0, sizeof(bad_rules) / sizeof(bad_rules[0]));
	tcase_add_test(parse, test_too_many_rules);
	tcase_add_test(parse, test_posix_classes);
	tcase_add_test(parse, test_cmdline_may_be_long);
	suite_add_tcase(s, parse);

	tcase_add_checked_fixture(classes, reset, NULL);
	tcase_add_test(classes, test_classes);
	tcase_add_loop_test(classes, test_bad_low_class, 0, sizeof(bad_low) / sizeof(bad_low[0]));
	tcase_add_loop_test(classes, test_bad_high_class, 0, sizeof(bad_high) / sizeof(bad_high[0]));
	tcase_add_test(classes, test_format);
	suite_add_tcase(s, classes);

	tcase_add_test(match, test_glob_matching);
	tcase_add_test(match, test_glob_matching_ignores_program_locale);
	tcase_add_test(match, test_precedence);
	suite_add_tcase(s, match);
	return s;
}

int main(void)
{
	return check_run_suite(rules_suite());
}
