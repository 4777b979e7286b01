// SPDX-License-Identifier: MIT
/*
 * expect.c: lexer, recursive-descent parser, dimension checker and evaluator for the
 * expectations of `iotier check`. Every error is found at parse time and names its column
 * and token, because an expectation that only fails to make sense after a twenty-minute
 * benchmark wastes the whole CI run. The grammar is in docs/check-expressions.md.
 */
#include "expect.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

static const char *const tier_names[TIER_COUNT] = { "low", "high", "default", "unattributed" };
static const char *const op_names[OP_COUNT] = { "read", "write", "other" };
static const char *const cause_names[CAUSE_COUNT] = { "submit", "writeback", "journal", "other" };
static const char *const stall_cause_names[STALL_CAUSE_COUNT] = { "dirty_throttle",
								   "writeback_wait", "fsync" };

const char *expect_tier_name(enum expect_tier tier)
{
	return (unsigned)tier < TIER_COUNT ? tier_names[tier] : "?";
}

const char *expect_op_name(int op)
{
	return op >= 0 && op < OP_COUNT ? op_names[op] : "all";
}

const char *expect_cause_name(int cause)
{
	return cause >= 0 && cause < CAUSE_COUNT ? cause_names[cause] : "all";
}

const char *expect_stall_cause_name(int cause)
{
	return cause >= 0 && cause < STALL_CAUSE_COUNT ? stall_cause_names[cause] : "all";
}

const char *expect_class_name(int ioclass)
{
	const char *name = ioclass >= 0 ? ioprio_class_name((unsigned)ioclass) : NULL;

	return name ? name : "?";
}

/* ---- lexer ---- */

enum tok_kind { TOK_END, TOK_NUMBER, TOK_NAME, TOK_CMP, TOK_ARITH };

struct token {
	enum tok_kind kind;
	unsigned col, len;   /* 1-based column, length in characters */
	const char *start;
	double number;       /* TOK_NUMBER, in base units */
	enum expect_dim dim; /* TOK_NUMBER */
	enum expect_cmp cmp; /* TOK_CMP */
	char arith;          /* TOK_ARITH */
};

struct parser {
	const char *text;
	const char *pos;
	struct token tok;
	struct expect *e;
	bool have_baseline;
	char *err;
	size_t errlen;
	bool failed;
};

static int fail(struct parser *p, unsigned col, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct parser *p, unsigned col, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->failed)
		return -1;
	p->failed = true;
	n = snprintf(p->err, p->errlen, "column %u: ", col);
	if (n < 0 || (size_t)n >= p->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

struct unit {
	const char *name;
	enum expect_dim dim;
	double scale;
};

static const struct unit units[] = {
	{ "ns", DIM_TIME, 1 },
	{ "us", DIM_TIME, 1e3 },
	{ "ms", DIM_TIME, 1e6 },
	{ "s", DIM_TIME, 1e9 },
	{ "B", DIM_BYTES, 1 },
	{ "KiB", DIM_BYTES, 1024.0 },
	{ "MiB", DIM_BYTES, 1024.0 * 1024 },
	{ "GiB", DIM_BYTES, 1024.0 * 1024 * 1024 },
	{ "%", DIM_RATIO, 0.01 },
};

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == ':';
}

