// SPDX-License-Identifier: MIT
/*
 * Description: cgroup_tier on the host's real cgroup v1 blkio hierarchy. A low process
 * lands in iotier-low.<pid> with the configured blkio.bfq.weight (all its threads); in a
 * mixed process only the low threads move; the cgroups are removed at exit, and stale empty
 * ones of dead processes by the next init; without permission (read-only cgroup mount in a
 * private mount namespace, and a non-root user) exactly one "iotier: " warning line appears
 * and ioprio tagging still works. Every case runs in a forked child inside a throwaway
 * iotier-test.<pid> cgroup that is removed whatever happens.
 * A kernel without bfq has no weight file in blkio v1. That is no failed setup but the
 * fallback, and it is judged instead (test_kernel_lacks): the same placement and clean-up,
 * no weight file in the low cgroup, one "no weight file" warning when a weight was asked
 * for (IOTIER_LOW_WEIGHT, --cgroup-weight), none with the default weight, which the state
 * file ("low_cgroup_weight none") and `iotier threads` ("has no weight file") tell instead.
 * With bfq the same cases check the weights themselves, and the warning's absence.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/ioprio.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/cgroup_tier.h"
#include "core/config.h"
#include "sandbox.h"
#include "cleanup.h"
#include "run_capture.h"
#include "test_env.h"

#define WEIGHT 37

static struct sandbox sb;

/* The kernel offers blkio.bfq.weight (bfq is loaded); else the fallback is judged. */
static bool weights;

/* What cgroup_describe_task reads as @set's weight: the weight, or 0 without a file. */
static unsigned shown(unsigned set)
{
	return weights ? set : 0;
}

/* The low cgroup @dir has weight @want, or, without bfq, no weight file at all. */
static bool has_weight(const char *dir, unsigned want)
{
	char path[PATH_MAX + 64], text[64], num[16];

	snprintf(path, sizeof(path), "%s/blkio.bfq.weight", dir);
	if (!weights)
		return EXPECT(access(path, F_OK) < 0, "%s exists in a kernel without bfq", path);
	snprintf(num, sizeof(num), "%u", want);
	return EXPECT(read_small(path, text, sizeof(text)) == 0 && !strcmp(text, num),
		      "%s: '%s', want %s", path, text, num);
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void load_config(struct config *cfg, unsigned weight)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->cgroup_mode = CGROUP_V1;
	cfg->low_weight = weight;
	cfg->low_weight_given = true; /* as IOTIER_LOW_WEIGHT sets it: a weight asked for */
	cfg->log = LOG_WARN;
}

/* Threads that park until told to finish, so their cgroups can be read. */
static int park_fd[2];

