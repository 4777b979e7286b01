// SPDX-License-Identifier: MIT
/*
 * check-stalls-report.c: unit tests of `iotier stalls`' report (tools/trace/stalls_report.c)
 * on a hand-made snapshot: `stall` paths of check expectations sum the right rows, JSON rows
 * carry the documented fields, a throttled high thread carries who dirtied page cache, and
 * names that are not UTF-8 or hold quotes come out escaped in JSON and Prometheus text.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "trace/stalls/stalls_report.h"

static struct stalls_report r;

/* Add a row of @count stalls of @each_ns each. */
static void add_row(uint32_t tid, const char *thread, enum stalls_cause cause,
		    enum expect_tier tier, uint64_t count, uint64_t each_ns)
{
	struct stalls_row *row;
	uint32_t b = hist_bucket(each_ns);

	r.snap.rows = realloc(r.snap.rows, (r.snap.n_rows + 1) * sizeof(*r.snap.rows));
	r.tiers = realloc(r.tiers, (r.snap.n_rows + 1) * sizeof(*r.tiers));
	ck_assert(r.snap.rows && r.tiers);
	r.tiers[r.snap.n_rows] = tier;
	row = &r.snap.rows[r.snap.n_rows++];
	memset(row, 0, sizeof(*row));
	row->tgid = 100;
	row->tid = tid;
	row->cause = (uint8_t)cause;
	row->ioprio = 2 << 13 | 4;
	snprintf(row->thread, sizeof(row->thread), "%s", thread);
	snprintf(row->process, sizeof(row->process), "db");
	row->lat.count = count;
	row->lat.sum_ns = count * each_ns;
	row->lat.min_ns = row->lat.max_ns = each_ns;
	row->lat.slots[b] = count;
}

static void setup(void)
{
	memset(&r, 0, sizeof(r));
	r.seconds = 2;
	add_row(101, "wal", STALL_DIRTY_THROTTLE, TIER_HIGH, 3, 4000000);
	add_row(101, "wal", STALL_FSYNC, TIER_HIGH, 10, 1000000);
	add_row(102, "wal2", STALL_FSYNC, TIER_HIGH, 5, 2000000);
	add_row(103, "bulk\xff\"x\n", STALL_DIRTY_THROTTLE, TIER_LOW, 7, 8000000);
	r.dirtied[TIER_LOW] = 3u << 30;
	r.dirtied[TIER_HIGH] = 4096;
}

static void teardown(void)
{
	stalls_report_free(&r);
}

static double look(const char *text)
{
	struct expect e;
	struct expect_value v;
	char err[EXPECT_ERROR_MAX];

	ck_assert_msg(expect_parse(text, false, &e, err, sizeof(err)) == 0, "%s: %s", text, err);
	ck_assert_int_eq(stalls_report_lookup(&e.nodes[e.lhs].ref, &v, &r), 0);
	return v.v;
}

START_TEST(test_lookup)
{
	ck_assert_double_eq(look("high.stall.fsync.count == 0"), 15);
	ck_assert_double_eq(look("high.stall.count == 0"), 18);
	ck_assert_double_eq(look("high.stall.fsync.total == 0"), 20e6);
	ck_assert_double_eq(look("high.stall.dirty_throttle.max == 0"), 4e6);
	ck_assert_double_eq(look("high.stall.mean == 0"), 32e6 / 18);
	ck_assert_double_eq(look("low.stall.dirty_throttle.count == 0"), 7);
	/* No stall is a measurement: zero, not "no data". */
	ck_assert_double_eq(look("default.stall.count == 0"), 0);
	ck_assert_double_eq(look("low.stall.fsync.total == 0"), 0);
	/* Percentiles over merged rows: 10 at 1ms and 5 at 2ms, so p50 is about 1ms. */
	ck_assert(look("high.stall.fsync.p50 == 0") < 1.1e6);
	ck_assert(look("high.stall.fsync.p99 == 0") > 1.9e6);
}
END_TEST

static json_t *json_of_report(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_error_t jerr;
	json_t *doc;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(stalls_report_print_json(&r, f), 0);
	fclose(f);
	ck_assert_int_eq((int)(strchr(buf, '\n') - buf), (int)len - 1); /* one line */
	doc = json_loads(buf, 0, &jerr);
	ck_assert_msg(doc != NULL, "%s: %s", jerr.text, buf);
	free(buf);
	return doc;
}

START_TEST(test_json)
{
	json_t *doc = json_of_report(), *rows = json_object_get(doc, "rows"), *row;
	int throttled_high = 0;
	size_t i;

	ck_assert_str_eq(json_string_value(json_object_get(doc, "schema")), STALLS_SCHEMA);
	ck_assert_int_eq(json_array_size(rows), 4);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(doc, "dirtied_by_tier"),
							    "low")), 3ll << 30);
	json_array_foreach(rows, i, row) {
		const char *cause = json_string_value(json_object_get(row, "cause"));
		const char *tier = json_string_value(json_object_get(row, "tier"));
		bool has_dirtied = json_object_get(row, "dirtied_by_tier") != NULL;

		ck_assert_str_eq(json_string_value(json_object_get(row, "class")), "be");
		ck_assert_int_eq(json_integer_value(json_object_get(row, "level")), 4);
		/* Only a throttled high thread is shown who dirtied memory. */
		ck_assert_int_eq(has_dirtied, !strcmp(tier, "high") && !strcmp(cause,
										"dirty_throttle"));
		throttled_high += has_dirtied;
		if (json_integer_value(json_object_get(row, "tid")) == 103) {
			ck_assert_str_eq(json_string_value(json_object_get(row, "thread")),
					 "bulk\xef\xbf\xbd\"x\n");
			ck_assert_str_eq(json_string_value(json_object_get(row, "thread_hex")),
					 "62756c6bff22780a");
			ck_assert_int_eq(json_integer_value(json_object_get(row, "total_ns")), 56000000);
		}
	}
	ck_assert_int_eq(throttled_high, 1);
	json_decref(doc);
}
END_TEST

START_TEST(test_prom_and_text)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	stalls_report_print_prom(&r, f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "thread=\"bulk\xef\xbf\xbd\\\"x\\n\""));
	ck_assert_ptr_nonnull(strstr(buf, "iotier_stalls{pid=\"100\",tid=\"101\",thread=\"wal\","
				     "tier=\"high\",class=\"be\",cause=\"fsync\"} 10\n"));
	ck_assert_ptr_nonnull(strstr(buf, "iotier_dirtied_bytes{tier=\"low\"} 3221225472\n"));
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	stalls_report_print_text(&r, f);
	fclose(f);
	/* Escaped as everywhere in text (text_escape.h): no forged row, no raw byte. */
	ck_assert_ptr_nonnull(strstr(buf, "bulk\\xff\"x\\n "));
	ck_assert_ptr_nonnull(strstr(buf, "high thread wal (100/101) throttled 3 times for 12ms "
				     "while low 3GiB (100%), high 4KiB (0%), default 0B"));
	free(buf);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("stalls-report");
	TCase *tc = tcase_create("report");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_lookup);
	tcase_add_test(tc, test_json);
	tcase_add_test(tc, test_prom_and_text);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
