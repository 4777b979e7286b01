// SPDX-License-Identifier: MIT
/*
 * check-report.c: unit tests of tools/trace/check_report.c, the aggregation behind `iotier check`.
 * A saved report must answer every expectation exactly as the run that wrote it did, because
 * it becomes the baseline of later runs; so the JSON round trip is checked metric by metric,
 * and the tier, op, class and leak selections are checked on hand-made BPF entries.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "trace/check/check_report.h"
#include "trace/lat/lat_session.h"

#define IOPRIO(cls, lvl) ((uint16_t)((cls) << 13 | (lvl)))

static struct check_report *r;
static struct iotrack_stats *st;

static void add(enum expect_tier tier, const char *comm, int op, uint16_t ioprio, int cause,
		bool leak, uint64_t count, uint64_t bytes, uint64_t lat_ns)
{
	struct iotrack_key k = { .dev = 7 << 20, .tgid = 100, .tid = 101, .ioprio = ioprio,
				 .op = (uint8_t)op, .cause = (uint8_t)cause };

	memset(st, 0, sizeof(*st));
	snprintf(k.comm, sizeof(k.comm), "%s", comm);
	snprintf(k.pcomm, sizeof(k.pcomm), "workload");
	st->count = count;
	st->bytes = bytes;
	st->lat.count = count;
	st->lat.sum_ns = count * lat_ns;
	st->lat.min_ns = lat_ns;
	st->lat.max_ns = lat_ns;
	st->lat.slots[hist_bucket(lat_ns)] = count;
	ck_assert_int_eq(check_report_add(r, tier, &k, st, leak), 0);
}

static void setup(void)
{
	r = check_report_new();
	st = calloc(1, sizeof(*st));
	ck_assert_ptr_nonnull(r);
	ck_assert_ptr_nonnull(st);
	/* low: 8 MiB written at idle, 1 MiB leaked by writeback at be:4, 4 KiB by jbd2 at be:3 */
	add(TIER_LOW, "bg-writer", OP_WRITE, IOPRIO(3, 0), CAUSE_SUBMIT, false, 128, 8 << 20,
	    200000);
	add(TIER_LOW, "bg-writer", OP_WRITE, IOPRIO(2, 4), CAUSE_WRITEBACK, true, 4, 1 << 20,
	    3000000);
	add(TIER_LOW, "bg-writer", OP_WRITE, IOPRIO(2, 3), CAUSE_JOURNAL, true, 1, 4096, 50000);
	/* high: 990 fast reads and 10 slow ones at be:4 */
	add(TIER_HIGH, "fg-reader", OP_READ, IOPRIO(2, 4), CAUSE_SUBMIT, false, 990, 990 * 4096,
	    100000);
	add(TIER_HIGH, "fg-reader", OP_READ, IOPRIO(2, 4), CAUSE_SUBMIT, false, 10, 10 * 4096,
	    9000000);
}

static void teardown(void)
{
	check_report_free(r);
	free(st);
}

static double value(const struct check_report *rep, const char *text, uint32_t *mask)
{
	struct check_sources src = { rep, rep, NULL };
	struct expect_value v;
	struct expect e;
	char err[EXPECT_ERROR_MAX];
	char full[EXPECT_TEXT_MAX];

	snprintf(full, sizeof(full), "%s >= 0", text);
	if (strstr(text, ".class"))
		snprintf(full, sizeof(full), "%s == idle", text);
	ck_assert_msg(expect_parse(full, true, &e, err, sizeof(err)) == 0, "%s: %s", full, err);
	if (check_report_lookup(&e.nodes[e.lhs].ref, &v, &src) < 0)
		return -1;
	if (mask)
		*mask = v.class_mask;
	return v.v;
}

START_TEST(test_selection)
{
	uint32_t mask = 0;

	ck_assert_double_eq(value(r, "low.bytes", NULL), (8 << 20) + (1 << 20) + 4096);
	ck_assert_double_eq(value(r, "low.write.idle.bytes", NULL), 8 << 20);
	ck_assert_double_eq(value(r, "low.write.be.count", NULL), 5);
	ck_assert_double_eq(value(r, "low.leak.bytes", NULL), (1 << 20) + 4096);
	ck_assert_double_eq(value(r, "low.leak.writeback.bytes", NULL), 1 << 20);
	ck_assert_double_eq(value(r, "low.leak.journal.count", NULL), 1);
	ck_assert_double_eq(value(r, "low.leak.other.bytes", NULL), 0);
	ck_assert_double_eq(value(r, "low.read.bytes", NULL), 0);
	ck_assert_double_eq(value(r, "high.read.count", NULL), 1000);
	ck_assert_double_eq(value(r, "default.bytes", NULL), 0);
	value(r, "low.write.class", &mask);
	ck_assert_uint_eq(mask, EXPECT_CLASS_BIT(3, 0) | EXPECT_CLASS_BIT(2, 4) |
			  EXPECT_CLASS_BIT(2, 3));
	/* No requests: no percentile, no class, no ratio. */
	ck_assert_double_eq(value(r, "low.read.p99", NULL), -1);
	ck_assert_double_eq(value(r, "default.class", NULL), -1);
}
END_TEST

