// SPDX-License-Identifier: MIT
/*
 * check-debt-log.c: unit tests of the debt guard's log reader (shim/adaptive/debt_log.c) on real
 * files: only lines appended after the program opened its log count, a stall line raises
 * the debt and it is held for DEBT_LOG_HOLD_NS after the last one, a line is read only once
 * it is complete, a new log at the same path or a truncated one is read from its top, a
 * backlog larger than a step reads is skipped to its tail, and a log noted in a forked child
 * lifts the parent's controller through the shared region; the floor's inputs (L0 from
 * lsm_state, the slowdown and stop triggers) are read from a real RocksDB LOG, and a log
 * without them gives none. Simulated time for the holds.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
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
	deadline = r->ctl.window_end_ns;
	for (int i = 0; i < 300; i++)
		adaptive_region_note_read(r, 5 * MS);
	ck_assert_int_eq(adaptive_region_maybe_step(r, deadline, getpid(),
						    (pid_t)syscall(SYS_gettid)), 1);
	ck_assert_uint_eq(r->ctl.debt_lifts, 1);
	ck_assert_uint_eq(r->ctl.misses, 0); /* slow reads, but the debt overrules the target */
	ck_assert_uint_eq(r->ctl.level, ADAPTIVE_LEVEL_FULL);
}
END_TEST

/*
 * tests/unit/fixtures/rocksdb-7.8.LOG: lines of a real LOG, Debian 12's db_bench 7.8.3
 * (fillrandom, 1 MiB memtables, level0_slowdown_writes_trigger=8, _stop_=12, on tmpfs):
 * its head (the options, the first flush) and the stretch where L0 reaches 8, RocksDB
 * stalls, a compaction takes L0 to 4 and a flush to 5.
 */
static size_t read_fixture(const char *name, char *buf, size_t size)
{
	const char *fixtures = getenv("IOTIER_TEST_FIXTURES");
	char file[512];
	ssize_t n;
	int fd;

	ck_assert_msg(fixtures != NULL, "IOTIER_TEST_FIXTURES is not set (run through meson)");
	snprintf(file, sizeof(file), "%s/%s", fixtures, name);
	fd = open(file, O_RDONLY);
	ck_assert_msg(fd >= 0, "%s: %m", file);
	n = read(fd, buf, size - 1);
	close(fd);
	ck_assert_int_gt(n, 0);
	ck_assert_int_lt(n, (ssize_t)size - 1);
	buf[n] = '\0';
	return (size_t)n;
}

static void fill(struct adaptive_window *w)
{
	memset(w, 0, sizeof(*w));
	debt_log_fill(d, w);
}

/* The fixture's L0 and triggers, read as RocksDB appends them, and through a step. */
START_TEST(test_rocksdb_log_gives_l0_and_triggers)
{
	static char text[128 << 10];
	static struct adaptive_window w;
	uint64_t deadline;

	read_fixture("rocksdb-7.8.LOG", text, sizeof(text));
	open_log("");
	append(text);
	ck_assert_int_eq(debt_log_poll(d, T0), ADAPTIVE_DEBT_SLOW); /* and the alarm still */
	ck_assert_uint_eq(d->l0_slowdown, 8);
	ck_assert_uint_eq(d->l0_stop, 12);
	ck_assert_uint_eq(d->lsm_events, 5);
	ck_assert_uint_eq(d->l0_files, 5); /* the last event's, not the largest (8) */
	fill(&w);
	ck_assert_uint_eq(w.l0_files, 5);
	ck_assert_uint_eq(w.l0_trigger, 8);
	/* The region's step hands them to the controller, which sets its floor. */
	deadline = r->ctl.window_end_ns;
	ck_assert_int_eq(adaptive_region_maybe_step(r, deadline, getpid(),
						    (pid_t)syscall(SYS_gettid)), 1);
	ck_assert_uint_eq(r->ctl.l0_files, 5);
	ck_assert_uint_eq(r->ctl.l0_trigger, 8);
	ck_assert_uint_eq(r->ctl.l0_floor, adaptive_l0_floor(5, 8));
	ck_assert_uint_gt(r->ctl.l0_floor, 0);
}
END_TEST

/*
 * No floor without both: a log of other lines (a program that is not RocksDB, or an old
 * log appended to after its options), L0 without a trigger, a trigger without L0; and a
 * new file at the path forgets the old one's.
 */
START_TEST(test_no_floor_without_l0_and_trigger)
{
	static struct adaptive_window w;
	const char *lsm = "2026/12/04-20:44:01.630277 12896 EVENT_LOG_v1 {\"job\": 20, "
			  "\"event\": \"flush_finished\", \"lsm_state\": [8, 4, 0]}\n";
	const char *opt = "2026/12/04-20:44:01.453339 12894          "
			  "Options.level0_slowdown_writes_trigger: 8\n";
	char old[160];
	int fd;

	open_log("");
	append(INFO_LINE SLOW_LINE);
	ck_assert_int_eq(debt_log_poll(d, T0), ADAPTIVE_DEBT_SLOW);
	fill(&w);
	ck_assert_uint_eq(w.l0_trigger, 0);
	ck_assert_uint_eq(w.l0_files, 0);
	append(lsm);
	debt_log_poll(d, T0 + 100 * MS);
	fill(&w);
	ck_assert_uint_eq(w.l0_trigger, 0);
	ck_assert_uint_eq(d->l0_files, 8);
	append(opt);
	debt_log_poll(d, T0 + 200 * MS);
	fill(&w);
	ck_assert_uint_eq(w.l0_trigger, 8);
	ck_assert_uint_eq(w.l0_files, 8);
	/* RocksDB reopened: a new LOG, whose options have not been read yet. */
	snprintf(old, sizeof(old), "%s.old", path);
	ck_assert_int_eq(rename(path, old), 0);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	ck_assert_int_eq(write(fd, lsm, strlen(lsm)), (ssize_t)strlen(lsm));
	close(fd);
	debt_log_poll(d, T0 + 300 * MS);
	unlink(old);
	fill(&w);
	ck_assert_uint_eq(w.l0_trigger, 0);
	ck_assert_uint_eq(d->lsm_events, 1);
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
	tcase_add_test(tc, test_rocksdb_log_gives_l0_and_triggers);
	tcase_add_test(tc, test_no_floor_without_l0_and_trigger);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
