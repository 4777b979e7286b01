// SPDX-License-Identifier: MIT
/*
 * check-split-io.c: unit tests of split_io: the pieces it issues (sizes, offsets, buffer
 * positions, the allowance asked before each one and rounded to the alignment), and that the
 * caller sees what one call would have returned: the total, a short count, -1 and errno when
 * the first piece fails; after a later failure an O_DIRECT write's -1 and errno (never a
 * short count), a buffered write's bytes so far, and a read done again whole.
 * split_may_cut's rules (count, offset, alignment) and split_range_mapped. Then the same
 * against pread and pwrite on a real file.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "adaptive/split_io.h"
#include "check_main.h"

#define MAX_CALLS 64

static char buffer[10000];

/* A scripted piece: records each call; call @fail_at fails with @fail_errno, @short_at is short. */
static struct {
	unsigned calls;
	size_t len[MAX_CALLS];
	off_t offset[MAX_CALLS];
	char *buf[MAX_CALLS];
	int fail_at, fail_errno, short_at;
	size_t allowance;      /* what the allowance answers ... */
	unsigned change_at;    /* ... until this many pieces were issued (0: never changes) */
	size_t allowance_then; /* ... and then this */
	unsigned asked;
} fake;

static size_t fake_allowance(void *ctx)
{
	(void)ctx;
	fake.asked++;
	return fake.change_at && fake.calls >= fake.change_at ? fake.allowance_then
							     : fake.allowance;
}


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

/* A call cut by the fake piece with @chunk as the allowance, failing as a write or a read. */
static ssize_t cut(size_t count, off_t offset, size_t chunk, enum split_failure failure)
{
	struct split_call c = { .piece = fake_piece, .allowance = fake_allowance, .align = 1,
				.failure = failure };

	fake.allowance = chunk;
	return split_io(&c, buffer, count, offset);
}

static void reset(void)
{
	memset(&fake, 0, sizeof(fake));
	fake.fail_at = fake.short_at = -1;
}

START_TEST(test_small_is_one_call)
{
	ck_assert_int_eq(cut(4096, 7, 4096, SPLIT_FAIL_WRITE), 4096);
	ck_assert_uint_eq(fake.calls, 1);
	ck_assert_int_eq(cut(5000, 7, 0, SPLIT_FAIL_WRITE), 5000); /* 0: no limit */
	ck_assert_uint_eq(fake.calls, 2);
	ck_assert_int_eq(cut(0, 7, 4096, SPLIT_FAIL_WRITE), 0);
	ck_assert_uint_eq(fake.calls, 3);
	ck_assert_uint_eq(fake.len[2], 0);
}
END_TEST

START_TEST(test_pieces)
{
	ck_assert_int_eq(cut(10000, 100, 4096, SPLIT_FAIL_WRITE), 10000);
	ck_assert_uint_eq(fake.calls, 3);
	ck_assert_uint_eq(fake.asked, 3); /* before every piece */
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
	ck_assert_int_eq(cut(10000, 0, 4096, SPLIT_FAIL_REDO_READ), 4096 + 2048);
	ck_assert_uint_eq(fake.calls, 2); /* the rest of the buffer is mapped: the end of file */
}
END_TEST

/*
 * A released tier releases the call in flight: the allowance is asked before every piece,
 * so a call begun at 1 KiB pieces sends the rest as one piece once it is lifted, and as
 * larger pieces once it grows.
 */
START_TEST(test_allowance_per_piece)
{
	fake.change_at = 2;
	fake.allowance_then = 0;
	ck_assert_int_eq(cut(10000, 0, 1024, SPLIT_FAIL_WRITE), 10000);
	ck_assert_uint_eq(fake.calls, 3);
	ck_assert_uint_eq(fake.len[0], 1024);
	ck_assert_uint_eq(fake.len[1], 1024);
	ck_assert_uint_eq(fake.len[2], 10000 - 2048);
	reset();
	fake.change_at = 1;
	fake.allowance_then = 4096;
	ck_assert_int_eq(cut(10000, 0, 1024, SPLIT_FAIL_WRITE), 10000);
	ck_assert_uint_eq(fake.calls, 4);
	ck_assert_uint_eq(fake.len[1], 4096);
	ck_assert_uint_eq(fake.len[3], 10000 - 1024 - 8192);
}
END_TEST

