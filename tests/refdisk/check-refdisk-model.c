// SPDX-License-Identifier: MIT
/*
 * Unit tests of the reference disk's timing model (bench/refdisk/refdisk-model.c) with made-up
 * clocks: service time, FIFO order on one channel, the earliest-free channel among N,
 * idle gaps, the counters and the model text the "model" file accepts.
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "check_main.h"
#include "refdisk-model.h"

static struct refdisk_model m;

static void setup(void)
{
	memset(&m, 0, sizeof(m));
	/* 100 us + 200 MB/s on one channel: the sata preset */
	ck_assert_int_eq(refdisk_model_parse(&m, "100 200000000 1"), 0);
}

START_TEST(service_time)
{
	/* 4096 B at 200 MB/s is 20480 ns, on top of 100 us */
	ck_assert_int_eq(refdisk_model_admit(&m, 1000, 0, 4096), 1000 + 100000 + 20480);
	ck_assert_uint_eq(m.requests[0], 1);
	ck_assert_uint_eq(m.bytes[0], 4096);
}
END_TEST

START_TEST(fifo_one_channel)
{
	/* a 1 MiB write, then a 4 KiB read arriving just after: the read waits the write out */
	int64_t w = refdisk_model_admit(&m, 0, 1, 1 << 20);
	ck_assert_int_eq(w, 100000 + 5242880);
	int64_t r = refdisk_model_admit(&m, 10, 0, 4096);
	ck_assert_int_eq(r, w + 100000 + 20480);
	ck_assert_int_eq(m.queued_ns, w - 10);
	ck_assert_uint_eq(m.max_request, 1 << 20);
}
END_TEST

START_TEST(idle_gap)
{
	/* a request arriving after the channel went idle starts at its arrival */
	int64_t a = refdisk_model_admit(&m, 0, 0, 4096);
	ck_assert_int_eq(refdisk_model_admit(&m, a + 5000000, 0, 4096), a + 5000000 + 120480);
	ck_assert_int_eq(m.queued_ns, 0);
}
END_TEST

START_TEST(channels_earliest_free)
{
	ck_assert_int_eq(refdisk_model_parse(&m, "1 0 2"), 0);
	ck_assert_int_eq(refdisk_model_admit(&m, 0, 0, 1), 1000);   /* channel 0 */
	ck_assert_int_eq(refdisk_model_admit(&m, 0, 0, 1), 1000);   /* channel 1, in parallel */
	ck_assert_int_eq(refdisk_model_admit(&m, 0, 0, 1), 2000);   /* waits for the first */
	ck_assert_int_eq(refdisk_model_admit(&m, 500, 1, 1), 2000); /* the other one */
	ck_assert_uint_eq(m.requests[0], 3);
	ck_assert_uint_eq(m.requests[1], 1);
}
END_TEST

START_TEST(model_off)
{
	/* 0 0 N: no model time at all, for measuring the FUSE round trip */
	ck_assert_int_eq(refdisk_model_parse(&m, "0 0 1"), 0);
	ck_assert_int_eq(refdisk_model_admit(&m, 777, 1, 1 << 20), 777);
}
END_TEST

START_TEST(parse_rejects)
{
	ck_assert_int_eq(refdisk_model_parse(&m, "100 200000000 0"), -EINVAL);
	ck_assert_int_eq(refdisk_model_parse(&m, "100 200000000 65"), -EINVAL);
	ck_assert_int_eq(refdisk_model_parse(&m, "100 200000000"), -EINVAL);
	ck_assert_int_eq(refdisk_model_parse(&m, "100 200000000 1 junk"), -EINVAL);
	ck_assert_int_eq(refdisk_model_parse(&m, "20000000 1 1"), -EINVAL);
	/* a rejected text leaves the model as it was */
	ck_assert_int_eq(m.lat_ns, 100000);
	ck_assert_int_eq(refdisk_model_parse(&m, "150 300000000 4\n"), 0);
	char buf[64];
	refdisk_model_format(&m, buf, sizeof(buf));
	ck_assert_str_eq(buf, "150 300000000 4\n");
}
END_TEST

START_TEST(late_counters)
{
	refdisk_model_finished(&m, 30);
	refdisk_model_finished(&m, 10);
	ck_assert_uint_eq(m.finished, 2);
	ck_assert_int_eq(m.late_ns, 40);
	ck_assert_int_eq(m.late_max_ns, 30);
	char buf[512];
	refdisk_stats_format(&m, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "late_max_ns 30\n"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("refdisk-model");
	TCase *tc = tcase_create("model");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, service_time);
	tcase_add_test(tc, fifo_one_channel);
	tcase_add_test(tc, idle_gap);
	tcase_add_test(tc, channels_earliest_free);
	tcase_add_test(tc, model_off);
	tcase_add_test(tc, parse_rejects);
	tcase_add_test(tc, late_counters);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
