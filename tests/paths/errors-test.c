// SPDX-License-Identifier: MIT
/*
 * Description: the shim's low paths must not change what the program is told about its own
 * I/O. Each case runs a child under LD_PRELOAD=libiotier.so and checks the result the kernel
 * and libc give without the shim:
 *   fclose    a drop-behind stream whose buffered write fails (/dev/full): fclose returns
 *             EOF with ENOSPC (the shim's pre-flush once swallowed it).
 *   wb-drop   a drop-behind file whose writeback fails (ext2 on a loop device over a full
 *             tmpfs, space freed afterwards): fdatasync reports the error (the shim's waits
 *             once consumed it through the program's file description).
 *   wb-strict the same with strict writeback steering from a low thread.
 *   wb-budget the same with a 1 MiB dirty budget: the low writer's waits must not eat it.
 *   aio-cancel a low thread with a cancellation pending submits through io_submit under
 *             IOTIER_LOW_RATE: the rate limit's sleep after the submission must not be the
 *             cancellation point that unwinds it (the program would think it never returned).
 *   aio-null  io_submit with a NULL iocb pointer from a low thread: EFAULT, not SIGSEGV.
 *   disabled  a shim disabled by a bad setting leaves the program untouched: a raw io_uring
 *             ring set up under it gets no mapping of the shim's (/proc/self/maps).
 *   vfork     a vfork() child closing a raw io_uring fd must not untrack the parent's ring:
 *             the parent's next SQE from a low thread is still stamped.
 * Usage: errors-test LIBIOTIER CASE. Exit 0 pass, 1 fail, 77 skip.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "scratch_fs.h"
#include "test_env.h"

#define CHUNK (1 << 20)

/* ---- the children, run under the shim ---------------------------------------------------- */

static int child_fclose(void)
{
	FILE *f = fopen("/dev/full", "w");
	int r;

	if (!f) {
		perror("fopen /dev/full");
		return T_EXIT_FAIL;
	}
	fprintf(f, "a log line that cannot be written\n");
	errno = 0;
	r = fclose(f);
	if (r != EOF || errno != ENOSPC) {
		fprintf(stderr, "FAIL: fclose of a failed drop-behind stream = %d (%s), want EOF "
			"(ENOSPC)\n", r, strerrordesc_np(errno));
		return T_EXIT_FAIL;
	}
	return T_EXIT_PASS;
}

/* The reviewer's scenario: an error in writeback, space back, a good write, fdatasync. */
static int child_wb(const char *file, const char *filler)
{
	static char buf[CHUNK];
	int fd, r;

	prctl(PR_SET_NAME, "bg-errors");
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror("open");
		return T_EXIT_FAIL;
	}
	memset(buf, 'x', sizeof(buf));
	if (write(fd, buf, CHUNK) != CHUNK || write(fd, buf, CHUNK) != CHUNK) {
		perror("write");
		return T_EXIT_FAIL;
	}
	/* The device is full: this writeback fails, and the error waits in the file's errseq. */
	sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
	sleep(1);
	unlink(filler);
	if (write(fd, buf, CHUNK) != CHUNK) {
		perror("write after freeing space");
		return T_EXIT_FAIL;
	}
	errno = 0;
	r = fdatasync(fd);
	if (r == 0) {
		fprintf(stderr, "FAIL: fdatasync = 0 after a writeback error: the shim consumed "
			"it\n");
		return T_EXIT_FAIL;
	}
	printf("fdatasync = %d (%s), as without the shim\n", r, strerrordesc_np(errno));
	close(fd);
	return T_EXIT_PASS;
}

static int child_aio_null(void)
{
	struct iocb *ios[2] = { NULL, NULL };
	aio_context_t ctx = 0;
	long r;

	prctl(PR_SET_NAME, "bg-errors");
	if (syscall(SYS_io_setup, 8, &ctx)) {
		perror("io_setup");
		return T_EXIT_FAIL;
	}
	/* Both ways in: libc's syscall() and, through it, the io_submit stamping. */
	r = syscall(SYS_io_submit, ctx, 1L, ios);
	if (r != -1 || errno != EFAULT) {
		fprintf(stderr, "FAIL: io_submit(NULL iocb) = %ld (%s), want -1 EFAULT\n", r,
			strerrordesc_np(errno));
		return T_EXIT_FAIL;
	}
	syscall(SYS_io_destroy, ctx);
	return T_EXIT_PASS;
}

