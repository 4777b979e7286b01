// SPDX-License-Identifier: MIT
/*
 * check-debt-log.c: unit tests of the debt guard's log reader (shim/adaptive/debt_log.c) on real
 * files: only lines appended after the program opened its log count, a stall line raises
 * the debt and it is held for DEBT_LOG_HOLD_NS after the last one, a line is read only once
 * it is complete, a new log at the same path or a truncated one is read from its top, a
 * backlog larger than a step reads is skipped to its tail, and a log noted in a forked child
 * lifts the parent's controller through the shared region. Simulated time for the holds.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adaptive/adaptive_region.h"
#include "check_main.h"
#include "cleanup.h"
#include "region_fixture.h"

#define MS 1000000ull
#define T0 (1000 * MS)

/* What RocksDB 7.8 writes (db_bench, tight L0 triggers), and a line that is not news. */
#define SLOW_LINE "2026/12/03-20:47:26.171727 28390 [WARN] [db/column_family.cc:1001] " \
	"[default] Stalling writes because we have 2 level-0 files rate 8388608\n"
#define STOP_LINE "2026/12/03-20:48:01.020304 28391 [WARN] [db/column_family.cc:1010] " \
	"[default] Stopping writes because of estimated pending compaction bytes 9437184\n"
#define INFO_LINE "2026/12/03-20:47:26.170001 28390 [db/flush_job.cc:1007] [default] " \
	"[JOB 7] Level-0 flush table #12: 1058003 bytes OK\n"

static char dir[] = "/tmp/iotier-debt-log.XXXXXX";
static char path[128];
static struct adaptive_region *r;
static struct debt_log *d;
static int log_fd = -1;

static void setup(void)
{
	r = region_fixture("read.p99<=1ms", T0);
	d = &r->debt;
	snprintf(path, sizeof(path), "%s/LOG", dir);
	unlink(path);
}

static void teardown(void)
{
	if (log_fd >= 0)
		close(log_fd);
	log_fd = -1;
	adaptive_region_destroy(r);
}

static void append(const char *text)
{
	ck_assert_int_eq(write(log_fd, text, strlen(text)), (ssize_t)strlen(text));
}

/* The program opens its log (after @old was in it) and the open wrapper notes it. */
static void open_log(const char *old)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, old, strlen(old)), (ssize_t)strlen(old));
	close(fd);
	log_fd = open(path, O_WRONLY | O_APPEND);
	ck_assert_int_ge(log_fd, 0);
	debt_log_note(d, log_fd);
	ck_assert_str_eq(d->path, path);
}

START_TEST(test_scan_counts_lines)
{
	const char text[] = SLOW_LINE INFO_LINE SLOW_LINE;

	ck_assert_int_eq(debt_log_scan(d, INFO_LINE, strlen(INFO_LINE)), ADAPTIVE_DEBT_NONE);
	ck_assert_int_eq(debt_log_scan(d, text, strlen(text)), ADAPTIVE_DEBT_SLOW);
	ck_assert_int_eq(debt_log_scan(d, STOP_LINE SLOW_LINE, strlen(STOP_LINE SLOW_LINE)),
			 ADAPTIVE_DEBT_STOP);
	ck_assert_uint_eq(d->slow_lines, 3);
	ck_assert_uint_eq(d->stop_lines, 1);
}
END_TEST

START_TEST(test_nothing_without_a_log)
{
	ck_assert_int_eq(debt_log_poll(d, T0), ADAPTIVE_DEBT_NONE);
	ck_assert_str_eq(d->cur_path, "");
}
END_TEST

/* Old lines are not news; a new one is, for DEBT_LOG_HOLD_NS after it was seen. */
START_TEST(test_new_lines_raise_and_hold)
{
	open_log(STOP_LINE SLOW_LINE);
	ck_assert_int_eq(debt_log_poll(d, T0), ADAPTIVE_DEBT_NONE);
	append(INFO_LINE);
	ck_assert_int_eq(debt_log_poll(d, T0 + 100 * MS), ADAPTIVE_DEBT_NONE);
	append(SLOW_LINE);
	ck_assert_int_eq(debt_log_poll(d, T0 + 200 * MS), ADAPTIVE_DEBT_SLOW);
	ck_assert_int_eq(debt_log_poll(d, T0 + 200 * MS + DEBT_LOG_HOLD_NS - 1), ADAPTIVE_DEBT_SLOW);
	ck_assert_int_eq(debt_log_poll(d, T0 + 200 * MS + DEBT_LOG_HOLD_NS), ADAPTIVE_DEBT_NONE);
	append(STOP_LINE);
	ck_assert_int_eq(debt_log_poll(d, T0 + 5000 * MS), ADAPTIVE_DEBT_STOP);
	/* A stop held as long as a slowdown; a slowdown after it does not lower it. */
	append(SLOW_LINE);
	ck_assert_int_eq(debt_log_poll(d, T0 + 5100 * MS), ADAPTIVE_DEBT_STOP);
	ck_assert_int_eq(debt_log_poll(d, T0 + 5000 * MS + DEBT_LOG_HOLD_NS), ADAPTIVE_DEBT_SLOW);
	ck_assert_uint_eq(d->slow_lines, 2);
	ck_assert_uint_eq(d->stop_lines, 1);
}
END_TEST

