// SPDX-License-Identifier: MIT
/*
 * Description: IOTIER_DIRTY_BUDGET bounds what a low writer holds dirty or under writeback.
 * budget-writer runs under LD_PRELOAD=libiotier.so with IOTIER_LOW=bg-*, steering off
 * (IOTIER_WRITEBACK=0, so only the budget acts), in a memory cgroup (v1) of its own on
 * ext4 on a loop device, and writes 128 MiB in 1 MiB writes. After every write it reads its
 * cgroup's dirty + writeback bytes. With an 8 MiB budget the largest must stay within the
 * budget plus 2 MiB (the write that crossed it, and file system metadata): a count of
 * bytes at fixed points, not a time. Without the budget (checked by hand, see the report
 * of the change) the same writer holds tens of MiB.
 *
 * usage: budget-test LIBIOTIER WRITER [BUDGET_MIB]. Exit 0 pass, 1 fail, 77 skip.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "run_capture.h"
#include "scratch_fs.h"
#include "test_env.h"

#define MIB 128
#define SLACK_MIB 2

static char cgroup[128];
static const char *libiotier, *writer_path;
static long budget_mib = 8;

static void remove_cgroup(void *arg)
{
	(void)arg;
	rmdir(cgroup);
}

/* In the child, before exec: into the test's own memory cgroup, under the shim. */
static int enter_cgroup(void)
{
	char path[192], pid[16], budget[32];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
	f = fopen(path, "we");
	if (!f)
		return 1;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if (fputs(pid, f) < 0 || fclose(f) != 0)
		return 1;
	snprintf(budget, sizeof(budget), "%ldM", budget_mib);
	setenv("LD_PRELOAD", libiotier, 1);
	setenv("IOTIER_LOW", "bg-*", 1);
	setenv("IOTIER_WRITEBACK", "0", 1);
	setenv("IOTIER_DIRTY_BUDGET", budget_mib ? budget : "0", 1);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const mkfs_args[] = { "-E", "lazy_itable_init=0,lazy_journal_init=0",
						 NULL };
	const struct scratch_fs_opts opts = {
		.bytes = 384u << 20, .scheduler = "mq-deadline", .type = "ext4",
		.mkfs_args = mkfs_args, .mnt = "/tmp/iotier-budget.XXXXXX",
	};
	char stat_path[192], mib[16], out[4096];
	const char *argv_w[] = { NULL, NULL, mib, stat_path, NULL };
	unsigned long long max_held = 0;
	struct scratch_fs fs;
	long writes = 0;
	int ret;

	if (argc < 3) {
		fprintf(stderr, "usage: budget-test LIBIOTIER WRITER [BUDGET_MIB]\n");
		return T_EXIT_FAIL;
	}
	libiotier = argv[1];
	writer_path = argv[2];
	if (argc > 3)
		budget_mib = atol(argv[3]);
	if (access("/sys/fs/cgroup/memory/cgroup.procs", W_OK) != 0)
		return test_skip("needs a writable cgroup v1 memory hierarchy");
	ret = scratch_fs_create(&fs, &opts);
	if (ret)
		return ret;
	snprintf(cgroup, sizeof(cgroup), "/sys/fs/cgroup/memory/iotier-budget.%d", (int)getpid());
	if (mkdir(cgroup, 0755) < 0)
		return test_skip("cannot create a memory cgroup");
	test_cleanup_add(remove_cgroup, NULL);
	snprintf(stat_path, sizeof(stat_path), "%s/memory.stat", cgroup);
	snprintf(mib, sizeof(mib), "%d", MIB);
	argv_w[0] = writer_path;
	argv_w[1] = fs.mnt;
	ret = run_capture(argv_w, out, sizeof(out), enter_cgroup);
	if (ret != 0)
		return test_fail("budget-writer: exit %d:\n%s", ret, out);
	if (sscanf(out, "writes %ld max_held %llu", &writes, &max_held) != 2)
		return test_fail("budget-writer said: %s", out);
	printf("budget %ld MiB: %ld writes, at most %.1f MiB dirty or under writeback\n",
	       budget_mib, writes, (double)max_held / (1 << 20));
	EXPECT(writes == MIB, "%ld writes, want %d", writes, MIB);
	if (budget_mib)
		EXPECT(max_held <= (unsigned long long)(budget_mib + SLACK_MIB) << 20,
		       "the low writer held %llu bytes dirty or under writeback, budget %ld MiB",
		       max_held, budget_mib);
	return test_result();
}
