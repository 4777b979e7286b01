// SPDX-License-Identifier: MIT
/*
 * Description: `iotier stalls` and `iotier check`'s stall expectations on ext4 on a loop
 * device, with vm.dirty_bytes lowered to 4 MiB (restored on every exit) so that a writer
 * of 64 MiB is throttled for sure. Everything judged is a count or a state, never a time:
 *
 *   trace   the writer thread has exactly 8 fsync stalls (5 fdatasync + 3 waiting
 *           sync_file_range; the 7 write-only ones are not stalls), more than 0
 *           dirty_throttle stalls, tier low (--low), and the idle thread has no row at
 *           all; the low tier dirtied at least the 64 MiB written; with SCHEMA, every
 *           output line validates against docs/stalls-schema.json.
 *   prom    `iotier stalls -d DEV --format prom` while the workload runs: `promtool check
 *           metrics` accepts it, and it holds the writer's 8 fsync stalls.
 *   check   `iotier check` holds 'low.stall.fsync.count == 8' and the like, and fails
 *           (exit 1) on 'low.stall.dirty_throttle.count == 0'.
 *   usage   bad flags and bad stall paths are exit 2, one line, nothing traced.
 *   nocap   without capabilities: exit 1, one line naming CAP_BPF and CAP_PERFMON.
 *
 * usage: stalls-test IOTIER WORKLOAD trace|prom|check|usage|nocap [SCHEMA]
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "run_capture.h"
#include "scratch_fs.h"
#include "small_file.h"
#include "sysctl_guard.h"
#include "test_env.h"

#define MIB 64
#define FSYNC_STALLS 8 /* stalls-workload.c: FDATASYNCS + WAITING_RANGES */

static const char *iotier, *workload;
static struct scratch_fs fs;
static char out[1 << 18];

/* Write @value to @attr of the loop device's bdi; 0 or -errno. */
static int bdi_set(const char *attr, const char *value)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/bdi/%u:%u/%s", fs.dev.major, fs.dev.minor, attr);
	return write_file(path, value);
}

/*
 * The bdi's limits outlive the loop device: the next user of the same loop number would be
 * throttled at 4 MiB. What was there before is put back when the test ends, even on failure.
 */
static char bdi_max_ratio_fine[32], bdi_strict_limit[32];

static void bdi_restore(void *unused)
{
	(void)unused;
	if (bdi_strict_limit[0])
		bdi_set("strict_limit", bdi_strict_limit);
	if (bdi_max_ratio_fine[0])
		bdi_set("max_ratio_fine", bdi_max_ratio_fine);
}

static int bdi_save(void)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/bdi/%u:%u/max_ratio_fine", fs.dev.major,
		 fs.dev.minor);
	if (read_small(path, bdi_max_ratio_fine, sizeof(bdi_max_ratio_fine)) < 0)
		return -1;
	snprintf(path, sizeof(path), "/sys/class/bdi/%u:%u/strict_limit", fs.dev.major,
		 fs.dev.minor);
	if (read_small(path, bdi_strict_limit, sizeof(bdi_strict_limit)) < 0)
		return -1;
	return test_cleanup_add(bdi_restore, NULL);
}

static int setup(void)
{
	const struct scratch_fs_opts opts = {
		.bytes = 256u << 20, .scheduler = "mq-deadline", .type = "ext4",
		.mnt = "/tmp/iotier-stalls.XXXXXX",
	};
	int ret;

	ret = scratch_fs_create(&fs, &opts);
	if (ret)
		return ret;
	/*
	 * 64 MiB of buffered writes must be throttled. The global limits are lowered, and, in
	 * case another test puts them back meanwhile, the device's own bdi gets a strict 4 MiB
	 * limit too where the kernel has one (6.2 and later; it goes with the loop device).
	 */
	if (bdi_save() == 0 && bdi_set("max_bytes", "4194304") == 0)
		bdi_set("strict_limit", "1");
	if (sysctl_save("vm/dirty_background_ratio") < 0 || sysctl_save("vm/dirty_ratio") < 0 ||
	    sysctl_set("vm/dirty_background_bytes", "1048576") < 0 ||
	    sysctl_set("vm/dirty_bytes", "4194304") < 0)
		return test_skip("cannot lower vm.dirty_bytes");
	return 0;
}

/* Skip when the tracer cannot load here; anything else is the test's business. */
static bool bpf_unavailable(int status, const char *text)
{
	return status == 1 && strstr(text, "cannot load the BPF program");
}

