// SPDX-License-Identifier: MIT
/*
 * config.c: turn IOTIER_* settings into a struct config. The table is built from
 * settings.def, so a new setting is one row there, and a file key that is not in it is an
 * error rather than a silently ignored typo. config_load_process() is the one loader the
 * shim, the CLI's pre-check and the API helper share; secure mode is decided there.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "settings.def"
#include "sys.h"

typedef int (*key_parser)(struct config *cfg, const char *value, char *err, size_t errlen);

static int parse_low_rules(struct config *cfg, const char *value, char *err, size_t errlen)
{
	return rule_set_parse(value, &cfg->rules.low, err, errlen);
}

static int parse_high_rules(struct config *cfg, const char *value, char *err, size_t errlen)
{
	return rule_set_parse(value, &cfg->rules.high, err, errlen);
}

static int parse_low_class(struct config *cfg, const char *value, char *err, size_t errlen)
{
	cfg->low_ioprio = low_class_parse(value, err, errlen);
	cfg->low_class_given = true;
	return cfg->low_ioprio < 0 ? -1 : 0;
}

static int parse_high_class(struct config *cfg, const char *value, char *err, size_t errlen)
{
	cfg->high_ioprio = high_class_parse(value, err, errlen);
	return cfg->high_ioprio == -2 ? -1 : 0;
}

static int parse_log(struct config *cfg, const char *value, char *err, size_t errlen)
{
	if (!strcmp(value, "off"))
		cfg->log = LOG_OFF;
	else if (!strcmp(value, "warn"))
		cfg->log = LOG_WARN;
	else if (!strcmp(value, "debug"))
		cfg->log = LOG_DEBUG;
	else {
		snprintf(err, errlen, "bad log level '%s': expected off, warn or debug", value);
		return -1;
	}
	return 0;
}

static int parse_cgroup(struct config *cfg, const char *value, char *err, size_t errlen)
{
	static const char *const names[] = {
		[CGROUP_AUTO] = "auto", [CGROUP_OFF] = "off", [CGROUP_V1] = "v1", [CGROUP_V2] = "v2",
	};

	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(value, names[i])) {
			cfg->cgroup_mode = (enum cgroup_mode)i;
			return 0;
		}
	snprintf(err, errlen, "bad cgroup mode '%s': expected off, auto, v1 or v2", value);
	return -1;
}

/* A decimal in 1..10000, the range of cgroup v2 io.weight; no sign, no spaces, no suffix. */
static int parse_low_weight(struct config *cfg, const char *value, char *err, size_t errlen)
{
	unsigned long weight = 0;
	const char *p = value;

	for (; *p >= '0' && *p <= '9' && weight <= LOW_WEIGHT_MAX; p++)
		weight = weight * 10 + (unsigned long)(*p - '0');
	if (p == value || *p || weight < 1 || weight > LOW_WEIGHT_MAX) {
		snprintf(err, errlen, "bad weight '%s': expected an integer from 1 to %d", value,
			 LOW_WEIGHT_MAX);
		return -1;
	}
	cfg->low_weight = (unsigned)weight;
	cfg->low_weight_given = true;
	return 0;
}

int config_parse_size(const char *text, uint64_t *out, char *err, size_t errlen)
{
	const char *p = text;
	uint64_t value = 0, mult = 1;

	if (*p < '0' || *p > '9')
		goto bad;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (value > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			goto bad;
		value = value * 10 + (uint64_t)(*p - '0');
	}
	switch (tolower((unsigned char)*p)) {
	case '\0':
		break;
	case 'k':
		mult = 1ull << 10;
		break;
	case 'm':
		mult = 1ull << 20;
		break;
	case 'g':
		mult = 1ull << 30;
		break;
	default:
		goto bad;
	}
	if (*p) {
		p++;
		if (!strcasecmp(p, "ib"))
			p += 2;
		if (*p)
			goto bad;
	}
	if (value > UINT64_MAX / mult)
		goto bad;
	*out = value * mult;
	return 0;
bad:
	snprintf(err, errlen, "bad size '%s': expected a byte count with an optional K, M or G "
		 "suffix", text);
	return -1;
}

