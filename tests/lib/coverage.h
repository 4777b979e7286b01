/* SPDX-License-Identifier: MIT */
/*
 * coverage.h: exact traced counts against the tracer's own coverage report. On this kernel
 * the program on block_rq_complete is, rarely, not run for a completion (docs/lat.md "The
 * lost completions seen on this kernel"); `iotier lat` and `iotier check` then say so,
 * comparing their completions with the device's diskstats. A test whose exact count comes
 * up short by no more than the report says is missing runs again, up to COVERAGE_ATTEMPTS
 * in all; a run with full coverage must match exactly, and nothing is ever excused.
 *
 *	return coverage_run(one_attempt, arg, "lat exact");
 *
 * where one_attempt() traces, judges, and says how many requests its exact count came up
 * short and how many completions the report said were missing.
 *
 * Two test-only settings prove that this neither hides a miscount nor fails on a loss:
 *   IOTIER_TEST_DROP_FIRST_ATTEMPT=N  the first attempt runs with
 *       IOTIER_TEST_DROP_COMPLETIONS=N (the tracer forgets every Nth completion), later ones
 *       without: the test passes only if the loss was noticed, retried, and the retry held.
 *   IOTIER_TEST_FAKE_FULL_COVERAGE=1  every report is read as covering 100%: with
 *       IOTIER_TEST_DROP_COMPLETIONS set, the exact check must catch the shortfall on its own
 *       (no retry); the test passes only if it did, and fails if the counts held.
 */
#ifndef IOTIER_COVERAGE_H
#define IOTIER_COVERAGE_H

#include <stdbool.h>

#define COVERAGE_ATTEMPTS 3

struct coverage_try {
	int attempt;            /* 1-based, the one running */
	int retries;
	bool caught_short;      /* a shortfall failed with coverage read as 100% */
};
#define COVERAGE_TRY_INIT { 0, 0, false }

/*
 * The completions the tracer reported missing on device @dev ("loop7"), > 0 only when it
 * reported losing some: from a JSON report's "diskstats" array (lat, check: may_be_missing),
 * from the text report's warning line (a filtered report's "up to N of these may be
 * missing"), or from the Prometheus gauges (iotier_trace_may_be_missing_requests). 0 when
 * the report has no figure for @dev (or under IOTIER_TEST_FAKE_FULL_COVERAGE).
 */
struct json_t;
long long coverage_missing_json(struct json_t *report, const char *dev);
long long coverage_missing_text(const char *text, const char *dev);
long long coverage_missing_prom(const char *text, const char *dev);

/*
 * Run @attempt (its verdict: T_EXIT_*) until it passes, or fails otherwise than short by
 * at most what its report says is missing, or COVERAGE_ATTEMPTS have run; its exit status,
 * from coverage_end(). @attempt sets *@short_n (requests short; <= 0: none, or too many)
 * and *@missing (coverage_missing_*()); both start at 0.
 */
int coverage_run(int (*attempt)(void *arg, long long *short_n, long long *missing), void *arg,
		 const char *what);

/* The steps of coverage_run(), for a test that drives its own loop. */
/* Start the next attempt; false once COVERAGE_ATTEMPTS have run. */
bool coverage_next(struct coverage_try *t);

/*
 * After a failed attempt whose exact count was @short_by requests short (<= 0: not short)
 * while the report said @missing completions were missing: true, with a line on stderr
 * that starts "coverage-retry:", when the attempt is to run again (0 < @short_by <=
 * @missing, attempts left). Otherwise false, saying why the failure stands.
 */
bool coverage_retry(struct coverage_try *t, long long short_by, long long missing,
		    const char *what);

/* The test's exit status from the last attempt's @verdict (see the settings above). */
int coverage_end(struct coverage_try *t, int verdict);

#endif
