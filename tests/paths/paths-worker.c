// SPDX-License-Identifier: MIT
/*
 * Description: the I/O side of the low-path tests, run by paths-test with libiotier.so
 * preloaded and IOTIER_LOW=bg-*: threads named fg-* are untagged controls, bg-* threads are
 * low. Usage: paths-worker SCENARIO ARGS. Scenarios that the block-layer tracer judges
 * (uring, uring-raw, aio, write) check here only what the program itself can see (the
 * stamped SQE or iocb); drop, rate and hot judge themselves. Exit 0 pass, 1 fail, 77 skip.
 */
#include <errno.h>
#include <fcntl.h>
#include <libaio.h>
#include <liburing.h>
#include <linux/ioprio.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "test_env.h"

#define IDLE IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)
#define BE2 IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 2)
#define IOCB_FLAG_IOPRIO_ (1 << 1) /* linux/aio_abi.h; that header clashes with libaio.h */

static int dev_fd = -1;
static char *bufs; /* 64 aligned buffers of 16 KiB */

/* One batch of direct reads: @n reads of @size bytes, each at its own MiB + @skew. */
struct batch {
	const char *thread_name;
	unsigned n, size, skew;
	int ioprio;        /* 0: leave the SQE/iocb as prepared; else set it explicitly */
	int want_ioprio;   /* what the SQE/iocb must hold after submission; -1: don't check */
	void *ctx;         /* the ring or aio context */
	int (*run)(struct batch *b);
};

static void *batch_thread(void *arg)
{
	struct batch *b = arg;

	prctl(PR_SET_NAME, b->thread_name, 0, 0, 0);
	EXPECT(b->run(b) >= 0, "%s: a batch failed", b->thread_name);
	return NULL;
}

static void run_batch(struct batch *b)
{
	pthread_t t;

	pthread_create(&t, NULL, batch_thread, b);
	pthread_join(t, NULL);
}

/*
 * The three batches of a reads scenario, one thread each, through @ctx and @run: untagged
 * control reads, low reads (@low_name matches bg-*) that must carry idle, and low reads
 * with an explicit be:2 that must keep it.
 */
static void run_batches(void *ctx, int (*run)(struct batch *), const char *low_name)
{
	struct batch control = { "fg-control", 64, 8192, 0, 0, 0, ctx, run };
	struct batch low = { low_name, 64, 4096, 512 << 10, 0, IDLE, ctx, run };
	struct batch expl = { "bg-explicit", 32, 16384, 256 << 10, BE2, BE2, ctx, run };

	run_batch(&control);
	run_batch(&low);
	run_batch(&expl);
}

static off_t batch_offset(const struct batch *b, unsigned i)
{
	return (off_t)i * (1 << 20) + b->skew;
}

/* ---- io_uring through liburing ---------------------------------------------------- */

static int uring_batch(struct batch *b)
{
	struct io_uring *ring = b->ctx;
	struct io_uring_cqe *cqe;

	for (unsigned done = 0; done < b->n;) {
		struct io_uring_sqe *sqes[16];
		unsigned k = 0;

		while (k < 16 && done + k < b->n) {
			sqes[k] = io_uring_get_sqe(ring);
			io_uring_prep_read(sqes[k], dev_fd, bufs + (size_t)k * 16384, b->size,
					   batch_offset(b, done + k));
			sqes[k]->ioprio = (__u16)b->ioprio;
			k++;
		}
		EXPECT(io_uring_submit(ring) == (int)k, "io_uring_submit");
		for (unsigned j = 0; j < k && b->want_ioprio >= 0; j++)
			EXPECT(sqes[j]->ioprio == b->want_ioprio, "%s: SQE ioprio %#x, want %#x",
			       b->thread_name, sqes[j]->ioprio, b->want_ioprio);
		for (unsigned j = 0; j < k; j++) {
			if (io_uring_wait_cqe(ring, &cqe) < 0)
				return -1;
			EXPECT(cqe->res == (int)b->size, "%s: read returned %d", b->thread_name,
			       cqe->res);
			io_uring_cqe_seen(ring, cqe);
		}
		done += k;
	}
	return 0;
}

