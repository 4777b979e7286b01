// SPDX-License-Identifier: MIT
/*
 * threads_json_stub.c: `iotier threads --json` in a build without jansson: the flag stays,
 * and says in one line why it cannot give the document (see threads_json.h).
 */
#include "threads_json.h"

#include "cli/cli.h"

int threads_report_json(FILE *out, const struct threads_report *r)
{
	(void)out;
	(void)r;
	error_line("threads", "--json: this iotier was built without jansson");
	return -1;
}
