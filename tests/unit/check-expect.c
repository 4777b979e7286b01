// SPDX-License-Identifier: MIT
/*
 * check-expect.c: unit tests of the `iotier check` expression language (tools/trace/expect.c).
 * The error messages are pinned word for word because they are the interface a CI user sees
 * when an expectation is mistyped: each must name the column and the bad token.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "trace/expect/expect.h"

static struct expect e;
static char err[EXPECT_ERROR_MAX];

/* A fake run: high reads p99 = 1.5ms, low writes at idle except 4 KiB leaked at be:4. */
static int fake_lookup(const struct expect_ref *ref, struct expect_value *out, void *ctx)
{
	(void)ctx;
	memset(out, 0, sizeof(*out));
	if (ref->tier == TIER_DEFAULT)
		return -1; /* no I/O at all */
	switch (ref->metric) {
	case METRIC_PERCENTILE:
		if (ref->baseline)
			out->v = ref->percentile >= 99.9 ? 1e6 : 5e5;
		else
			out->v = ref->percentile >= 99.9 ? 4e6 : 1.5e6;
		return 0;
	case METRIC_BYTES:
		out->v = ref->leak ? 4096 : 1 << 20;
		return 0;
	case METRIC_COUNT:
		out->v = 256;
		return 0;
	case METRIC_CLASS:
		out->class_mask = ref->tier == TIER_LOW && ref->op == OP_WRITE ?
			EXPECT_CLASS_BIT(3, 0) | EXPECT_CLASS_BIT(2, 4) : EXPECT_CLASS_BIT(3, 0);
		return 0;
	case METRIC_RATIO:
		out->v = 4096.0 / (1 << 20);
		return 0;
	default:
		out->v = 2e6;
		return 0;
	}
}

static bool run(const char *text, bool baseline)
{
	struct expect_result res;

	ck_assert_msg(expect_parse(text, baseline, &e, err, sizeof(err)) == 0, "%s: %s", text, err);
	return expect_eval(&e, fake_lookup, NULL, &res);
}

static void parse_fails(const char *text, const char *want)
{
	ck_assert_int_eq(expect_parse(text, false, &e, err, sizeof(err)), -1);
	ck_assert_str_eq(err, want);
}

START_TEST(test_paths)
{
	ck_assert_int_eq(expect_parse("high.read.p99.9 < 2ms", false, &e, err, sizeof(err)), 0);
	ck_assert_int_eq(e.nodes[e.lhs].ref.tier, TIER_HIGH);
	ck_assert_int_eq(e.nodes[e.lhs].ref.op, OP_READ);
	ck_assert_int_eq(e.nodes[e.lhs].ref.metric, METRIC_PERCENTILE);
	ck_assert(fabs(e.nodes[e.lhs].ref.percentile - 99.9) < 1e-9);
	ck_assert(fabs(e.nodes[e.rhs].number - 2e6) < 1e-3);

	ck_assert_int_eq(expect_parse("low.leak.writeback.bytes == 0", false, &e, err,
				      sizeof(err)), 0);
	ck_assert(e.nodes[e.lhs].ref.leak);
	ck_assert_int_eq(e.nodes[e.lhs].ref.cause, CAUSE_WRITEBACK);

	ck_assert_int_eq(expect_parse("low.write.idle.p50 <= 1s", false, &e, err, sizeof(err)), 0);
	ck_assert_int_eq(e.nodes[e.lhs].ref.ioclass, 3);

	ck_assert_int_eq(expect_parse("high.read.p99.9 <= 5 * baseline.read.p99.9", true, &e, err,
				      sizeof(err)), 0);
	ck_assert(e.uses_baseline);
	ck_assert_int_eq(e.nodes[e.nodes[e.rhs].right].ref.tier, TIER_HIGH);
	ck_assert(e.nodes[e.nodes[e.rhs].right].ref.baseline);
}
END_TEST

