// SPDX-License-Identifier: MIT
/*
 * sysctl_guard.c: saved sysctls and their restore (see sysctl_guard.h).
 */
#include "sysctl_guard.h"
#include "cleanup.h"
#include "small_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#define MAX_SAVED 8

static struct saved {
	char path[128];
	char old[64];
	char now[64]; /* what the test set, or old when it only saved */
} saved[MAX_SAVED];
static int n_saved;
static int lock_fd = -1;

/*
 * Sysctls are the whole machine's: two tests that lower the same vm.dirty_* limits at once
 * would each save the other's value as "old", and the last to restore would leave it set for
 * good. So a test holds this lock from its first save to its restore, and such tests take
 * turns (they wait here, never fail for it).
 */
#define LOCK_PATH "/run/lock/iotier-test-sysctl.lock"
#define LOCK_PATH_FALLBACK "/tmp/iotier-test-sysctl.lock"

static int take_lock(void)
{
	if (lock_fd >= 0)
		return 0;
	lock_fd = open(LOCK_PATH, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock_fd < 0)
		lock_fd = open(LOCK_PATH_FALLBACK, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lock_fd < 0)
		return -1;
	while (flock(lock_fd, LOCK_EX) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

static struct saved *find(const char *path)
{
	for (int i = 0; i < n_saved; i++)
		if (!strcmp(saved[i].path, path))
			return &saved[i];
	return NULL;
}

static void restore_cleanup(void *unused)
{
	(void)unused;
	sysctl_restore();
}

static struct saved *save(const char *key)
{
	char path[128];
	struct saved *s;

	snprintf(path, sizeof(path), "/proc/sys/%s", key);
	s = find(path);
	if (s)
		return s;
	if (n_saved == MAX_SAVED) {
		errno = ENOSPC;
		return NULL;
	}
	if (take_lock() < 0)
		return NULL;
	s = &saved[n_saved];
	snprintf(s->path, sizeof(s->path), "%s", path);
	if (read_small(path, s->old, sizeof(s->old)) < 0)
		return NULL;
	memcpy(s->now, s->old, sizeof(s->now));
	if (!n_saved)
		test_cleanup_add(restore_cleanup, NULL);
	n_saved++;
	return s;
}

int sysctl_save(const char *key)
{
	return save(key) ? 0 : -errno;
}

/* The other of a vm.dirty_*_bytes / _ratio pair, when it was saved too. */
static const struct saved *twin(const struct saved *s)
{
	const char *end = strrchr(s->path, '_');
	char other[128];

	if (!end || (strcmp(end, "_bytes") && strcmp(end, "_ratio")))
		return NULL;
	snprintf(other, sizeof(other), "%.*s%s", (int)(end - s->path), s->path,
		 strcmp(end, "_bytes") ? "_bytes" : "_ratio");
	return find(other);
}

int sysctl_set(const char *key, const char *value)
{
	struct saved *s = save(key);
	const struct saved *t;
	int ret;

	if (!s)
		return -errno;
	ret = write_file(s->path, value);
	if (ret < 0)
		return ret;
	snprintf(s->now, sizeof(s->now), "%s", value);
	t = twin(s);
	if (t && !strcmp(s->old, "0") && strcmp(t->old, "0"))
		test_guardian_sysctl(s->path, s->now, t->path, t->old);
	else
		test_guardian_sysctl(s->path, s->now, s->path, s->old);
	return 0;
}

void sysctl_restore(void)
{
	for (int i = n_saved - 1; i >= 0; i--) {
		const struct saved *s = &saved[i], *t = twin(s);
		char cur[64];

		/* A twin's 0 only says the other one was in force: writing it back would undo that. */
		if (t && !strcmp(s->old, "0") && strcmp(t->old, "0"))
			continue;
		/* Ours, or a twin zeroed when the test set the other one. */
		if (read_small(s->path, cur, sizeof(cur)) == 0 && strcmp(cur, s->old) &&
		    (!strcmp(cur, s->now) || (t && !strcmp(cur, "0"))))
			write_file(s->path, s->old);
	}
	n_saved = 0;
	if (lock_fd >= 0) {
		close(lock_fd); /* the next test may save what is now the machine's own value */
		lock_fd = -1;
	}
}