static int parse_writeback(struct config *cfg, const char *value, char *err, size_t errlen)
{
	uint64_t n;

	if (config_parse_size(value, &n, err, errlen) < 0)
		return -1;
	if (n && n < 4096) {
		snprintf(err, errlen, "bad size '%s': 0 (off) or at least 4096 bytes", value);
		return -1;
	}
	cfg->writeback_bytes = n;
	return 0;
}

/* 0 (off), or a budget big enough that a writer does not wait after nearly every write. */
static int parse_dirty_budget(struct config *cfg, const char *value, char *err, size_t errlen)
{
	uint64_t n;

	if (config_parse_size(value, &n, err, errlen) < 0)
		return -1;
	if (n && n < (1u << 20)) {
		snprintf(err, errlen, "bad size '%s': 0 (off) or at least 1M", value);
		return -1;
	}
	cfg->dirty_budget = n;
	return 0;
}

static int parse_writeback_strict(struct config *cfg, const char *value, char *err,
				  size_t errlen)
{
	if (strcmp(value, "0") && strcmp(value, "1")) {
		snprintf(err, errlen, "bad value '%s': expected 0 or 1", value);
		return -1;
	}
	cfg->writeback_strict = value[0] == '1';
	return 0;
}

/* A comma-separated list of globs (glob_match()) into @globs; empty means none. */
static int parse_globs(const char *value, char (*globs)[RULE_GLOB_MAX], unsigned max,
		       unsigned *n, char *err, size_t errlen)
{
	const char *cursor = list_start(value), *glob;
	size_t len;

	*n = 0;
	while (list_next_item(&cursor, &glob, &len)) {
		if (!len) {
			snprintf(err, errlen, "bad glob list '%s': empty glob at offset %zu", value,
				 (size_t)(glob - value));
			return -1;
		}
		if (len >= RULE_GLOB_MAX) {
			snprintf(err, errlen, "bad glob list: glob at offset %zu is longer than %d "
				 "bytes", (size_t)(glob - value), RULE_GLOB_MAX - 1);
			return -1;
		}
		if (*n == max) {
			snprintf(err, errlen, "bad glob list: more than %u globs", max);
			return -1;
		}
		memcpy(globs[*n], glob, len);
		globs[(*n)++][len] = '\0';
	}
	return 0;
}

static int parse_drop_behind(struct config *cfg, const char *value, char *err, size_t errlen)
{
	return parse_globs(value, cfg->drop_globs, DROP_GLOBS_MAX, &cfg->n_drop_globs, err,
			   errlen);
}

/* Thread-name globs, as IOTIER_LOW's names: RocksDB's flush threads by default. */
static int parse_urgent(struct config *cfg, const char *value, char *err, size_t errlen)
{
	return parse_globs(value, cfg->urgent_globs, URGENT_GLOBS_MAX, &cfg->n_urgent_globs, err,
			   errlen);
}

/* Bytes per second: 0 (off) or at least a page per second. */
static int parse_rate(const char *value, uint64_t *out, char *err, size_t errlen)
{
	uint64_t n;

	if (config_parse_size(value, &n, err, errlen) < 0)
		return -1;
	if (n && n < 4096) {
		snprintf(err, errlen, "bad rate '%s': 0 (off) or at least 4096 bytes per second",
			 value);
		return -1;
	}
	*out = n;
	return 0;
}

static int parse_low_rate(struct config *cfg, const char *value, char *err, size_t errlen)
{
	return parse_rate(value, &cfg->low_rate, err, errlen);
}

static int parse_target(struct config *cfg, const char *value, char *err, size_t errlen)
{
	return adaptive_target_parse(value, &cfg->target, err, errlen);
}

static int parse_low_min_rate(struct config *cfg, const char *value, char *err, size_t errlen)
{
	return parse_rate(value, &cfg->low_min_rate, err, errlen);
}

/*
 * One glob for the path a program opens its log under, or empty for none. Refused: a glob
 * that can never name a file (ending in '/') and an unclosed '[', which fnmatch would take
 * literally, so a typo would silently watch nothing.
 */
