// SPDX-License-Identifier: MIT
/*
 * expo_shim.c: read the state files the shims leave (format in shim/include/state_file_format.h) and sum
 * them into a handful of series: processes, processes by tier, threads by tier and class.
 * No pid, command or cgroup becomes a label, so the shim metrics are at most 12 series
 * however many processes run. A file counts only while its process lives: its pid exists,
 * started when the file says (not a reused pid) and belongs to the file's owner (or the
 * file is root's), so a user cannot pose as another's process. Files of dead processes
 * (the pid gone, or reused by a process that started at another time) and abandoned temp
 * files are removed (state_file_judge in shim/include/state_file_format.h), which keeps the directory
 * bounded after SIGKILLs and crashes.
 */
#include "expo_shim.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "expo_adaptive.h"
#include "expo_state.h"
#include "state_file_format.h"

#define EXPO_SHIM_MAX_FILES 100000   /* a scan reads at most this many files */
#define EXPO_SHIM_FILE_MAX 8192      /* a state file is under 2.5 KiB: more is not one */

const char *expo_shim_dir(const struct expo_options *x)
{
	const char *env = getenv(STATE_FILE_DIR_ENV);

	if (x->no_shim)
		return NULL;
	if (x->shim_dir)
		return x->shim_dir;
	return env && *env ? env : STATE_FILE_DEFAULT_DIR;
}

void expo_shim_prepare_dir(const char *dir)
{
	if (mkdir(dir, STATE_FILE_DIR_MODE) == 0)
		chmod(dir, STATE_FILE_DIR_MODE);   /* mkdir's mode passed through the umask */
}

/* The process's start time and owner; -1 when it is gone. */
static int process_identity(long pid, unsigned long long *start, uid_t *uid)
{
	char path[64], buf[1024];
	struct stat st;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld", pid);
	if (stat(path, &st) < 0)
		return -1;
	*uid = st.st_uid;
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0)
		return -1;
	*start = state_file_starttime(buf, (unsigned long)n);
	return 0;
}

static int class_index(const char *name)
{
	for (__u32 c = 0; c < EXPO_SHIM_CLASSES; c++)
		if (!strcmp(name, lat_class_name(c)))
			return (int)c;
	return -1;
}

/* Add one file's counts into @t when it is well formed and from the live @pid. */
static void add_file(struct expo_shim_totals *t, FILE *f, long pid, unsigned long long start,
		     uid_t owner)
{
	struct {
		unsigned long process_tier[EXPO_SHIM_TIERS];
		unsigned long threads[EXPO_SHIM_TIERS][EXPO_SHIM_CLASSES];
	} one = { 0 };
	struct adaptive_view adaptive = { 0 };
	char line[128], tier[16], cls[16], magic[64];
	unsigned long long fstart = 0;
	unsigned long n;
	long fpid = 0;

	if (!fgets(magic, sizeof(magic), f) || strcmp(magic, STATE_FILE_MAGIC "\n"))
		goto bad;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "pid %ld", &fpid) == 1 || sscanf(line, "starttime %llu", &fstart) == 1 ||
		    expo_adaptive_line(&adaptive, line))
			continue;
		if (sscanf(line, "process_tier %15s", tier) == 1) {
			if (strcmp(tier, "untagged"))
				one.process_tier[strcmp(tier, "low") ? 1 : 0]++;
		} else if (sscanf(line, "threads %15s %15s %lu", tier, cls, &n) == 3) {
			int c = class_index(cls);

			if (c < 0 || (strcmp(tier, "low") && strcmp(tier, "high")))
				goto bad;
			one.threads[strcmp(tier, "low") ? 1 : 0][c] += n;
		}
	}
	if (fpid != pid || fstart != start)
		goto bad;
	t->processes++;
	for (int i = 0; i < EXPO_SHIM_TIERS; i++) {
		t->process_tier[i] += one.process_tier[i];
		for (int c = 0; c < EXPO_SHIM_CLASSES; c++)
			t->threads[i][c] += one.threads[i][c];
	}
	expo_adaptive_add(t, &adaptive, owner);
	return;