static void *parked(void *arg)
{
	char c;

	__atomic_store_n((pid_t *)arg, gettid_(), __ATOMIC_RELEASE);
	while (read(park_fd[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static int start_parked(pthread_t *t, pid_t *tid)
{
	*tid = 0;
	if (pthread_create(t, NULL, parked, tid))
		return -1;
	while (!__atomic_load_n(tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	return 0;
}

/* Thread @tid of @pid is in cgroup @want, as /proc shows it; else say where it is. */
static bool in_cgroup(pid_t pid, pid_t tid, const char *want, const char *who)
{
	char cg[PATH_MAX] = "";

	return EXPECT(task_cgroup_path(&sb, pid, tid, cg, sizeof(cg)) == 0 && !strcmp(cg, want),
		      "%s: in %s, want %s", who, cg, want);
}

static int case_low_process(void)
{
	char cg[PATH_MAX], want[PATH_MAX + 32], dir[PATH_MAX + 32];
	struct config cfg;
	pthread_t t;
	pid_t tid;

	load_config(&cfg, WEIGHT);
	if (!EXPECT(start_parked(&t, &tid) == 0, "pthread_create"))
		return 1;
	if (!EXPECT(cgroup_tier_init(&cfg) == 0, "init"))
		return 1;
	if (!EXPECT(cgroup_tier_version() == 1, "version %d", cgroup_tier_version()))
		return 1;
	cgroup_tier_process(true);
	snprintf(want, sizeof(want), "%s/iotier-low.%d", sb.rel, (int)getpid());
	if (!in_cgroup(getpid(), getpid(), want, "main"))
		return 1;
	if (!in_cgroup(getpid(), tid, want, "thread"))
		return 1;
	snprintf(dir, sizeof(dir), "%s/iotier-low.%d", sb.dir, (int)getpid());
	if (!has_weight(dir, WEIGHT))
		return 1;
	unsigned weight;

	if (!EXPECT(cgroup_describe_task(getpid(), tid, cg, sizeof(cg), &weight) == 1, "describe"))
		return 1;
	if (!EXPECT(!strcmp(cg, want) && weight == shown(WEIGHT), "describe says %s %u", cg,
		    weight))
		return 1;
	if (!EXPECT(cgroup_tier_weight() == (int)shown(WEIGHT), "the state file's weight %d",
		    cgroup_tier_weight()))
		return 1;
	cgroup_tier_exit();
	if (!in_cgroup(getpid(), getpid(), sb.rel, "after exit") ||
	    !in_cgroup(getpid(), tid, sb.rel, "thread after exit"))
		return 1;
	return EXPECT(!dir_exists(dir), "%s left behind", dir) ? 0 : 1;
}

static int case_mixed_process(void)
{
	char cg[PATH_MAX], low[PATH_MAX + 32], dir[PATH_MAX + 32];
	struct config cfg;
	pthread_t t1, t2;
	pid_t low_tid, high_tid;
	unsigned weight;

	load_config(&cfg, WEIGHT);
	if (!EXPECT(start_parked(&t1, &low_tid) == 0 && start_parked(&t2, &high_tid) == 0,
		    "threads"))
		return 1;
	if (!EXPECT(cgroup_tier_init(&cfg) == 0, "init"))
		return 1;
	cgroup_tier_thread(low_tid, true);
	cgroup_tier_thread(high_tid, false);
	snprintf(low, sizeof(low), "%s/iotier-low.%d", sb.rel, (int)getpid());
	if (!in_cgroup(getpid(), low_tid, low, "low thread"))
		return 1;
	if (!in_cgroup(getpid(), high_tid, sb.rel, "high thread"))
		return 1;
	if (!in_cgroup(getpid(), getpid(), sb.rel, "main thread"))
		return 1;
	if (!EXPECT(cgroup_describe_task(getpid(), low_tid, cg, sizeof(cg), &weight) == 1 &&
		    weight == shown(WEIGHT), "low thread weight %u", weight))
		return 1;
	if (!EXPECT(cgroup_describe_task(getpid(), high_tid, cg, sizeof(cg), &weight) == 1 &&
		    weight == shown(100), "high thread weight %u (the sandbox's default)", weight))
		return 1;
	/* a low thread that turns high goes back */
	cgroup_tier_thread(low_tid, false);
	if (!in_cgroup(getpid(), low_tid, sb.rel, "re-tiered thread"))
		return 1;
	cgroup_tier_thread(low_tid, true);
	cgroup_tier_exit();
	snprintf(dir, sizeof(dir), "%s/iotier-low.%d", sb.dir, (int)getpid());
	if (!EXPECT(!dir_exists(dir), "%s left behind", dir))
		return 1;
	if (!in_cgroup(getpid(), low_tid, sb.rel, "low thread after exit"))
		return 1;
	return 0;
}

static int case_stale(void)
{
	char dead[PATH_MAX + 32], live[PATH_MAX + 32], other[PATH_MAX + 32];
	struct config cfg;
	pid_t child = fork();

	if (!EXPECT(child >= 0, "fork"))
		return 1;
	if (!child)
		_exit(0);
	waitpid(child, NULL, 0);
	snprintf(dead, sizeof(dead), "%s/iotier-low.%d", sb.dir, (int)child);
	snprintf(live, sizeof(live), "%s/iotier-low.%d", sb.dir, (int)getppid());
	snprintf(other, sizeof(other), "%s/not-iotier", sb.dir);
	if (!EXPECT(mkdir(dead, 0755) == 0 && mkdir(live, 0755) == 0 && mkdir(other, 0755) == 0,
		    "mkdir: %s", strerror(errno)))
		return 1;
	load_config(&cfg, WEIGHT);
	if (!EXPECT(cgroup_tier_init(&cfg) == 0, "init"))
		return 1;
	if (!EXPECT(!dir_exists(dead), "stale %s not removed", dead))
		return 1;
	if (!EXPECT(dir_exists(live), "%s of a live process removed", live))
		return 1;
	if (!EXPECT(dir_exists(other), "%s removed", other))
		return 1;
	rmdir(live);
	rmdir(other);
	return 0;
}

/*
 * Stderr goes to a file so the warning can be counted; then try everything twice and make
 * sure ioprio tagging is unaffected.
 */
static int attempt_without_permission(const char *how)
{
	char path[] = "/tmp/iotier-cgroup-stderr.XXXXXX", text[1024];
	struct config cfg;
	int fd = mkstemp(path), saved = dup(2), lines = 0;
	pid_t tid = gettid_();

	if (!EXPECT(fd >= 0 && saved >= 0, "mkstemp"))
		return 1;
	unlink(path);
	dup2(fd, 2);
	load_config(&cfg, WEIGHT);
	cgroup_tier_init(&cfg);
	cgroup_tier_process(true);
	cgroup_tier_thread(tid, true);
	cgroup_tier_process(true);
	cgroup_tier_thread(tid, true);
	cgroup_tier_exit();
	dup2(saved, 2);
	/* the shim's other half: ioprio still settable */
	if (!EXPECT(syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0,
			    IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)) == 0,
		    "ioprio_set: %s", strerror(errno)))
		return 1;
	if (!EXPECT(syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0) ==
		    IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0), "ioprio_get"))
		return 1;
	memset(text, 0, sizeof(text));
	if (!EXPECT(pread(fd, text, sizeof(text) - 1, 0) >= 0, "pread"))
		return 1;
	for (char *p = text; *p; p++)
		lines += *p == '\n';
	if (!EXPECT(lines == 1 && !strncmp(text, "iotier: ", 8),
		    "%s: want one warning line, got '%s'", how, text))
		return 1;
	fprintf(stderr, "%s: %s", how, text);
	if (!in_cgroup(getpid(), getpid(), sb.rel, "moved"))
		return 1;
	return 0;
}

static int case_readonly_mount(void)
{
	if (!EXPECT(unshare(CLONE_NEWNS) == 0, "unshare: %s", strerror(errno)))
		return 1;
	if (!EXPECT(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0, "private"))
		return 1;
	if (!EXPECT(mount(sb.mount, sb.mount, NULL, MS_BIND, NULL) == 0, "bind: %s",
		    strerror(errno)))
		return 1;
	if (!EXPECT(mount(NULL, sb.mount, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) == 0,
		    "remount ro: %s", strerror(errno)))
		return 1;
	return attempt_without_permission("read-only mount");
}

static int case_not_root(void)
{
	if (!EXPECT(setgid(65534) == 0 && setuid(65534) == 0, "drop to nobody: %s",
		    strerror(errno)))
		return 1;
	return attempt_without_permission("non-root");
}

static int case_disabled(void)
{
	struct config cfg;

	load_config(&cfg, WEIGHT);
	cfg.cgroup_mode = CGROUP_OFF;
	if (!EXPECT(cgroup_tier_init(&cfg) == 0 && cgroup_tier_version() == 0, "off"))
		return 1;
	cgroup_tier_process(true);
	if (!in_cgroup(getpid(), getpid(), sb.rel, "moved"))
		return 1;
	cfg.cgroup_mode = CGROUP_V2; /* the host's cgroup2 has no io controller */
	if (!EXPECT(cgroup_tier_init(&cfg) == -1, "v2 forced on a host without io"))
		return 1;
	return 0;
}

/* ---- real programs: cgroup-probe under libiotier.so or `iotier run` ---- */

static const char *shim_path, *cli_path, *probe_path;

struct probe {
	pid_t pid, bg, fg;
	int in_w;        /* close it to let the probe finish */
	int err_fd;      /* the probe's stderr, a file */
	char low[PATH_MAX + 32], low_dir[PATH_MAX + 32];
};

/*
 * Start the probe with @env set (NAME=VALUE strings, NULL-terminated), optionally through
 * `iotier run @cli_args`, optionally with the cgroup mount read-only in a new namespace.
 */
static int probe_start(struct probe *p, const char *const *env, const char *const *cli_args,
		       const char *exit_how, bool readonly)
{
	char errpath[] = "/tmp/iotier-probe-stderr.XXXXXX", line[128];
	int in[2], out[2];
	FILE *f;

	memset(p, 0, sizeof(*p));
	p->err_fd = mkstemp(errpath);
	if (p->err_fd < 0 || pipe(in) < 0 || pipe(out) < 0)
		return -1;
	unlink(errpath);
	/*
	 * The new mount namespace from clone(), not unshare(): that fails in a process with
	 * two threads, which a forked child of a ThreadSanitizer build has.
	 */
	p->pid = readonly ? (pid_t)syscall(SYS_clone, CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0) : fork();
	if (p->pid < 0)
		return -1;
	if (p->pid == 0) {
		const char *argv[16];
		int n = 0;

		if (readonly && (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
				 mount(sb.mount, sb.mount, NULL, MS_BIND, NULL) < 0 ||
				 mount(NULL, sb.mount, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) < 0))
			_exit(3);
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(p->err_fd, 2);
		close(in[1]);
		close(out[0]);
		for (; env && *env; env++)
			putenv((char *)*env);
		if (cli_args) {
			argv[n++] = cli_path;
			argv[n++] = "run";
			for (; *cli_args; cli_args++)
				argv[n++] = *cli_args;
			argv[n++] = "--";
		} else {
			setenv("LD_PRELOAD", shim_path, 1);
		}
		argv[n++] = probe_path;
		argv[n++] = exit_how;
		argv[n] = NULL;
		execv(argv[0], (char **)argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	p->in_w = in[1];
	f = fdopen(out[0], "r");
	if (!f || !fgets(line, sizeof(line), f) ||
	    sscanf(line, "ready %*d %d %d", &p->bg, &p->fg) != 2) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	snprintf(p->low, sizeof(p->low), "%s/iotier-low.%d", sb.rel, (int)p->pid);
	snprintf(p->low_dir, sizeof(p->low_dir), "%s/iotier-low.%d", sb.dir, (int)p->pid);
	return 0;
}

static int probe_finish(struct probe *p)
{
	int status;

	close(p->in_w);
	if (waitpid(p->pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The probe ended well and its low cgroup went with it. */
static bool probe_ends_clean(struct probe *p, const char *how)
{
	return EXPECT(probe_finish(p) == 0, "probe failed") &&
	       EXPECT(!dir_exists(p->low_dir), "%s left after %s", p->low_dir, how);
}

static int prio_of(pid_t tid)
{
	return (int)syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, tid);
}

static int stderr_lines(const struct probe *p, char *text, size_t len)
{
	int lines = 0;
	ssize_t n = pread(p->err_fd, text, len - 1, 0);

	text[n > 0 ? n : 0] = '\0';
	for (char *c = text; *c; c++)
		lines += *c == '\n';
	return lines;
}

/*
 * A weight was asked for: one "no weight file" warning on the program's stderr in a kernel
 * without bfq, none with it.
 */
static bool asked_weight_warning(const struct probe *p)
{
	char text[1024];
	int lines = stderr_lines(p, text, sizeof(text));

	if (weights)
		return EXPECT(lines == 0, "stderr with bfq: '%s'", text);
	return EXPECT(lines == 1 && !strncmp(text, "iotier: no weight file", 22),
		      "want one 'no weight file' warning, got '%s'", text);
}

#define IDLE IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)

static int case_shim_low_process(void)
{
	static const char *const env[] = { "IOTIER_LOW=comm:cgroup-probe", "IOTIER_LOW_WEIGHT=37",
					   NULL };
	struct probe p;

	/* Each check needs the one before: the first failure ends the case. */
	bool ok = EXPECT(probe_start(&p, env, NULL, "exit", false) == 0, "probe did not start") &&
		  in_cgroup(p.pid, p.pid, p.low, "main") &&
		  in_cgroup(p.pid, p.bg, p.low, "bg") &&
		  in_cgroup(p.pid, p.fg, p.low, "fg") &&
		  has_weight(p.low_dir, WEIGHT) &&
		  EXPECT(prio_of(p.bg) == IDLE && prio_of(p.fg) == IDLE, "ioprio %x %x",
			 prio_of(p.bg), prio_of(p.fg)) &&
		  probe_ends_clean(&p, "exit()") &&
		  asked_weight_warning(&p);

	return ok ? 0 : 1;
}

static int case_shim_mixed(void)
{
	static const char *const env[] = { "IOTIER_LOW=bg-*", "IOTIER_LOW_WEIGHT=37", NULL };
	struct probe p;

	bool ok = EXPECT(probe_start(&p, env, NULL, "exit", false) == 0, "probe did not start") &&
		  in_cgroup(p.pid, p.bg, p.low, "bg") &&
		  in_cgroup(p.pid, p.fg, sb.rel, "fg") &&
		  in_cgroup(p.pid, p.pid, sb.rel, "main") &&
		  EXPECT(prio_of(p.bg) == IDLE && prio_of(p.fg) != IDLE, "ioprio bg %x fg %x",
			 prio_of(p.bg), prio_of(p.fg)) &&
		  probe_ends_clean(&p, "exit()") &&
		  asked_weight_warning(&p);

	return ok ? 0 : 1;
}

static int case_cli_weight(void)
{
	static const char *const args[] = { "--cgroup-weight", "37", "--cgroup", "v1", NULL };
	struct probe p;

	bool ok = EXPECT(probe_start(&p, NULL, args, "_exit", false) == 0,
			 "iotier run did not start") &&
		  in_cgroup(p.pid, p.pid, p.low, "main") &&
		  in_cgroup(p.pid, p.fg, p.low, "fg") &&
		  has_weight(p.low_dir, WEIGHT) &&
		  probe_ends_clean(&p, "_exit()") &&
		  asked_weight_warning(&p);

	return ok ? 0 : 1;
}

/* `iotier threads PID` shows cgroup @cg and mentions @what (or, @present false, does not). */
static bool threads_say(pid_t pid, const char *cg, const char *what, bool present)
{
	char num[16], out[8192];
	const char *argv[] = { cli_path, "threads", num, NULL };
	int ret;

	snprintf(num, sizeof(num), "%d", (int)pid);
	ret = run_capture(argv, out, sizeof(out), NULL);
	return EXPECT(ret == 0 && strstr(out, cg), "iotier threads (exit %d) does not show %s:\n%s",
		      ret, cg, out) &&
	       EXPECT(!strstr(out, what) == !present, "iotier threads %s '%s':\n%s",
		      present ? "does not say" : "says", what, out);
}

/* The state file @dir/PID.state has the line @want. */
static bool state_says(const char *dir, pid_t pid, const char *want)
{
	char path[PATH_MAX + 32], text[2048] = "";
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%d.state", dir, (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;
	if (fd >= 0)
		close(fd);
	text[n > 0 ? n : 0] = '\0';
	return EXPECT(strstr(text, want), "%s has no line '%s':\n%s", path, want, text);
}

/*
 * No weight asked for: the default's weight, and in a kernel without bfq not a word on the
 * program's stderr; the state file and `iotier threads` say what the low cgroup has.
 */
static int case_shim_default_weight(void)
{
	char dir[] = "/tmp/iotier-cgroup-state.XXXXXX", env_dir[64], line[64];
	const char *env[] = { "IOTIER_LOW=comm:cgroup-probe", "IOTIER_LOG=warn", env_dir, NULL };
	char text[1024];
	struct probe p;
	bool ok;

	if (!EXPECT(mkdtemp(dir), "mkdtemp: %s", strerror(errno)))
		return 1;
	snprintf(env_dir, sizeof(env_dir), "IOTIER_STATE_DIR=%s", dir);
	if (weights)
		snprintf(line, sizeof(line), "\nlow_cgroup_weight %d\n", LOW_WEIGHT_DEFAULT);
	else
		snprintf(line, sizeof(line), "\nlow_cgroup_weight none\n");
	ok = EXPECT(probe_start(&p, env, NULL, "exit", false) == 0, "probe did not start") &&
	     in_cgroup(p.pid, p.pid, p.low, "main") &&
	     has_weight(p.low_dir, LOW_WEIGHT_DEFAULT) &&
	     state_says(dir, p.pid, line) &&
	     threads_say(p.pid, p.low, "has no weight file", !weights) &&
	     probe_ends_clean(&p, "exit()") &&
	     EXPECT(stderr_lines(&p, text, sizeof(text)) == 0, "stderr: '%s'", text);
	rmdir(dir);
	return ok ? 0 : 1;
}

static int case_shim_readonly(void)
{
	static const char *const env[] = { "IOTIER_LOW=bg-*", "IOTIER_LOG=warn", NULL };
	char text[1024];
	struct probe p;

	if (!EXPECT(probe_start(&p, env, NULL, "exit", true) == 0, "probe did not start"))
		return 1;
	if (!in_cgroup(p.pid, p.bg, sb.rel, "bg"))
		return 1;
	if (!EXPECT(prio_of(p.bg) == IDLE && prio_of(p.fg) != IDLE, "ioprio bg %x fg %x",
		    prio_of(p.bg), prio_of(p.fg)))
		return 1;
	if (!EXPECT(probe_finish(&p) == 0, "probe failed"))
		return 1;
	if (!EXPECT(stderr_lines(&p, text, sizeof(text)) == 1 && !strncmp(text, "iotier: ", 8),
		    "want one warning line, got '%s'", text))
		return 1;
	fprintf(stderr, "shim, read-only mount: %s", text);
	return 0;
}

static const struct {
	const char *name;
	int (*run)(void);
} cases[] = {
	{ "shim_low_process", case_shim_low_process },
	{ "shim_mixed", case_shim_mixed },
	{ "cli_weight", case_cli_weight },
	{ "shim_default_weight", case_shim_default_weight },
	{ "shim_readonly", case_shim_readonly },
	{ "low_process", case_low_process },
	{ "mixed_process", case_mixed_process },
	{ "stale", case_stale },
	{ "readonly_mount", case_readonly_mount },
	{ "not_root", case_not_root },
	{ "disabled", case_disabled },
};

static void sandbox_cleanup(void *sandbox)
{
	sandbox_destroy(sandbox);
}

int main(int argc, char **argv)
{
	char probe[PATH_MAX + 32];
	int failed = 0, ret;

	/*
	 * Half the cases run the shim, the CLI and the probe; without them the test would
	 * prove only the other half, so missing arguments are a broken harness, not a skip.
	 */
	if (argc != 4) {
		fprintf(stderr, "usage: test-cgroup-v1 SHIM IOTIER PROBE\n");
		return T_EXIT_FAIL;
	}
	shim_path = argv[1];
	cli_path = argv[2];
	probe_path = argv[3];
	if (geteuid() != 0)
		return test_skip("needs root to create cgroups");
	ret = sandbox_create(&sb, 1);
	if (ret < 0)
		return test_skip("no writable cgroup v1 blkio hierarchy");
	test_cleanup_add(sandbox_cleanup, &sb); /* on every exit, signals included */
	snprintf(probe, sizeof(probe), "%s/blkio.bfq.weight", sb.dir);
	weights = access(probe, F_OK) == 0;
	if (!weights)
		test_kernel_lacks("bfq", "blkio v1 has no weight file without it");
	if (pipe(park_fd) < 0)
		return 1;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int status;
		pid_t pid;

		pid = fork();
		if (pid == 0) {
			close(park_fd[1]); /* parked threads end when the child exits */
			if (sandbox_enter(&sb, getpid()) < 0)
				_exit(2);
			_exit(cases[i].run());
		}
		waitpid(pid, &status, 0);
		ret = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		printf("%s %s\n", ret ? "FAIL" : "ok  ", cases[i].name);
		failed += ret != 0;
	}
	snprintf(probe, sizeof(probe), "%s", sb.dir);
	sandbox_destroy(&sb);
	if (dir_exists(probe)) {
		fprintf(stderr, "sandbox %s left behind\n", probe);
		failed++;
	}
	printf("%d failed\n", failed);
	return failed ? T_EXIT_FAIL : T_EXIT_PASS;
}
