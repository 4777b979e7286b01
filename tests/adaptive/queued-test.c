// SPDX-License-Identifier: MIT
/*
 * Description: the shim marks a high read that begins within ADAPTIVE_QUEUED_GAP_NS (20 us)
 * of its thread's last read's end as queued (adaptive.c, "An open loop's queue": what lets
 * the controller see an open-loop reader's queue, which no timing of calls shows). Run under
 * the shim with a target; the program pins the region it finds in /proc/self/maps (the
 * controller stopped, so no step empties the window) and reads a file O_DIRECT:
 *  - back to back: of READS reads, all but the first land in the window queued (at least
 *    90% of them: a loaded machine may preempt a thread between two reads for longer);
 *  - with a 1 ms pause before each: none does, nor the first after the back-to-back run;
 *  - in two threads, each back to back: counted per thread, not thrown together.
 * Before the count, the window's queued stays 0 in the first case.
 * Usage: adaptive-queued DIR (a scratch directory on a file system with O_DIRECT).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adaptive_worker.h"
#include "test_env.h"

#define BLOCK 4096u
#define READS 64
#define FILE_BYTES (READS * BLOCK)

static struct adaptive_region *region;
static char path[512];

/* The reads the current window holds that began queued, over every slot. */
static uint64_t queued(void)
{
	uint64_t n = 0;

	for (uint32_t s = 0; s < ADAPTIVE_HIST_SLOTS; s++)
		for (uint32_t i = 0; i < HIST_NR_BUCKETS; i++)
			n += ADAPTIVE_HIST_QUEUED(atomic_load(&region->hist[s].count[i]));
	return n;
}

/* READS O_DIRECT preads of @path, each after a pause of @pause_us (0: none), checked. */
static bool direct_reads(unsigned pause_us)
{
	char *buf = NULL;
	int fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	bool ok = EXPECT(fd >= 0, "open %s O_DIRECT: %m", path) &&
		  EXPECT(posix_memalign((void **)&buf, 4096, BLOCK) == 0, "posix_memalign");

	for (int i = 0; ok && i < READS; i++) {
		if (pause_us)
			usleep(pause_us);
		ok = EXPECT(pread(fd, buf, BLOCK, (off_t)i * BLOCK) == BLOCK, "pread: %m");
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	return ok;
}

struct run {
	uint64_t noted, queued; /* what the window gained during it */
};

/* One run of reads, and what the window gained. */
static struct run measure(unsigned pause_us)
{
	uint64_t n = adaptive_worker_noted(region), q = queued();

	direct_reads(pause_us);
	return (struct run){ adaptive_worker_noted(region) - n, queued() - q };
}

static void *back_to_back(void *arg)
{
	(void)arg;
	direct_reads(0);
	return NULL;
}

int main(int argc, char **argv)
{
	struct run tight, paused;
	pthread_t t[2];
	uint64_t q;

	if (argc != 2) {
		fprintf(stderr, "usage: adaptive-queued DIR\n");
		return T_EXIT_FAIL;
	}
	region = adaptive_worker_region_or_fail();
	if (!region)
		return T_EXIT_FAIL;
	snprintf(path, sizeof(path), "%s/adaptive-queued-data", argv[1]);
	if (adaptive_worker_write_file(path, FILE_BYTES)) {
		unlink(path);
		return T_EXIT_FAIL;
	}
	/* The controller stopped: the window keeps what it is given. */
	atomic_store(&region->deadline_ns, UINT64_MAX);

	tight = measure(0);
	paused = measure(1000);
	printf("back to back: %llu of %llu reads queued; 1 ms apart: %llu of %llu\n",
	       (unsigned long long)tight.queued, (unsigned long long)tight.noted,
	       (unsigned long long)paused.queued, (unsigned long long)paused.noted);
	EXPECT(tight.noted == READS && paused.noted == READS,
	       "the reads were not all noted (%llu and %llu of %d)",
	       (unsigned long long)tight.noted, (unsigned long long)paused.noted, READS);
	EXPECT(tight.queued <= READS - 1 && tight.queued * 10 >= (READS - 1) * 9,
	       "back to back, %llu of %d reads counted queued (want %d, at least 90%%)",
	       (unsigned long long)tight.queued, READS, READS - 1);
	EXPECT(paused.queued == 0, "1 ms apart, %llu reads counted queued",
	       (unsigned long long)paused.queued);

	q = queued();
	for (int i = 0; i < 2; i++)
		EXPECT(pthread_create(&t[i], NULL, back_to_back, NULL) == 0, "thread");
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	q = queued() - q;
	printf("two threads back to back: %llu of %d reads queued\n", (unsigned long long)q,
	       2 * READS);
	EXPECT(q <= 2 * (READS - 1) && q * 10 >= 2 * (READS - 1) * 9,
	       "two threads back to back: %llu reads counted queued (want %d: each thread's "
	       "first is not)", (unsigned long long)q, 2 * (READS - 1));
	unlink(path);
	return test_result();
}