bad:
	t->ignored++;
}

/*
 * Remove @name, judged stale as the file @seen. A process that took the pid since may have
 * published its own file under the name in between, so the file is first moved aside under
 * a temp name of this process's, and put back when it is not the one judged (an unlink
 * could not tell them apart). Left aside by a crash, it falls to the temp-file rule.
 */
static void remove_stale(int dirfd, const char *name, const struct stat *seen)
{
	char aside[300]; /* a dirent name is at most 255 bytes */
	struct stat st;

	snprintf(aside, sizeof(aside), ".%ld.%s.tmp", (long)getpid(), name);
	if (renameat(dirfd, name, dirfd, aside) < 0)
		return;   /* gone already */
	if (fstatat(dirfd, aside, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    (st.st_dev != seen->st_dev || st.st_ino != seen->st_ino)) {
		/* A live process's new file: back, unless it has published a newer one. */
		if (renameat2(dirfd, aside, dirfd, name, RENAME_NOREPLACE) == 0)
			return;
		if (errno != EEXIST && renameat(dirfd, aside, dirfd, name) == 0)
			return;
	}
	unlinkat(dirfd, aside, 0);
}

/* A temp file (.<pid>.<tid>.tmp): left behind when its pid is gone or it is old. */
static void scan_temp(int dirfd, const char *name)
{
	unsigned long long start;
	size_t len = strlen(name);
	struct stat st;
	char *end;
	long pid = strtol(name + 1, &end, 10);
	uid_t uid;

	if (!isdigit((unsigned char)name[1]) || *end != '.' || pid <= 0 || len < 5 ||
	    strcmp(name + len - 4, ".tmp") ||
	    fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
		return;
	if (process_identity(pid, &start, &uid) < 0 ||
	    time(NULL) - st.st_mtime > STATE_FILE_TMP_MAX_AGE_S)
		unlinkat(dirfd, name, 0);
}

/* The whole file into @buf (NUL-terminated); its length, or -1 when it does not fit. */
static ssize_t read_whole(int fd, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;

	while (len < size - 1 && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	return len < size - 1 ? (ssize_t)len : -1;
}

/* One <pid>.state file, open as @fd: counted, ignored, or removed as stale. */
static void scan_file(struct expo_shim_totals *t, int dirfd, const char *name, int fd, long pid)
{
	char text[EXPO_SHIM_FILE_MAX];
	unsigned long long start;
	struct stat st;
	ssize_t len;
	uid_t uid;
	FILE *f;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (len = read_whole(fd, text, sizeof(text))) < 0) {
		t->ignored++;
		return;
	}
	if (process_identity(pid, &start, &uid) < 0 ||
	    state_file_judge(0, start, state_file_recorded_start(text, (unsigned long)len)) ==
		    STATE_FILE_STALE) {
		remove_stale(dirfd, name, &st);   /* its process died without cleaning up */
		t->ignored++;
		return;
	}
	if ((st.st_uid != uid && st.st_uid != 0) || !len ||
	    !(f = fmemopen(text, (size_t)len, "r"))) {
		t->ignored++;
		return;
	}
	add_file(t, f, pid, start, st.st_uid);
	fclose(f);
}

static void scan_entry(struct expo_shim_totals *t, int dirfd, const char *name)
{
	char *end;
	long pid = strtol(name, &end, 10);
	int fd;

	if (name[0] == '.') {
		scan_temp(dirfd, name);
		return;
	}
	if (!isdigit((unsigned char)*name) || strcmp(end, STATE_FILE_SUFFIX) || pid <= 0)
		return;
	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return;   /* removed since readdir: the process just ended */
	scan_file(t, dirfd, name, fd, pid);
	close(fd);
}

void expo_shim_scan(struct expo *e)
{
	struct expo_shim_totals t = { 0 };
	struct dirent *de;
	unsigned long files = 0;
	DIR *d = opendir(e->shim_dir);

	if (d) {
		while ((de = readdir(d)) && files++ < EXPO_SHIM_MAX_FILES)
			scan_entry(&t, dirfd(d), de->d_name);
		closedir(d);
	}
	e->shim = t;
}