/* Mappings of io_uring rings in this process; the program itself maps none. */
static int ring_mappings(void)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	if (!maps)
		return -1;
	while (fgets(line, sizeof(line), maps))
		n += strstr(line, "io_uring") != NULL;
	fclose(maps);
	return n;
}

static int child_disabled(int want)
{
	struct io_uring_params p;
	int rfd, n;

	prctl(PR_SET_NAME, "bg-errors");
	memset(&p, 0, sizeof(p));
	rfd = (int)syscall(SYS_io_uring_setup, 4, &p);
	if (rfd < 0) {
		perror("io_uring_setup");
		return T_EXIT_FAIL;
	}
	n = ring_mappings();
	if (want ? n <= 0 : n != 0) {
		fprintf(stderr, "FAIL: %d io_uring mappings with the shim %s (want %s)\n", n,
			want ? "active" : "disabled", want ? "some" : "none");
		return T_EXIT_FAIL;
	}
	close(rfd);
	return T_EXIT_PASS;
}

static volatile int submit_returned;
static volatile int cancelled_early;

static void on_cancel(void *arg)
{
	(void)arg;
	cancelled_early = !submit_returned;
}

static void *cancel_thread(void *arg)
{
	static char buf[65536];
	struct iocb cb = { 0 }, *ios[1] = { &cb };
	aio_context_t ctx = 0;
	int fd;

	prctl(PR_SET_NAME, "bg-errors");
	if (syscall(SYS_io_setup, 8, &ctx))
		return (void *)1;
	fd = open((const char *)arg, O_RDONLY);
	if (fd < 0)
		return (void *)1;
	cb.aio_lio_opcode = IOCB_CMD_PREAD;
	cb.aio_fildes = (__u32)fd;
	cb.aio_buf = (unsigned long)buf;
	cb.aio_nbytes = sizeof(buf);
	/* Deferred cancellation: it acts at the next cancellation point, wherever that is. */
	pthread_cancel(pthread_self());
	pthread_cleanup_push(on_cancel, NULL);
	syscall(SYS_io_submit, ctx, 1L, ios); /* syscall() itself is no cancellation point */
	submit_returned = 1;
	pthread_testcancel();
	pthread_cleanup_pop(0);
	return NULL;
}

static int child_aio_cancel(const char *data)
{
	pthread_t t;
	void *res;

	if (pthread_create(&t, NULL, cancel_thread, (void *)data))
		return T_EXIT_FAIL;
	pthread_join(t, &res);
	if (res != PTHREAD_CANCELED) {
		fprintf(stderr, "FAIL: the thread could not set up its io_submit\n");
		return T_EXIT_FAIL;
	}
	if (cancelled_early) {
		fprintf(stderr, "FAIL: cancelled inside io_submit after the kernel took the iocb "
			"(the rate limit's sleep was a cancellation point)\n");
		return T_EXIT_FAIL;
	}
	return T_EXIT_PASS;
}

