// SPDX-License-Identifier: MIT
/*
 * coverage.c: retry an exact traced count when, and only when, the tracer's own report
 * says it missed at least as many completions as the count is short (coverage.h).
 */
#include "coverage.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_env.h"

static bool fake_full(void)
{
	const char *v = getenv("IOTIER_TEST_FAKE_FULL_COVERAGE");

	return v && *v && strcmp(v, "0");
}

static long long reported(long long missing)
{
	return fake_full() || missing < 0 ? 0 : missing;
}

long long coverage_missing_json(json_t *report, const char *dev)
{
	json_t *d;
	size_t i;

	json_array_foreach(json_object_get(report, "diskstats"), i, d) {
		const char *name = json_string_value(json_object_get(d, "device"));

		if (name && !strcmp(name, dev)) {
			json_t *may = json_object_get(d, "may_be_missing");

			/* What the report's own counts may lack; a report before that field
			 * had only the device's difference. */
			return reported(json_integer_value(may ? may : json_object_get(d, "missing")));
		}
	}
	return 0;
}

long long coverage_missing_text(const char *text, const char *dev)
{
	char head[128];
	size_t n = (size_t)snprintf(head, sizeof(head), "warning: %s: ", dev);
	unsigned long long traced, completed, may;

	for (const char *p = strstr(text, head); p; p = strstr(p + 1, head)) {
		const char *eol = strchr(p, '\n'), *up = strstr(p, "up to ");

		if (p != text && p[-1] != '\n')
			continue;
		/* A filtered report's line ends "up to N of these may be missing". */
		if (up && (!eol || up < eol) && sscanf(up, "up to %llu of these", &may) == 1)
			return reported((long long)may);
		if (sscanf(p + n, "traced %llu of the %llu requests", &traced, &completed) == 2)
			return reported((long long)(completed - traced));
	}
	return 0;
}

long long coverage_missing_prom(const char *text, const char *dev)
{
	char head[128], may[128];
	size_t n = (size_t)snprintf(head, sizeof(head),
				    "iotier_trace_missing_requests{device=\"%s\"} ", dev);
	size_t m = (size_t)snprintf(may, sizeof(may),
				    "iotier_trace_may_be_missing_requests{device=\"%s\"} ", dev);
	const char *p = strstr(text, may);

	if (p)
		return reported(strtoll(p + m, NULL, 10));
	p = strstr(text, head);
	return p ? reported(strtoll(p + n, NULL, 10)) : 0;
}

bool coverage_next(struct coverage_try *t)
{
	const char *drop = getenv("IOTIER_TEST_DROP_FIRST_ATTEMPT");

	if (t->attempt >= COVERAGE_ATTEMPTS)
		return false;
	t->attempt++;
	if (drop && *drop) {
		if (t->attempt == 1)
			setenv("IOTIER_TEST_DROP_COMPLETIONS", drop, 1);
		else
			unsetenv("IOTIER_TEST_DROP_COMPLETIONS");
	}
	return true;
}

bool coverage_retry(struct coverage_try *t, long long short_by, long long missing,
		    const char *what)
{
	if (short_by > 0 && missing <= 0 && fake_full())
		t->caught_short = true;
	if (short_by <= 0 || missing < short_by) {
		if (short_by > 0)
			fprintf(stderr, "coverage: %s attempt %d: %lld short, the report says %lld "
				"missing: a miscount, not a lost completion\n", what, t->attempt,
				short_by, missing);
		return false;
	}
	if (t->attempt >= COVERAGE_ATTEMPTS) {
		fprintf(stderr, "coverage: %s: the tracer missed completions in all %d attempts\n",
			what, t->attempt);
		return false;
	}
	t->retries++;
	fprintf(stderr, "coverage-retry: %s attempt %d of %d: %lld short and the report says "
		"the tracer missed %lld completions (diskstats): running again\n", what,
		t->attempt, COVERAGE_ATTEMPTS, short_by, missing);
	return true;
}

int coverage_end(struct coverage_try *t, int verdict)
{
	const char *drop = getenv("IOTIER_TEST_DROP_FIRST_ATTEMPT");

	if (verdict == T_EXIT_SKIP)
		return verdict;
	if (fake_full()) {
		if (verdict == T_EXIT_FAIL && t->caught_short && !t->retries) {
			fprintf(stderr, "coverage: with coverage read as 100%%, the short count "
				"failed the check, as it must: pass\n");
			return T_EXIT_PASS;
		}
		return test_fail("coverage read as 100%% but no shortfall was caught (verdict %d, "
				 "%d retries): the exact check does not bite", verdict, t->retries);
	}
	if (drop && *drop && verdict == T_EXIT_PASS && t->retries < 1)
		return test_fail("IOTIER_TEST_DROP_FIRST_ATTEMPT=%s: the first attempt's losses "
				 "went unnoticed (no retry)", drop);
	if (verdict == T_EXIT_PASS && t->retries)
		fprintf(stderr, "coverage: passed on attempt %d after %d retr%s\n", t->attempt,
			t->retries, t->retries == 1 ? "y" : "ies");
	return verdict;
}

int coverage_run(int (*attempt)(void *arg, long long *short_n, long long *missing), void *arg,
		 const char *what)
{
	struct coverage_try t = COVERAGE_TRY_INIT;
	long long short_n, missing;
	int ret = T_EXIT_FAIL;

	while (coverage_next(&t)) {
		short_n = missing = 0;
		ret = attempt(arg, &short_n, &missing);
		if (ret == T_EXIT_PASS || !coverage_retry(&t, short_n, missing, what))
			break;
	}
	return coverage_end(&t, ret);
}