static int scenario_uring(bool sqpoll)
{
	struct io_uring_params p = { 0 };
	struct io_uring ring;
	int ret;

	if (sqpoll) {
		p.flags = IORING_SETUP_SQPOLL;
		p.sq_thread_idle = 2000;
	}
	/* Set up by the untagged main thread: the SQPOLL thread takes nothing from bg-*. */
	ret = io_uring_queue_init_params(32, &ring, &p);
	if (ret == -ENOSYS || ret == -EPERM)
		return test_skip("io_uring is not available");
	if (ret < 0) {
		fprintf(stderr, "io_uring_queue_init_params: %s\n", strerror(-ret));
		return T_EXIT_FAIL;
	}
	run_batches(&ring, uring_batch, "bg-uring");
	io_uring_queue_exit(&ring);
	return test_result();
}

/* ---- io_uring through syscall(), no liburing -------------------------------------- */

struct raw_ring {
	int fd;
	unsigned *head, *tail, *mask, *array;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
	unsigned *cq_head, *cq_tail, *cq_mask;
};

static int raw_setup(struct raw_ring *r)
{
	struct io_uring_params p = { 0 };
	void *sq, *cq;

	r->fd = (int)syscall(__NR_io_uring_setup, 32, &p);
	if (r->fd < 0)
		return -errno;
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
	cq = mmap(NULL, p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || r->sqes == MAP_FAILED)
		return -errno;
	r->head = (unsigned *)((char *)sq + p.sq_off.head);
	r->tail = (unsigned *)((char *)sq + p.sq_off.tail);
	r->mask = (unsigned *)((char *)sq + p.sq_off.ring_mask);
	r->array = (unsigned *)((char *)sq + p.sq_off.array);
	r->cq_head = (unsigned *)((char *)cq + p.cq_off.head);
	r->cq_tail = (unsigned *)((char *)cq + p.cq_off.tail);
	r->cq_mask = (unsigned *)((char *)cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)((char *)cq + p.cq_off.cqes);
	return 0;
}

static int raw_batch(struct batch *b)
{
	struct raw_ring r = { 0 };
	int ret = raw_setup(&r);

	if (ret < 0) {
		fprintf(stderr, "raw io_uring setup: %s\n", strerror(-ret));
		return -1;
	}
	for (unsigned done = 0; done < b->n;) {
		unsigned tail = *r.tail, k = 0, idx[16];

		while (k < 16 && done + k < b->n) {
			unsigned i = (tail + k) & *r.mask;
			struct io_uring_sqe *sqe = &r.sqes[i];

			memset(sqe, 0, sizeof(*sqe));
			sqe->opcode = IORING_OP_READ;
			sqe->fd = dev_fd;
			sqe->addr = (uintptr_t)(bufs + (size_t)k * 16384);
			sqe->len = b->size;
			sqe->off = (__u64)batch_offset(b, done + k);
			r.array[i] = i;
			idx[k++] = i;
		}
		__atomic_store_n(r.tail, tail + k, __ATOMIC_RELEASE);
		ret = (int)syscall(__NR_io_uring_enter, r.fd, k, k, IORING_ENTER_GETEVENTS, NULL, 0);
		EXPECT(ret == (int)k, "%s: io_uring_enter: %d", b->thread_name, ret);
		for (unsigned j = 0; j < k && b->want_ioprio >= 0; j++)
			EXPECT(r.sqes[idx[j]].ioprio == b->want_ioprio, "%s: raw SQE ioprio %#x, "
			       "want %#x", b->thread_name, r.sqes[idx[j]].ioprio, b->want_ioprio);
		while (__atomic_load_n(r.cq_tail, __ATOMIC_ACQUIRE) != *r.cq_head) {
			struct io_uring_cqe *cqe = &r.cqes[*r.cq_head & *r.cq_mask];

			EXPECT(cqe->res == (int)b->size, "%s: read returned %d", b->thread_name,
			       cqe->res);
			__atomic_store_n(r.cq_head, *r.cq_head + 1, __ATOMIC_RELEASE);
		}
		done += k;
	}
	close(r.fd);
	return 0;
}

static int scenario_uring_raw(void)
{
	struct batch control = { "fg-control", 64, 8192, 0, 0, 0, NULL, raw_batch };
	struct batch low = { "bg-raw", 64, 4096, 512 << 10, 0, IDLE, NULL, raw_batch };

	if (syscall(__NR_io_uring_setup, 0, NULL) < 0 && errno == ENOSYS)
		return test_skip("io_uring is not available");
	run_batch(&control);
	run_batch(&low);
	return test_result();
}

