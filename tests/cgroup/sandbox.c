// SPDX-License-Identifier: MIT
/*
 * sandbox.c: create and tear down the throwaway cgroup the cgroup tests run in (see
 * sandbox.h). Tear-down is written to work after any failure: it walks the tree, moves every
 * task it finds back to where the test started, and removes directories bottom-up.
 */
#include "small_file.h"
#include "sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool dir_exists(const char *path)
{
	struct stat s;

	return stat(path, &s) == 0 && S_ISDIR(s.st_mode);
}

int task_cgroup_path(const struct sandbox *sb, pid_t pid, pid_t tid, char *out, size_t len)
{
	char path[64], line[PATH_MAX + 64];
	FILE *f;
	int ret = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/cgroup", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		bool match;

		if (!c2)
			continue;
		*c2 = '\0';
		if (sb->version == 1) {
			match = false;
			for (char *t = strtok(c1 + 1, ","); t; t = strtok(NULL, ","))
				match |= !strcmp(t, "blkio");
		} else {
			match = line[0] == '0' && c1[1] == '\0';
		}
		if (match) {
			c2[strcspn(c2 + 1, "\n") + 1] = '\0';
			snprintf(out, len, "%s", c2 + 1);
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

static int find_mount(struct sandbox *sb, int version)
{
	char line[4096];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char root[PATH_MAX], point[PATH_MAX], *dash = strstr(line, " - "), fstype[32];
		char super[512];

		if (!dash || sscanf(line, "%*s %*s %*s %s %s", root, point) != 2 ||
		    sscanf(dash + 3, "%31s %*s %511s", fstype, super) != 2)
			continue;
		if (version == 1 ? !strcmp(fstype, "cgroup") && strstr(super, "blkio")
				 : !strcmp(fstype, "cgroup2")) {
			snprintf(sb->mount, sizeof(sb->mount), "%s", point);
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

int sandbox_create(struct sandbox *sb, int version)
{
	char cg[PATH_MAX];
	int ret;

	memset(sb, 0, sizeof(*sb));
	sb->version = version;
	ret = find_mount(sb, version);
	if (ret < 0)
		return ret;
	ret = task_cgroup_path(sb, getpid(), getpid(), cg, sizeof(cg));
	if (ret < 0)
		return ret;
	if (snprintf(sb->home, sizeof(sb->home), "%s%s", sb->mount,
		     strcmp(cg, "/") ? cg : "") >= (int)sizeof(sb->home) ||
	    snprintf(sb->rel, sizeof(sb->rel), "%s/iotier-test.%d", strcmp(cg, "/") ? cg : "",
		     (int)getpid()) >= (int)sizeof(sb->rel) ||
	    snprintf(sb->dir, sizeof(sb->dir), "%s/iotier-test.%d", sb->home,
		     (int)getpid()) >= (int)sizeof(sb->dir))
		return -ENAMETOOLONG;
	if (mkdir(sb->dir, 0755) < 0 && errno != EEXIST) {
		ret = -errno;
		sb->dir[0] = '\0';
		return ret;
	}
	return 0;
}

int sandbox_enter(const struct sandbox *sb, pid_t pid)
{
	char path[PATH_MAX + 16], num[16];

	snprintf(path, sizeof(path), "%s/cgroup.procs", sb->dir);
	snprintf(num, sizeof(num), "%d", (int)pid);
	return write_file(path, num);
}

/* Move every task listed in @dir back home, then remove @dir after its children. */
static void evacuate(const struct sandbox *sb, const char *dir, int depth)
{
	char path[PATH_MAX + 300], home[PATH_MAX + 16], line[32];
	struct dirent *d;
	DIR *dh;
	FILE *f;

	if (depth > 8)
		return;
	dh = opendir(dir);
	if (dh) {
		while ((d = readdir(dh))) {
			if (d->d_type != DT_DIR || d->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
			evacuate(sb, path, depth + 1);
		}
		closedir(dh);
	}
	snprintf(home, sizeof(home), "%s/%s", sb->home,
		 sb->version == 1 ? "tasks" : "cgroup.procs");
	snprintf(path, sizeof(path), "%s/%s", dir, sb->version == 1 ? "tasks" : "cgroup.procs");
	for (int pass = 0; pass < 3; pass++) {
		f = fopen(path, "re");
		if (!f)
			break;
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = '\0';
			write_file(home, line);
		}
		fclose(f);
		if (rmdir(dir) == 0 || errno == ENOENT)
			return;
		usleep(20000);
	}
	if (rmdir(dir) < 0 && errno != ENOENT)
		fprintf(stderr, "sandbox: cannot remove %s: %s\n", dir, strerror(errno));
}

void sandbox_destroy(struct sandbox *sb)
{
	if (!sb->dir[0])
		return;
	evacuate(sb, sb->dir, 0);
	sb->dir[0] = '\0';
}