START_TEST(test_partial_line_waits)
{
	open_log("");
	append("2026/12/03-20:47:26.171727 28390 [WARN] [default] Stalling wri");
	ck_assert_int_eq(debt_log_poll(d, T0), ADAPTIVE_DEBT_NONE);
	append("tes because we have 2 level-0 files rate 8388608\n");
	ck_assert_int_eq(debt_log_poll(d, T0 + 100 * MS), ADAPTIVE_DEBT_SLOW);
	ck_assert_uint_eq(d->slow_lines, 1);
}
END_TEST

/* RocksDB moves its old LOG aside when it opens a DB and starts a new one at the path. */
START_TEST(test_new_file_and_truncation_read_from_top)
{
	char old[160];
	int fd;

	open_log(INFO_LINE INFO_LINE INFO_LINE);
	snprintf(old, sizeof(old), "%s.old", path);
	ck_assert_int_eq(rename(path, old), 0);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	ck_assert_int_eq(write(fd, SLOW_LINE, strlen(SLOW_LINE)), (ssize_t)strlen(SLOW_LINE));
	close(fd);
	ck_assert_int_eq(debt_log_poll(d, T0), ADAPTIVE_DEBT_SLOW);
	unlink(old);
	/* Truncated: seen at the next step, as long as it has not outgrown the offset. */
	ck_assert_int_eq(truncate(path, 0), 0);
	ck_assert_int_eq(debt_log_poll(d, T0 + 50 * MS), ADAPTIVE_DEBT_SLOW); /* the hold */
	ck_assert_uint_eq(d->offset, 0);
	fd = open(path, O_WRONLY | O_APPEND);
	ck_assert_int_eq(write(fd, STOP_LINE, strlen(STOP_LINE)), (ssize_t)strlen(STOP_LINE));
	close(fd);
	ck_assert_int_eq(debt_log_poll(d, T0 + 100 * MS), ADAPTIVE_DEBT_STOP);
}
END_TEST

/* A log that outgrew what a step reads: the tail is read, the rest counted as skipped. */
START_TEST(test_backlog_skipped_to_tail)
{
	static char filler[1 << 20];
	struct stat st;

	open_log("");
	memset(filler, 'x', sizeof(filler));
	for (size_t i = 99; i < sizeof(filler); i += 100)
		filler[i] = '\n';
	memcpy(filler + 1000, SLOW_LINE, strlen(SLOW_LINE)); /* old news: skipped */
	ck_assert_int_eq(write(log_fd, filler, sizeof(filler)), (ssize_t)sizeof(filler));
	append(STOP_LINE);
	ck_assert_int_eq(debt_log_poll(d, T0), ADAPTIVE_DEBT_STOP);
	ck_assert_int_eq(fstat(log_fd, &st), 0);
	ck_assert_uint_eq(d->offset, (uint64_t)st.st_size);
	ck_assert_uint_eq(d->skipped, (uint64_t)st.st_size - DEBT_LOG_CHUNK * (DEBT_LOG_CHUNKS - 1));
	ck_assert_uint_eq(d->slow_lines, 0);
}
END_TEST

/* The log noted in a forked child (a worker process) lifts the tree's one controller. */
START_TEST(test_child_note_lifts_parent_controller)
{
	uint64_t deadline;
	pid_t child;
	int status;

	close(open(path, O_WRONLY | O_CREAT, 0644)); /* created, not noted here */
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		int fd = open(path, O_WRONLY | O_APPEND);

		debt_log_note(d, fd);
		_exit(write(fd, SLOW_LINE, strlen(SLOW_LINE)) == (ssize_t)strlen(SLOW_LINE) ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_str_eq(d->path, path);
	deadline = atomic_load(&r->deadline_ns);
	for (int i = 0; i < 300; i++)
		adaptive_region_note_read(r, 5 * MS);
	ck_assert_int_eq(adaptive_region_maybe_step(r, deadline, getpid(),
						    (pid_t)syscall(SYS_gettid)), 1);
	ck_assert_uint_eq(r->ctl.debt_lifts, 1);
	ck_assert_uint_eq(r->ctl.misses, 0); /* slow reads, but the debt overrules the target */
	ck_assert_uint_eq(r->ctl.level, ADAPTIVE_LEVEL_FULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("debt-log");
	TCase *tc = tcase_create("debt-log");

	if (test_tmpdir(dir) < 0)
		return 1;
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_scan_counts_lines);
	tcase_add_test(tc, test_nothing_without_a_log);
	tcase_add_test(tc, test_new_lines_raise_and_hold);
	tcase_add_test(tc, test_partial_line_waits);
	tcase_add_test(tc, test_new_file_and_truncation_read_from_top);
	tcase_add_test(tc, test_backlog_skipped_to_tail);
	tcase_add_test(tc, test_child_note_lifts_parent_controller);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
