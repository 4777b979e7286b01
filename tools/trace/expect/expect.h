/* SPDX-License-Identifier: MIT */
/*
 * expect.h: the expectations of `iotier check` ("high.read.p99 < 2ms", "low.leak.bytes == 0",
 * "high.read.p99.9 <= 5 * baseline.read.p99.9"). Parsing is separate from measuring: an
 * expression is parsed and dimension-checked before anything runs, so that a typo is a usage
 * error naming the bad token and column, never a failed CI job after a long benchmark. The
 * values come from a lookup callback, which keeps this unit free of BPF and JSON. The
 * grammar is documented in docs/check-expressions.md.
 */
#ifndef IOTIER_EXPECT_H
#define IOTIER_EXPECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EXPECT_TEXT_MAX 512
#define EXPECT_NODES_MAX 32
#define EXPECT_ERROR_MAX 320

/* The tiers a path can name; "unattributed" is kernel I/O whose cause is unknown. */
enum expect_tier { TIER_LOW = 0, TIER_HIGH, TIER_DEFAULT, TIER_UNATTRIBUTED, TIER_COUNT };

/* Block operations, as the report splits them: flushes and discards are "other". */
enum expect_op { OPS_ALL = -1, OP_READ = 0, OP_WRITE, OP_OTHER, OP_COUNT };

/* Why an I/O reached the device outside its thread's own submission. */
enum expect_cause {
	CAUSES_ALL = -1,
	CAUSE_SUBMIT = 0, /* the thread submitted it itself, at another class than its tier's */
	CAUSE_WRITEBACK,  /* a flusher kworker wrote back pages the thread dirtied */
	CAUSE_JOURNAL,    /* a jbd2 thread wrote it */
	CAUSE_OTHER,      /* any other context (another process, another kernel thread) */
	CAUSE_COUNT
};

enum expect_metric {
	METRIC_BYTES,
	METRIC_COUNT,
	METRIC_PERCENTILE, /* latency */
	METRIC_MAX,
	METRIC_MEAN,
	METRIC_CLASS,      /* the set of classes the I/O arrived with */
	METRIC_RATIO,      /* leak bytes / all bytes of the tier (leak paths only) */
	METRIC_TOTAL,      /* time summed over every stall (stall paths only) */
};

/* Where a thread waited in the write path (`iotier stalls`); same order as bpf/stalls.h. */
enum expect_stall_cause {
	STALL_CAUSES_ALL = -1,
	STALL_CAUSE_DIRTY_THROTTLE = 0,
	STALL_CAUSE_WRITEBACK_WAIT,
	STALL_CAUSE_FSYNC,
	STALL_CAUSE_COUNT
};

/* What a path names. The lookup callback answers it from a run or a baseline report. */
struct expect_ref {
	bool baseline;
	enum expect_tier tier;
	int op;          /* enum expect_op, OPS_ALL for every op */
	int ioclass;     /* IOPRIO_CLASS_* (0 none, 1 rt, 2 be, 3 idle), -1 for every class */
	bool leak;       /* only I/O counted as leaked */
	int cause;       /* enum expect_cause, CAUSES_ALL; meaningful when leak */
	enum expect_metric metric;
	double percentile; /* 0 < p <= 100 for METRIC_PERCENTILE */
	bool stall;        /* TIER.stall[.CAUSE].METRIC: write-path stalls, not block I/O */
	int stall_cause;   /* enum expect_stall_cause, STALL_CAUSES_ALL; meaningful when stall */
};

/* Classes as a set: bit (class * 8 + level) of an ioprio value. */
#define EXPECT_CLASS_BIT(cls, level) (1u << ((cls) * 8 + (level)))
#define EXPECT_CLASS_ALL_LEVELS(cls) (0xffu << ((cls) * 8))

/*
 * A measured value. Times are ns, bytes are bytes, ratios are fractions (0.05 is 5%), and
 * METRIC_CLASS fills class_mask instead of v.
 */
struct expect_value {
	double v;
	uint32_t class_mask;
};

/* Returns 0 with @out filled, or -1 when there is nothing to measure (no I/O, no samples). */
typedef int (*expect_lookup_fn)(const struct expect_ref *ref, struct expect_value *out,
				void *ctx);

enum expect_dim { DIM_SCALAR, DIM_TIME, DIM_BYTES, DIM_COUNT, DIM_RATIO, DIM_CLASS };
enum expect_cmp { CMP_LT, CMP_LE, CMP_GT, CMP_GE, CMP_EQ, CMP_NE };

struct expect_node {
	enum { NODE_NUMBER, NODE_REF, NODE_CLASS, NODE_BINARY } kind;
	enum expect_dim dim;
	double number;          /* NODE_NUMBER, in base units */
	uint32_t class_mask;    /* NODE_CLASS */
	struct expect_ref ref;  /* NODE_REF */
	char op;                /* NODE_BINARY: * / + - */
	int left, right;        /* NODE_BINARY: node indices */
	unsigned col;           /* 1-based column of the node's first character */
	unsigned len;           /* characters of its token */
};

struct expect {
	char text[EXPECT_TEXT_MAX];
	struct expect_node nodes[EXPECT_NODES_MAX];
	int n_nodes;
	int lhs, rhs;
	enum expect_cmp cmp;
	bool uses_baseline;
};

/*
 * Parse @text into @out. @have_baseline says whether `baseline.` paths may be used (the
 * caller got --baseline). Returns 0, or -1 with one line in @err: "column N: MESSAGE" where
 * MESSAGE names the bad token in quotes.
 */
int expect_parse(const char *text, bool have_baseline, struct expect *out, char *err,
		 size_t errlen);

struct expect_result {
	bool holds;
	bool no_data;        /* a value could not be measured: the expectation fails */
	char measured[96];   /* the left side's value, or what had no data */
	char limit[192];     /* the right side's value, with how it was computed */
};

/* Evaluate @e with values from @lookup; fills @res and returns res->holds. */
bool expect_eval(const struct expect *e, expect_lookup_fn lookup, void *ctx,
		 struct expect_result *res);

/* Human formatting of a value of @dim: "1.25ms", "4.0MiB", "5%", "idle+be:4". */
void expect_format(enum expect_dim dim, const struct expect_value *v, char *buf, size_t len);

/* Names used in paths and reports. */
const char *expect_tier_name(enum expect_tier tier);
const char *expect_op_name(int op);
const char *expect_cause_name(int cause);
const char *expect_class_name(int ioclass); /* "none", "rt", "be", "idle" */
const char *expect_stall_cause_name(int cause); /* "dirty_throttle", ...; "all" for -1 */

#endif
