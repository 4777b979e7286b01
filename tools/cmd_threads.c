// SPDX-License-Identifier: MIT
/*
 * cmd_threads.c: `iotier threads PID`, what iotier did to each thread of a process. The
 * tier comes from the shim's own table (found as /memfd:iotier-state in /proc/PID/maps and
 * read through /proc/PID/mem); the priority is what ioprio_get(2) reports now, so a thread
 * whose priority someone else changed shows that too.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/ioprio.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgroup_tier.h"
#include "commands.h"
#include "rules.h"
#include "state_table.h"

static const char threads_help[] =
	"usage: iotier threads PID\n"
	"\n"
	"List the threads of PID: tid, name, the tier iotier gave each (and why: a thread\n"
	"rule, a process rule or an explicit iotier_set_tier() call), and the I/O priority\n"
	"class and level that ioprio_get(2) reports for it now, then the thread's io cgroup\n"
	"(blkio on cgroup v1, the unified cgroup on v2) and that cgroup's weight ('-' when it\n"
	"has none, as the root). On v1 low threads can sit in iotier-low.PID on their own; on\n"
	"v2 every thread of a process shares one cgroup, so the column is the same for all.\n"
	"\n"
	"examples:\n"
	"  iotier threads $(pidof db_bench)\n"
	"      check that every rocksdb:low thread is at class idle\n"
	"  watch -n1 iotier threads $(pgrep -o postgres)\n";

/* Find the shim's table in @pid's address space; returns its address or 0. */
static uint64_t find_table(pid_t pid)
{
	char path[64], line[512];
	uint64_t start = 0, addr;
	FILE *maps;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	maps = fopen(path, "r");
	if (!maps)
		return 0;
	while (fgets(line, sizeof(line), maps))
		if (strstr(line, "/memfd:" STATE_TABLE_NAME) && sscanf(line, "%" SCNx64, &addr) == 1) {
			start = addr;
			break;
		}
	fclose(maps);
	return start;
}

/*
 * Read the header, then only the slots up to its high-water mark: reading untouched pages
 * of the target's table through /proc/PID/mem would make the kernel allocate them there.
 */
static struct state_table *read_table(pid_t pid, const char **why)
{
	struct state_table *table;
	uint64_t addr = find_table(pid);
	size_t used;
	char path[64];
	ssize_t n;
	int fd;

	*why = "iotier is not loaded in this process";
	if (!addr)
		return NULL;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*why = "cannot read the process's memory (needs root or ptrace access)";
		return NULL;
	}
	table = calloc(1, sizeof(*table));
	n = table ? pread(fd, &table->header, sizeof(table->header), (off_t)addr) : -1;
	if (n != (ssize_t)sizeof(table->header) || memcmp(table->header.magic, STATE_TABLE_MAGIC, 8) ||
	    table->header.version != STATE_TABLE_VERSION ||
	    table->header.slot_size != sizeof(struct state_slot) ||
	    table->header.slot_high > STATE_TABLE_SLOTS) {
		*why = "the iotier table in this process has another version";
		goto fail;
	}
	used = table->header.slot_high * sizeof(struct state_slot);
	n = pread(fd, table->slots, used, (off_t)(addr + offsetof(struct state_table, slots)));
	if (n != (ssize_t)used) {
		*why = "cannot read the process's iotier table";
		goto fail;
	}
	close(fd);
	return table;
fail:
	close(fd);
	free(table);
	return NULL;
}

static const struct state_slot *slot_for(const struct state_table *table, pid_t tid)
{
	if (!table)
		return NULL;
	for (unsigned i = 0; i < table->header.slot_high; i++)
		if (table->slots[i].in_use && table->slots[i].tid == tid)
			return &table->slots[i];
	return NULL;
}

static const char *tier_name(int tier)
{
	return tier == IOTIER_LOW ? "low" : tier == IOTIER_HIGH ? "high" : "-";
}

