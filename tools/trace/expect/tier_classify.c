// SPDX-License-Identifier: MIT
/*
 * tier_classify.c: a traced thread's tier by the shim's rules (see tier_classify.h).
 */
#include "tier_classify.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "core/core.h"

enum expect_tier tier_classify(const struct config *cfg, const char *thread, const char *process,
			       const char *cmdline)
{
	enum iotier_tier thread_tier = tier_from_thread_rules(&cfg->rules, thread);
	enum iotier_tier process_tier = tier_from_process_rules(&cfg->rules, process, cmdline);

	switch (tier_resolve(IOTIER_DEFAULT, thread_tier, process_tier)) {
	case IOTIER_LOW:
		return TIER_LOW;
	case IOTIER_HIGH:
		return TIER_HIGH;
	default:
		return TIER_DEFAULT;
	}
}

const char *tier_proc_cmdline(unsigned pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n = 0;
	int fd;

	if (!len)
		return buf;
	snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, len - 1);
		close(fd);
	}
	if (n < 0)
		n = 0;
	/* Arguments are NUL separated; the rules see them joined by spaces, as the shim does. */
	for (ssize_t i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	while (n && buf[n - 1] == ' ')
		n--;
	buf[n] = '\0';
	return buf;
}