/* Every piece but the last is a multiple of the alignment, whatever the allowance says. */
START_TEST(test_aligned_pieces)
{
	struct split_call c = { .piece = fake_piece, .allowance = fake_allowance, .align = 4096,
				.failure = SPLIT_FAIL_WRITE };

	fake.allowance = 1000;
	ck_assert_int_eq(split_io(&c, buffer, 10000, 0), 10000);
	ck_assert_uint_eq(fake.calls, 3);
	ck_assert_uint_eq(fake.len[0], 4096);
	ck_assert_uint_eq(fake.len[2], 10000 - 8192);
}
END_TEST

/*
 * A failed write piece: -1 and its errno, first or not; never the bytes before it as a
 * short count. EFBIG after the first piece: the file's limit begins there, and the whole
 * call would have stopped at it.
 */
struct failure_case {
	int fail_at, fail_errno;
	ssize_t want;
	int want_errno; /* errno is set to 1234 before the call */
};

/* The call cut as @failure fails with its piece @c->fail_at failing: it answers @c->want. */
static void assert_failed_piece(const struct failure_case *c, enum split_failure failure)
{
	fake.fail_at = c->fail_at;
	fake.fail_errno = c->fail_errno;
	errno = 1234;
	ck_assert_int_eq(cut(10000, 0, 4096, failure), c->want);
	ck_assert_int_eq(errno, c->want_errno);
	ck_assert_uint_eq(fake.calls, (unsigned)c->fail_at + 1);
}

static const struct failure_case failures[] = {
	{ 0, EIO, -1, EIO },
	{ 1, EIO, -1, EIO },
	{ 2, EFAULT, -1, EFAULT },
	{ 2, ENOSPC, -1, ENOSPC },
	{ 0, EFBIG, -1, EFBIG },
	{ 2, EFBIG, 8192, 1234 },
};

START_TEST(test_failed_write_piece)
{
	assert_failed_piece(&failures[_i], SPLIT_FAIL_WRITE);
}
END_TEST

/*
 * A failed buffered write piece: -1 and its errno when it is the first; after the first, the
 * bytes before it with errno as before, as the kernel's buffered write returns what it
 * copied before ENOSPC, EDQUOT or a fault.
 */
static const struct failure_case buffered_failures[] = {
	{ 0, ENOSPC, -1, ENOSPC },
	{ 0, EFAULT, -1, EFAULT },
	{ 1, ENOSPC, 4096, 1234 },
	{ 2, EDQUOT, 8192, 1234 },
	{ 2, EFBIG, 8192, 1234 },
};

START_TEST(test_failed_buffered_write_piece)
{
	assert_failed_piece(&buffered_failures[_i], SPLIT_FAIL_SHORT_WRITE);
}
END_TEST

/* A failed read piece after the first: the whole call again, as one piece, answers. */
START_TEST(test_failed_read_piece)
{
	fake.fail_at = 1;
	fake.fail_errno = EFAULT;
	errno = 1234;
	ck_assert_int_eq(cut(10000, 100, 4096, SPLIT_FAIL_REDO_READ), 10000);
	ck_assert_int_eq(errno, 1234); /* the whole call succeeded: errno as before */
	ck_assert_uint_eq(fake.calls, 3);
	ck_assert_uint_eq(fake.len[2], 10000);
	ck_assert_int_eq(fake.offset[2], 100);
	ck_assert_ptr_eq(fake.buf[2], buffer);
	reset();
	fake.fail_at = 0;
	fake.fail_errno = EIO;
	ck_assert_int_eq(cut(10000, 100, 4096, SPLIT_FAIL_REDO_READ), -1);
	ck_assert_int_eq(errno, EIO);
	ck_assert_uint_eq(fake.calls, 1);
}
END_TEST

