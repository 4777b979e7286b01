// SPDX-License-Identifier: MIT
/*
 * adaptive_tree.c: the adaptive region across exec (see adaptive_tree.h). The handover is a
 * descriptor number in the environment: the only state that exec keeps besides the
 * descriptors themselves. Nothing here trusts the number: the descriptor must be a memfd of
 * the region's name, size and layout (adaptive_region_adopt) before it is mapped, and only
 * such a memfd is ever closed.
 */
#include "adaptive_tree.h"

#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "low_paths.h"
#include "adaptive/adaptive_region.h"
#include "core/log.h"
#include "core/sys.h"

#define SHIM_NAME "libiotier"

/* Set at init, read-only after (a vfork() child reads them in its parent's memory). */
static int region_fd = -1;
static dev_t region_dev;
static ino_t region_ino;
static bool preloaded_by_env;

static bool names_shim(const char *preload)
{
	return preload && strstr(preload, SHIM_NAME);
}

static void keep_fd(int fd)
{
	struct stat st;

	preloaded_by_env = names_shim(getenv("LD_PRELOAD"));
	if (fd < 0 || fstat(fd, &st) != 0)
		return;
	region_fd = fd;
	region_dev = st.st_dev;
	region_ino = st.st_ino;
}

/*
 * Test-only: IOTIER_TEST_STEP makes this process's first controller step end inside itself,
 * the controller half written and the seqlock odd: "exit" leaves as if killed there
 * (status ADAPTIVE_TEST_STEP_EXIT), "stop" stops the process with SIGSTOP as a debugger
 * would (SIGCONT resumes it). "no-high" watches instead: a step run by a thread the gate
 * does not hold (the foreground, an urgent thread) ends the process with status
 * ADAPTIVE_TEST_STEP_HIGH. For tests/adaptive/region-test.c and stepper-test.c only; not a
 * setting.
 */
#define ADAPTIVE_TEST_STEP_ENV "IOTIER_TEST_STEP"
#define ADAPTIVE_TEST_STEP_EXIT 70
#define ADAPTIVE_TEST_STEP_HIGH 71

static void mid_step_no_high(void)
{
	if (!self_is_gated())
		sys_call(SYS_exit_group, ADAPTIVE_TEST_STEP_HIGH);
}

static void mid_step_exit(void)
{
	sys_call(SYS_exit_group, ADAPTIVE_TEST_STEP_EXIT);
}

static void mid_step_stop(void)
{
	static atomic_flag once = ATOMIC_FLAG_INIT;

	if (!atomic_flag_test_and_set(&once))
		sys_call(SYS_kill, sys_getpid(), SIGSTOP);
}

static void test_hooks(void)
{
	const char *mode = getenv(ADAPTIVE_TEST_STEP_ENV);

	if (mode && !strcmp(mode, "exit"))
		adaptive_region_mid_step = mid_step_exit;
	else if (mode && !strcmp(mode, "stop"))
		adaptive_region_mid_step = mid_step_stop;
	else if (mode && !strcmp(mode, "no-high"))
		adaptive_region_mid_step = mid_step_no_high;
}

/* IOTIER_ADAPTIVE_FD's value as a descriptor number; -1 if it is not one. */
static int parse_fd(const char *text)
{
	char *end;
	long n;

	if (!text || *text < '0' || *text > '9')
		return -1;
	errno = 0;
	n = strtol(text, &end, 10);
	return errno || *end || n > INT32_MAX ? -1 : (int)n;
}

static bool same_target(const struct adaptive_target *a, const struct adaptive_target *b)
{
	return a->permille == b->permille && a->relative == b->relative &&
	       (a->relative ? a->factor_milli == b->factor_milli : a->latency_ns == b->latency_ns);
}

static void warn_other_target(const struct adaptive_region *r, const struct adaptive_target *own)
{
	char mine[48], tree[48];

	if (!own->set || same_target(own, &r->ctl.target))
		return;
	adaptive_target_format(own, mine, sizeof(mine));
	adaptive_target_format(&r->ctl.target, tree, sizeof(tree));
	shim_warn_once(WARN_TREE, "IOTIER_TARGET=%s differs from %s, the target of the process "
		       "tree this program was exec'd in (root pid %d): one target per tree, %s "
		       "applies", mine, tree, r->creator_pid, tree);
}

/*
 * Take the handover out of environ and map it; @why set when it is unusable, @value the
 * variable's value (cut to its size) for the warning.
 */
static struct adaptive_region *take(const char **why, int *fd, char value[16])
{
	const char *text = getenv(ADAPTIVE_FD_ENV);
	struct adaptive_region *r;
	bool ours;

	*why = NULL;
	*fd = -1;
	if (!text)
		return NULL;
	snprintf(value, 16, "%s", text);
	*fd = parse_fd(text);
	unsetenv(ADAPTIVE_FD_ENV); /* the program's environ as its parent gave it */
	r = adaptive_region_adopt(*fd, why, &ours);
	if (!r && ours)
		sys_close(*fd);
	return r;
}

struct adaptive_region *adaptive_tree_inherit(const struct adaptive_target *own)
{
	struct adaptive_region *r;
	const char *why;
	int saved = errno, fd;
	char value[16];

	r = take(&why, &fd, value);
	if (!r && why)
		shim_warn_once(WARN_TREE, "%s=%s inherited across exec: %s; this process gets a "
			       "controller of its own", ADAPTIVE_FD_ENV, value, why);
	if (r) {
		sys_call(SYS_fcntl, fd, F_SETFD, FD_CLOEXEC); /* raw: not the fcntl wrapper */
		keep_fd(fd);
		warn_other_target(r, own);
		test_hooks();
	}
	errno = saved;
	return r;
}

struct adaptive_region *adaptive_tree_create(const struct adaptive_params *p,
					     const struct adaptive_target *t, uint64_t now_ns)
{
	int fd = -1;
	struct adaptive_region *r = adaptive_region_create_fd(p, t, now_ns, &fd);

	if (r) {
		keep_fd(fd);
		test_hooks();
	}
	return r;
}

void adaptive_tree_discard(void)
{
	const char *why;
	int saved = errno, fd;
	char value[16];
	struct adaptive_region *r = take(&why, &fd, value);

	if (r) {
		adaptive_region_destroy(r);
		sys_close(fd);
	}
	errno = saved;
}

int adaptive_tree_fd(void)
{
	struct stat st;
	int saved = errno;
	bool same;

	if (region_fd < 0)
		return -1;
	same = fstat(region_fd, &st) == 0 && st.st_dev == region_dev && st.st_ino == region_ino;
	errno = saved;
	if (same)
		return region_fd;
	shim_warn_once(WARN_TREE, "the program closed or replaced the adaptive tier's descriptor "
		       "%d; programs it execs get a controller of their own", region_fd);
	return -1;
}

bool adaptive_tree_shim_follows(char *const envp[])
{
	if (!preloaded_by_env)
		return true;
	for (char *const *e = envp; *e; e++)
		if (!strncmp(*e, "LD_PRELOAD=", 11))
			return names_shim(*e + 11);
	return false;
}