START_TEST(test_latency)
{
	struct iolat_lat l = { 0 };

	/* p50 among the fast reads, p99.9 among the slow ones, as `iotier lat` computes them. */
	l.count = 1000;
	l.min_ns = 100000;
	l.max_ns = 9000000;
	l.slots[hist_bucket(100000)] = 990;
	l.slots[hist_bucket(9000000)] = 10;
	ck_assert_double_eq(value(r, "high.read.p50", NULL), (double)lat_percentile(&l, 50));
	ck_assert_double_eq(value(r, "high.read.p99.9", NULL), (double)lat_percentile(&l, 99.9));
	ck_assert_double_lt(value(r, "high.read.p50", NULL), 200000);
	ck_assert_double_gt(value(r, "high.read.p99.9", NULL), 8000000);
	ck_assert_double_eq(value(r, "high.read.max", NULL), 9000000);
	ck_assert_double_eq(value(r, "high.read.mean", NULL), (990 * 100000.0 + 10 * 9e6) / 1000);
}
END_TEST

START_TEST(test_json_round_trip)
{
	static const char *const paths[] = {
		"low.bytes", "low.count", "low.write.idle.bytes", "low.write.be.bytes",
		"low.leak.bytes", "low.leak.writeback.bytes", "low.leak.journal.count",
		"low.leak.ratio", "low.write.p50", "low.write.p99", "low.write.max",
		"low.write.mean", "high.read.p50", "high.read.p99", "high.read.p99.9",
		"high.read.count", "high.read.be.p99", "default.bytes",
	};
	struct check_meta meta = { .exit_status = 0, .seconds = 1.5 };
	char path[] = "/tmp/check-report.XXXXXX", err[256];
	struct check_report *back;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(check_report_write_json(r, &meta, NULL, 0, path, err, sizeof(err)), 0);
	back = check_report_read_json(path, err, sizeof(err));
	unlink(path);
	ck_assert_msg(back != NULL, "%s", err);
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		ck_assert_msg(value(back, paths[i], NULL) == value(r, paths[i], NULL),
			      "%s: %g read back, %g written", paths[i], value(back, paths[i], NULL),
			      value(r, paths[i], NULL));
	{
		uint32_t a = 0, b = 0;

		value(r, "low.write.class", &a);
		value(back, "low.write.class", &b);
		ck_assert_uint_eq(a, b);
	}
	check_report_free(back);
}
END_TEST

