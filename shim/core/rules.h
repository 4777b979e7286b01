/* SPDX-License-Identifier: MIT */
/*
 * rules.h: the tiering policy as data. Parses IOTIER_LOW/IOTIER_HIGH rule lists and the
 * class settings, and decides a tier from a thread name, process name and command line. It
 * is shared by the preloaded shim and the CLI so that `iotier run` rejects exactly what the
 * shim would reject. Nothing here allocates: the shim may parse before malloc is safe to use.
 */
#ifndef IOTIER_RULES_H
#define IOTIER_RULES_H

#include <stdbool.h>
#include <stddef.h>

#include "iotier.h"

#define RULES_MAX 128          /* rules per list; the bench measures 1 to 100 */
#define RULE_GLOB_MAX 256      /* bytes of one glob, NUL included */
#define THREAD_NAME_MAX 16     /* TASK_COMM_LEN: 15 characters and the NUL */
#define RULE_ERROR_MAX 256     /* room for one error line */

enum rule_kind {
	RULE_THREAD = 0, /* the calling thread's name (/proc/self/task/TID/comm) */
	RULE_COMM,       /* the process name: the main thread's comm */
	RULE_CMDLINE,    /* the whole command line, arguments joined by spaces */
};

struct rule {
	enum rule_kind kind;
	char glob[RULE_GLOB_MAX];
};

struct rule_set {
	unsigned count;
	unsigned kind_mask; /* bit (1 << kind) for each kind present, to skip work */
	struct rule rules[RULES_MAX];
};

/* An I/O priority as ioprio_set(2) takes it, or IOPRIO_KEEP for "leave it as it was". */
#define IOPRIO_KEEP (-1)

/*
 * Step through a comma-separated list. list_start() gives the cursor for @text, NULL when the
 * list is empty or only blanks (no items at all). Each list_next_item() call sets @token and
 * @len to the next item with surrounding blanks trimmed (@len 0 for an empty item, as in
 * "a,,b" or "a,") and returns false after the last one.
 */
const char *list_start(const char *text);
bool list_next_item(const char **cursor, const char **token, size_t *len);

/*
 * Parse a comma-separated rule list ("thread:rocksdb:low*,comm:pg_dump"). A rule without a
 * known kind prefix is a thread rule, so "rocksdb:low*" means thread:rocksdb:low*. On error
 * returns -1 and writes one line naming the bad token into @err.
 */
int rule_set_parse(const char *text, struct rule_set *out, char *err, size_t errlen);

/* "idle" or "be:0".."be:7"; returns the ioprio value or -1 with @err set. */
int low_class_parse(const char *text, char *err, size_t errlen);

/* "keep", "be:N" or "rt:N"; returns the ioprio value, IOPRIO_KEEP, or -2 with @err set. */
int high_class_parse(const char *text, char *err, size_t errlen);

/*
 * The I/O priority class names, indexed by IOPRIO_CLASS_* (none, rt, be, idle): the one
 * table every part of iotier names classes with, so the shim's messages, `lat`, `check`
 * and its --expect language all spell a class the same way.
 */
#define IOCLASS_COUNT 4
extern const char *const ioprio_class_names[IOCLASS_COUNT];

/* The name of class @ioclass, or NULL when it is none of the four. */
const char *ioprio_class_name(unsigned ioclass);

/* Format an ioprio value as "idle", "be:4", "rt:0" or "none". */
const char *ioprio_format(int ioprio, char *buf, size_t len);

/*
 * fnmatch(3) of @subject against @glob in the C locale, whatever locale the program set:
 * a glob matches bytes and means the same in every program. It is also what keeps matching
 * safe inside a signal handler: in a multibyte locale glibc's fnmatch converts both strings
 * to wide characters and mallocs for subjects over about 1 KiB (a long command line, a
 * path), which could deadlock on a malloc lock the interrupted code holds. The C locale
 * object is glibc's static one, so switching to it allocates nothing either.
 */
bool glob_match(const char *glob, const char *subject);

/* Does any rule of @kind in @set match @subject? */
bool rule_set_matches(const struct rule_set *set, enum rule_kind kind, const char *subject);

struct tier_rules {
	struct rule_set low;
	struct rule_set high;
};

/*
 * The tier the rules give. Precedence, most specific first: a thread rule beats a process
 * rule, and at the same level high beats low, because wrongly slowing a foreground thread
 * costs more than letting one background thread run at normal priority.
 * Returns IOTIER_DEFAULT when nothing matches.
 */
enum iotier_tier tier_from_thread_rules(const struct tier_rules *r, const char *thread_name);
enum iotier_tier tier_from_process_rules(const struct tier_rules *r, const char *comm,
					 const char *cmdline);

static inline enum iotier_tier tier_resolve(enum iotier_tier explicit_tier,
					    enum iotier_tier thread_tier,
					    enum iotier_tier process_tier)
{
	if (explicit_tier != IOTIER_DEFAULT)
		return explicit_tier;
	if (thread_tier != IOTIER_DEFAULT)
		return thread_tier;
	return process_tier;
}

#endif