static int child_vfork(const char *data)
{
	struct io_uring_params p;
	struct io_uring_sqe *sqes;
	static char buf[4096];
	unsigned *tail, *array;
	int rfd, fd;
	char *sq;
	pid_t c;
	long r;

	prctl(PR_SET_NAME, "bg-errors");
	memset(&p, 0, sizeof(p));
	rfd = (int)syscall(SYS_io_uring_setup, 4, &p);
	if (rfd < 0) {
		perror("io_uring_setup");
		return T_EXIT_SKIP;
	}
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned), PROT_READ | PROT_WRITE,
		  MAP_SHARED, rfd, IORING_OFF_SQ_RING);
	sqes = mmap(NULL, p.sq_entries * sizeof(*sqes), PROT_READ | PROT_WRITE, MAP_SHARED, rfd,
		    IORING_OFF_SQES);
	if (sq == MAP_FAILED || sqes == MAP_FAILED) {
		perror("mmap ring");
		return T_EXIT_FAIL;
	}
	if (dup(rfd) < 0) /* the ring stays open in the parent after the child's close */
		return T_EXIT_FAIL;
	c = vfork();
	if (c == 0) {
		close(rfd); /* a typical pre-exec clean-up in a vfork child */
		_exit(0);
	}
	waitpid(c, NULL, 0);
	fd = open(data, O_RDONLY);
	if (fd < 0) {
		perror("open data");
		return T_EXIT_FAIL;
	}
	tail = (unsigned *)(sq + p.sq_off.tail);
	array = (unsigned *)(sq + p.sq_off.array);
	memset(&sqes[0], 0, sizeof(sqes[0]));
	sqes[0].opcode = IORING_OP_READ;
	sqes[0].fd = fd;
	sqes[0].addr = (unsigned long)buf;
	sqes[0].len = sizeof(buf);
	array[0] = 0;
	__atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
	r = syscall(SYS_io_uring_enter, rfd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0);
	if (r != 1 || sqes[0].ioprio == 0) {
		fprintf(stderr, "FAIL: after a vfork child closed the ring fd: enter = %ld, SQE "
			"ioprio 0x%x (want the low class stamped)\n", r, sqes[0].ioprio);
		return T_EXIT_FAIL;
	}
	return T_EXIT_PASS;
}

/* ---- the parent: setup, the child under the shim, cleanup -------------------------------- */

static int run_child(const char *self, const char *lib, char *const args[], char *const env[])
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return T_EXIT_FAIL;
	if (pid == 0) {
		char preload[4096];

		snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", lib);
		putenv(preload);
		for (int i = 0; env[i]; i++)
			putenv(env[i]);
		execv(self, args);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return T_EXIT_FAIL;
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "FAIL: the child died of signal %d\n", WTERMSIG(status));
		return T_EXIT_FAIL;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : T_EXIT_FAIL;
}

/*
 * ext2 (no journal: writeback errors stay with the data) on a loop device whose backing
 * file lives on a small tmpfs, filled up before the child writes. Both mounts are in the
 * test's private mount namespace; the guardian removes the directory (tests/lib).
 */
static int parent_wb(const char *self, const char *lib, const char *mode)
{
	char top[] = "/tmp/iotier-errors.XXXXXX", tmpfs[64], mnt[64], filler[80], file[80];
	char *args[] = { (char *)self, (char *)lib, "child-wb", file, filler, NULL };
	char *drop[] = { "IOTIER_DROP_BEHIND=*/wb.log", "IOTIER_LOW=bg-*", NULL };
	char *strict[] = { "IOTIER_LOW=bg-*", "IOTIER_WRITEBACK=1M", "IOTIER_WRITEBACK_STRICT=1",
			   NULL };
	char *budget[] = { "IOTIER_LOW=bg-*", "IOTIER_WRITEBACK=0", "IOTIER_DIRTY_BUDGET=1M",
			   NULL };
	struct scratch_fs_opts opts = { .bytes = 32u << 20, .backing_dir = tmpfs, .type = "ext2",
					.mnt = mnt };
	struct scratch_fs fs;
	char cmd[200];
	int ret;

	if (geteuid() != 0)
		return test_skip("needs root for tmpfs, a loop device and a mount");
	if ((ret = scratch_fs_private_mounts()))
		return ret;
	if (test_tmpdir(top) < 0)
		return test_fail("cannot create %s", top);
	snprintf(tmpfs, sizeof(tmpfs), "%s/backing", top);
	snprintf(mnt, sizeof(mnt), "%s/mnt", top);
	snprintf(filler, sizeof(filler), "%s/filler", tmpfs);
	snprintf(file, sizeof(file), "%s/wb.log", mnt);
	if (mkdir(tmpfs, 0700))
		return test_fail("mkdir %s: %s", tmpfs, strerror(errno));
	if (mount("iotier-errors", tmpfs, "tmpfs", 0, "size=48m"))
		return test_skip("cannot mount a tmpfs");
	if ((ret = scratch_fs_create(&fs, &opts)))
		return ret;
	/* Fill the tmpfs (dd ends with ENOSPC): the loop device's next new blocks fail too. */
	snprintf(cmd, sizeof(cmd), "dd if=/dev/zero of=%s bs=1M >/dev/null 2>&1", filler);
	if (system(cmd) == -1)
		return test_fail("cannot run dd");
	ret = run_child(self, lib, args, !strcmp(mode, "wb-drop") ? drop :
			!strcmp(mode, "wb-budget") ? budget : strict);
	scratch_fs_destroy(&fs);
	umount2(tmpfs, MNT_DETACH);
	return ret;
}

