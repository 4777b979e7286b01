// SPDX-License-Identifier: MIT
/*
 * ioprio_text.c: a traced ioprio value as text (ioprio_text.h): the decode is shim/ioprio.h's
 * and the names shim/rules.c's, so a report can only add the "?" of an invalid class.
 */
#include "ioprio_text.h"

#include <stdio.h>

#include "core/core.h"

const char *ioprio_text(uint16_t ioprio, char *buf, size_t len)
{
	if (!ioprio_class_name(ioprio_class(ioprio))) {
		snprintf(buf, len, "?");
		return buf;
	}
	return ioprio_format(ioprio, buf, len);
}