static const char *reason(const struct state_slot *slot)
{
	if (!slot)
		return "untracked";
	if (slot->flags & SLOT_EXPLICIT)
		return "api";
	if (slot->flags & SLOT_BY_THREAD_RULE)
		return "thread";
	if (slot->flags & SLOT_BY_PROCESS_RULE)
		return "process";
	return "-";
}

static void read_comm(pid_t pid, const char *tid, char *name, size_t len)
{
	char path[96];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", (int)pid, tid);
	name[0] = '\0';
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(name, (int)len, f))
		name[strcspn(name, "\n")] = '\0';
	fclose(f);
}

static int compare_tids(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static int threads_main(int argc, char **argv)
{
	struct state_table *table;
	const char *why;
	char *end, path[64], cls[16], name[32], tidstr[16], cgroup[PATH_MAX], wstr[16];
	unsigned weight;
	struct dirent *entry;
	int *tids = NULL;
	size_t count = 0, cap = 0;
	long pid;
	DIR *dir;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(threads_help, stdout);
		return 0;
	}
	if (argc != 2)
		return usage_error("threads", "expected exactly one PID");
	errno = 0;
	pid = strtol(argv[1], &end, 10);
	if (errno || *end || pid <= 0 || pid > 0x3fffffff)
		return usage_error("threads", "'%s' is not a process id", argv[1]);

	snprintf(path, sizeof(path), "/proc/%ld/task", pid);
	dir = opendir(path);
	if (!dir) {
		fprintf(stderr, "iotier threads: no process %ld (%s)\n", pid, strerror(errno));
		return 1;
	}
	while ((entry = readdir(dir))) {
		if (entry->d_name[0] < '0' || entry->d_name[0] > '9')
			continue;
		if (count == cap) {
			int *grown = realloc(tids, (cap = cap ? cap * 2 : 64) * sizeof(*tids));

			if (!grown) {
				closedir(dir);
				free(tids);
				perror("iotier threads");
				return 1;
			}
			tids = grown;
		}
		tids[count++] = atoi(entry->d_name);
	}
	closedir(dir);
	qsort(tids, count, sizeof(*tids), compare_tids);

	table = read_table((pid_t)pid, &why);
	if (table) {
		char low[16], high[16];

		printf("pid %ld: iotier active, low class %s, high class %s, process tier %s\n", pid,
		       ioprio_format(table->header.low_ioprio, low, sizeof(low)),
		       ioprio_format(table->header.high_ioprio, high, sizeof(high)),
		       tier_name(table->header.process_tier));
	} else {
		printf("pid %ld: %s\n", pid, why);
	}
	printf("%8s  %-16s %-5s %-9s %-7s %-6s %s\n", "TID", "NAME", "TIER", "BY", "IOPRIO",
	       "WEIGHT", "CGROUP");
	for (size_t i = 0; i < count; i++) {
		const struct state_slot *slot = slot_for(table, tids[i]);
		long prio = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, tids[i]);

		snprintf(tidstr, sizeof(tidstr), "%d", tids[i]);
		read_comm((pid_t)pid, tidstr, name, sizeof(name));
		if (!name[0])
			continue; /* exited while we looked */
		if (cgroup_describe_task((pid_t)pid, tids[i], cgroup, sizeof(cgroup), &weight) < 0)
			snprintf(cgroup, sizeof(cgroup), "?");
		snprintf(wstr, sizeof(wstr), weight ? "%u" : "-", weight);
		printf("%8d  %-16s %-5s %-9s %-7s %-6s %s\n", tids[i], name,
		       table ? tier_name(slot ? slot->tier : 0) : "?", table ? reason(slot) : "-",
		       prio < 0 ? "?" : ioprio_format((int)prio, cls, sizeof(cls)), wstr, cgroup);
	}
	free(table);
	free(tids);
	return 0;
}

const struct command command_threads = {
	.name = "threads",
	.summary = "show each thread's tier and I/O priority",
	.help = threads_help,
	.main = threads_main,
};
