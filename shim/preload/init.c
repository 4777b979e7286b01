// SPDX-License-Identifier: MIT
/*
 * init.c: bring the shim up once, from its constructor or from the first wrapped call that
 * comes earlier (another library's constructor may do I/O before ours runs). A bad
 * configuration is reported in one line and leaves the shim inert: the program runs exactly
 * as it would without iotier.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "init.h"

#include "adaptive_hook.h"
#include "adaptive_tree.h"
#include "fork.h"
#include "globals.h"
#include "low_paths.h"
#include "process_identity.h"
#include "real.h"
#include "state_file.h"
#include "thread_state.h"
#include "core/cgroup_tier.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/*
 * The one loader (config.c) decides secure mode too: there the shim stays off, and says so
 * only when IOTIER_LOG=debug asked. Returns 0, -1 for a bad configuration, 1 for secure.
 */
static int load_config(void)
{
	char err[RULE_ERROR_MAX + 64];
	int ret = config_load_process(&shim.cfg, "IOTIER_CONFIG=", err, sizeof(err));

	if (ret < 0) {
		shim_warn_once(WARN_CONFIG, "%s; iotier is off for this process", err);
		return -1;
	}
	log_set_level(shim.cfg.log);
	if (ret == CONFIG_SECURE) {
		shim_log(LOG_DEBUG, "secure mode (setuid, setgid or capabilities): IOTIER_* "
			 "settings are ignored; iotier is off for this process");
		log_set_level(LOG_OFF);
		return 1;
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

	fd = sys_call(SYS_memfd_create, STATE_TABLE_NAME, MFD_CLOEXEC);
	if (fd >= 0 && sys_call(SYS_ftruncate, (int)fd, (off_t)size) == 0)
		table = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, (int)fd, 0);
	else
		table = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fd >= 0)
		sys_close((int)fd);
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

static void init_once_body(void)
{
	unsigned kinds;
	int config;

	in_shim++;
	real_resolve();
	log_share_with_children(); /* now, before the program forks: one warning per tree */
	config = load_config();
	if (config != 0)
		goto disable;
	shim.table = map_table();
	if (!shim.table) {
		shim_warn_once(WARN_TABLE, "cannot map the thread table; iotier is off for this "
			       "process");
		goto disable;
	}
	/* What a child of fork(), or of a raw fork found later, resets first, in order. */
	fork_on_child(threads_after_fork_child); /* the thread table: owner, surviving tid */
	fork_on_child(process_after_fork_child); /* the process name, title and tier */
	fork_on_child(state_file_publish);       /* the child's own state file, for the exporter */
	if (threads_init() != 0 || fork_hooks_init() != 0) {
		shim_warn_once(WARN_TABLE, "cannot register thread hooks; iotier is off for this "
			       "process");
		goto disable;
	}
	low_paths_init();
	adaptive_hook_init();
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
	/* Secure mode trusts no IOTIER_* variable, not even to close what one names. */
	if (config != 1)
		adaptive_tree_discard(); /* no stray descriptor from an ancestor's region */
	atomic_store(&shim.status, SHIM_DISABLED);
	in_shim--;
}

void shim_init(void)
{
	pthread_once(&init_once, init_once_body);
}

/* A wrapper may run before the constructor (another library's constructor did I/O). */
struct state_slot *thread_attach_self(void)
{
	if (in_shim)
		return NULL;
	if (atomic_load(&shim.status) == SHIM_UNINITIALISED)
		shim_init();
	return thread_attach_current();
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
