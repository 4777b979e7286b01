// SPDX-License-Identifier: MIT
/*
 * adaptive_target.c: parse and print IOTIER_TARGET. The grammar is small on purpose:
 * METRIC.PERCENTILE<=BOUND, where only the high tier's reads are timed (so METRIC is "read"),
 * PERCENTILE is one of the few a window of a few hundred reads can estimate, and BOUND is a
 * factor ("2x") or a duration ("1.5ms", "500us"). Every error names the token it stopped at.
 */
#include "adaptive_target.h"

#include <stdio.h>
#include <string.h>

static const struct {
	const char *name;
	uint16_t permille;
} percentiles[] = {
	{ "p50", 500 }, { "p90", 900 }, { "p95", 950 }, { "p99", 990 }, { "p99.9", 999 },
};

static const struct {
	const char *name;
	uint64_t ns;
} units[] = {
	{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
};

#define FRACTION_DIGITS_MAX 6

static const char *skip_spaces(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* The token at @p for an error message: up to the next space, '<' or end. */
static int token_len(const char *p)
{
	int n = 0;

	while (p[n] && p[n] != ' ' && p[n] != '\t' && p[n] != '<' && n < 40)
		n++;
	return n;
}

/*
 * A decimal with at most FRACTION_DIGITS_MAX fraction digits, as value * 10^6. Returns the
 * first character after it, or NULL when there is no number there.
 */
static const char *parse_decimal(const char *p, uint64_t *micro)
{
	uint64_t whole = 0, frac = 0, scale = 1000000;
	const char *start = p;

	for (; *p >= '0' && *p <= '9'; p++) {
		if (whole > 1000000000ull)
			return NULL;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (p == start)
		return NULL;
	if (*p == '.') {
		const char *digits = ++p;

		for (; *p >= '0' && *p <= '9'; p++) {
			if (p - digits >= FRACTION_DIGITS_MAX)
				return NULL;
			scale /= 10;
			frac += (uint64_t)(*p - '0') * scale;
		}
		if (p == digits)
			return NULL;
	}
	*micro = whole * 1000000 + frac;
	return p;
}

static int parse_percentile(const char *p, const char **end, struct adaptive_target *out)
{
	for (size_t i = 0; i < sizeof(percentiles) / sizeof(percentiles[0]); i++) {
		size_t n = strlen(percentiles[i].name);

		/* "p99.9" must not be read as "p99" followed by junk. */
		if (!strncmp(p, percentiles[i].name, n) && !(p[n] >= '0' && p[n] <= '9') &&
		    !(p[n] == '.' && p[n + 1] >= '0' && p[n + 1] <= '9')) {
			out->permille = percentiles[i].permille;
			*end = p + n;
			return 0;
		}
	}
	return -1;
}

/* BOUND: "<decimal>x" or "<decimal><unit>", then only spaces. */
static int parse_bound(const char *p, struct adaptive_target *out, const char *text, char *err,
		       size_t errlen)
{
	const char *tok = p, *unit;
	uint64_t micro;

	unit = parse_decimal(p, &micro);
	if (!unit) {
		snprintf(err, errlen, "bad target '%s': bad bound '%.*s': expected a factor like "
			 "2x or a latency like 1.5ms", text, token_len(tok), tok);
		return -1;
	}
	if (*skip_spaces(unit + (*unit == 'x' ? 1 : 0)) == '\0' && *unit == 'x') {
		if (micro < TARGET_FACTOR_MIN_MILLI * 1000ull ||
		    micro > TARGET_FACTOR_MAX_MILLI * 1000ull) {
			snprintf(err, errlen, "bad target '%s': factor '%.*s' is outside 1.1x to "
				 "100x", text, token_len(tok), tok);
			return -1;
		}
		out->relative = true;
		out->factor_milli = (uint32_t)(micro / 1000);
		return 0;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t n = strlen(units[i].name);

		if (strncmp(unit, units[i].name, n) || *skip_spaces(unit + n))
			continue;
		if (micro > UINT64_MAX / units[i].ns ||
		    micro * units[i].ns / 1000000 < TARGET_ABS_MIN_NS ||
		    micro * units[i].ns / 1000000 > TARGET_ABS_MAX_NS) {
			snprintf(err, errlen, "bad target '%s': latency '%.*s' is outside 10us to "
				 "10s", text, token_len(tok), tok);
			return -1;
		}
		out->latency_ns = micro * units[i].ns / 1000000;
		return 0;
	}
	snprintf(err, errlen, "bad target '%s': bad unit in '%.*s': expected x, ns, us, ms or s",
		 text, token_len(tok), tok);
	return -1;
}

int adaptive_target_parse(const char *text, struct adaptive_target *out, char *err,
			  size_t errlen)
{
	const char *p = skip_spaces(text), *tok;

	memset(out, 0, sizeof(*out));
	if (!*p)
		return 0;
	if (strncmp(p, "read.", 5)) {
		snprintf(err, errlen, "bad target '%s': unknown metric '%.*s': only read.PERCENTILE "
			 "(the high tier's reads) is timed", text, token_len(p), p);
		return -1;
	}
	tok = p += 5;
	if (parse_percentile(p, &p, out) < 0) {
		snprintf(err, errlen, "bad target '%s': unknown percentile '%.*s': expected p50, "
			 "p90, p95, p99 or p99.9", text, token_len(tok), tok);
		return -1;
	}
	p = skip_spaces(p);
	if (strncmp(p, "<=", 2)) {
		snprintf(err, errlen, "bad target '%s': expected '<=' at '%.*s'", text,
			 (int)strcspn(p, " \t"), p);
		return -1;
	}
	if (parse_bound(skip_spaces(p + 2), out, text, err, errlen) < 0)
		return -1;
	out->set = true;
	return 0;
}

void adaptive_target_format(const struct adaptive_target *t, char *buf, size_t len)
{
	const char *pct = "p?";

	for (size_t i = 0; i < sizeof(percentiles) / sizeof(percentiles[0]); i++)
		if (percentiles[i].permille == t->permille)
			pct = percentiles[i].name;
	if (!t->set)
		snprintf(buf, len, "none");
	else if (t->relative) {
		char frac[8] = "";
		unsigned milli = t->factor_milli % 1000;

		if (milli) { /* 2.5x, not 2.500x */
			snprintf(frac, sizeof(frac), ".%03u", milli);
			for (size_t n = strlen(frac); frac[n - 1] == '0'; n--)
				frac[n - 1] = '\0';
		}
		snprintf(buf, len, "read.%s<=%u%sx", pct, t->factor_milli / 1000, frac);
	}
	else
		snprintf(buf, len, "read.%s<=%lluus", pct, (unsigned long long)(t->latency_ns / 1000));
}