static int lex(struct parser *p)
{
	struct token *t = &p->tok;
	const char *s = p->pos;

	while (*s == ' ' || *s == '\t')
		s++;
	memset(t, 0, sizeof(*t));
	t->start = s;
	t->col = (unsigned)(s - p->text) + 1;
	if (!*s) {
		t->kind = TOK_END;
		p->pos = s;
		return 0;
	}
	if (isdigit((unsigned char)*s) || (*s == '.' && isdigit((unsigned char)s[1]))) {
		const char *num = s, *unit;
		char buf[64];
		size_t ulen;

		while (isdigit((unsigned char)*s) || *s == '.')
			s++;
		if ((size_t)(s - num) >= sizeof(buf) || memchr(num, '.', (size_t)(s - num)) !=
		    memrchr(num, '.', (size_t)(s - num)))
			return fail(p, t->col, "'%.*s' is not a number", (int)(s - num), num);
		memcpy(buf, num, (size_t)(s - num));
		buf[s - num] = '\0';
		t->number = strtod(buf, NULL);
		unit = s;
		while (isalpha((unsigned char)*s) || *s == '%')
			s++;
		ulen = (size_t)(s - unit);
		t->kind = TOK_NUMBER;
		t->len = (unsigned)(s - num);
		t->dim = DIM_SCALAR;
		if (ulen) {
			size_t i;

			for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
				if (strlen(units[i].name) == ulen && !strncmp(units[i].name, unit, ulen))
					break;
			if (i == sizeof(units) / sizeof(units[0]))
				return fail(p, (unsigned)(unit - p->text) + 1,
					    "unknown unit '%.*s' in '%.*s' (expected ns, us, ms, s, B, "
					    "KiB, MiB, GiB or %%)", (int)ulen, unit, (int)t->len, num);
			t->dim = units[i].dim;
			t->number *= units[i].scale;
		}
		if (name_char(*s))
			return fail(p, t->col, "'%.*s' is not a number", (int)(t->len + 1), num);
		p->pos = s;
		return 0;
	}
	if (isalpha((unsigned char)*s) || *s == '_') {
		while (name_char(*s))
			s++;
		t->kind = TOK_NAME;
		t->len = (unsigned)(s - t->start);
		p->pos = s;
		return 0;
	}
	t->len = 1;
	switch (*s) {
	case '<':
	case '>':
		t->kind = TOK_CMP;
		if (s[1] == '=') {
			t->cmp = *s == '<' ? CMP_LE : CMP_GE;
			t->len = 2;
		} else {
			t->cmp = *s == '<' ? CMP_LT : CMP_GT;
		}
		break;
	case '=':
	case '!':
		if (s[1] != '=')
			return fail(p, t->col, "'%c' is not an operator (expected ==, !=, <, <=, > "
				    "or >=)", *s);
		t->kind = TOK_CMP;
		t->cmp = *s == '=' ? CMP_EQ : CMP_NE;
		t->len = 2;
		break;
	case '*':
	case '/':
	case '+':
	case '-':
		t->kind = TOK_ARITH;
		t->arith = *s;
		break;
	default:
		return fail(p, t->col, "unexpected character '%c'", *s);
	}
	p->pos = s + t->len;
	return 0;
}

/* ---- paths ---- */

struct segment {
	const char *s;
	unsigned len, col;
};

static bool seg_is(const struct segment *g, const char *word)
{
	return strlen(word) == g->len && !strncmp(g->s, word, g->len);
}

static int seg_lookup(const struct segment *g, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (seg_is(g, names[i]))
			return i;
	return -1;
}

