// SPDX-License-Identifier: MIT
/*
 * rules.c: parsing and matching of tier rules and priority classes. Matching is fnmatch(3)
 * in the C locale (glob_match()), so a glob means what it means to the shell; parsing only
 * adds the checks fnmatch cannot give (an unclosed bracket, a name glob that can never fit
 * in 15 characters).
 */
#include "rules.h"

#include <fnmatch.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ioprio.h"

static void set_error(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static const struct {
	const char *prefix;
	enum rule_kind kind;
} rule_kinds[] = {
	{ "thread:", RULE_THREAD },
	{ "comm:", RULE_COMM },
	{ "cmdline:", RULE_CMDLINE },
};

static const char *kind_name(enum rule_kind kind)
{
	return kind == RULE_THREAD ? "thread" : kind == RULE_COMM ? "comm" : "cmdline";
}

enum glob_fault { GLOB_UNCLOSED = -1, GLOB_TRAILING_ESCAPE = -2, GLOB_BAD_CLASS = -3 };

/* fnmatch(3) knows these; with any other name a bracket expression matches nothing. */
static bool known_class(const char *name, size_t len)
{
	static const char *const classes[] = { "alnum", "alpha", "blank", "cntrl", "digit",
		"graph", "lower", "print", "punct", "space", "upper", "xdigit" };

	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (strlen(classes[i]) == len && !strncmp(classes[i], name, len))
			return true;
	return false;
}

/*
 * The ']' that closes the bracket expression opening at @open, or NULL with *fault set. A
 * "[:class:]", "[=c=]" or "[.c.]" inside counts as one item, so its ']' closes nothing.
 */
static const char *bracket_end(const char *open, int *fault)
{
	const char *q = open + 1;

	if (*q == '!' || *q == '^')
		q++;
	if (*q == ']')
		q++; /* a ']' first is a member */
	while (*q && *q != ']') {
		if (q[0] == '[' && (q[1] == ':' || q[1] == '=' || q[1] == '.')) {
			const char *name = q + 2, *close = name;

			while (*close && !(close[0] == q[1] && close[1] == ']'))
				close++;
			if (!*close)
				break;
			if (q[1] == ':' && !known_class(name, (size_t)(close - name))) {
				*fault = GLOB_BAD_CLASS;
				return NULL;
			}
			q = close + 2;
			continue;
		}
		q++;
	}
	if (*q != ']') {
		*fault = GLOB_UNCLOSED;
		return NULL;
	}
	return q;
}

/*
 * Shortest subject the glob can match, or a glob_fault for what fnmatch would accept but
 * never match (or silently take literally), which is never what the user meant: an
 * unclosed '[', an unknown [:class:], a trailing '\'.
 */
static int glob_min_length(const char *glob)
{
	int len = 0, fault = 0;

	for (const char *p = glob; *p; p++) {
		if (*p == '*')
			continue;
		if (*p == '\\') {
			if (!p[1])
				return GLOB_TRAILING_ESCAPE;
			p++;
		} else if (*p == '[') {
			p = bracket_end(p, &fault);
			if (!p)
				return fault;
		}
		len++;
	}
	return len;
}

static int parse_one_rule(const char *token, size_t toklen, struct rule *out, char *err,
			  size_t errlen)
{
	const char *glob = token;
	size_t globlen = toklen;
	int min_len;

	out->kind = RULE_THREAD;
	for (size_t i = 0; i < sizeof(rule_kinds) / sizeof(rule_kinds[0]); i++) {
		size_t plen = strlen(rule_kinds[i].prefix);

		if (toklen >= plen && !strncmp(token, rule_kinds[i].prefix, plen)) {
			out->kind = rule_kinds[i].kind;
			glob = token + plen;
			globlen = toklen - plen;
			break;
		}
	}
	if (globlen == 0) {
		set_error(err, errlen, "bad rule '%.*s': empty glob after '%s:'", (int)toklen,
			  token, kind_name(out->kind));
		return -1;
	}
	if (globlen >= RULE_GLOB_MAX) {
		set_error(err, errlen, "bad rule '%.40s...': glob longer than %d bytes", token,
			  RULE_GLOB_MAX - 1);
		return -1;
	}
	memcpy(out->glob, glob, globlen);
	out->glob[globlen] = '\0';

	min_len = glob_min_length(out->glob);
	if (min_len < 0) {
		set_error(err, errlen, "bad rule '%.*s': %s", (int)toklen, token,
			  min_len == GLOB_UNCLOSED ? "unclosed '[' in glob" :
			  min_len == GLOB_BAD_CLASS ? "unknown [:class:] in glob" :
			  "glob ends in a lone '\\'");
		return -1;
	}
	if (out->kind != RULE_CMDLINE && min_len > THREAD_NAME_MAX - 1) {
		set_error(err, errlen,
			  "bad rule '%.*s': a %s name has at most %d characters, so it can never match",
			  (int)toklen, token, out->kind == RULE_THREAD ? "thread" : "process",
			  THREAD_NAME_MAX - 1);
		return -1;
	}
	return 0;
}

const char *list_start(const char *text)
{
	return text && text[strspn(text, " \t")] ? text : NULL;
}

bool list_next_item(const char **cursor, const char **token, size_t *len)
{
	const char *p = *cursor, *end;

	if (!p)
		return false;
	end = strchr(p, ',');
	if (!end)
		end = p + strlen(p);
	*token = p + strspn(p, " \t");
	if (*token > end)
		*token = end;
	*len = (size_t)(end - *token);
	while (*len && ((*token)[*len - 1] == ' ' || (*token)[*len - 1] == '\t'))
		(*len)--;
	*cursor = *end ? end + 1 : NULL; /* after "a," comes one more, empty, item */
	return true;
}

int rule_set_parse(const char *text, struct rule_set *out, char *err, size_t errlen)
{
	const char *cursor = list_start(text), *token;
	size_t len;

	memset(out, 0, sizeof(*out));
	while (list_next_item(&cursor, &token, &len)) {
		if (len == 0) {
			set_error(err, errlen, "bad rule list '%s': empty rule at offset %zu", text,
				  (size_t)(token - text));
			return -1;
		}
		if (out->count == RULES_MAX) {
			set_error(err, errlen, "bad rule list: more than %d rules", RULES_MAX);
			return -1;
		}
		if (parse_one_rule(token, len, &out->rules[out->count], err, errlen) < 0)
			return -1;
		out->kind_mask |= 1u << out->rules[out->count].kind;
		out->count++;
	}
	return 0; /* an empty list is valid: no rules of this tier */
}

/* Parse "<name>:<level>" for a class whose levels run 0..7. */
static int parse_leveled(const char *text, const char *name, int ioclass, int *out)
{
	size_t nlen = strlen(name);
	char *endp;
	long level;

	if (strncmp(text, name, nlen) || text[nlen] != ':')
		return 0;
	if (text[nlen + 1] < '0' || text[nlen + 1] > '9')
		return -1;
	level = strtol(text + nlen + 1, &endp, 10);
	if (*endp || level < 0 || level > 7)
		return -1;
	*out = ioprio_make(ioclass, level);
	return 1;
}

int low_class_parse(const char *text, char *err, size_t errlen)
{
	int value;

	if (!strcmp(text, "idle"))
		return ioprio_make(IOPRIO_CLASS_IDLE, 0);
	if (parse_leveled(text, "be", IOPRIO_CLASS_BE, &value) == 1)
		return value;
	set_error(err, errlen, "bad low class '%s': expected idle or be:0 to be:7", text);
	return -1;
}

int high_class_parse(const char *text, char *err, size_t errlen)
{
	int value;

	if (!strcmp(text, "keep"))
		return IOPRIO_KEEP;
	if (parse_leveled(text, "be", IOPRIO_CLASS_BE, &value) == 1 ||
	    parse_leveled(text, "rt", IOPRIO_CLASS_RT, &value) == 1)
		return value;
	set_error(err, errlen, "bad high class '%s': expected keep, be:0 to be:7 or rt:0 to rt:7",
		  text);
	return -2;
}

const char *const ioprio_class_names[IOCLASS_COUNT] = { "none", "rt", "be", "idle" };

const char *ioprio_class_name(unsigned ioclass)
{
	return ioclass < IOCLASS_COUNT ? ioprio_class_names[ioclass] : NULL;
}

const char *ioprio_format(int ioprio, char *buf, size_t len)
{
	const char *const *names = ioprio_class_names;
	unsigned ioclass = ioprio_class(ioprio);

	if (ioprio == IOPRIO_KEEP)
		snprintf(buf, len, "keep");
	else if (ioclass == IOPRIO_CLASS_NONE || ioclass == IOPRIO_CLASS_IDLE)
		snprintf(buf, len, "%s", names[ioclass]);
	else if (ioclass < 4)
		snprintf(buf, len, "%s:%u", names[ioclass], (unsigned)(ioprio & 7));
	else
		snprintf(buf, len, "class%u:%u", ioclass, (unsigned)(ioprio & 7));
	return buf;
}

bool glob_match(const char *glob, const char *subject)
{
	locale_t c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
	locale_t previous;
	bool matched;

	if (c_locale == (locale_t)0) /* cannot happen in glibc: "C" is built in */
		return fnmatch(glob, subject, 0) == 0;
	previous = uselocale(c_locale);
	matched = fnmatch(glob, subject, 0) == 0;
	uselocale(previous);
	return matched;
}

bool rule_set_matches(const struct rule_set *set, enum rule_kind kind, const char *subject)
{
	if (!(set->kind_mask & (1u << kind)) || !subject)
		return false;
	for (unsigned i = 0; i < set->count; i++)
		if (set->rules[i].kind == kind && glob_match(set->rules[i].glob, subject))
			return true;
	return false;
}

enum iotier_tier tier_from_thread_rules(const struct tier_rules *r, const char *thread_name)
{
	if (rule_set_matches(&r->high, RULE_THREAD, thread_name))
		return IOTIER_HIGH;
	if (rule_set_matches(&r->low, RULE_THREAD, thread_name))
		return IOTIER_LOW;
	return IOTIER_DEFAULT;
}

enum iotier_tier tier_from_process_rules(const struct tier_rules *r, const char *comm,
					 const char *cmdline)
{
	if (rule_set_matches(&r->high, RULE_COMM, comm) ||
	    rule_set_matches(&r->high, RULE_CMDLINE, cmdline))
		return IOTIER_HIGH;
	if (rule_set_matches(&r->low, RULE_COMM, comm) ||
	    rule_set_matches(&r->low, RULE_CMDLINE, cmdline))
		return IOTIER_LOW;
	return IOTIER_DEFAULT;
}