/*
 * A short read piece with part of the buffer after it unmapped: an O_DIRECT read past the
 * end of the file would have zero-filled it and failed, so the whole call answers.
 */
START_TEST(test_short_read_unmapped_rest)
{
	char *p = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct split_call c = { .piece = fake_piece, .allowance = fake_allowance, .align = 1,
				.failure = SPLIT_FAIL_REDO_READ };

	ck_assert_ptr_ne(p, MAP_FAILED);
	ck_assert_int_eq(munmap(p + 2 * 4096, 4096), 0);
	fake.allowance = 4096;
	fake.short_at = 0;
	ck_assert_int_eq(split_io(&c, p, 3 * 4096, 0), 3 * 4096);
	ck_assert_uint_eq(fake.calls, 2);
	ck_assert_uint_eq(fake.len[1], 3 * 4096);
	reset();
	fake.allowance = 4096;
	fake.short_at = 0;
	c.failure = SPLIT_FAIL_WRITE; /* a write stops at a short piece as it is */
	ck_assert_int_eq(split_io(&c, p, 3 * 4096, 0), 2048);
	ck_assert_uint_eq(fake.calls, 1);
	munmap(p, 2 * 4096);
}
END_TEST

/* The calls the kernel answers as a whole, differently from its pieces, are not cut. */
static const struct {
	uintptr_t buf;
	size_t count;
	off_t offset;
	size_t align;
	bool cut;
} cuts[] = {
	{ 4096, 1 << 20, 0, 1, true },
	{ 4097, (1 << 20) + 100, 3, 1, true },          /* buffered: any alignment */
	{ 4096, 1 << 20, 0, 512, true },
	{ 4096, (1 << 20) + 100, 0, 512, false },       /* an O_DIRECT count out of alignment */
	{ 4096, 1 << 20, 100, 512, false },             /* the offset */
	{ 4097, 1 << 20, 0, 512, false },               /* the buffer */
	{ 4096, 1 << 20, 0, 4096, true },
	{ 4096 + 512, 1 << 20, 0, 4096, false },
	{ 4096, 1 << 20, 0, 0, false },                 /* no alignment known */
	{ 4096, 1 << 20, 0, 768, false },               /* not a power of two */
	{ 4096, 1 << 20, -4096, 1, false },             /* a negative offset: EINVAL */
	{ 4096, 1 << 20, LLONG_MAX - 100000, 1, false },/* past LLONG_MAX at the end: EINVAL */
	{ 4096, 100000, LLONG_MAX - 100000, 1, true },  /* ending at LLONG_MAX exactly */
	{ 4096, 0x7ffff000, 0, 1, true },               /* MAX_RW_COUNT */
	{ 4096, 0x7ffff001, 0, 1, false },              /* the kernel cuts it itself */
	{ 4096, (size_t)SSIZE_MAX + 1, 0, 1, false },   /* EINVAL or EFAULT, whole */
};

START_TEST(test_may_cut)
{
	ck_assert_msg(split_may_cut((const char *)cuts[_i].buf, cuts[_i].count, cuts[_i].offset,
				    cuts[_i].align) == cuts[_i].cut,
		      "case %d: expected %s", _i, cuts[_i].cut ? "cut" : "whole");
}
END_TEST

START_TEST(test_range_mapped)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ck_assert_ptr_ne(p, MAP_FAILED);
	ck_assert_int_eq(munmap(p + 2 * page, page), 0);
	errno = 1234;
	ck_assert(split_range_mapped(p, 2 * page));
	ck_assert(split_range_mapped(p + 1, 2 * page - 1));
	ck_assert(!split_range_mapped(p, 2 * page + 1));
	ck_assert(!split_range_mapped(p + page, 3 * page));
	ck_assert(!split_range_mapped(NULL, 4096));
	ck_assert(!split_range_mapped((char *)UINTPTR_MAX - 10, 4096)); /* wraps */
	ck_assert(split_range_mapped(p, 0));
	ck_assert_int_eq(errno, 1234);
	munmap(p, 2 * page);
	/* Larger than one mincore answer: a static buffer, mapped end to end. */
	static char big[8 << 20];
	ck_assert(split_range_mapped(big, sizeof(big)));
}
END_TEST