static bool all_digits(const char *s, unsigned len)
{
	if (!len)
		return false;
	for (unsigned i = 0; i < len; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

/*
 * Split a path at dots. "p99.9" is one segment: a percentile segment swallows the all-digit
 * segment after it.
 */
static int split_path(struct parser *p, const struct token *t, struct segment *segs, int max)
{
	const char *s = t->start, *end = t->start + t->len;
	int n = 0;

	while (s <= end) {
		const char *dot = memchr(s, '.', (size_t)(end - s));
		const char *stop = dot ? dot : end;

		if (stop == s)
			return fail(p, t->col, "empty part in '%.*s'", (int)t->len, t->start);
		if (n > 0 && all_digits(s, (unsigned)(stop - s)) && segs[n - 1].len > 1 &&
		    segs[n - 1].s[0] == 'p' && all_digits(segs[n - 1].s + 1, segs[n - 1].len - 1) &&
		    !memchr(segs[n - 1].s, '.', segs[n - 1].len)) {
			segs[n - 1].len = (unsigned)(stop - segs[n - 1].s);
		} else {
			if (n == max)
				return fail(p, t->col, "'%.*s' has too many parts", (int)t->len,
					    t->start);
			segs[n].s = s;
			segs[n].len = (unsigned)(stop - s);
			segs[n].col = (unsigned)(s - p->text) + 1;
			n++;
		}
		if (!dot)
			break;
		s = dot + 1;
		if (s == end)
			return fail(p, t->col, "'%.*s' ends with a dot", (int)t->len, t->start);
	}
	return n;
}

/* "idle", "be", "rt", "none", "be:3", "rt:0": a class set, or 0 when @g is not a class. */
static uint32_t class_literal(const struct segment *g, unsigned *bad_level)
{
	int cls;

	*bad_level = 0;
	for (cls = 0; cls < 4; cls++) {
		size_t n = strlen(ioprio_class_names[cls]);

		if (g->len < n || strncmp(g->s, ioprio_class_names[cls], n))
			continue;
		if (g->len == n)
			return EXPECT_CLASS_ALL_LEVELS(cls);
		if (g->s[n] != ':' || (cls != 1 && cls != 2))
			continue;
		if (g->len == n + 2 && g->s[n + 1] >= '0' && g->s[n + 1] <= '7')
			return EXPECT_CLASS_BIT(cls, g->s[n + 1] - '0');
		*bad_level = 1;
		return 0;
	}
	return 0;
}

static int parse_metric(struct parser *p, const struct segment *g, struct expect_ref *ref,
			enum expect_dim *dim)
{
	if (seg_is(g, "bytes")) {
		ref->metric = METRIC_BYTES;
		*dim = DIM_BYTES;
	} else if (seg_is(g, "count")) {
		ref->metric = METRIC_COUNT;
		*dim = DIM_COUNT;
	} else if (seg_is(g, "max")) {
		ref->metric = METRIC_MAX;
		*dim = DIM_TIME;
	} else if (seg_is(g, "total")) {
		ref->metric = METRIC_TOTAL;
		*dim = DIM_TIME;
	} else if (seg_is(g, "mean")) {
		ref->metric = METRIC_MEAN;
		*dim = DIM_TIME;
	} else if (seg_is(g, "class")) {
		ref->metric = METRIC_CLASS;
		*dim = DIM_CLASS;
	} else if (seg_is(g, "ratio")) {
		ref->metric = METRIC_RATIO;
		*dim = DIM_RATIO;
	} else if (g->len > 1 && g->s[0] == 'p' && isdigit((unsigned char)g->s[1])) {
		char buf[32];
		char *end;

		if (g->len >= sizeof(buf))
			return fail(p, g->col, "bad percentile '%.*s'", (int)g->len, g->s);
		memcpy(buf, g->s + 1, g->len - 1);
		buf[g->len - 1] = '\0';
		ref->percentile = strtod(buf, &end);
		if (*end || ref->percentile <= 0 || ref->percentile > 100)
			return fail(p, g->col, "bad percentile '%.*s' (expected p1 to p100, such as "
				    "p99 or p99.9)", (int)g->len, g->s);
		ref->metric = METRIC_PERCENTILE;
		*dim = DIM_TIME;
	} else {
		return fail(p, g->col, "unknown metric '%.*s' (expected bytes, count, class, "
			    "pN, max, mean, ratio after leak, or total after stall)", (int)g->len, g->s);
	}
	return 0;
}

/*
 * TIER.stall[.CAUSE].METRIC, from segment @i (after the tier): the time threads of a tier
 * waited in the write path, as `iotier stalls` measures it.
 */
static int parse_stall_ref(struct parser *p, const struct token *t, const struct segment *segs,
			   int n, int i, struct expect_node *node)
{
	struct expect_ref *ref = &node->ref;
	int cause;

	if (ref->baseline)
		return fail(p, segs[0].col, "'%.*s': a baseline has no stalls", (int)t->len,
			    t->start);
	if (ref->tier == TIER_UNATTRIBUTED)
		return fail(p, segs[i].col, "'stall' applies to threads of the low, high and "
			    "default tiers, not to 'unattributed'");
	ref->stall = true;
	ref->stall_cause = STALL_CAUSES_ALL;
	i++;
	if (i < n - 1) {
		cause = seg_lookup(&segs[i], stall_cause_names, STALL_CAUSE_COUNT);
		if (cause < 0)
			return fail(p, segs[i].col, "unknown stall cause '%.*s' (expected "
				    "dirty_throttle, writeback_wait or fsync)", (int)segs[i].len,
				    segs[i].s);
		ref->stall_cause = cause;
		i++;
	}
	if (i < n - 1)
		return fail(p, segs[i].col, "unexpected '%.*s' in '%.*s' (expected a metric)",
			    (int)segs[i].len, segs[i].s, (int)t->len, t->start);
	if (i == n)
		return fail(p, t->col, "'%.*s' names no metric", (int)t->len, t->start);
	if (parse_metric(p, &segs[i], ref, &node->dim) < 0)
		return -1;
	if (ref->metric != METRIC_COUNT && ref->metric != METRIC_TOTAL &&
	    ref->metric != METRIC_MAX && ref->metric != METRIC_MEAN &&
	    ref->metric != METRIC_PERCENTILE)
		return fail(p, segs[i].col, "'%.*s' is not measured for stalls (expected count, "
			    "total, max, mean or pN)", (int)segs[i].len, segs[i].s);
	return 0;
}

/*
 * [baseline.]TIER[.OP][.CLASS][.leak[.CAUSE]].METRIC; a baseline path may leave the tier
 * out, and then takes the tier of the other side (resolved in resolve_baseline_tiers).
 */
static int parse_ref(struct parser *p, const struct token *t, struct expect_node *node)
{
	struct segment segs[10];
	struct expect_ref *ref = &node->ref;
	int n = split_path(p, t, segs, 10), i = 0, tier, op, cls, cause;

	if (n < 0)
		return -1;
	memset(ref, 0, sizeof(*ref));
	ref->op = OPS_ALL;
	ref->ioclass = -1;
	ref->cause = CAUSES_ALL;
	ref->tier = (enum expect_tier)-1;
	if (seg_is(&segs[0], "baseline")) {
		if (!p->have_baseline)
			return fail(p, segs[0].col, "'%.*s' needs --baseline FILE", (int)t->len,
				    t->start);
		ref->baseline = true;
		i++;
	}
	if (i == n)
		return fail(p, t->col, "'%.*s' names no metric", (int)t->len, t->start);
	tier = seg_lookup(&segs[i], tier_names, TIER_COUNT);
	if (tier >= 0) {
		ref->tier = (enum expect_tier)tier;
		i++;
	} else if (!ref->baseline) {
		unsigned bad;

		if (n == 1 && (class_literal(&segs[0], &bad) || bad))
			return fail(p, t->col, "bad class '%.*s' (expected idle, be, rt, none, "
				    "be:0..be:7 or rt:0..rt:7)", (int)t->len, t->start);
		/*
		 * A bare word without dots cannot be a path (a path needs a metric), so it
		 * was meant as a class literal, as in "low.write.class == idel".
		 */
		if (n == 1)
			return fail(p, t->col, "unknown class '%.*s' (expected none, rt, be, idle, "
				    "be:0..be:7 or rt:0..rt:7)", (int)t->len, t->start);
		return fail(p, segs[0].col, "unknown tier '%.*s' (expected low, high, default, "
			    "unattributed or baseline)", (int)segs[0].len, segs[0].s);
	}
	if (i < n && seg_is(&segs[i], "stall"))
		return parse_stall_ref(p, t, segs, n, i, node);
	if (i < n - 1 && (op = seg_lookup(&segs[i], op_names, OP_COUNT)) >= 0) {
		ref->op = op;
		i++;
	}
	if (i < n - 1 && (cls = seg_lookup(&segs[i], ioprio_class_names, IOCLASS_COUNT)) >= 0) {
		ref->ioclass = cls;
		i++;
	}
	if (i < n - 1 && seg_is(&segs[i], "leak")) {
		if (ref->tier == TIER_DEFAULT || ref->tier == TIER_UNATTRIBUTED)
			return fail(p, segs[i].col, "'leak' applies to the low and high tiers only, "
				    "not to '%s'", tier_names[ref->tier]);
		if (ref->ioclass >= 0)
			return fail(p, segs[i].col, "'leak' cannot follow a class in '%.*s'",
				    (int)t->len, t->start);
		ref->leak = true;
		i++;
		if (i < n - 1 && (cause = seg_lookup(&segs[i], cause_names, CAUSE_COUNT)) >= 0) {
			ref->cause = cause;
			i++;
		}
	}
	if (i < n - 1)
		return fail(p, segs[i].col, "unexpected '%.*s' in '%.*s' (expected an op read, "
			    "write or other, a class, leak, or a metric)", (int)segs[i].len,
			    segs[i].s, (int)t->len, t->start);
	if (i == n)
		return fail(p, t->col, "'%.*s' names no metric", (int)t->len, t->start);
	if (parse_metric(p, &segs[i], ref, &node->dim) < 0)
		return -1;
	if (ref->leak && ref->metric != METRIC_BYTES && ref->metric != METRIC_COUNT &&
	    ref->metric != METRIC_RATIO)
		return fail(p, segs[i].col, "'%.*s' is not measured for leaks (expected bytes, "
			    "count or ratio)", (int)segs[i].len, segs[i].s);
	if (ref->metric == METRIC_RATIO && !ref->leak)
		return fail(p, segs[i].col, "'ratio' needs a leak path, as in 'low.leak.ratio'");
	if (ref->metric == METRIC_TOTAL)
		return fail(p, segs[i].col, "'total' needs a stall path, as in "
			    "'high.stall.dirty_throttle.total'");
	if (ref->metric == METRIC_CLASS && ref->ioclass >= 0)
		return fail(p, segs[i].col, "'class' cannot follow a class in '%.*s'",
			    (int)t->len, t->start);
	if (ref->baseline)
		p->e->uses_baseline = true;
	return 0;
}

/* ---- parser ---- */

static int new_node(struct parser *p, const struct token *t)
{
	struct expect_node *n;

	if (p->e->n_nodes == EXPECT_NODES_MAX) {
		fail(p, t->col, "expression too long at '%.*s'", (int)t->len, t->start);
		return -1;
	}
	n = &p->e->nodes[p->e->n_nodes];
	memset(n, 0, sizeof(*n));
	n->col = t->col;
	n->len = t->len;
	return p->e->n_nodes++;
}

static int parse_primary(struct parser *p)
{
	struct token t = p->tok;
	struct expect_node *node;
	int idx;

	if (t.kind == TOK_END) {
		fail(p, t.col, "expression ends early (expected a number or a path)");
		return -1;
	}
	if (t.kind != TOK_NUMBER && t.kind != TOK_NAME) {
		fail(p, t.col, "unexpected '%.*s' (expected a number or a path)", (int)t.len, t.start);
		return -1;
	}
	idx = new_node(p, &t);
	if (idx < 0)
		return -1;
	node = &p->e->nodes[idx];
	if (t.kind == TOK_NUMBER) {
		node->kind = NODE_NUMBER;
		node->number = t.number;
		node->dim = t.dim;
	} else {
		struct segment g = { t.start, t.len, t.col };
		unsigned bad;
		uint32_t mask = memchr(t.start, '.', t.len) ? 0 : class_literal(&g, &bad);

		if (mask) {
			node->kind = NODE_CLASS;
			node->class_mask = mask;
			node->dim = DIM_CLASS;
		} else {
			node->kind = NODE_REF;
			if (parse_ref(p, &t, node) < 0)
				return -1;
		}
	}
	if (lex(p) < 0)
		return -1;
	return idx;
}

static const char *dim_name(enum expect_dim d)
{
	static const char *const names[] = { "a plain number", "a time", "bytes", "a count",
					     "a ratio", "a class" };
	return names[d];
}

static const char *unit_hint(enum expect_dim d)
{
	switch (d) {
	case DIM_TIME:
		return " (ns, us, ms or s)";
	case DIM_RATIO:
		return " (%)";
	default:
		return "";
	}
}

/* Whether a plain number may stand for a value of @d: bytes and counts are counted in units. */
static bool scalar_fits(enum expect_dim d, double number)
{
	return d == DIM_BYTES || d == DIM_COUNT || d == DIM_SCALAR || (number == 0 && d != DIM_CLASS);
}

static void node_text(const struct parser *p, int idx, const char **s, int *len)
{
	const struct expect_node *n = &p->e->nodes[idx];
	const struct expect_node *first = n, *last = n;

	while (first->kind == NODE_BINARY)
		first = &p->e->nodes[first->left];
	while (last->kind == NODE_BINARY)
		last = &p->e->nodes[last->right];
	*s = p->text + first->col - 1;
	*len = (int)(last->col + last->len - first->col);
}

/*
 * The dimension two sides share, or -1 after an error that names the side that does not
 * fit. A plain number takes the other side's dimension where that makes sense.
 */
static int unify(struct parser *p, int a, int b, const char *what)
{
	const struct expect_node *na = &p->e->nodes[a], *nb = &p->e->nodes[b];
	const char *sa, *sb;
	int la, lb;

	if (na->dim == nb->dim)
		return na->dim;
	node_text(p, a, &sa, &la);
	node_text(p, b, &sb, &lb);
	if (na->dim == DIM_SCALAR && na->kind == NODE_NUMBER && scalar_fits(nb->dim, na->number))
		return nb->dim;
	if (nb->dim == DIM_SCALAR && nb->kind == NODE_NUMBER && scalar_fits(na->dim, nb->number))
		return na->dim;
	if (nb->dim == DIM_SCALAR)
		return fail(p, nb->col, "'%.*s' needs a unit: '%.*s' is %s%s", lb, sb, la, sa,
			    dim_name(na->dim), unit_hint(na->dim));
	if (na->dim == DIM_SCALAR)
		return fail(p, na->col, "'%.*s' needs a unit: '%.*s' is %s%s", la, sa, lb, sb,
			    dim_name(nb->dim), unit_hint(nb->dim));
	return fail(p, nb->col, "cannot %s '%.*s' (%s) and '%.*s' (%s)", what, la, sa,
		    dim_name(na->dim), lb, sb, dim_name(nb->dim));
}

static int make_binary(struct parser *p, const struct token *op, int left, int right)
{
	int idx = new_node(p, op), dim;
	struct expect_node *n;

	if (idx < 0)
		return -1;
	n = &p->e->nodes[idx];
	n->kind = NODE_BINARY;
	n->op = op->arith;
	n->left = left;
	n->right = right;
	if (p->e->nodes[left].dim == DIM_CLASS || p->e->nodes[right].dim == DIM_CLASS)
		return fail(p, op->col, "no arithmetic on classes at '%c'", op->arith);
	if (op->arith == '+' || op->arith == '-') {
		dim = unify(p, left, right, "add");
		if (dim < 0)
			return -1;
	} else if (p->e->nodes[right].dim == DIM_SCALAR) {
		dim = p->e->nodes[left].dim;
	} else if (op->arith == '*' && p->e->nodes[left].dim == DIM_SCALAR) {
		dim = p->e->nodes[right].dim;
	} else {
		const char *s;
		int len;

		node_text(p, right, &s, &len);
		return fail(p, p->e->nodes[right].col, "'%c' needs a plain number beside it, not "
			    "'%.*s'", op->arith, len, s);
	}
	p->e->nodes[idx].dim = (enum expect_dim)dim;
	return idx;
}

static int parse_product(struct parser *p)
{
	int left = parse_primary(p);

	while (left >= 0 && p->tok.kind == TOK_ARITH && (p->tok.arith == '*' || p->tok.arith == '/')) {
		struct token op = p->tok;
		int right;

		if (lex(p) < 0)
			return -1;
		right = parse_primary(p);
		if (right < 0)
			return -1;
		left = make_binary(p, &op, left, right);
	}
	return left;
}

static int parse_sum(struct parser *p)
{
	int left = parse_product(p);

	while (left >= 0 && p->tok.kind == TOK_ARITH) {
		struct token op = p->tok;
		int right;

		if (lex(p) < 0)
			return -1;
		right = parse_product(p);
		if (right < 0)
			return -1;
		left = make_binary(p, &op, left, right);
	}
	return left;
}

/* Does the subtree at @idx hold a measurement? Comparing two numbers checks nothing. */
static const struct expect_node *first_ref(const struct expect *e, int idx)
{
	const struct expect_node *n = &e->nodes[idx];
	const struct expect_node *l;

	if (n->kind == NODE_REF)
		return n;
	if (n->kind != NODE_BINARY)
		return NULL;
	l = first_ref(e, n->left);
	return l ? l : first_ref(e, n->right);
}

/* A baseline path without a tier takes the tier of the run-side path: "baseline.read.p99". */
static int resolve_baseline_tiers(struct parser *p, int idx, int tier)
{
	struct expect_node *n = &p->e->nodes[idx];

	if (n->kind == NODE_BINARY)
		return resolve_baseline_tiers(p, n->left, tier) < 0 ? -1 :
		       resolve_baseline_tiers(p, n->right, tier);
	if (n->kind != NODE_REF || n->ref.tier != (enum expect_tier)-1)
		return 0;
	if (tier < 0)
		return fail(p, n->col, "'%.*s' names no tier and there is no run-side path to take "
			    "it from", (int)n->len, p->text + n->col - 1);
	n->ref.tier = (enum expect_tier)tier;
	if (n->ref.leak && (tier == TIER_DEFAULT || tier == TIER_UNATTRIBUTED))
		return fail(p, n->col, "'leak' applies to the low and high tiers only, not to '%s'",
			    tier_names[tier]);
	return 0;
}

static int run_side_tier(const struct expect *e, int idx)
{
	const struct expect_node *n = &e->nodes[idx];
	int t;

	if (n->kind == NODE_REF && !n->ref.baseline)
		return (int)n->ref.tier;
	if (n->kind != NODE_BINARY)
		return -1;
	t = run_side_tier(e, n->left);
	return t >= 0 ? t : run_side_tier(e, n->right);
}

int expect_parse(const char *text, bool have_baseline, struct expect *out, char *err,
		 size_t errlen)
{
	struct parser p = {
		.text = text, .pos = text, .e = out, .have_baseline = have_baseline,
		.err = err, .errlen = errlen,
	};
	struct token cmp;
	int dim, tier;

	memset(out, 0, sizeof(*out));
	if (errlen)
		err[0] = '\0';
	if (strlen(text) >= sizeof(out->text))
		return fail(&p, 1, "expression longer than %zu characters", sizeof(out->text) - 1);
	strcpy(out->text, text);
	if (lex(&p) < 0)
		return -1;
	if (p.tok.kind == TOK_END)
		return fail(&p, 1, "empty expression");
	out->lhs = parse_sum(&p);
	if (out->lhs < 0)
		return -1;
	if (p.tok.kind != TOK_CMP) {
		if (p.tok.kind == TOK_END)
			return fail(&p, p.tok.col, "expression ends without a comparison (expected "
				    "<, <=, >, >=, == or !=)");
		return fail(&p, p.tok.col, "unexpected '%.*s' (expected <, <=, >, >=, == or !=)",
			    (int)p.tok.len, p.tok.start);
	}
	cmp = p.tok;
	out->cmp = cmp.cmp;
	if (lex(&p) < 0)
		return -1;
	out->rhs = parse_sum(&p);
	if (out->rhs < 0)
		return -1;
	if (p.tok.kind != TOK_END)
		return fail(&p, p.tok.col, "unexpected '%.*s' after the expression", (int)p.tok.len,
			    p.tok.start);
	tier = run_side_tier(out, out->lhs);
	if (tier < 0)
		tier = run_side_tier(out, out->rhs);
	if (resolve_baseline_tiers(&p, out->lhs, tier) < 0 ||
	    resolve_baseline_tiers(&p, out->rhs, tier) < 0)
		return -1;
	if (!first_ref(out, out->lhs) && !first_ref(out, out->rhs))
		return fail(&p, 1, "'%s' measures nothing (expected a path such as "
			    "'high.read.p99')", text);
	dim = unify(&p, out->lhs, out->rhs, "compare");
	if (dim < 0)
		return -1;
	if (dim == DIM_CLASS && cmp.cmp != CMP_EQ && cmp.cmp != CMP_NE)
		return fail(&p, cmp.col, "'%.*s' cannot order classes (expected == or !=)",
			    (int)cmp.len, cmp.start);
	return 0;
}

/* ---- evaluation ---- */

void expect_format(enum expect_dim dim, const struct expect_value *v, char *buf, size_t len)
{
	double x = v->v;

	switch (dim) {
	case DIM_TIME:
		if (x < 1e3)
			snprintf(buf, len, "%.3gns", x);
		else if (x < 1e6)
			snprintf(buf, len, "%.3gus", x / 1e3);
		else if (x < 1e9)
			snprintf(buf, len, "%.3gms", x / 1e6);
		else
			snprintf(buf, len, "%.3gs", x / 1e9);
		break;
	case DIM_BYTES:
		if (x < 1024)
			snprintf(buf, len, "%.0fB", x);
		else if (x < 1024.0 * 1024)
			snprintf(buf, len, "%.3gKiB", x / 1024);
		else if (x < 1024.0 * 1024 * 1024)
			snprintf(buf, len, "%.3gMiB", x / 1024 / 1024);
		else
			snprintf(buf, len, "%.3gGiB", x / 1024 / 1024 / 1024);
		break;
	case DIM_RATIO:
		snprintf(buf, len, "%.3g%%", x * 100);
		break;
	case DIM_CLASS: {
		size_t off = 0;

		buf[0] = '\0';
		for (int cls = 0; cls < 4; cls++) {
			uint32_t m = v->class_mask & EXPECT_CLASS_ALL_LEVELS(cls);

			if (!m)
				continue;
			if (m == EXPECT_CLASS_ALL_LEVELS(cls)) {
				int n = snprintf(buf + off, len - off, "%s%s", off ? "+" : "",
						 ioprio_class_names[cls]);

				if (n < 0 || (size_t)n >= len - off)
					return;
				off += (size_t)n;
				continue;
			}
			for (int lvl = 0; lvl < 8; lvl++) {
				int n;

				if (!(m & EXPECT_CLASS_BIT(cls, lvl)))
					continue;
				/* Levels mean nothing for none and idle. */
				if (cls == 0 || cls == 3)
					n = snprintf(buf + off, len - off, "%s%s", off ? "+" : "",
						     ioprio_class_names[cls]);
				else
					n = snprintf(buf + off, len - off, "%s%s:%d", off ? "+" : "",
						     ioprio_class_names[cls], lvl);
				if (n < 0 || (size_t)n >= len - off)
					return;
				off += (size_t)n;
				if (cls == 0 || cls == 3)
					break;
			}
		}
		if (!off)
			snprintf(buf, len, "no I/O");
		break;
	}
	default:
		snprintf(buf, len, "%.6g", x);
		break;
	}
}

struct eval {
	const struct expect *e;
	expect_lookup_fn lookup;
	void *ctx;
	const struct expect_node *missing; /* first reference without data */
};

static int eval_node(struct eval *ev, int idx, struct expect_value *out)
{
	const struct expect_node *n = &ev->e->nodes[idx];
	struct expect_value l, r;

	memset(out, 0, sizeof(*out));
	switch (n->kind) {
	case NODE_NUMBER:
		out->v = n->number;
		return 0;
	case NODE_CLASS:
		out->class_mask = n->class_mask;
		return 0;
	case NODE_REF:
		if (ev->lookup(&n->ref, out, ev->ctx) < 0 ||
		    (n->ref.metric == METRIC_CLASS && !out->class_mask)) {
			if (!ev->missing)
				ev->missing = n;
			return -1;
		}
		return 0;
	case NODE_BINARY:
		if (eval_node(ev, n->left, &l) < 0 || eval_node(ev, n->right, &r) < 0)
			return -1;
		switch (n->op) {
		case '*':
			out->v = l.v * r.v;
			break;
		case '/':
			out->v = r.v != 0 ? l.v / r.v : INFINITY;
			break;
		case '+':
			out->v = l.v + r.v;
			break;
		default:
			out->v = l.v - r.v;
			break;
		}
		return 0;
	}
	return -1;
}

static void describe_side(const struct expect *e, int idx, enum expect_dim dim,
			  const struct expect_value *v, char *buf, size_t len)
{
	char val[96];
	const struct expect_node *n = &e->nodes[idx];
	const struct expect_node *first = n, *last = n;

	expect_format(dim, v, val, sizeof(val));
	/* Only a computed limit shows how it was computed; a path is in the expression already. */
	if (n->kind != NODE_BINARY) {
		snprintf(buf, len, "%s", val);
		return;
	}
	while (first->kind == NODE_BINARY)
		first = &e->nodes[first->left];
	while (last->kind == NODE_BINARY)
		last = &e->nodes[last->right];
	snprintf(buf, len, "%s (%.*s)", val, (int)(last->col + last->len - first->col),
		 e->text + first->col - 1);
}

bool expect_eval(const struct expect *e, expect_lookup_fn lookup, void *ctx,
		 struct expect_result *res)
{
	struct eval ev = { .e = e, .lookup = lookup, .ctx = ctx };
	struct expect_value l, r;
	enum expect_dim dim = e->nodes[e->lhs].dim;
	int lret, rret;

	memset(res, 0, sizeof(*res));
	if (dim == DIM_SCALAR)
		dim = e->nodes[e->rhs].dim;
	lret = eval_node(&ev, e->lhs, &l);
	rret = eval_node(&ev, e->rhs, &r);
	if (lret < 0 || rret < 0) {
		const struct expect_node *m = ev.missing;

		res->no_data = true;
		snprintf(res->measured, sizeof(res->measured), "no I/O measured for '%.*s'",
			 (int)m->len, e->text + m->col - 1);
		snprintf(res->limit, sizeof(res->limit), "%s", "-");
		return false;
	}
	describe_side(e, e->lhs, dim, &l, res->measured, sizeof(res->measured));
	describe_side(e, e->rhs, dim, &r, res->limit, sizeof(res->limit));
	if (dim == DIM_CLASS) {
		/*
		 * A measured set against a literal: == means all of the I/O arrived within the
		 * literal's classes, != that none did. Two measured sets compare exactly.
		 */
		bool l_measured = e->nodes[e->lhs].kind == NODE_REF;
		bool r_measured = e->nodes[e->rhs].kind == NODE_REF;
		uint32_t got = l_measured ? l.class_mask : r.class_mask;
		uint32_t want = l_measured ? r.class_mask : l.class_mask;
		bool all = l_measured && r_measured ? got == want : (got & ~want) == 0;

		res->holds = e->cmp == CMP_EQ ? all :
			     l_measured && r_measured ? got != want : (got & want) == 0;
		return res->holds;
	}
	switch (e->cmp) {
	case CMP_LT:
		res->holds = l.v < r.v;
		break;
	case CMP_LE:
		res->holds = l.v <= r.v;
		break;
	case CMP_GT:
		res->holds = l.v > r.v;
		break;
	case CMP_GE:
		res->holds = l.v >= r.v;
		break;
	case CMP_EQ:
		res->holds = l.v == r.v;
		break;
	case CMP_NE:
		res->holds = l.v != r.v;
		break;
	}
	return res->holds;
}
