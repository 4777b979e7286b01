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
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgroup_tier.h"
#include "cli/cli.h"
#include "commands.h"
#include "rules.h"
#include "state_table.h"
#include "text_escape.h"
#include "threads_report.h"

static const char threads_help[] =
	"usage: iotier threads [--json] PID\n"
	"\n"
	"List the threads of PID: tid, name, the tier iotier gave each (and why: a thread\n"
	"rule, a process rule or an explicit iotier_set_tier() call), and the I/O priority\n"
	"class and level that ioprio_get(2) reports for it now, then the thread's io cgroup\n"
	"(blkio on cgroup v1, the unified cgroup on v2) and that cgroup's weight ('-' when it\n"
	"has none, as the root; an iotier-low cgroup without one gets a note: the kernel\n"
	"offers no weight file there, as blkio v1 without bfq). On v1 low threads can sit in\n"
	"iotier-low.PID on their own; on v2 every thread of a process shares one cgroup, so\n"
	"the column is the same for all.\n"
	"A process under a target (--target) first shows its adaptive controller: target,\n"
	"baseline and bound, level, cap, chunk, the low tier's rate, the share of the last\n"
	"window's reads over the bound, the time held, and the tree root that owns it.\n"
	"Names are shown with visible escapes (\\n, \\e, \\xNN, as bash's $'...'): a thread\n"
	"chooses its own name, and it must not reach the terminal as control characters.\n"
	"\n"
	"options:\n"
	"      --json     one JSON document instead of the table (docs/threads-json.md)\n"
	"\n"
	"exit status: 0 listed; 1 no such process; 2 bad usage; 3 the threads are listed but\n"
	"iotier's state in the process could not be read, so whether and how iotier tagged\n"
	"them is unknown (without root or ptrace access to the process, or a table of another\n"
	"iotier version), or its adaptive controller could not be read.\n"
	"\n"
	"examples:\n"
	"  iotier threads $(pidof db_bench)\n"
	"      check that every rocksdb:low thread is at class idle\n"
	"  watch -n1 iotier threads $(pgrep -o postgres)\n";

#ifdef IOTIER_NO_JANSSON
int threads_report_json(FILE *out, const struct threads_report *r)
{
	(void)out;
	(void)r;
	error_line("threads", "--json: this iotier was built without jansson");
	return -1;
}
#endif

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
 * Sets r->state and r->why; returns the table when r->state is THREADS_ACTIVE.
 */
static struct state_table *read_table(struct threads_report *r)
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

/* The thread ids of @pid, ascending, in @tids (freed by the caller). -errno on failure. */
static int list_tids(pid_t pid, int **tids, size_t *count)
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

/* Fill one row per thread still there. */
static void fill_rows(struct threads_report *r, const struct state_table *table, const int *tids,
		      size_t count)
{
	r->n = 0;
	for (size_t i = 0; i < count; i++) {
		struct thread_row *row = &r->rows[r->n];
		const struct state_slot *slot = slot_for(table, tids[i]);

		if (read_comm(r->pid, tids[i], row->name, sizeof(row->name)) < 0)
			continue; /* exited while we looked */
		row->tid = tids[i];
		row->ioprio = (int)syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, tids[i]);
		row->tier = table ? tier_name(slot ? slot->tier : 0) : NULL;
		row->by = table ? reason(slot) : NULL;
		row->cgroup_ok = cgroup_describe_task(r->pid, tids[i], row->cgroup, sizeof(row->cgroup),
						      &row->weight) > 0; /* the version */
		if (!row->cgroup_ok)
			row->weight = 0;
		r->n++;
	}
}

/*
 * An iotier-low cgroup without a weight: the kernel offers no weight file there (blkio v1
 * without bfq). The shim warns of it only when a weight was asked for, so this is where a
 * default weight that could not be had is told (once per cgroup; v1 has one per process).
 */
static void print_weightless(const struct threads_report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct thread_row *row = &r->rows[i];
		const char *base = strrchr(row->cgroup, '/');
		bool seen = false;

		if (!row->cgroup_ok || row->weight || !base ||
		    strncmp(base + 1, CGROUP_LOW_PREFIX, strlen(CGROUP_LOW_PREFIX)))
			continue;
		for (size_t j = 0; j < i && !seen; j++)
			seen = r->rows[j].cgroup_ok && !strcmp(r->rows[j].cgroup, row->cgroup);
		if (seen)
			continue;
		fputs("note: ", stdout);
		text_escape_fputs(row->cgroup, stdout);
		fputs(" has no weight file (the kernel offers none there, as blkio v1 without bfq);\n"
		      "      its threads keep only their I/O priority\n", stdout);
	}
}