int main(int argc, char **argv)
{
	const char *lib, *mode;

	if (argc < 3) {
		fprintf(stderr, "usage: %s LIBIOTIER CASE\n", argv[0]);
		return T_EXIT_FAIL;
	}
	lib = argv[1];
	mode = argv[2];
	if (!strcmp(mode, "child-fclose"))
		return child_fclose();
	if (!strcmp(mode, "child-wb") && argc > 4)
		return child_wb(argv[3], argv[4]);
	if (!strcmp(mode, "child-aio-null"))
		return child_aio_null();
	if (!strcmp(mode, "child-aio-cancel") && argc > 3)
		return child_aio_cancel(argv[3]);
	if (!strcmp(mode, "child-disabled") && argc > 3)
		return child_disabled(atoi(argv[3]));
	if (!strcmp(mode, "child-vfork") && argc > 3)
		return child_vfork(argv[3]);

	if (!strcmp(mode, "fclose")) {
		char *args[] = { argv[0], (char *)lib, "child-fclose", NULL };
		char *env[] = { "IOTIER_DROP_BEHIND=*full", NULL };

		return run_child("/proc/self/exe", lib, args, env);
	}
	if (!strcmp(mode, "wb-drop") || !strcmp(mode, "wb-strict") || !strcmp(mode, "wb-budget"))
		return parent_wb("/proc/self/exe", lib, mode);
	if (!strcmp(mode, "aio-null")) {
		char *args[] = { argv[0], (char *)lib, "child-aio-null", NULL };
		char *env[] = { "IOTIER_LOW=bg-*", NULL };

		return run_child("/proc/self/exe", lib, args, env);
	}
	if (!strcmp(mode, "aio-cancel")) {
		char *args[] = { argv[0], (char *)lib, "child-aio-cancel", "/proc/self/exe", NULL };
		char *env[] = { "IOTIER_LOW=bg-*", "IOTIER_LOW_RATE=1M", NULL };

		return run_child("/proc/self/exe", lib, args, env);
	}
	if (!strcmp(mode, "disabled")) {
		/* The control first: the active shim maps the ring, so the count can see it. */
		char *active[] = { argv[0], (char *)lib, "child-disabled", "1", NULL };
		char *disabled[] = { argv[0], (char *)lib, "child-disabled", "0", NULL };
		char *good[] = { "IOTIER_LOW=bg-*", NULL };
		char *bad[] = { "IOTIER_LOW=bg-*", "IOTIER_WRITEBACK=1X", NULL };
		int r = run_child("/proc/self/exe", lib, active, good);

		return r ? r : run_child("/proc/self/exe", lib, disabled, bad);
	}
	if (!strcmp(mode, "vfork")) {
		char *args[] = { argv[0], (char *)lib, "child-vfork", "/proc/self/exe", NULL };
		char *env[] = { "IOTIER_LOW=bg-*", NULL };

		return run_child("/proc/self/exe", lib, args, env);
	}
	fprintf(stderr, "unknown case '%s'\n", mode);
	return T_EXIT_FAIL;
}