START_TEST(test_units)
{
	static const struct { const char *text; double base; } cases[] = {
		{ "low.read.max < 7ns", 7 }, { "low.read.max < 7us", 7e3 },
		{ "low.read.max < 1.5ms", 1.5e6 }, { "low.read.max < 2s", 2e9 },
		{ "low.bytes > 3B", 3 }, { "low.bytes > 2KiB", 2048 },
		{ "low.bytes > 1MiB", 1048576 }, { "low.leak.ratio < 5%", 0.05 },
		{ "low.bytes > 12", 12 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_int_eq(expect_parse(cases[i].text, false, &e, err, sizeof(err)), 0);
		ck_assert_msg(fabs(e.nodes[e.rhs].number - cases[i].base) < 1e-9, "%s",
			      cases[i].text);
	}
}
END_TEST

START_TEST(test_eval)
{
	ck_assert(run("high.read.p99 < 2ms", false));
	ck_assert(!run("high.read.p99 < 1ms", false));
	ck_assert(run("high.read.p99.9 <= 5 * baseline.read.p99.9", true));
	ck_assert(!run("high.read.p99.9 <= 2 * baseline.read.p99.9", true));
	ck_assert(run("high.read.p99.9 <= baseline.high.read.p99.9 * 4", true));
	ck_assert(run("high.read.p99 <= baseline.read.p99 + 1ms", true));
	ck_assert(run("low.bytes > 0", false));
	ck_assert(!run("low.leak.bytes == 0", false));
	ck_assert(run("low.leak.bytes <= 4KiB", false));
	ck_assert(run("low.leak.ratio < 1%", false));
	ck_assert(!run("low.leak.ratio < 0.1%", false));
	ck_assert(run("low.read.class == idle", false));
	ck_assert(!run("low.write.class == idle", false));
	ck_assert(run("low.write.class != rt", false));
	ck_assert(!run("low.write.class != be", false));
	ck_assert(!run("low.write.class != be:4", false));
	ck_assert(run("low.write.class != be:3", false));
	ck_assert(run("idle == low.read.class", false));
}
END_TEST

START_TEST(test_no_data)
{
	struct expect_result res;

	ck_assert_int_eq(expect_parse("default.read.p99 < 2ms", false, &e, err, sizeof(err)), 0);
	ck_assert(!expect_eval(&e, fake_lookup, NULL, &res));
	ck_assert(res.no_data);
	ck_assert_str_eq(res.measured, "no I/O measured for 'default.read.p99'");
}
END_TEST

START_TEST(test_result_text)
{
	struct expect_result res;

	ck_assert_int_eq(expect_parse("high.read.p99.9 <= 2 * baseline.read.p99.9", true, &e, err,
				      sizeof(err)), 0);
	ck_assert(!expect_eval(&e, fake_lookup, NULL, &res));
	ck_assert_str_eq(res.measured, "4ms");
	ck_assert_str_eq(res.limit, "2ms (2 * baseline.read.p99.9)");
	ck_assert_int_eq(expect_parse("low.write.class == idle", false, &e, err, sizeof(err)), 0);
	ck_assert(!expect_eval(&e, fake_lookup, NULL, &res));
	ck_assert_str_eq(res.measured, "be:4+idle");
	ck_assert_str_eq(res.limit, "idle");
	ck_assert_int_eq(expect_parse("low.write.class == be", false, &e, err, sizeof(err)), 0);
	ck_assert(!expect_eval(&e, fake_lookup, NULL, &res));
	ck_assert_str_eq(res.limit, "be");
}
END_TEST

START_TEST(test_errors)
{
	parse_fails("hgh.read.p99 < 2ms",
		    "column 1: unknown tier 'hgh' (expected low, high, default, unattributed or "
		    "baseline)");
	parse_fails("high.read.p99 < 2",
		    "column 17: '2' needs a unit: 'high.read.p99' is a time (ns, us, ms or s)");
	parse_fails("high.read.p99 < 2mss",
		    "column 18: unknown unit 'mss' in '2mss' (expected ns, us, ms, s, B, KiB, MiB, "
		    "GiB or %)");
	parse_fails("high.read.p99 = 2ms",
		    "column 15: '=' is not an operator (expected ==, !=, <, <=, > or >=)");
	parse_fails("high.read.p99",
		    "column 14: expression ends without a comparison (expected <, <=, >, >=, == or "
		    "!=)");
	parse_fails("high.read.p99 <",
		    "column 16: expression ends early (expected a number or a path)");
	parse_fails("high.read.q99 < 2ms",
		    "column 11: unknown metric 'q99' (expected bytes, count, class, pN, max, mean, "
		    "ratio after leak, or total after stall)");
	parse_fails("high.read.p101 < 2ms",
		    "column 11: bad percentile 'p101' (expected p1 to p100, such as p99 or p99.9)");
	parse_fails("high.reed.p99 < 2ms",
		    "column 6: unexpected 'reed' in 'high.reed.p99' (expected an op read, write or "
		    "other, a class, leak, or a metric)");
	parse_fails("high.read.p99 < 1MiB",
		    "column 17: cannot compare 'high.read.p99' (a time) and '1MiB' (bytes)");
	parse_fails("low.write.class < idle",
		    "column 17: '<' cannot order classes (expected == or !=)");
	parse_fails("low.write.class == idel",
		    "column 20: unknown class 'idel' (expected none, rt, be, idle, be:0..be:7 or "
		    "rt:0..rt:7)");
	parse_fails("low.write.class == be:9",
		    "column 20: bad class 'be:9' (expected idle, be, rt, none, be:0..be:7 or "
		    "rt:0..rt:7)");
	parse_fails("high.read.p99 <= 5 * baseline.read.p99",
		    "column 22: 'baseline.read.p99' needs --baseline FILE");
	parse_fails("high.read.p99 < low.read.p99 * low.read.p50",
		    "column 32: '*' needs a plain number beside it, not 'low.read.p50'");
	parse_fails("2ms < 3ms",
		    "column 1: '2ms < 3ms' measures nothing (expected a path such as "
		    "'high.read.p99')");
	parse_fails("default.leak.bytes == 0",
		    "column 9: 'leak' applies to the low and high tiers only, not to 'default'");
	parse_fails("low.bytes > 0 0",
		    "column 15: unexpected '0' after the expression");
	parse_fails("low.bytes > 1..2", "column 13: '1..2' is not a number");
	parse_fails("low.bytes > 0 # note", "column 15: unexpected character '#'");
	parse_fails("low.read.ratio < 5%",
		    "column 10: 'ratio' needs a leak path, as in 'low.leak.ratio'");
	parse_fails("low.leak.ratio < 5",
		    "column 18: '5' needs a unit: 'low.leak.ratio' is a ratio (%)");
	parse_fails("low.leak.p99 < 1ms",
		    "column 10: 'p99' is not measured for leaks (expected bytes, count or ratio)");
	parse_fails("", "column 1: empty expression");
}
END_TEST

START_TEST(test_stall_paths)
{
	const struct expect_ref *ref;

	ck_assert_int_eq(expect_parse("high.stall.dirty_throttle.total < 10ms", false, &e, err,
				      sizeof(err)), 0);
	ref = &e.nodes[e.lhs].ref;
	ck_assert(ref->stall);
	ck_assert_int_eq(ref->tier, TIER_HIGH);
	ck_assert_int_eq(ref->stall_cause, STALL_CAUSE_DIRTY_THROTTLE);
	ck_assert_int_eq(ref->metric, METRIC_TOTAL);
	ck_assert_int_eq(e.nodes[e.lhs].dim, DIM_TIME);

	ck_assert_int_eq(expect_parse("low.stall.count == 0", false, &e, err, sizeof(err)), 0);
	ref = &e.nodes[e.lhs].ref;
	ck_assert(ref->stall);
	ck_assert_int_eq(ref->stall_cause, STALL_CAUSES_ALL);
	ck_assert_int_eq(ref->metric, METRIC_COUNT);

	ck_assert_int_eq(expect_parse("default.stall.fsync.p99.9 <= 2 * default.stall.fsync.p50",
				      false, &e, err, sizeof(err)), 0);
	ck_assert_int_eq(e.nodes[e.lhs].ref.stall_cause, STALL_CAUSE_FSYNC);
	ck_assert(fabs(e.nodes[e.lhs].ref.percentile - 99.9) < 1e-9);
	ck_assert_int_eq(expect_parse("high.stall.writeback_wait.max < 1s", false, &e, err,
				      sizeof(err)), 0);
	ck_assert_int_eq(e.nodes[e.lhs].ref.stall_cause, STALL_CAUSE_WRITEBACK_WAIT);
	ck_assert_int_eq(expect_parse("high.stall.mean < 1ms", false, &e, err, sizeof(err)), 0);
	ck_assert_str_eq(expect_stall_cause_name(STALL_CAUSE_FSYNC), "fsync");
	ck_assert_str_eq(expect_stall_cause_name(STALL_CAUSES_ALL), "all");
}
END_TEST

START_TEST(test_stall_errors)
{
	parse_fails("high.stall.dirty.total < 1ms",
		    "column 12: unknown stall cause 'dirty' (expected dirty_throttle, "
		    "writeback_wait or fsync)");
	parse_fails("high.stall.fsync.bytes > 0",
		    "column 18: 'bytes' is not measured for stalls (expected count, total, max, "
		    "mean or pN)");
	parse_fails("high.stall.fsync.total < 1",
		    "column 26: '1' needs a unit: 'high.stall.fsync.total' is a time (ns, us, ms or "
		    "s)");
	parse_fails("high.stall.fsync.write.count == 0",
		    "column 18: unexpected 'write' in 'high.stall.fsync.write.count' (expected a "
		    "metric)");
	parse_fails("unattributed.stall.count == 0",
		    "column 14: 'stall' applies to threads of the low, high and default tiers, not "
		    "to 'unattributed'");
	parse_fails("high.stall < 1ms", "column 1: 'high.stall' names no metric");
	parse_fails("high.write.total < 1ms",
		    "column 12: 'total' needs a stall path, as in 'high.stall.dirty_throttle.total'");
	ck_assert_int_eq(expect_parse("high.stall.total < baseline.stall.total", true, &e, err,
				      sizeof(err)), -1);
	ck_assert_str_eq(err, "column 20: 'baseline.stall.total': a baseline has no stalls");
}
END_TEST

static Suite *expect_suite(void)
{
	Suite *s = suite_create("expect");
	TCase *tc;

	tc = tcase_create("paths");
	tcase_add_test(tc, test_paths);
	tcase_add_test(tc, test_units);
	suite_add_tcase(s, tc);
	tc = tcase_create("evaluation");
	tcase_add_test(tc, test_eval);
	tcase_add_test(tc, test_no_data);
	tcase_add_test(tc, test_result_text);
	suite_add_tcase(s, tc);
	tc = tcase_create("errors");
	tcase_add_test(tc, test_errors);
	suite_add_tcase(s, tc);
	tc = tcase_create("stalls");
	tcase_add_test(tc, test_stall_paths);
	tcase_add_test(tc, test_stall_errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(expect_suite());
}