static void print_text(const struct threads_report *r)
{
	char cls[16], wstr[16], low[16], high[16];

	if (r->state == THREADS_ACTIVE)
		printf("pid %d: iotier active, low class %s, high class %s, process tier %s\n",
		       (int)r->pid, ioprio_format(r->header.low_ioprio, low, sizeof(low)),
		       ioprio_format(r->header.high_ioprio, high, sizeof(high)),
		       tier_name(r->header.process_tier));
	else
		printf("pid %d: %s\n", (int)r->pid, r->why);
	threads_print_adaptive(stdout, r);
	printf("%8s  %-16s %-5s %-9s %-7s %-6s %s\n", "TID", "NAME", "TIER", "BY", "IOPRIO",
	       "WEIGHT", "CGROUP");
	for (size_t i = 0; i < r->n; i++) {
		const struct thread_row *row = &r->rows[i];
		char name[4 * sizeof(row->name)];

		text_escape(name, sizeof(name), row->name);
		snprintf(wstr, sizeof(wstr), row->weight ? "%u" : "-", row->weight);
		printf("%8d  %-16s %-5s %-9s %-7s %-6s ", (int)row->tid, name,
		       row->tier ? row->tier : "?", row->by ? row->by : "-",
		       row->ioprio < 0 ? "?" : ioprio_format(row->ioprio, cls, sizeof(cls)), wstr);
		text_escape_fputs(row->cgroup_ok ? row->cgroup : "?", stdout);
		putchar('\n');
	}
	print_weightless(r);
}

/* parse: "[--json] PID" in either order; 0, -1 after --help, or an exit status. */
static int parse_threads_args(int argc, char **argv, long *pid, bool *json)
{
	const char *pidarg = NULL;
	char *end;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(threads_help, stdout);
			return -1;
		} else if (!strcmp(argv[i], "--json")) {
			*json = true;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return usage_error("threads", "unknown option '%s'", argv[i]);
		} else if (pidarg) {
			return usage_error("threads", "expected exactly one PID");
		} else {
			pidarg = argv[i];
		}
	}
	if (!pidarg)
		return usage_error("threads", "expected exactly one PID");
	errno = 0;
	*pid = strtol(pidarg, &end, 10);
	if (errno || *end || *pid <= 0 || *pid > 0x3fffffff)
		return usage_error("threads", "'%s' is not a process id", pidarg);
	return 0;
}

static int threads_main(int argc, char **argv)
{
	struct threads_report r = { 0 };
	struct state_table *table;
	bool json = false;
	size_t count = 0;
	int *tids = NULL, ret;
	long pid = 0;

	ret = parse_threads_args(argc, argv, &pid, &json);
	if (ret)
		return ret < 0 ? 0 : ret;
	r.pid = (pid_t)pid;
	ret = list_tids(r.pid, &tids, &count);
	if (ret) {
		error_line("threads", "no process %ld (%s)", pid, strerror(-ret));
		return 1;
	}
	table = read_table(&r);
	threads_read_adaptive(&r);
	r.rows = calloc(count ? count : 1, sizeof(*r.rows));
	if (!r.rows) {
		error_line("threads", "out of memory");
		ret = 1;
		goto out;
	}
	fill_rows(&r, table, tids, count);
	if (!json)
		print_text(&r);
	else if (threads_report_json(stdout, &r) < 0) {
		error_line("threads", "cannot write the JSON document");
		ret = 1;
		goto out;
	}
	ret = r.state == THREADS_UNKNOWN || r.adaptive_state == ADAPTIVE_UNREADABLE ?
	      EXIT_CANNOT_TELL : 0;
out:
	free(r.rows);
	free(table);
	free(tids);
	return ret;
}

const struct command command_threads = {
	.name = "threads",
	.summary = "show each thread's tier and I/O priority",
	.help = threads_help,
	.main = threads_main,
};
