// SPDX-License-Identifier: MIT
/*
 * stalls_snapshot.c: the BPF-free part of a stall snapshot (stalls_snapshot.h), apart from
 * the session so that the report and the unit tests link no libbpf.
 */
#include "stalls_snapshot.h"

#include <stdlib.h>
#include <string.h>

void stalls_snapshot_free(struct stalls_snapshot *snap)
{
	free(snap->rows);
	free(snap->dirtiers);
	memset(snap, 0, sizeof(*snap));
}
