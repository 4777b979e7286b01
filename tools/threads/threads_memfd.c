// SPDX-License-Identifier: MIT
/*
 * threads_memfd.c: find a memfd the shim mapped in another process, by its name in
 * /proc/PID/maps (see threads_memfd.h): the state table and the adaptive region both.
 */
#include "threads_memfd.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int threads_find_memfd(pid_t pid, const char *name, uint64_t *addr, uint64_t *len)
{
	char path[64], line[512], want[96];
	uint64_t start, end;
	int ret = -ENOENT;
	FILE *maps;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	snprintf(want, sizeof(want), "/memfd:%s", name);
	maps = fopen(path, "r");
	if (!maps)
		return -errno;
	while (fgets(line, sizeof(line), maps)) {
		const char *at = strstr(line, want);
		size_t n = strlen(want);

		/* The name exactly: followed by the end, or " (deleted)". */
		if (!at || (at[n] != '\n' && at[n] != ' ' && at[n] != '\0') ||
		    sscanf(line, "%" SCNx64 "-%" SCNx64, &start, &end) != 2)
			continue;
		*addr = start;
		*len = end - start;
		ret = 0;
		break;
	}
	if (ret && ferror(maps))
		ret = -EIO;
	fclose(maps);
	return ret;
}
