// SPDX-License-Identifier: MIT
/*
 * Description: thread churn under the shim (IOTIER_LOW=low*). Thousands of short threads
 * are named in the ways programs name them: by the creator with pthread_setname_np() (as
 * RocksDB does), or by themselves with prctl(PR_SET_NAME), a write() to
 * /proc/thread-self/comm, or fopen()/fprintf()/fclose() on it; optionally while a SIGALRM
 * handler does I/O several thousand times a second. Each thread checks after its first I/O
 * that it has exactly the priority its name calls for. At the end no thread record may be
 * left behind for a dead thread, no descriptor may have leaked, and a fresh thread must
 * still get its tier. Usage: thread-churn MODE, where MODE is
 *   signals  creator names, handler I/O    (a signal before tracking started leaked a record)
 *   stdio    fopen/fprintf/fclose renames  (fclose forgot another thread's comm fd)
 *   all      all four ways, handler I/O
 * Exit 0 pass, 1 fail, 77 skip.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/ioprio.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "slot_audit.h"
#include "storm_io.h"
#include "test_env.h"

#define IN_FLIGHT 8 /* threads alive at once: joined handles are reused soon */

enum way { BY_CREATOR, BY_PRCTL, BY_COMM_WRITE, BY_COMM_STDIO, N_WAYS };

struct job {
	enum way way;
	char name[16];
	sem_t named;     /* BY_CREATOR: the creator has named us */
	int prio;        /* ioprio after the first I/O */
	pthread_t handle;
};

static int io_fd = -1;
static _Atomic unsigned long handler_calls;

static void do_io(void)
{
	storm_io(io_fd);
}

static void on_alarm(int sig)
{
	int saved = errno;
	char byte;

	(void)sig;
	if (pread(io_fd, &byte, 1, 0) == 1)
		atomic_fetch_add_explicit(&handler_calls, 1, memory_order_relaxed);
	errno = saved;
}

static void name_through_comm(const char *name, int use_stdio)
{
	if (use_stdio) {
		FILE *f = fopen("/proc/thread-self/comm", "w");

		EXPECT(f, "fopen comm: %s", strerror(errno));
		if (f) {
			fprintf(f, "%s", name);
			EXPECT(fclose(f) == 0, "fclose comm: %s", strerror(errno));
		}
	} else {
		int fd = open("/proc/thread-self/comm", O_WRONLY);

		EXPECT(fd >= 0, "open comm: %s", strerror(errno));
		if (fd >= 0) {
			EXPECT(write(fd, name, strlen(name)) == (ssize_t)strlen(name), "write comm: %s",
			       strerror(errno));
			close(fd);
		}
	}
}

static void *worker(void *arg)
{
	struct job *job = arg;

	switch (job->way) {
	case BY_CREATOR:
		while (sem_wait(&job->named) != 0 && errno == EINTR)
			;
		break;
	case BY_PRCTL:
		prctl(PR_SET_NAME, job->name, 0, 0, 0);
		break;
	case BY_COMM_WRITE:
	case BY_COMM_STDIO:
		name_through_comm(job->name, job->way == BY_COMM_STDIO);
		break;
	default:
		break;
	}
	do_io();
	job->prio = prio_of_self();
	return NULL;
}

/* Judge a joined thread: low* names idle, others the priority they started with (none). */
static int judge(const struct job *job)
{
	int want = !strncmp(job->name, "low", 3) ? IDLE : 0;

	if (job->prio == want)
		return 0;
	fprintf(stderr, "thread '%s' (way %d): ioprio %#x, want %#x\n", job->name, job->way,
		job->prio, want);
	return 1;
}

static int start_job(struct job *job, enum way way, unsigned i)
{
	int ret;

	job->way = way;
	snprintf(job->name, sizeof(job->name), "%s-%u", i % 2 ? "low" : "fg", i);
	sem_init(&job->named, 0, 0);
	ret = pthread_create(&job->handle, NULL, worker, job);
	if (ret) {
		fprintf(stderr, "pthread_create: %s\n", strerror(ret));
		return -1;
	}
	if (way == BY_CREATOR) {
		pthread_setname_np(job->handle, job->name);
		sem_post(&job->named);
	}
	return 0;
}

static void start_signals(int per_second)
{
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	struct itimerval it = { { 0, 1000000 / per_second }, { 0, 1000000 / per_second } };

	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

static void stop_signals(void)
{
	struct itimerval off = { { 0, 0 }, { 0, 0 } };

	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_IGN);
}

/* After the churn: no stale record, no leaked descriptor, and tiers still right. */
static void audit_end(int fds_before)
{
	struct slot_audit audit;
	struct job last = { 0 };

	EXPECT(slot_audit_self(&audit) == 0, "cannot read /proc/self");
	EXPECT(audit.found, "the shim's thread table is not mapped: is the shim preloaded?");
	EXPECT(audit.stale == 0, "%d of %d thread records in use belong to no live thread",
	       audit.stale, audit.in_use);
	if (audit.stale)
		slot_audit_print_stale();
	/* fewer: a sanitizer's own thread is not created through pthread_create */
	EXPECT(audit.in_use <= audit.live, "%d records in use for %d live threads", audit.in_use,
	       audit.live);
	EXPECT(fd_count_self() == fds_before, "%d descriptors open, %d before the churn",
	       fd_count_self(), fds_before);
	if (start_job(&last, BY_PRCTL, 1) == 0) {
		pthread_join(last.handle, NULL);
		EXPECT(last.prio == IDLE, "a new low thread after the churn: ioprio %#x",
		       last.prio);
	}
	EXPECT(prio_of_self() == 0, "main thread ioprio %#x, want untouched", prio_of_self());
}

int main(int argc, char **argv)
{
	static struct job jobs[IN_FLIGHT];
	unsigned threads, wrong = 0;
	const char *mode = argc > 1 ? argv[1] : "";
	int ways_from, ways_count, signals, fds_before;

	if (!strcmp(mode, "signals")) {
		threads = 4000, ways_from = BY_CREATOR, ways_count = 1, signals = 1;
	} else if (!strcmp(mode, "stdio")) {
		threads = 2000, ways_from = BY_COMM_STDIO, ways_count = 1, signals = 0;
	} else if (!strcmp(mode, "all")) {
		threads = 4000, ways_from = 0, ways_count = N_WAYS, signals = 1;
	} else {
		fprintf(stderr, "usage: thread-churn signals|stdio|all\n");
		return 2;
	}
	if (!getenv("LD_PRELOAD"))
		return test_skip("the shim is not preloaded");
	io_fd = storm_scratch("churn");
	if (io_fd < 0)
		return T_EXIT_FAIL;
	do_io(); /* the main thread is attached before anything is counted */
	fds_before = fd_count_self();
	if (signals)
		start_signals(5000);
	for (unsigned i = 0; i < threads + IN_FLIGHT; i++) {
		struct job *job = &jobs[i % IN_FLIGHT];

		if (i >= IN_FLIGHT) {
			pthread_join(job->handle, NULL);
			wrong += judge(job);
			sem_destroy(&job->named);
		}
		if (i < threads && start_job(job, (enum way)(ways_from + i % ways_count), i) < 0)
			return T_EXIT_FAIL;
	}
	if (signals)
		stop_signals();
	EXPECT(wrong == 0, "%u of %u threads had the wrong priority after their first I/O",
	       wrong, threads);
	audit_end(fds_before);
	printf("%s: %u threads, %lu handler I/Os, %u wrong tiers, %d failures\n", mode, threads,
	       atomic_load(&handler_calls), wrong, atomic_load(&test_failures));
	return test_result();
}