/* ---- libaio: half through io_submit(), half through syscall(SYS_io_submit) ---------- */

static int aio_batch(struct batch *b)
{
	io_context_t ctx = *(io_context_t *)b->ctx;
	struct io_event events[16];

	for (unsigned done = 0; done < b->n;) {
		struct iocb cbs[16], *ptrs[16];
		unsigned k = 0;
		int ret;

		while (k < 16 && done + k < b->n) {
			io_prep_pread(&cbs[k], dev_fd, bufs + (size_t)k * 16384, b->size,
				      batch_offset(b, done + k));
			if (b->ioprio) {
				cbs[k].u.c.flags |= IOCB_FLAG_IOPRIO_;
				cbs[k].aio_reqprio = (short)b->ioprio;
			}
			ptrs[k] = &cbs[k];
			k++;
		}
		if ((done / 16) % 2)
			ret = (int)syscall(__NR_io_submit, ctx, (long)k, ptrs);
		else
			ret = io_submit(ctx, (long)k, ptrs);
		EXPECT(ret == (int)k, "%s: io_submit: %d", b->thread_name, ret);
		for (unsigned j = 0; j < k && b->want_ioprio >= 0; j++) {
			int want_flag = b->want_ioprio ? IOCB_FLAG_IOPRIO_ : 0;

			EXPECT((int)(cbs[j].u.c.flags & IOCB_FLAG_IOPRIO_) == want_flag &&
				       (!want_flag || cbs[j].aio_reqprio == b->want_ioprio),
			       "%s: iocb flags %#x reqprio %#x, want %#x", b->thread_name,
			       cbs[j].u.c.flags, (unsigned)cbs[j].aio_reqprio, b->want_ioprio);
		}
		ret = io_getevents(ctx, k, k, events, NULL);
		EXPECT(ret == (int)k, "%s: io_getevents: %d", b->thread_name, ret);
		for (int j = 0; j < ret; j++)
			EXPECT(events[j].res == b->size, "%s: read returned %ld", b->thread_name,
			       (long)events[j].res);
		done += k;
	}
	return 0;
}

static int scenario_aio(void)
{
	io_context_t ctx = 0;
	int ret = io_setup(64, &ctx);

	if (ret == -ENOSYS)
		return test_skip("native AIO is not available");
	if (ret < 0) {
		fprintf(stderr, "io_setup: %s\n", strerror(-ret));
		return T_EXIT_FAIL;
	}
	run_batches(&ctx, aio_batch, "bg-aio");
	io_destroy(ctx);
	return test_result();
}

/* ---- a buffered low writer: 1 MiB writes, fsync at the end ------------------------- */

struct writer {
	const char *path;
	unsigned mib;
};

static void *writer_thread(void *arg)
{
	struct writer *w = arg;
	char *buf = malloc(1 << 20);
	int fd;

	prctl(PR_SET_NAME, "bg-writer", 0, 0, 0);
	memset(buf, 0x5a, 1 << 20);
	fd = open(w->path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	EXPECT(fd >= 0, "open %s: %s", w->path, strerror(errno));
	for (unsigned i = 0; fd >= 0 && i < w->mib; i++) {
		errno = 4242;
		ssize_t n = write(fd, buf, 1 << 20);

		EXPECT(n == 1 << 20 && errno == 4242, "write: %zd errno %d", n, errno);
	}
	EXPECT(fd >= 0 && fsync(fd) == 0, "fsync");
	close(fd);
	free(buf);
	return NULL;
}

static int scenario_write(const char *path, unsigned mib)
{
	struct writer w = { path, mib };
	pthread_t t;

	pthread_create(&t, NULL, writer_thread, &w);
	pthread_join(t, NULL);
	return test_result();
}

/* ---- drop-behind: a written log leaves the cache, other files stay ------------------ */

/* Fraction of @path's pages in the page cache, by mincore(2). */
static double resident(const char *path)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *vec;
	size_t pages, in = 0;
	struct stat st;
	void *map;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0)
		return -1;
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -1;
	pages = ((size_t)st.st_size + (size_t)page - 1) / (size_t)page;
	vec = malloc(pages);
	if (!vec || mincore(map, (size_t)st.st_size, vec) < 0) {
		munmap(map, (size_t)st.st_size);
		free(vec);
		return -1;
	}
	for (size_t i = 0; i < pages; i++)
		in += vec[i] & 1;
	munmap(map, (size_t)st.st_size);
	free(vec);
	return (double)in / (double)pages;
}

