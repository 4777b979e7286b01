// SPDX-License-Identifier: MIT
/*
 * process_identity.c: what comm: and cmdline: rules match, and when it changes. The process
 * name is the main thread's name, which the naming wrappers see change. The command line is
 * read straight from the argument area in our own memory ([arg_start, arg_end) from
 * /proc/self/stat), because programs such as PostgreSQL set their title by overwriting argv
 * in place, with no syscall to intercept. Comparing that area with a snapshot is a memcmp
 * and no syscall, so wrappers can afford it on each of a new process's first 4096 I/O
 * calls (where titles are set) and on every 64th call of a thread after that.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "process_identity.h"

#include "globals.h"
#include "thread_state.h"
#include "core/cgroup_tier.h"
#include "core/title.h"

static struct {
	pid_t pid;
	uintptr_t arg_start, arg_end, env_end;
	char snapshot[TITLE_MAX]; /* raw bytes of the title as last matched */
	size_t snapshot_len;
	_Atomic int busy, again;  /* try-lock and "someone asked while we were busy" */
} proc;

/* Read arg_start, arg_end and env_end (fields 48, 49 and 51) from /proc/self/stat. */
static void locate_argument_area(void)
{
	char stat[2048];
	char *p;
	unsigned long long value;

	proc.arg_start = proc.arg_end = proc.env_end = 0;
	if (sys_read_file("/proc/self/stat", stat, sizeof(stat)) < 0)
		return;
	p = strrchr(stat, ')'); /* comm may hold spaces and parentheses */
	if (!p)
		return;
	p++;
	for (int field = 3; field <= 51 && *p; field++) {
		while (*p == ' ')
			p++;
		value = strtoull(p, &p, 10);
		if (field == 48)
			proc.arg_start = (uintptr_t)value;
		else if (field == 49)
			proc.arg_end = (uintptr_t)value;
		else if (field == 51)
			proc.env_end = (uintptr_t)value;
		while (*p && *p != ' ')
			p++;
	}
	if (proc.arg_end <= proc.arg_start) /* over TITLE_MAX: title_length() cuts it */
		proc.arg_start = proc.arg_end = 0;
}

/* The bytes of the title, as the kernel's /proc/PID/cmdline defines them (title.c). */
static size_t title_bytes(const char **start)
{
	size_t limit = proc.env_end > proc.arg_end ? proc.env_end - proc.arg_start : 0;

	*start = (const char *)proc.arg_start;
	return title_length(*start, proc.arg_end - proc.arg_start, limit);
}

static void main_thread_name(char name[16])
{
	struct state_slot *slot = slot_find_tid(proc.pid);
	char buf[64];

	if (slot) {
		slot_get_name(slot, name);
		return;
	}
	memset(name, 0, 16);
	if (sys_read_file("/proc/self/comm", buf, sizeof(buf)) == 0) {
		buf[strcspn(buf, "\n")] = '\0';
		memcpy(name, buf, strnlen(buf, 15));
	}
}

static void refresh_locked(void)
{
	static char cmdline[TITLE_MAX + 1];
	enum iotier_tier tier, old;
	const char *bytes;
	size_t len;
	char comm[16];

	main_thread_name(comm);
	len = title_bytes(&bytes);
	memcpy(proc.snapshot, bytes, len);
	proc.snapshot_len = len;
	title_to_cmdline(proc.snapshot, len, cmdline, sizeof(cmdline));

	tier = tier_from_process_rules(&shim.cfg.rules, comm, cmdline);
	old = atomic_exchange(&shim.process_tier, tier);
	if (shim.table)
		shim.table->header.process_tier = tier;
	if (old == tier)
		return;
	shim_log(LOG_DEBUG, "process '%s' (%.60s) is now %s", comm, cmdline,
		 tier == IOTIER_LOW ? "low" : tier == IOTIER_HIGH ? "high" : "untagged");
	cgroup_tier_process(tier == IOTIER_LOW); /* before threads: v1 may move some back */
	threads_reevaluate_all();
}

void process_identity_refresh(void)
{
	int saved_guard = in_shim;

	if (!shim.process_rules)
		return;
	in_shim = 1;
	atomic_store(&proc.again, 1);
	while (atomic_load(&proc.again)) {
		if (atomic_exchange(&proc.busy, 1))
			break; /* the holder goes round again */
		atomic_store(&proc.again, 0);
		refresh_locked();
		atomic_store(&proc.busy, 0);
	}
	in_shim = saved_guard;
}

#define TITLE_EAGER_CALLS 4096

void process_check_title(void)
{
	const char *bytes;
	size_t len;

	if (atomic_load_explicit(&shim.title_eager_calls, memory_order_relaxed) > 0)
		atomic_fetch_sub_explicit(&shim.title_eager_calls, 1, memory_order_relaxed);
	if (atomic_load_explicit(&proc.busy, memory_order_relaxed))
		return;
	len = title_bytes(&bytes);
	if (len != proc.snapshot_len || memcmp(bytes, proc.snapshot, len))
		process_identity_refresh();
}

void process_identity_init(void)
{
	proc.pid = getpid();
	locate_argument_area();
	atomic_store(&shim.title_eager_calls, TITLE_EAGER_CALLS);
	process_identity_refresh();
}

void process_after_fork_child(void)
{
	/* The forking thread is the child's main thread; its name is the process name now. */
	proc.pid = getpid();
	atomic_store(&proc.busy, 0);
	atomic_store(&shim.title_eager_calls, TITLE_EAGER_CALLS);
	process_identity_refresh();
}