static int parse_debt_log(struct config *cfg, const char *value, char *err, size_t errlen)
{
	size_t len = strlen(value);
	const char *open = strchr(value, '[');

	if (len >= sizeof(cfg->debt_log)) {
		snprintf(err, errlen, "bad glob: longer than %zu bytes", sizeof(cfg->debt_log) - 1);
		return -1;
	}
	if (len && value[len - 1] == '/') {
		snprintf(err, errlen, "bad glob '%s': ends in '/', so it names no file", value);
		return -1;
	}
	if (open && !strchr(open + 1, ']')) {
		snprintf(err, errlen, "bad glob '%s': '[' at offset %zu is never closed", value,
			 (size_t)(open - value));
		return -1;
	}
	memcpy(cfg->debt_log, value, len + 1);
	return 0;
}

/*
 * A duration for IOTIER_GATE_WAIT: an integer with a unit (us, ms or s), 0 to 60 s; a bare
 * 0 too. No unit is guessed: "20" could mean any of them.
 */
static int parse_gate_wait(struct config *cfg, const char *value, char *err, size_t errlen)
{
	static const struct { const char *name; uint64_t ns; } units[] = {
		{ "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
	};
	uint64_t n = 0;
	const char *p = value;

	for (; *p >= '0' && *p <= '9' && n <= GATE_WAIT_MAX_NS; p++)
		n = n * 10 + (uint64_t)(*p - '0');
	if (p != value && !*p && n == 0) {
		cfg->gate_wait_ns = 0;
		return 0;
	}
	for (size_t i = 0; p != value && i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(p, units[i].name) && n <= GATE_WAIT_MAX_NS / units[i].ns) {
			cfg->gate_wait_ns = n * units[i].ns;
			return 0;
		}
	snprintf(err, errlen, "bad wait '%s': expected 0 or an integer with us, ms or s, at most "
		 "60s", value);
	return -1;
}

/* An absolute directory, or empty for none: a relative one would follow each cwd. */
static int parse_state_dir(struct config *cfg, const char *value, char *err, size_t errlen)
{
	size_t len = strlen(value);

	if (len && value[0] != '/') {
		snprintf(err, errlen, "bad directory '%s': an absolute path, or empty for none",
			 value);
		return -1;
	}
	if (len >= sizeof(cfg->state_dir)) {
		snprintf(err, errlen, "bad directory: longer than %zu bytes",
			 sizeof(cfg->state_dir) - 1);
		return -1;
	}
	memcpy(cfg->state_dir, value, len + 1);
	return 0;
}

/* No FNM_PATHNAME: '*' crosses '/', so "*.log" matches a log in any directory. */
bool config_drop_behind_matches(const struct config *cfg, const char *path)
{
	for (unsigned i = 0; i < cfg->n_drop_globs; i++)
		if (glob_match(cfg->drop_globs[i], path))
			return true;
	return false;
}

bool config_urgent_matches(const struct config *cfg, const char *name)
{
	for (unsigned i = 0; i < cfg->n_urgent_globs; i++)
		if (glob_match(cfg->urgent_globs[i], name))
			return true;
	return false;
}

/* The settings a file may hold: every settings.def row with a parser, in its order. */
static const struct {
	const char *key;
	key_parser parse;
	const char *default_value;
} config_table[] = {
#define CONFIG_ROW(id, key, short, flag, kind, parse, default_value, help) \
	{ key, parse, default_value },
	IOTIER_SETTINGS(CONFIG_ROW)
#undef CONFIG_ROW
};

#define N_KEYS (sizeof(config_table) / sizeof(config_table[0]))

const char *config_key_at(unsigned i)
{
	for (size_t row = 0; row < N_KEYS; row++)
		if (config_table[row].parse && i-- == 0)
			return config_table[row].key;
	return NULL;
}

/* Every setting at its settings.def default, parsed as if it had been given. */
void config_defaults(struct config *cfg)
{
	char err[RULE_ERROR_MAX];

	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < N_KEYS; i++)
		if (config_table[i].parse)
			config_table[i].parse(cfg, config_table[i].default_value, err, sizeof(err));
	cfg->low_class_given = false;
	cfg->low_weight_given = false;
}