/* Read all of @path, through the shim's read() or, with @raw, the bare system call. */
static void read_all(const char *path, bool raw)
{
	char buf[1 << 16];
	int fd = open(path, O_RDONLY);

	EXPECT(fd >= 0, "open %s: %s", path, strerror(errno));
	while (fd >= 0 && (raw ? syscall(SYS_read, fd, buf, sizeof(buf)) :
			   read(fd, buf, sizeof(buf))) > 0)
		;
	if (fd >= 0)
		close(fd);
}

/*
 * @dir holds old.log and its control old.ctl, written and cached together by paths-test
 * without the shim.
 *
 * What stays cached also depends on the machine's memory pressure, which the test does not
 * control. So each "stays cached" file has a control the shim never sees: the same size,
 * written or read the same way at the same moment through bare system calls, under a name
 * no glob matches. Pressure evicts both alike; the shim dropping pages it should keep
 * shows as the file falling behind its control.
 */
static int scenario_drop(const char *dir)
{
	char old_log[512], old_ctl[512], new_log[512], data[512], ctl[512], *buf;
	double r_old, r_old_ctl, r_new, r_data, r_ctl, r_open;
	int log_fd, data_fd, ctl_fd;
	const size_t chunk = 256 << 10;

	snprintf(old_log, sizeof(old_log), "%s/old.log", dir);
	snprintf(old_ctl, sizeof(old_ctl), "%s/old.ctl", dir);
	snprintf(new_log, sizeof(new_log), "%s/new.log", dir);
	snprintf(data, sizeof(data), "%s/table.dat", dir);
	snprintf(ctl, sizeof(ctl), "%s/table.ctl", dir);

	/* Reading a matching file evicts nothing. */
	read_all(old_log, false);
	read_all(old_ctl, true);

	/* 64 MiB each, in turns, so that the three files' pages are the same age. */
	buf = malloc(chunk);
	memset(buf, 'L', chunk);
	log_fd = open(new_log, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
	data_fd = open(data, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
	ctl_fd = open(ctl, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
	EXPECT(log_fd >= 0 && data_fd >= 0 && ctl_fd >= 0, "open: %s", strerror(errno));
	for (size_t done = 0; log_fd >= 0 && data_fd >= 0 && ctl_fd >= 0 && done < 64u << 20;
	     done += chunk) {
		EXPECT(write(log_fd, buf, chunk) == (ssize_t)chunk, "write %s", new_log);
		EXPECT(write(data_fd, buf, chunk) == (ssize_t)chunk, "write %s", data);
		EXPECT(syscall(SYS_write, ctl_fd, buf, chunk) == (long)chunk, "write %s", ctl);
	}
	free(buf);
	/* As the file grows: at most the last two 1 MiB chunks of 64 stay. */
	r_open = resident(new_log);
	if (log_fd >= 0)
		close(log_fd);
	if (data_fd >= 0)
		close(data_fd);
	if (ctl_fd >= 0)
		close(ctl_fd);
	r_old = resident(old_log);
	r_old_ctl = resident(old_ctl);
	r_new = resident(new_log);
	r_data = resident(data);
	r_ctl = resident(ctl);
	printf("resident: new.log %.1f%% while open, %.1f%% closed; table.dat %.1f%% (control "
	       "%.1f%%); old.log (read) %.1f%% (control %.1f%%)\n", 100 * r_open, 100 * r_new,
	       100 * r_data, 100 * r_ctl, 100 * r_old, 100 * r_old_ctl);
	/* Pressure only lowers these: they hold whatever the machine does. */
	EXPECT(r_open >= 0 && r_open <= 0.10, "open log still %.1f%% cached, want <= 10%%",
	       100 * r_open);
	EXPECT(r_new >= 0 && r_new <= 0.01, "closed log still %.1f%% cached, want <= 1%%",
	       100 * r_new);
	/* With the controls mostly gone, "kept" cannot be told from "dropped". */
	if (r_ctl < 0.5 || r_old_ctl < 0.5)
		return test_skip("memory pressure evicted the control files: cannot judge what "
				 "drop-behind kept");
	EXPECT(r_data >= r_ctl - 0.10, "non-matching file %.1f%% cached against its control's "
	       "%.1f%%: dropped by the shim?", 100 * r_data, 100 * r_ctl);
	EXPECT(r_old >= r_old_ctl - 0.10, "log that was only read: %.1f%% cached against its "
	       "control's %.1f%%: dropped by the shim?", 100 * r_old, 100 * r_old_ctl);
	return test_result();
}

/* ---- rate limit: the low thread holds the rate, a high thread runs free -------------- */

#define RATE_SECONDS 5.0
#define CHUNK (64 << 10)

struct rate_thread {
	const char *name, *path;
	double bytes, seconds; /* moved, from the start of the first transfer to the end of the last */
	double starved;        /* of those seconds, runnable but waiting for a CPU */
	pthread_t handle;
};

/*
 * Seconds the calling thread has spent runnable but waiting for a CPU (the second field of
 * schedstat), or 0 when the kernel does not keep it (then nothing is excused).
 */
static double run_delay(void)
{
	char buf[128];
	unsigned long long on_cpu, waiting;
	int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &on_cpu, &waiting) != 2)
		return 0;
	return (double)waiting / 1e9;
}

static _Atomic int signals_seen;

static void on_usr1(int sig)
{
	(void)sig;
	signals_seen++;
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One transfer through libaio or io_uring: both are charged at submission, exactly once. */
static ssize_t aio_pread(io_context_t ctx, int fd, void *buf, size_t n, off_t off)
{
	struct iocb cb, *p = &cb;
	struct io_event ev;

	int got;

	io_prep_pread(&cb, fd, buf, n, off);
	if (io_submit(ctx, 1, &p) != 1)
		return -1;
	/* The signaller's SIGUSR1 (no SA_RESTART) may end the wait: wait again. */
	while ((got = io_getevents(ctx, 1, 1, &ev, NULL)) == -EINTR)
		;
	if (got != 1)
		return -1;
	return (ssize_t)ev.res;
}

static ssize_t uring_pread(struct io_uring *ring, int fd, void *buf, size_t n, off_t off)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	ssize_t res;
	int ret;

	io_uring_prep_read(sqe, fd, buf, (unsigned)n, (__u64)off);
	if (io_uring_submit(ring) != 1)
		return -1;
	/*
	 * On tmpfs the read completes in io-wq, so the thread may be waiting when the
	 * signaller's SIGUSR1 (no SA_RESTART) arrives: the wait ends with -EINTR, wait again.
	 */
	while ((ret = io_uring_wait_cqe(ring, &cqe)) == -EINTR)
		;
	if (ret < 0)
		return -1;
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return res;
}

static void *rate_main(void *arg)
{
	struct rate_thread *t = arg;
	char *buf = malloc(CHUNK);
	struct io_uring ring;
	io_context_t ctx = 0;
	double start, delay0;
	int fd;

	prctl(PR_SET_NAME, t->name, 0, 0, 0);
	memset(buf, 'r', CHUNK);
	fd = open(t->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	EXPECT(fd >= 0, "open %s", t->path);
	EXPECT(io_setup(4, &ctx) == 0, "io_setup");
	EXPECT(io_uring_queue_init(4, &ring, 0) == 0, "io_uring_queue_init");
	delay0 = run_delay();
	start = mono();
	/*
	 * Over a 16 MiB region, after filling it: write, read, libaio read, io_uring read in
	 * turn. All four count against the rate; one counted twice would show as a rate 20%
	 * too low.
	 */
	for (unsigned i = 0; fd >= 0 && mono() - start < RATE_SECONDS; i++) {
		off_t off = (off_t)(i % 256) * CHUNK;
		ssize_t n;

		errno = 4242;
		switch (i < 256 ? 0 : i % 4) {
		case 0:
			n = pwrite(fd, buf, CHUNK, off);
			break;
		case 1:
			n = pread(fd, buf, CHUNK, off);
			break;
		case 2:
			n = aio_pread(ctx, fd, buf, CHUNK, off);
			break;
		default:
			n = uring_pread(&ring, fd, buf, CHUNK, off);
			break;
		}
		EXPECT(n == CHUNK && errno == 4242, "%s: transfer %u: %zd errno %d", t->name, i % 4,
		       n, errno);
		t->bytes += (double)n;
	}
	t->seconds = mono() - start;
	t->starved = run_delay() - delay0;
	io_uring_queue_exit(&ring);
	io_destroy(ctx);
	close(fd);
	free(buf);
	return NULL;
}

/* Signals the low thread while it waits: each wait ends early, errno and results stay. */
static void *signaller(void *arg)
{
	struct rate_thread *low = arg;

	for (int i = 0; i < (int)(RATE_SECONDS * 50); i++) {
		pthread_kill(low->handle, SIGUSR1);
		usleep(20000);
	}
	return NULL;
}

static int scenario_rate(const char *dir, double rate)
{
	struct sigaction sa = { .sa_handler = on_usr1 }; /* no SA_RESTART: waits see EINTR */
	char low_path[512], high_path[512];
	struct rate_thread low = { "bg-rate", low_path, 0, 0, 0, 0 };
	struct rate_thread high = { "fg-rate", high_path, 0, 0, 0, 0 };
	pthread_t sig;
	double low_rate, low_free, high_free;

	sigaction(SIGUSR1, &sa, NULL);
	snprintf(low_path, sizeof(low_path), "%s/low.dat", dir);
	snprintf(high_path, sizeof(high_path), "%s/high.dat", dir);
	pthread_create(&low.handle, NULL, rate_main, &low);
	pthread_create(&high.handle, NULL, rate_main, &high);
	pthread_create(&sig, NULL, signaller, &low);
	pthread_join(low.handle, NULL);
	pthread_join(high.handle, NULL);
	pthread_join(sig, NULL);
	/*
	 * The limiter's window is the low thread's own, from its first transfer (the bucket
	 * starts empty, so the first one already waits its cost) to the end of its last.
	 * The files are on tmpfs (paths-test), so no transfer waits for a disk or for dirty
	 * page throttling; the one thing besides the limiter that can hold the thread up is
	 * the CPU of a shared machine, and schedstat says for how long it was runnable
	 * without running. So:
	 * - the upper bound uses the whole window: noise can only lower the rate, and a
	 *   transfer the limiter missed would raise it by a third;
	 * - the lower bound uses the window minus the time the thread was starved: a limit
	 *   counted twice (or waits too long) lowers it, CPU starvation does not.
	 */
	low_rate = low.bytes / low.seconds;
	low_free = low.seconds - low.starved > 0.5 ? low.bytes / (low.seconds - low.starved) : 0;
	high_free = high.seconds - high.starved > 0.1 ?
		    high.bytes / (high.seconds - high.starved) : 0;
	printf("limit %.1f MiB/s: low thread %.1f MiB/s over %.2f s, %.1f MiB/s over the %.2f s "
	       "it was not starved of CPU (%d signals); high thread %.1f MiB/s while running\n",
	       rate / 1048576, low_rate / 1048576, low.seconds, low_free / 1048576,
	       low.seconds - low.starved, signals_seen, high_free / 1048576);
	EXPECT(low.seconds >= RATE_SECONDS, "low thread ran only %.2f s", low.seconds);
	EXPECT(low_rate <= 1.15 * rate, "low thread at %.1f MiB/s, want at most 15%% above %.1f",
	       low_rate / 1048576, rate / 1048576);
	EXPECT(low_free >= 0.85 * rate, "low thread at %.1f MiB/s while it could run, want at "
	       "least 85%% of %.1f", low_free / 1048576, rate / 1048576);
	/* Unlimited page-cache transfers run at GB/s; 4x the limit leaves room for noise. */
	EXPECT(high_free >= 4 * rate, "high thread at %.1f MiB/s: delayed by the low limit?",
	       high_free / 1048576);
	EXPECT(signals_seen > 0, "no signal reached the low thread");
	return test_result();
}

/* ---- hot path: a high thread's I/O makes no syscall of the shim's own ----------------- */

/*
 * A seccomp filter on one thread traps every syscall the low paths make (sync_file_range,
 * fadvise64, lseek, fstat, fcntl, clock_nanosleep) and counts it in a SIGSYS handler,
 * which also skips it. The low thread, under the same filter, must be caught, or the
 * filter proves nothing.
 */
static __thread int trapped;

static void on_sigsys(int sig, siginfo_t *info, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)sig;
	(void)info;
	trapped++;
	uc->uc_mcontext.gregs[REG_RAX] = 0;
}

static int trap_low_path_syscalls(void)
{
	static const int nrs[] = { __NR_sync_file_range, __NR_fadvise64, __NR_lseek, __NR_fstat,
				   __NR_newfstatat, __NR_fcntl, __NR_clock_nanosleep, __NR_statx };
	struct sock_filter f[2 + 2 * 8 + 1];
	struct sock_fprog prog = { .len = 0, .filter = f };
	int n = 0;

	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
	for (unsigned i = 0; i < sizeof(nrs) / sizeof(nrs[0]); i++) {
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nrs[i],
						      0, 1);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP);
	}
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	prog.len = (unsigned short)n;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

