// SPDX-License-Identifier: MIT
/*
 * expo_textfile.c: the exposition as a file for node_exporter's textfile collector. It is
 * written to a temporary name in the same directory and renamed over PATH, so a reader
 * sees the previous file or the new one, never half of one. The temporary name does not
 * end in .prom, which the collector would otherwise pick up.
 */
#include "expo_textfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "expo_collect.h"
#include "expo_render.h"
#include "expo_state.h"

static void temp_name(const char *path, char *buf, size_t len)
{
	snprintf(buf, len, "%s.tmp.%d", path, (int)getpid());
}

int expo_textfile_probe(const char *path)
{
	char tmp[4096];
	int fd;

	temp_name(path, tmp, sizeof(tmp));
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	close(fd);
	unlink(tmp);
	return 0;
}

int expo_textfile_write(struct expo *e, const char *path)
{
	char tmp[4096];
	FILE *out;
	int fd, ret = 0;

	temp_name(path, tmp, sizeof(tmp));
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || !(out = fdopen(fd, "w"))) {
		ret = -errno;
		if (fd >= 0)
			close(fd);
		goto out;
	}
	pthread_mutex_lock(&e->lock);
	expo_collect(e);
	expo_render(out, e, false);
	pthread_mutex_unlock(&e->lock);
	if (fflush(out) || ferror(out))
		ret = -(errno ? errno : EIO);
	if (fclose(out) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path) < 0)
		ret = -errno;
	if (ret)
		unlink(tmp);
out:
	pthread_mutex_lock(&e->lock);
	if (ret)
		e->textfile_errors++;
	else
		e->textfile_writes++;
	pthread_mutex_unlock(&e->lock);
	return ret;
}