/* One call never moves more than the kernel's MAX_RW_COUNT; neither do the pieces. */
START_TEST(test_kernel_limit)
{
	size_t size = (size_t)3 << 30; /* address space only: the fake piece touches nothing */
	char *big = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	struct split_call c = { .piece = fake_piece, .allowance = fake_allowance, .align = 1,
				.failure = SPLIT_FAIL_WRITE };

	ck_assert_ptr_ne(big, MAP_FAILED);
	fake.allowance = 1u << 30;
	ck_assert_int_eq(split_io(&c, big, size, 0), 0x7ffff000);
	ck_assert_uint_eq(fake.calls, 2);
	ck_assert_uint_eq(fake.len[1], 0x7ffff000 - (1u << 30));
	munmap(big, size);
}
END_TEST

static int real_fd = -1;

static ssize_t pread_piece(void *ctx, char *buf, size_t len, off_t offset)
{
	(void)ctx;
	return pread(real_fd, buf, len, offset);
}

static ssize_t pwrite_piece(void *ctx, char *buf, size_t len, off_t offset)
{
	(void)ctx;
	return pwrite(real_fd, buf, len, offset);
}

static size_t chunk_4k(void *ctx)
{
	(void)ctx;
	return 4096;
}

START_TEST(test_real_file)
{
	char path[] = "/tmp/iotier-split-io-XXXXXX", whole[10000], pieces[10000];
	struct split_call w = { .piece = pwrite_piece, .allowance = chunk_4k, .align = 1,
				.failure = SPLIT_FAIL_WRITE };
	struct split_call r = { .piece = pread_piece, .allowance = chunk_4k, .align = 1,
				.failure = SPLIT_FAIL_REDO_READ };
	ssize_t a, b;

	real_fd = mkstemp(path);
	ck_assert_int_ge(real_fd, 0);
	unlink(path);
	for (size_t i = 0; i < sizeof(buffer); i++)
		buffer[i] = (char)(i * 7);
	ck_assert_int_eq(split_io(&w, buffer, sizeof(buffer), 2000), 10000);
	/* 12000 bytes: a read of 10000 at 5000 is short, split or not. */
	a = pread(real_fd, whole, sizeof(whole), 5000);
	b = split_io(&r, pieces, sizeof(pieces), 5000);
	ck_assert_int_eq(a, 7000);
	ck_assert_int_eq(b, a);
	ck_assert_mem_eq(whole, pieces, (size_t)a);
	ck_assert_mem_eq(pieces, buffer + 3000, 7000);
	ck_assert_int_eq(split_io(&r, pieces, sizeof(pieces), 20000), 0);
	close(real_fd);
	errno = 0;
	ck_assert_int_eq(split_io(&r, pieces, sizeof(pieces), 0), -1);
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
	tcase_add_test(tc, test_allowance_per_piece);
	tcase_add_test(tc, test_aligned_pieces);
	tcase_add_loop_test(tc, test_failed_write_piece, 0, sizeof(failures) / sizeof(failures[0]));
	tcase_add_loop_test(tc, test_failed_buffered_write_piece, 0,
			    sizeof(buffered_failures) / sizeof(buffered_failures[0]));
	tcase_add_test(tc, test_failed_read_piece);
	tcase_add_test(tc, test_short_read_unmapped_rest);
	tcase_add_loop_test(tc, test_may_cut, 0, sizeof(cuts) / sizeof(cuts[0]));
	tcase_add_test(tc, test_range_mapped);
	tcase_add_test(tc, test_kernel_limit);
	tcase_add_test(tc, test_real_file);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
