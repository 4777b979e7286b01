// SPDX-License-Identifier: MIT
/*
 * check-split-io.c: unit tests of split_io: the pieces it issues (sizes, offsets, buffer
 * positions), and that the caller sees what one call would have returned: the total, a
 * short count, a partial count with errno untouched after a later failure, -1 and errno
 * when the first piece fails. Then the same against pread and pwrite on a real file.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "split_io.h"
#include "check_main.h"

#define MAX_CALLS 64

/* A scripted piece: records each call; call @fail_at fails with @fail_errno, @short_at is short. */
static struct {
	unsigned calls;
	size_t len[MAX_CALLS];
	off_t offset[MAX_CALLS];
	char *buf[MAX_CALLS];
	int fail_at, fail_errno, short_at;
} fake;

static ssize_t fake_piece(void *ctx, char *buf, size_t len, off_t offset)
{
	unsigned i = fake.calls++;

	(void)ctx;
	ck_assert_uint_lt(i, MAX_CALLS);
	fake.len[i] = len;
	fake.offset[i] = offset;
	fake.buf[i] = buf;
	if ((int)i == fake.fail_at) {
		errno = fake.fail_errno;
		return -1;
	}
	return (int)i == fake.short_at ? (ssize_t)(len / 2) : (ssize_t)len;
}

static char buffer[10000];

static void reset(void)
{
	memset(&fake, 0, sizeof(fake));
	fake.fail_at = fake.short_at = -1;
}

START_TEST(test_small_is_one_call)
{
	ck_assert_int_eq(split_io(fake_piece, NULL, buffer, 4096, 7, 4096), 4096);
	ck_assert_uint_eq(fake.calls, 1);
	ck_assert_int_eq(split_io(fake_piece, NULL, buffer, 5000, 7, 0), 5000); /* 0: no limit */
	ck_assert_uint_eq(fake.calls, 2);
	ck_assert_int_eq(split_io(fake_piece, NULL, buffer, 0, 7, 4096), 0);
	ck_assert_uint_eq(fake.calls, 3);
	ck_assert_uint_eq(fake.len[2], 0);
}
END_TEST

START_TEST(test_pieces)
{
	ck_assert_int_eq(split_io(fake_piece, NULL, buffer, 10000, 100, 4096), 10000);
	ck_assert_uint_eq(fake.calls, 3);
	ck_assert_uint_eq(fake.len[0], 4096);
	ck_assert_uint_eq(fake.len[1], 4096);
	ck_assert_uint_eq(fake.len[2], 1808);
	ck_assert_int_eq(fake.offset[0], 100);
	ck_assert_int_eq(fake.offset[1], 4196);
	ck_assert_int_eq(fake.offset[2], 8292);
	ck_assert_ptr_eq(fake.buf[1], buffer + 4096);
	ck_assert_ptr_eq(fake.buf[2], buffer + 8192);
}
END_TEST

START_TEST(test_short_piece_stops)
{
	fake.short_at = 1;
	ck_assert_int_eq(split_io(fake_piece, NULL, buffer, 10000, 0, 4096), 4096 + 2048);
	ck_assert_uint_eq(fake.calls, 2);
}
END_TEST

/* A failed piece: -1 and its errno if it was the first, else the bytes before it. */
static const struct {
	int fail_at;
	ssize_t want;
	int want_errno; /* errno is set to 1234 before the call */
} failures[] = {
	{ 0, -1, EIO },
	{ 1, 4096, 1234 },
	{ 2, 8192, 1234 },
};

START_TEST(test_failed_piece)
{
	fake.fail_at = failures[_i].fail_at;
	fake.fail_errno = EIO;
	errno = 1234;
	ck_assert_int_eq(split_io(fake_piece, NULL, buffer, 10000, 0, 4096), failures[_i].want);
	ck_assert_int_eq(errno, failures[_i].want_errno);
	ck_assert_uint_eq(fake.calls, (unsigned)failures[_i].fail_at + 1);
}
END_TEST

/* One call never moves more than the kernel's MAX_RW_COUNT; neither do the pieces. */
START_TEST(test_kernel_limit)
{
	size_t size = (size_t)3 << 30; /* address space only: the fake piece touches nothing */
	char *big = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	ck_assert_ptr_ne(big, MAP_FAILED);
	ck_assert_int_eq(split_io(fake_piece, NULL, big, size, 0, 1u << 30), 0x7ffff000);
	ck_assert_uint_eq(fake.calls, 2);
	ck_assert_uint_eq(fake.len[1], 0x7ffff000 - (1u << 30));
	munmap(big, size);
}
END_TEST

static ssize_t pread_piece(void *ctx, char *buf, size_t len, off_t offset)
{
	return pread(*(int *)ctx, buf, len, offset);
}

static ssize_t pwrite_piece(void *ctx, char *buf, size_t len, off_t offset)
{
	return pwrite(*(int *)ctx, buf, len, offset);
}

START_TEST(test_real_file)
{
	char path[] = "/tmp/iotier-split-io-XXXXXX", whole[10000], pieces[10000];
	int fd = mkstemp(path);
	ssize_t a, b;

	ck_assert_int_ge(fd, 0);
	unlink(path);
	for (size_t i = 0; i < sizeof(buffer); i++)
		buffer[i] = (char)(i * 7);
	ck_assert_int_eq(split_io(pwrite_piece, &fd, buffer, sizeof(buffer), 2000, 4096), 10000);
	/* 12000 bytes: a read of 10000 at 5000 is short, split or not. */
	a = pread(fd, whole, sizeof(whole), 5000);
	b = split_io(pread_piece, &fd, pieces, sizeof(pieces), 5000, 4096);
	ck_assert_int_eq(a, 7000);
	ck_assert_int_eq(b, a);
	ck_assert_mem_eq(whole, pieces, (size_t)a);
	ck_assert_mem_eq(pieces, buffer + 3000, 7000);
	ck_assert_int_eq(split_io(pread_piece, &fd, pieces, sizeof(pieces), 20000, 4096), 0);
	close(fd);
	errno = 0;
	ck_assert_int_eq(split_io(pread_piece, &fd, pieces, sizeof(pieces), 0, 4096), -1);
	ck_assert_int_eq(errno, EBADF);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("split-io");
	TCase *tc = tcase_create("split");

	tcase_add_checked_fixture(tc, reset, NULL);
	tcase_add_test(tc, test_small_is_one_call);
	tcase_add_test(tc, test_pieces);
	tcase_add_test(tc, test_short_piece_stops);
	tcase_add_loop_test(tc, test_failed_piece, 0, sizeof(failures) / sizeof(failures[0]));
	tcase_add_test(tc, test_kernel_limit);
	tcase_add_test(tc, test_real_file);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