/*
 * Under a target the low tier runs at be:7 unless a class was given: idle would take the
 * controller's lever away (issue 12: under a QD1 reader idle starves the low tier whatever
 * the cap), while be:7 lets it through at the lowest best-effort level and leaves the
 * holding back to the gate, which the controller sizes (docs/adaptive.md).
 */
static void target_low_class(struct config *cfg)
{
	char err[RULE_ERROR_MAX];

	if (cfg->target.set && !cfg->low_class_given)
		cfg->low_ioprio = low_class_parse(TARGET_LOW_CLASS, err, sizeof(err));
	cfg->low_class_given = false; /* only for this: a loaded config equals its defaults */
}

static int key_index(const char *key, size_t keylen)
{
	for (size_t i = 0; i < N_KEYS; i++)
		if (config_table[i].parse && strlen(config_table[i].key) == keylen &&
		    !strncmp(config_table[i].key, key, keylen))
			return (int)i;
	return -1;
}

/* Apply one setting, prefixing any error with where it came from. */
static int apply(struct config *cfg, int index, const char *value, const char *where,
		 char *err, size_t errlen)
{
	char why[RULE_ERROR_MAX];

	if (config_table[index].parse(cfg, value, why, sizeof(why)) == 0)
		return 0;
	snprintf(err, errlen, "%s%s: %s", where, config_table[index].key, why);
	return -1;
}

/*
 * Parse KEY=VALUE lines; a file value is skipped when the environment sets the same key.
 * The text is not modified: values are copied into a bounded buffer one at a time.
 */
/*
 * Where a value's comment starts: a '#' at its start or after a blank ("IOTIER_LOW=comm:db
 * # the db"); a '#' inside a glob ("comm:db#1") is kept, and "\\#" is a literal one.
 */
static size_t value_length(const char *v, size_t vlen)
{
	for (size_t i = 0; i < vlen; i++)
		if (v[i] == '#' && (i == 0 || v[i - 1] == ' ' || v[i - 1] == '\t'))
			return i;
	return vlen;
}

/*
 * Values are copied one at a time into a buffer as large as a whole file, so that a file
 * takes any value the environment takes. Static, not on the stack: a thread's first I/O may
 * load the configuration on a small stack. One file is parsed at a time: the shim parses
 * under config_load_process()'s file lock, the CLI and the tests on one thread.
 */
static int apply_file(struct config *cfg, const char *text, config_lookup_fn lookup, void *ctx,
		      char *err, size_t errlen)
{
	static char value[CONFIG_FILE_MAX];
	unsigned lineno = 0;

	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n'), *eq, *k, *v;
		size_t klen, vlen;
		char where[48];
		int index;

		if (!end)
			end = line + strlen(line);
		lineno++;
		k = line;
		while (k < end && (*k == ' ' || *k == '\t'))
			k++;
		if (k == end || *k == '#' || *k == '\r')
			goto next;
		eq = memchr(k, '=', (size_t)(end - k));
		if (!eq) {
			snprintf(err, errlen, "IOTIER_CONFIG line %u: expected KEY=VALUE, got '%.*s'",
				 lineno, (int)(end - k > 60 ? 60 : end - k), k);
			return -1;
		}
		klen = (size_t)(eq - k);
		while (klen && (k[klen - 1] == ' ' || k[klen - 1] == '\t'))
			klen--;
		index = key_index(k, klen);
		if (index < 0) {
			snprintf(err, errlen, "IOTIER_CONFIG line %u: unknown key '%.*s'", lineno,
				 (int)klen, k);
			return -1;
		}
		v = eq + 1;
		while (v < end && (*v == ' ' || *v == '\t'))
			v++;
		vlen = value_length(v, (size_t)(end - v));
		while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t' || v[vlen - 1] == '\r'))
			vlen--;
		if (vlen >= sizeof(value)) {
			snprintf(err, errlen, "IOTIER_CONFIG line %u: value too long", lineno);
			return -1;
		}
		if (lookup(config_table[index].key, ctx))
			goto next; /* the environment wins */
		memcpy(value, v, vlen);
		value[vlen] = '\0';
		snprintf(where, sizeof(where), "IOTIER_CONFIG line %u: ", lineno);
		if (apply(cfg, index, value, where, err, errlen) < 0)
			return -1;
next:
		line = *end ? end + 1 : end;
	}
	return 0;
}

