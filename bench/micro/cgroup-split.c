// SPDX-License-Identifier: MIT
/*
 * cgroup-split.c: how bfq splits a disk between a process in an iotier low cgroup and a
 * default process, on the host's cgroup v1 blkio hierarchy. Two processes read a loop device
 * sequentially with O_DIRECT (128 KiB requests, separate regions) for the same seconds, side
 * by side; one of them has been placed by cgroup_tier (iotier-low.<pid>, blkio.bfq.weight =
 * the weight given, 10 by default). Controls in the same run: both readers left in place
 * under bfq, and the same placement under mq-deadline, which has no notion of weight; bfq
 * runs both with its default low_latency=1 and with it off, since its boost for new
 * ("interactive") queues blurs weights for the first seconds of a reader's life.
 * Configurations take turns each round; the result is the low reader's share of the bytes.
 *
 * usage: cgroup-split [SECONDS [ROUNDS [WEIGHT]]]   (root; default 5 s, 3 rounds, weight 10)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/cgroup_tier.h"
#include "core/config.h"
#include "loopdev.h"
#include "sandbox.h"

#define MIB (1024L * 1024)
#define REGION (128 * MIB)

static struct sandbox sb;
static struct loopdev dev;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void reader(int index, bool low, unsigned weight, double seconds, int ready, int go,
		   int report)
{
	static char buf[128 * 1024] __attribute__((aligned(4096)));
	long long bytes = 0;
	off_t pos = 0;
	double end;
	char c;
	int fd;

	if (sandbox_enter(&sb, getpid()) < 0)
		_exit(1);
	if (low) {
		struct config cfg;

		memset(&cfg, 0, sizeof(cfg));
		cfg.cgroup_mode = CGROUP_V1;
		cfg.low_weight = weight;
		cfg.log = LOG_WARN;
		if (cgroup_tier_init(&cfg) < 0)
			_exit(1);
		cgroup_tier_process(true);
	}
	fd = open(dev.path, O_RDONLY | O_DIRECT);
	if (write(ready, "r", 1) < 0 || read(go, &c, 1) < 0 || fd < 0)
		_exit(1);
	end = now() + seconds;
	while (now() < end) {
		ssize_t n = pread(fd, buf, sizeof(buf), (off_t)index * REGION + pos);

		if (n <= 0)
			break;
		bytes += n;
		pos = (pos + n) % REGION;
	}
	if (write(report, &bytes, sizeof(bytes)) < 0)
		_exit(1);
	if (low)
		cgroup_tier_exit();
	_exit(0);
}

/* One side-by-side run; returns the low (or first) reader's share, bytes in @mb. */
static double run(bool place_low, unsigned weight, double seconds, double mb[2])
{
	int ready[2], go[2], report[2][2];
	long long bytes[2] = { 0, 0 };
	pid_t pids[2];
	char c;

	if (pipe(ready) < 0 || pipe(go) < 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		if (pipe(report[i]) < 0)
			return -1;
		pids[i] = fork();
		if (pids[i] == 0) {
			close(go[1]);
			reader(i, place_low && i == 0, weight, seconds, ready[1], go[0],
			       report[i][1]);
		}
		close(report[i][1]);
	}
	close(ready[1]);
	for (int i = 0; i < 2; i++)
		if (read(ready[0], &c, 1) != 1)
			return -1;
	close(go[1]);
	for (int i = 0; i < 2; i++) {
		if (read(report[i][0], &bytes[i], sizeof(bytes[i])) != sizeof(bytes[i]))
			bytes[i] = 0;
		close(report[i][0]);
		waitpid(pids[i], NULL, 0);
	}
	close(go[0]);
	close(ready[0]);
	for (int i = 0; i < 2; i++)
		mb[i] = (double)bytes[i] / MIB / seconds;
	return bytes[0] + bytes[1] ? (double)bytes[0] / (double)(bytes[0] + bytes[1]) : -1;
}

/* Give the loop device real blocks: reads of holes would never reach the host disk. */
static int fill(void)
{
	static char buf[1 << 20] __attribute__((aligned(4096)));
	int fd = open(dev.path, O_WRONLY | O_DIRECT);

	if (fd < 0)
		return -1;
	memset(buf, 0x5a, sizeof(buf));
	for (long off = 0; off < 2 * REGION; off += (long)sizeof(buf))
		if (pwrite(fd, buf, sizeof(buf), off) != (ssize_t)sizeof(buf)) {
			close(fd);
			return -1;
		}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 5;
	int rounds = argc > 2 ? atoi(argv[2]) : 3;
	unsigned weight = argc > 3 ? (unsigned)atoi(argv[3]) : 10;
	static const struct {
		const char *name, *scheduler;
		bool place, low_latency;
	} configs[] = {
		{ "bfq, low reader in iotier-low", "bfq", true, true },
		{ "bfq, both left in place", "bfq", false, true },
		{ "bfq low_latency=0, low in iotier-low", "bfq", true, false },
		{ "bfq low_latency=0, both in place", "bfq", false, false },
		{ "mq-deadline, low reader in iotier-low", "mq-deadline", true, false },
	};
#define N_CONFIGS (int)(sizeof(configs) / sizeof(configs[0]))
	double share[N_CONFIGS][16], mbs[N_CONFIGS][16][2];
	int ret;

	if (seconds <= 0 || rounds < 1 || rounds > 16 || weight < 1 || weight > 10000) {
		fprintf(stderr, "usage: cgroup-split [SECONDS [ROUNDS(1-16) [WEIGHT]]]\n");
		return 2;
	}
	if (sandbox_create(&sb, 1) < 0) {
		fprintf(stderr, "cgroup-split: needs root and a cgroup v1 blkio hierarchy\n");
		return 1;
	}
	ret = loopdev_create(&dev, NULL, 2 * REGION, "bfq", 0);
	if (ret < 0 || fill() < 0) {
		fprintf(stderr, "cgroup-split: loop device: %s\n", strerror(ret < 0 ? -ret : errno));
		sandbox_destroy(&sb);
		return 1;
	}
	printf("loop device %s, 2 direct sequential readers, %.0f s x %d rounds, weight %u\n",
	       dev.path, seconds, rounds, weight);
	for (int r = 0; r < rounds; r++)
		for (int c = 0; c < N_CONFIGS; c++) {
			int k = (c + r) % N_CONFIGS; /* rotate which configuration goes first */

			loopdev_queue_set(&dev, "scheduler", configs[k].scheduler);
			/* bfq boosts new queues it takes for interactive; off shows weights alone */
			if (!strcmp(configs[k].scheduler, "bfq"))
				loopdev_queue_set(&dev, "iosched/low_latency",
						  configs[k].low_latency ? "1" : "0");
			share[k][r] = run(configs[k].place, weight, seconds, mbs[k][r]);
			printf("round %d  %-40s low %6.1f MiB/s  default %6.1f MiB/s  share %.3f\n",
			       r + 1, configs[k].name, mbs[k][r][0], mbs[k][r][1], share[k][r]);
			fflush(stdout);
		}
	printf("\n| configuration | low MiB/s | default MiB/s | low share |\n| --- | --- | --- | --- |\n");
	for (int c = 0; c < N_CONFIGS; c++) {
		double low = 0, def = 0, sum = 0;

		for (int r = 0; r < rounds; r++) {
			low += mbs[c][r][0];
			def += mbs[c][r][1];
			sum += share[c][r];
		}
		printf("| %s | %.1f | %.1f | %.3f |\n", configs[c].name, low / rounds, def / rounds,
		       sum / rounds);
	}
	loopdev_destroy(&dev);
	sandbox_destroy(&sb);
	return 0;
}