START_TEST(test_json_errors)
{
	char path[] = "/tmp/check-report.XXXXXX", err[256];
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "{\"schema\": \"iotier.lat/1\"}\n", 27), 27);
	close(fd);
	ck_assert_ptr_null(check_report_read_json(path, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "not a report written by 'iotier check --json'"));
	unlink(path);
	ck_assert_ptr_null(check_report_read_json("/nonexistent/report.json", err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/report.json"));
}
END_TEST

/* The row of @rows whose "tid" is @tid, or NULL. */
static json_t *row_of(json_t *rows, json_int_t tid)
{
	size_t i;
	json_t *row;

	json_array_foreach(rows, i, row)
		if (json_integer_value(json_object_get(row, "tid")) == tid)
			return row;
	return NULL;
}

/*
 * A thread name cut mid-character (15-byte comm) and a process name that is no UTF-8 at all:
 * every row is still written, each with its own device, names as valid UTF-8 with U+FFFD,
 * and the raw bytes in <key>_hex. (jansson's json_pack refuses such a name: the row was
 * lost and the next field written onto the previous row.)
 */
START_TEST(test_json_not_utf8)
{
	static const char cut[] = "\xe3\x83\x87\xe3\x83\xbc\xe3\x82\xbf\xe3\x83\x99\xe3"; /* データベ + 1 byte */
	const char *argv[] = { "db", "--name=\xff", NULL };
	struct iotrack_key k = { .dev = 8 << 20 | 16, .tgid = 200, .tid = 202,
				 .ioprio = IOPRIO(3, 0), .op = OP_READ, .cause = CAUSE_SUBMIT };
	struct check_meta meta = { .argv = argv, .seconds = 1 };
	char path[] = "/tmp/check-report.XXXXXX", err[256];
	json_t *root, *rows, *row;
	json_error_t jerr;
	size_t i;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	memset(st, 0, sizeof(*st));
	memcpy(k.comm, cut, sizeof(cut));
	memcpy(k.pcomm, "\xff\xfeproc", 7);
	st->count = 3;
	st->bytes = 3 * 4096;
	ck_assert_int_eq(check_report_add(r, TIER_LOW, &k, st, false), 0);
	ck_assert_int_eq(check_report_write_json(r, &meta, NULL, 0, path, err, sizeof(err)), 0);
	root = json_load_file(path, 0, &jerr);
	unlink(path);
	ck_assert_msg(root != NULL, "%s", jerr.text);
	rows = json_object_get(root, "threads");
	ck_assert_uint_eq(json_array_size(rows), r->n_rows);
	json_array_foreach(rows, i, row)
		ck_assert_msg(json_is_string(json_object_get(row, "device")) &&
			      json_is_string(json_object_get(row, "thread")), "row %zu", i);
	row = row_of(rows, 202);
	ck_assert_ptr_nonnull(row);
	ck_assert_str_eq(json_string_value(json_object_get(row, "device")), "8:16");
	ck_assert_str_eq(json_string_value(json_object_get(row, "thread")),
			 "\xe3\x83\x87\xe3\x83\xbc\xe3\x82\xbf\xe3\x83\x99\xef\xbf\xbd");
	ck_assert_str_eq(json_string_value(json_object_get(row, "thread_hex")),
			 "e38387e383bce382bfe38399e3");
	ck_assert_str_eq(json_string_value(json_object_get(row, "process")),
			 "\xef\xbf\xbd\xef\xbf\xbdproc");
	ck_assert_str_eq(json_string_value(json_object_get(row, "process_hex")), "fffe70726f63");
	ck_assert_int_eq(json_integer_value(json_object_get(row, "count")), 3);
	/* A valid name has no _hex twin. */
	ck_assert_ptr_null(json_object_get(row_of(rows, 101), "thread_hex"));
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(root, "command"), 1)),
			 "--name=\xef\xbf\xbd");
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(root, "command_hex"),
							  1)), "2d2d6e616d653dff");
	json_decref(root);
}
END_TEST

/*
 * The text report shows the names threads chose with visible escapes: a newline would forge
 * a row, an escape sequence would reach the terminal (issue 16, item 9).
 */
START_TEST(test_text_escapes_names)
{
	struct iotrack_key k = { .dev = 7 << 20, .tgid = 300, .tid = 303, .ioprio = IOPRIO(2, 4),
				 .op = OP_READ, .cause = CAUSE_SUBMIT };
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	memset(st, 0, sizeof(*st));
	memcpy(k.comm, "\x1b[2J\nforged", sizeof("\x1b[2J\nforged"));
	memcpy(k.pcomm, "p\x9b" "1m\xff", 6);
	st->count = 1;
	st->bytes = 4096;
	ck_assert_int_eq(check_report_add(r, TIER_LOW, &k, st, false), 0);
	f = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(f);
	check_report_print(r, f);
	fclose(f);
	ck_assert_msg(strstr(text, "\\e[2J\\nforged"), "%s", text);
	ck_assert_msg(strstr(text, "p\\x9b1m\\xff"), "%s", text);
	for (size_t i = 0; i < len; i++)
		ck_assert_msg((unsigned char)text[i] >= 0x20 && text[i] != 0x7f ?
			      (unsigned char)text[i] < 0x80 : text[i] == '\n',
			      "raw byte 0x%02x at %zu", (unsigned char)text[i], i);
	ck_assert_ptr_null(strstr(text, "\nforged"));
	free(text);
}
END_TEST

static Suite *report_suite(void)
{
	Suite *s = suite_create("check_report");
	TCase *tc;

	tc = tcase_create("lookup");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_selection);
	tcase_add_test(tc, test_latency);
	suite_add_tcase(s, tc);
	tc = tcase_create("json");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_json_round_trip);
	tcase_add_test(tc, test_json_errors);
	tcase_add_test(tc, test_json_not_utf8);
	tcase_add_test(tc, test_text_escapes_names);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(report_suite());
}