static void kill_pid(void *arg)
{
	pid_t pid = (pid_t)(long)arg;

	if (pid > 0)
		kill(pid, SIGKILL);
}

/*
 * Start @argv with stdin from a new pipe (returned in *@in) and stdout to @out_fd, stderr
 * to a new pipe (returned in *@err). Killed on any exit of the test.
 */
static pid_t spawn(const char *const *argv, int *in, int out_fd, int *err)
{
	int pin[2], perr[2];
	pid_t pid;

	if (pipe2(pin, O_CLOEXEC) < 0 || pipe2(perr, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(pin[0], 0);
		if (out_fd >= 0)
			dup2(out_fd, 1);
		dup2(perr[1], 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(pin[0]);
	close(perr[1]);
	*in = pin[1];
	*err = perr[0];
	if (pid > 0)
		test_cleanup_add(kill_pid, (void *)(long)pid);
	return pid;
}

/* Read @fd until @want appears or EOF; what was read is in `out`. */
static bool read_until(int fd, const char *want)
{
	size_t len = 0;
	ssize_t n;

	out[0] = '\0';
	while (!strstr(out, want) && len < sizeof(out) - 1 &&
	       (n = read(fd, out + len, sizeof(out) - 1 - len)) > 0) {
		len += (size_t)n;
		out[len] = '\0';
	}
	return strstr(out, want) != NULL;
}

static int wait_status(pid_t pid);

/*
 * Start `iotier stalls` (@argv) with stdout to @out_fd and wait until it traces. 0 with its
 * pid in *@t, or the test's exit status (a skip when the BPF program cannot load here).
 */
static int start_tracer(const char *const *argv, int out_fd, pid_t *t)
{
	int tin, terr, ret;

	*t = spawn(argv, &tin, out_fd, &terr);
	if (*t < 0)
		return test_fail("fork: %s", strerror(errno));
	if (read_until(terr, "Tracing"))
		return 0;
	ret = wait_status(*t);
	if (bpf_unavailable(ret, out))
		return test_skip("the BPF program cannot load here");
	return test_fail("iotier stalls did not start (exit %d):\n%s", ret, out);
}

static int wait_status(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The JSON rows of thread @thread and cause @cause (NULL: any) summed: count, or -1. */
static long long row_count(json_t *doc, const char *thread, const char *cause, const char **tier)
{
	long long n = -1;
	size_t i;
	json_t *row;

	json_array_foreach(json_object_get(doc, "rows"), i, row) {
		if (strcmp(json_string_value(json_object_get(row, "thread")) ?: "", thread) ||
		    (cause && strcmp(json_string_value(json_object_get(row, "cause")) ?: "", cause)))
			continue;
		n = (n < 0 ? 0 : n) + json_integer_value(json_object_get(row, "count"));
		if (tier)
			*tier = json_string_value(json_object_get(row, "tier"));
	}
	return n;
}

static int judge_trace(json_t *doc, pid_t wpid)
{
	const char *tier = NULL;
	long long fsyncs = row_count(doc, "stall-writer", "fsync", &tier);
	long long throttles = row_count(doc, "stall-writer", "dirty_throttle", NULL);
	json_t *low = json_object_get(json_object_get(doc, "dirtied_by_tier"), "low");
	size_t i;
	json_t *row;

	EXPECT(fsyncs == FSYNC_STALLS, "writer fsync stalls: %lld, want %d", fsyncs, FSYNC_STALLS);
	EXPECT(tier && !strcmp(tier, "low"), "writer's tier: %s, want low", tier ? tier : "none");
	EXPECT(throttles > 0, "writer dirty_throttle stalls: %lld, want > 0", throttles);
	EXPECT(row_count(doc, "stall-idle", NULL, NULL) < 0, "the idle thread has stall rows");
	EXPECT(json_integer_value(low) >= (json_int_t)MIB << 20,
	       "low tier dirtied %lld bytes, want >= %d MiB", (long long)json_integer_value(low),
	       MIB);
	json_array_foreach(json_object_get(doc, "rows"), i, row)
		EXPECT(json_integer_value(json_object_get(row, "pid")) == wpid,
		       "a row of pid %lld, want only %d",
		       (long long)json_integer_value(json_object_get(row, "pid")), (int)wpid);
	return test_result();
}

static int validate_schema(const char *path, const char *schema)
{
	char cmd[PATH_MAX * 2 + 512];

	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 -c 'import json, sys, jsonschema\n"
		 "schema = json.load(open(sys.argv[1]))\n"
		 "for line in open(sys.argv[2]):\n"
		 "    jsonschema.validate(json.loads(line), schema)' '%s' '%s'", schema, path);
	if (system(cmd) != 0)
		return test_fail("JSON output does not match %s", schema);
	return T_EXIT_PASS;
}

/* `iotier stalls --pid W` while W writes; the report judged by counts. */
static int test_trace(const char *schema)
{
	char mib[16], json_path[] = "/tmp/iotier-stalls-json.XXXXXX";
	const char *wargv[] = { workload, fs.mnt, mib, NULL };
	char pidbuf[16];
	const char *targv[] = { iotier, "stalls", "--pid", pidbuf, "-d", fs.dev.path, "--format",
				"json", "--low", "stall-writer", NULL };
	int win, werr, jfd, wst, tst, ret;
	json_error_t jerr;
	json_t *doc;
	pid_t w, t;

	snprintf(mib, sizeof(mib), "%d", MIB);
	jfd = mkstemp(json_path);
	if (jfd < 0)
		return test_fail("mkstemp: %s", strerror(errno));
	unlink(json_path); /* read back through /proc/self/fd */
	w = spawn(wargv, &win, -1, &werr);
	if (w < 0)
		return test_fail("fork: %s", strerror(errno));
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)w);
	ret = start_tracer(targv, jfd, &t);
	if (ret)
		return ret;
	if (write(win, "g", 1) != 1)
		return test_fail("cannot start the workload");
	wst = wait_status(w);
	/* Without --children, iotier stalls ends with the process it traces. */
	tst = wait_status(t);
	if (wst != 0 || tst != 0)
		return test_fail("workload exit %d, iotier stalls exit %d", wst, tst);
	snprintf(json_path, sizeof(json_path), "/proc/self/fd/%d", jfd);
	doc = json_load_file(json_path, JSON_DISABLE_EOF_CHECK, &jerr);
	if (!doc)
		return test_fail("iotier stalls output is not JSON: %s", jerr.text);
	ret = judge_trace(doc, w);
	json_decref(doc);
	if (!ret && schema)
		ret = validate_schema(json_path, schema);
	return ret;
}

/* `iotier stalls -d DEV --format prom` around one run of the workload, ended by SIGINT. */
static int test_prom(void)
{
	char mib[16], prom_path[32] = "/tmp/iotier-stalls-prom.XXXXXX", want[160], cmd[128];
	const char *wargv[] = { workload, fs.mnt, mib, "now", NULL };
	const char *targv[] = { iotier, "stalls", "-d", fs.dev.path, "--format", "prom", "--low",
				"stall-writer", NULL };
	int pfd, ret;
	FILE *f;
	pid_t t;

	snprintf(mib, sizeof(mib), "%d", 8);
	pfd = mkstemp(prom_path);
	if (pfd < 0)
		return test_fail("mkstemp: %s", strerror(errno));
	unlink(prom_path); /* read back through /proc/self/fd, by promtool too */
	snprintf(prom_path, sizeof(prom_path), "/proc/self/fd/%d", pfd);
	ret = start_tracer(targv, pfd, &t);
	if (ret)
		return ret;
	ret = run_capture(wargv, NULL, 0, NULL);
	kill(t, SIGINT);
	if (ret != 0 || wait_status(t) != 0)
		return test_fail("workload exit %d, or iotier stalls failed", ret);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < '%s'", prom_path);
	if (system(cmd) != 0)
		return test_fail("promtool check metrics rejected %s", prom_path);
	f = fopen(prom_path, "re");
	ret = f ? (int)fread(out, 1, sizeof(out) - 1, f) : 0;
	out[ret > 0 ? ret : 0] = '\0';
	if (f)
		fclose(f);
	snprintf(want, sizeof(want), "thread=\"stall-writer\",tier=\"low\",class=\"none\","
		 "cause=\"fsync\"} %d\n", FSYNC_STALLS);
	if (!strstr(out, want))
		return test_fail("no line ending in '%s' in:\n%s", want, out);
	return T_EXIT_PASS;
}

static int run_check(const char *expect, int want)
{
	char mib[16];
	const char *argv[] = { iotier, "check", "--no-sync", "-d", fs.dev.path, "--low",
			       "stall-writer", "--expect", "low.stall.fsync.count == 8",
			       "--expect", "high.stall.count == 0", "--expect", expect, "--",
			       workload, fs.mnt, mib, "now", NULL };
	int ret;

	snprintf(mib, sizeof(mib), "%d", MIB);
	ret = run_capture(argv, out, sizeof(out), NULL);
	if (bpf_unavailable(ret, out))
		return test_skip("the BPF program cannot load here");
	if (ret != want)
		return test_fail("iotier check --expect '%s': exit %d, want %d:\n%s", expect, ret,
				 want, out);
	return T_EXIT_PASS;
}

static int test_check(void)
{
	int ret = run_check("low.stall.dirty_throttle.count > 0", 0);

	if (ret)
		return ret;
	EXPECT(strstr(out, "ok    low.stall.fsync.count == 8"), "no 'ok' line for fsync:\n%s", out);
	ret = run_check("low.stall.dirty_throttle.count == 0", 1);
	if (ret)
		return ret;
	EXPECT(strstr(out, "FAIL  low.stall.dirty_throttle.count == 0"), "no FAIL line:\n%s", out);
	EXPECT(strstr(out, "ok    high.stall.count == 0"), "no 'ok' line for high:\n%s", out);
	return test_result();
}

/* Each must be refused with exit 2 and one line, before anything is traced. */
static int test_usage(void)
{
	static const char *const bad[][8] = {
		{ "stalls", "--children", NULL },
		{ "stalls", "--format", "xml", NULL },
		{ "stalls", "--pid", "0", NULL },
		{ "stalls", "--pid", "x12", NULL },
		{ "stalls", "--duration", "-1", NULL },
		{ "stalls", "--interval", "0", NULL },
		{ "stalls", "-d", "/nonexistent-dev", NULL },
		{ "stalls", "--bogus", NULL },
		{ "stalls", "extra", NULL },
		{ "check", "--expect", "low.stall.bogus.count == 0", "--", "true", NULL },
		{ "check", "--expect", "low.stall.fsync.bytes > 0", "--", "true", NULL },
		{ "check", "--expect", "unattributed.stall.count == 0", "--", "true", NULL },
		{ "check", "--expect", "low.write.total < 1ms", "--", "true", NULL },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *argv[10] = { iotier };
		int ret, lines = 0;

		for (int j = 0; bad[i][j]; j++)
			argv[j + 1] = bad[i][j];
		ret = run_capture(argv, out, sizeof(out), NULL);
		for (const char *p = out; (p = strchr(p, '\n')); p++)
			lines++;
		EXPECT(ret == 2 && lines == 1, "iotier %s %s %s: exit %d, %d lines, want 2 and one:\n%s",
		       bad[i][0], bad[i][1], bad[i][2] ? bad[i][2] : "", ret, lines, out);
	}
	return test_result();
}

static int test_nocap(void)
{
	const char *argv[] = { iotier, "stalls", "--duration", "1", NULL };
	int ret;

	if (geteuid() != 0)
		return test_skip("needs root to drop to user nobody");
	ret = run_capture(argv, out, sizeof(out), run_as_nobody);
	if (ret != 1 || !strstr(out, "CAP_BPF") || !strstr(out, "CAP_PERFMON") ||
	    strncmp(out, "iotier stalls: ", 15) || strchr(out, '\n') != out + strlen(out) - 1)
		return test_fail("without capabilities: exit %d, want 1 and one line 'iotier "
				 "stalls: ...' naming CAP_BPF and CAP_PERFMON:\n%s", ret, out);
	return T_EXIT_PASS;
}

int main(int argc, char **argv)
{
	int ret;

	if (argc < 4) {
		fprintf(stderr, "usage: stalls-test IOTIER WORKLOAD trace|prom|check|usage|nocap [SCHEMA]\n");
		return T_EXIT_FAIL;
	}
	iotier = argv[1];
	workload = argv[2];
	if (!strcmp(argv[3], "usage"))
		return test_usage();
	if (!strcmp(argv[3], "nocap"))
		return test_nocap();
	ret = setup();
	if (ret)
		return ret;
	if (!strcmp(argv[3], "trace"))
		return test_trace(argc > 4 ? argv[4] : NULL);
	if (!strcmp(argv[3], "check"))
		return test_check();
	if (!strcmp(argv[3], "prom"))
		return test_prom();
	return test_fail("unknown mode '%s'", argv[3]);
}