struct hot_thread {
	const char *name, *path;
	int trapped, filter;
};

static void *hot_main(void *arg)
{
	struct hot_thread *t = arg;
	char *buf = malloc(CHUNK);
	int fd;

	prctl(PR_SET_NAME, t->name, 0, 0, 0);
	memset(buf, 'h', CHUNK);
	fd = open(t->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	/* The first write classifies the fd (low) and settles the tier: not the steady state. */
	if (!EXPECT(fd >= 0 && pwrite(fd, buf, CHUNK, 0) == CHUNK, "%s: first write to %s",
		    t->name, t->path))
		return NULL;
	t->filter = trap_low_path_syscalls();
	for (int i = 0; t->filter == 0 && i < 1024; i++) { /* 64 MiB each way */
		off_t off = (off_t)(i % 256) * CHUNK;

		EXPECT(pwrite(fd, buf, CHUNK, off) == CHUNK, "%s: pwrite", t->name);
		EXPECT(write(fd, buf, CHUNK) == CHUNK, "%s: write", t->name);
		EXPECT(pread(fd, buf, CHUNK, off) == CHUNK, "%s: pread", t->name);
		EXPECT(read(fd, buf, CHUNK) >= 0, "%s: read", t->name);
	}
	t->trapped = trapped;
	free(buf);
	return NULL; /* fd left open: close() on a low fd may legitimately act */
}

static int scenario_hot(const char *dir)
{
	struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO };
	char low_path[512], high_path[512];
	struct hot_thread low = { "bg-hot", low_path, 0, 0 }, high = { "fg-hot", high_path, 0, 0 };
	pthread_t t;

	sigaction(SIGSYS, &sa, NULL);
	snprintf(low_path, sizeof(low_path), "%s/low.dat", dir);
	snprintf(high_path, sizeof(high_path), "%s/high.dat", dir);
	pthread_create(&t, NULL, hot_main, &high);
	pthread_join(t, NULL);
	pthread_create(&t, NULL, hot_main, &low);
	pthread_join(t, NULL);
	if (high.filter < 0 || low.filter < 0)
		return test_skip("cannot install a seccomp filter");
	printf("shim syscalls: high thread %d, low thread %d\n", high.trapped, low.trapped);
	EXPECT(high.trapped == 0, "the high thread made %d low-path syscalls, want 0",
	       high.trapped);
	EXPECT(low.trapped >= 64, "the low thread made %d low-path syscalls, want one per MiB "
	       "at least: the filter did not see them", low.trapped);
	return test_result();
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: paths-worker SCENARIO ARGS\n");
		return T_EXIT_FAIL;
	}
	if (argc >= 3 && (!strncmp(argv[1], "uring", 5) || !strcmp(argv[1], "aio"))) {
		dev_fd = open(argv[2], O_RDONLY | O_DIRECT);
		if (dev_fd < 0 || posix_memalign((void **)&bufs, 4096, 16 * 16384)) {
			fprintf(stderr, "open %s: %s\n", argv[2], strerror(errno));
			return T_EXIT_FAIL;
		}
	}
	if (!strcmp(argv[1], "uring") && argc == 3)
		return scenario_uring(false);
	if (!strcmp(argv[1], "uring-sqpoll") && argc == 3)
		return scenario_uring(true);
	if (!strcmp(argv[1], "uring-raw") && argc == 3)
		return scenario_uring_raw();
	if (!strcmp(argv[1], "aio") && argc == 3)
		return scenario_aio();
	if (!strcmp(argv[1], "write") && argc == 4)
		return scenario_write(argv[2], (unsigned)atoi(argv[3]));
	if (!strcmp(argv[1], "drop") && argc == 3)
		return scenario_drop(argv[2]);
	if (!strcmp(argv[1], "hot") && argc == 3)
		return scenario_hot(argv[2]);
	if (!strcmp(argv[1], "rate") && argc == 4)
		return scenario_rate(argv[2], atof(argv[3]));
	fprintf(stderr, "paths-worker: unknown scenario '%s'\n", argv[1]);
	return T_EXIT_FAIL;
}
