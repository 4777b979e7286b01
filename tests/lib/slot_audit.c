// SPDX-License-Identifier: MIT
/*
 * slot_audit.c: find the shim's thread table in our own address space and check it against
 * /proc/self/task (see slot_audit.h).
 */
#include "slot_audit.h"

#include <dirent.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "state_table.h"

static const struct state_table *find_table(void)
{
	FILE *maps = fopen("/proc/self/maps", "re");
	const struct state_table *table = NULL;
	char line[512];

	if (!maps)
		return NULL;
	while (fgets(line, sizeof(line), maps)) {
		unsigned long start;

		if (!strstr(line, "/memfd:" STATE_TABLE_NAME))
			continue;
		if (sscanf(line, "%lx-", &start) != 1)
			continue;
		if (!memcmp(((const struct state_table *)start)->header.magic, STATE_TABLE_MAGIC, 8)) {
			table = (const struct state_table *)start;
			break;
		}
	}
	fclose(maps);
	return table;
}

static int thread_alive(int tid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/self/task/%d", tid);
	return tid > 0 && stat(path, &st) == 0;
}

static int count_dir(const char *path)
{
	DIR *dir = opendir(path);
	struct dirent *d;
	int n = 0;

	if (!dir)
		return -1;
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.')
			n++;
	closedir(dir);
	return n;
}

/*
 * A record may be in use with tid 0 only between pthread_create() and the new thread's
 * first instruction; the tests audit when no thread is being created, so that is stale too.
 */
static int slot_is_stale(const struct state_slot *slot)
{
	return !thread_alive(__atomic_load_n(&slot->tid, __ATOMIC_ACQUIRE));
}

int slot_audit_self(struct slot_audit *out)
{
	const struct state_table *table = find_table();

	memset(out, 0, sizeof(*out));
	out->live = count_dir("/proc/self/task");
	if (out->live < 0)
		return -1;
	if (!table)
		return 0;
	out->found = 1;
	for (unsigned i = 0; i < table->header.slot_high && i < STATE_TABLE_SLOTS; i++) {
		const struct state_slot *slot = &table->slots[i];

		if (!__atomic_load_n(&slot->in_use, __ATOMIC_ACQUIRE))
			continue;
		out->in_use++;
		out->stale += slot_is_stale(slot);
	}
	return 0;
}

void slot_audit_print_stale(void)
{
	const struct state_table *table = find_table();
	int shown = 0;

	for (unsigned i = 0; table && i < table->header.slot_high && i < STATE_TABLE_SLOTS; i++) {
		const struct state_slot *slot = &table->slots[i];

		if (!__atomic_load_n(&slot->in_use, __ATOMIC_ACQUIRE) || !slot_is_stale(slot))
			continue;
		if (shown++ < 10)
			fprintf(stderr, "  stale record %u: tid %d name '%.15s' tier %d\n", i,
				(int)slot->tid, slot->name, (int)slot->tier);
	}
	if (shown > 10)
		fprintf(stderr, "  ... %d stale records in all\n", shown);
}

int fd_count_self(void)
{
	/* opendir holds one descriptor of its own while it lists the directory */
	int n = count_dir("/proc/self/fd");

	return n < 0 ? n : n - 1;
}
