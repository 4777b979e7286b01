// SPDX-License-Identifier: MIT
/*
 * threads_report.c: what `iotier threads PID` finds, gathered into a threads_report (see
 * threads_report.h). The tier comes from the shim's own table (found as
 * /memfd:iotier-state in /proc/PID/maps and read through /proc/PID/mem); the priority is
 * what ioprio_get(2) reports now, so a thread whose priority someone else changed shows
 * that too.
 */
#include "threads_report.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/ioprio.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/core.h"
#include "threads_memfd.h"

/* Why the state could not be read, for THREADS_UNKNOWN. */
static const char *unreadable(int err, const char *what)
{
	if (err == EACCES || err == EPERM)
		return !strcmp(what, "maps") ?
		       "cannot tell whether iotier is loaded: permission denied reading the "
		       "process's maps (needs root or ptrace access)" :
		       "iotier is loaded, but cannot tell what it did: permission denied reading "
		       "the process's memory (needs root or ptrace access)";
	return !strcmp(what, "maps") ? "cannot tell whether iotier is loaded: cannot read the "
				       "process's maps" :
				       "iotier is loaded, but its table cannot be read";
}

/*
 * Read the header, then only the slots up to its high-water mark: reading untouched pages
 * of the target's table through /proc/PID/mem would make the kernel allocate them there.
 */
struct state_table *threads_read_table(struct threads_report *r)
{
	struct state_table *table = NULL;
	uint64_t addr = 0;
	char path[64];
	size_t used;
	ssize_t n;
	uint64_t len;
	int fd, err = threads_find_memfd(r->pid, STATE_TABLE_NAME, &addr, &len);

	r->state = THREADS_UNKNOWN;
	if (err == -ENOENT) {
		r->state = THREADS_NOT_LOADED;
		r->why = "iotier is not loaded in this process";
		return NULL;
	}
	if (err) {
		r->why = unreadable(-err, "maps");
		return NULL;
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)r->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r->why = unreadable(errno, "mem");
		return NULL;
	}
	table = calloc(1, sizeof(*table));
	n = table ? pread(fd, &table->header, sizeof(table->header), (off_t)addr) : -1;
	if (n != (ssize_t)sizeof(table->header) || memcmp(table->header.magic, STATE_TABLE_MAGIC, 8) ||
	    table->header.version != STATE_TABLE_VERSION ||
	    table->header.slot_size != sizeof(struct state_slot) ||
	    table->header.slot_high > STATE_TABLE_SLOTS) {
		r->why = n < 0 ? unreadable(errno, "mem") :
			 "cannot tell what iotier did: its table in this process has another version";
		goto fail;
	}
	used = table->header.slot_high * sizeof(struct state_slot);
	n = pread(fd, table->slots, used, (off_t)(addr + offsetof(struct state_table, slots)));
	if (n != (ssize_t)used) {
		r->why = unreadable(n < 0 ? errno : EIO, "mem");
		goto fail;
	}
	close(fd);
	r->state = THREADS_ACTIVE;
	r->header = table->header;
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

const char *threads_tier_name(int tier)
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

/*
 * The thread's name exactly as the kernel keeps it: the comm file is the name and one
 * newline, and the name itself may be empty or hold newlines. -1 when the thread is gone.
 */
static int read_comm(pid_t pid, pid_t tid, char *name, size_t len)
{
	char path[96];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, name, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	if (name[n - 1] == '\n')
		n--;
	name[n] = '\0';
	return 0;
}

static int compare_tids(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int threads_list_tids(pid_t pid, int **tids, size_t *count)
{
	struct dirent *entry;
	size_t cap = 0;
	char path[64];
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	*tids = NULL;
	*count = 0;
	while ((entry = readdir(dir))) {
		if (entry->d_name[0] < '0' || entry->d_name[0] > '9')
			continue;
		if (*count == cap) {
			int *grown = realloc(*tids, (cap = cap ? cap * 2 : 64) * sizeof(**tids));

			if (!grown) {
				closedir(dir);
				return -ENOMEM;
			}
			*tids = grown;
		}
		(*tids)[(*count)++] = atoi(entry->d_name);
	}
	closedir(dir);
	qsort(*tids, *count, sizeof(**tids), compare_tids);
	return 0;
}

void threads_fill_rows(struct threads_report *r, const struct state_table *table,
		       const int *tids, size_t count)
{
	r->n = 0;
	for (size_t i = 0; i < count; i++) {
		struct thread_row *row = &r->rows[r->n];
		const struct state_slot *slot = slot_for(table, tids[i]);

		if (read_comm(r->pid, tids[i], row->name, sizeof(row->name)) < 0)
			continue; /* exited while we looked */
		row->tid = tids[i];
		row->ioprio = (int)syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, tids[i]);
		row->tier = table ? threads_tier_name(slot ? slot->tier : 0) : NULL;
		row->by = table ? reason(slot) : NULL;
		row->cgroup_ok = cgroup_describe_task(r->pid, tids[i], row->cgroup, sizeof(row->cgroup),
						      &row->weight) > 0; /* the version */
		if (!row->cgroup_ok)
			row->weight = 0;
		r->n++;
	}
}
