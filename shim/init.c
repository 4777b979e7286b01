// SPDX-License-Identifier: MIT
/*
 * init.c: bring the shim up once, from its constructor or from the first wrapped call that
 * comes earlier (another library's constructor may do I/O before ours runs). A bad
 * configuration is reported in one line and leaves the shim inert: the program runs exactly
 * as it would without iotier.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgroup_tier.h"
#include "low_paths.h"
#include "real.h"
#include "shim.h"
#include "state_file.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static const char *lookup_env(const char *key, void *ctx)
{
	(void)ctx;
	return getenv(key);
}

static int load_config(void)
{
	static char file_text[64 * 1024];
	const char *file = getenv("IOTIER_CONFIG");
	char err[RULE_ERROR_MAX + 64];
	const char *text = NULL;

	/* A setuid program must not take policy from a file its caller names. */
	if (file && *file && !getauxval(AT_SECURE)) {
		int ret = config_read_file(file, file_text, sizeof(file_text));

		if (ret < 0) {
			shim_warn_once(WARN_CONFIG, "IOTIER_CONFIG=%s: %s; iotier is off for this "
				       "process", file, strerrordesc_np(-ret));
			return -1;
		}
		text = file_text;
	}
	if (config_load(&shim.cfg, lookup_env, NULL, text, err, sizeof(err)) < 0) {
		shim_warn_once(WARN_CONFIG, "%s; iotier is off for this process", err);
		return -1;
	}
	return 0;
}

/*
 * The thread table lives in a memfd mapping so that `iotier threads` can find it by name
 * in /proc/PID/maps. MAP_PRIVATE gives a forked child its own copy.
 */
static struct state_table *map_table(void)
{
	size_t size = sizeof(struct state_table);
	struct state_table *table;
	long fd;

	fd = syscall(SYS_memfd_create, STATE_TABLE_NAME, MFD_CLOEXEC);
	if (fd >= 0 && syscall(SYS_ftruncate, (int)fd, (off_t)size) == 0)
		table = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, (int)fd, 0);
	else
		table = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fd >= 0)
		syscall(SYS_close, (int)fd);
	if (table == MAP_FAILED)
		return NULL;
	memcpy(table->header.magic, STATE_TABLE_MAGIC, sizeof(table->header.magic));
	table->header.version = STATE_TABLE_VERSION;
	table->header.slot_size = sizeof(struct state_slot);
	table->header.slot_count = STATE_TABLE_SLOTS;
	table->header.pid = getpid();
	table->header.low_ioprio = shim.cfg.low_ioprio;
	table->header.high_ioprio = shim.cfg.high_ioprio;
	return table;
}

static void fork_child(void)
{
	if (atomic_load(&shim.status) != SHIM_ACTIVE)
		return;
	threads_after_fork_child();
	process_after_fork_child();
	state_file_publish();
}

/*
 * A child made by _Fork(), clone() or syscall(SYS_fork) never ran the atfork handler and
 * still holds the parent's thread table, tids included: acting on it would re-tag the
 * parent's threads, so it is reset first. A vfork() child runs in the parent's memory: it
 * must touch nothing at all until it execs. The slow paths ask here first; it costs a
 * getpid syscall there. Returns whether the caller may act on the table.
 */
bool shim_fork_check(void)
{
	struct state_table *table = shim.table;

	if (!table || table->header.pid == (pid_t)syscall(SYS_getpid))
		return true;
	if (shim_memory_borrowed())
		return false;
	fork_child();
	return true;
}

static void init_once_body(void)
{
	unsigned kinds;

	in_shim++;
	real_resolve();
	if (load_config() < 0)
		goto disable;
	shim.table = map_table();
	if (!shim.table) {
		shim_warn_once(WARN_TABLE, "cannot map the thread table; iotier is off for this "
			       "process");
		goto disable;
	}
	if (threads_init() != 0 || pthread_atfork(NULL, NULL, fork_child) != 0) {
		shim_warn_once(WARN_TABLE, "cannot register thread hooks; iotier is off for this "
			       "process");
		goto disable;
	}
	low_paths_init();
	/* before the first tier is worked out: stale clean-up, and v1/v2 chosen */
	cgroup_tier_init(&shim.cfg);
	kinds = shim.cfg.rules.low.kind_mask | shim.cfg.rules.high.kind_mask;
	shim.cmdline_rules = kinds & (1u << RULE_CMDLINE);
	shim.process_rules = kinds & ((1u << RULE_CMDLINE) | (1u << RULE_COMM));
	state_file_init();
	atomic_store(&shim.status, SHIM_ACTIVE);
	in_shim--;
	/* Outside the guard: evaluating the process tier may re-tag threads. */
	process_identity_init();
	state_file_publish();
	return;
disable:
	atomic_store(&shim.status, SHIM_DISABLED);
	in_shim--;
}

void shim_init(void)
{
	pthread_once(&init_once, init_once_body);
}

/* Leave the low cgroup and remove it; a killed process leaves it to the next run's init. */
__attribute__((destructor)) static void shim_destructor(void)
{
	if (atomic_load(&shim.status) == SHIM_ACTIVE) {
		cgroup_tier_exit();
		state_file_remove();
	}
}

__attribute__((constructor)) static void shim_constructor(void)
{
	int saved = errno;

	shim_init();
	if (!self_slot)
		thread_attach_self();
	errno = saved;
}
