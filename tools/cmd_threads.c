// SPDX-License-Identifier: MIT
/*
 * cmd_threads.c: `iotier threads PID`, what iotier did to each thread of a process. This
 * file parses the arguments and runs the steps; reading the process and printing what was
 * found are tools/threads/ (threads/threads.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "commands.h"
#include "threads/threads.h"

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
	ret = threads_list_tids(r.pid, &tids, &count);
	if (ret) {
		error_line("threads", "no process %ld (%s)", pid, strerror(-ret));
		return 1;
	}
	table = threads_read_table(&r);
	threads_read_adaptive(&r);
	r.rows = calloc(count ? count : 1, sizeof(*r.rows));
	if (!r.rows) {
		error_line("threads", "out of memory");
		ret = 1;
		goto out;
	}
	threads_fill_rows(&r, table, tids, count);
	if (!json)
		threads_print_text(&r);
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