int config_load(struct config *cfg, config_lookup_fn lookup, void *ctx, const char *file_text,
		char *err, size_t errlen)
{
	config_defaults(cfg);
	if (file_text && apply_file(cfg, file_text, lookup, ctx, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < N_KEYS; i++) {
		const char *value = config_table[i].parse ? lookup(config_table[i].key, ctx) : NULL;

		if (value && apply(cfg, (int)i, value, "", err, errlen) < 0)
			return -1;
	}
	target_low_class(cfg);
	return 0;
}

/* Refuse anything but a regular text file before a byte of it is read (see config.h). */
int config_file_read(const char *path, char *buf, char *err, size_t errlen)
{
	struct stat st;
	const char *nul;
	int read_errno;
	long fd, used;

	/* O_NONBLOCK: opening a FIFO for reading must not wait for a writer. */
	fd = sys_call(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		snprintf(err, errlen, "%s", strerrordesc_np(errno));
		return -1;
	}
	if (sys_call(SYS_fstat, fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "not a regular file");
		sys_close((int)fd);
		return -1;
	}
	used = sys_read_fd((int)fd, buf, CONFIG_FILE_MAX, &read_errno);
	sys_close((int)fd);
	if (used + 1 >= CONFIG_FILE_MAX) {
		snprintf(err, errlen, "larger than %d bytes", CONFIG_FILE_MAX - 1);
		return -1;
	}
	if (read_errno) {
		snprintf(err, errlen, "%s", strerrordesc_np(read_errno));
		return -1;
	}
	nul = memchr(buf, '\0', (size_t)used);
	if (nul) {
		snprintf(err, errlen, "a NUL byte at offset %zu: not a text file",
			 (size_t)(nul - buf));
		return -1;
	}
	return 0;
}

static const char *lookup_env(const char *key, void *ctx)
{
	(void)ctx;
	return getenv(key);
}

/*
 * Secure mode: a setuid, setgid or file-capability program (AT_SECURE) started by a user
 * who does not own those privileges. Its environment is the caller's, so no IOTIER_*
 * setting may reach it: with the shim in /etc/ld.so.preload, IOTIER_HIGH_CLASS=rt:0 would
 * hand out a class `ionice -c1` refuses that user, and IOTIER_LOW would make root create
 * cgroups. Only IOTIER_LOG=debug is looked at, to say so in one line.
 */
static int load_secure(struct config *cfg)
{
	const char *log = getenv("IOTIER_LOG");

	config_defaults(cfg);
	cfg->log = log && !strcmp(log, "debug") ? LOG_DEBUG : LOG_OFF;
	return CONFIG_SECURE;
}

int config_load_process(struct config *cfg, const char *file_label, char *err, size_t errlen)
{
	static char file_text[CONFIG_FILE_MAX];
	static atomic_flag file_busy = ATOMIC_FLAG_INIT;
	const char *file = getenv("IOTIER_CONFIG");
	char why[64];
	int ret = 0;

	if (getauxval(AT_SECURE))
		return load_secure(cfg);
	if (!file || !*file)
		return config_load(cfg, lookup_env, NULL, NULL, err, errlen);
	/* One buffer: the shim's init and the API helper may each load once, maybe together. */
	while (atomic_flag_test_and_set_explicit(&file_busy, memory_order_acquire))
		sys_call(SYS_sched_yield);
	ret = config_file_read(file, file_text, why, sizeof(why));
	if (ret < 0)
		snprintf(err, errlen, "%s%s: %s", file_label, file, why);
	else
		ret = config_load(cfg, lookup_env, NULL, file_text, err, errlen);
	atomic_flag_clear_explicit(&file_busy, memory_order_release);
	return ret < 0 ? -1 : 0;
}
