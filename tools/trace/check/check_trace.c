// SPDX-License-Identifier: MIT
/*
 * check_trace.c: user-space side of bpf/iotrack.bpf.c for `iotier check`. Lifecycle: open,
 * set the device filter in rodata, load, seed the command's pid, attach, poll process events
 * every 100 ms while the command runs, then read the maps once.
 */
#include "check_trace.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iotitle.h"
#include "iotitle.skel.h"
#include "iotrack.skel.h"
#include "core/core.h"
#include "trace/common/bpf_print.h"
#include "trace/common/diskstats.h"
#include "trace/common/kernel_probe.h"
#include "trace/lat/lat_session.h"

struct proc {
	uint32_t tgid, ppid;
	char *cmdline; /* NULL until the process execs: it runs its parent's program until then */
	char *title;   /* the command line at its latest I/O (iotitle), NULL before any */
};

struct check_trace {
	struct iotrack *skel;
	struct iotitle *titles;
	struct ring_buffer *rb;
	struct proc *procs;
	size_t n_procs, cap_procs;
	/* diskstats of the traced devices when tracing started */
	size_t ncov;
	uint32_t cov_devs[LAT_MAX_COVERAGE];
	struct diskstats cov_base[LAT_MAX_COVERAGE];
};

/* The traced devices (-d, or every disk and partition) and their diskstats now. */
static void coverage_start(struct check_trace *t)
{
	size_t n = 0;

	if (t->skel->rodata->blk_ndevs)
		for (unsigned i = 0; i < t->skel->rodata->blk_ndevs; i++)
			t->cov_devs[n++] = t->skel->rodata->blk_devs[i];
	else
		n = diskstats_devices(true, t->cov_devs, LAT_MAX_COVERAGE);
	t->ncov = 0;
	for (size_t i = 0; i < n; i++)
		if (diskstats_read(t->cov_devs[i], &t->cov_base[t->ncov]) == 0)
			t->cov_devs[t->ncov++] = t->cov_devs[i];
}

/* What diskstats counted since coverage_start() against what the tracer saw complete. */
static void coverage_collect(struct check_trace *t, struct check_report *r)
{
	int fd = bpf_map__fd(t->skel->maps.completions);

	r->has_coverage = true;
	r->ncov = 0;
	for (size_t i = 0; i < t->ncov; i++) {
		struct lat_coverage *c = &r->cov[r->ncov];
		struct diskstats now, delta;

		if (diskstats_read(t->cov_devs[i], &now) < 0)
			continue;
		diskstats_delta(&t->cov_base[i], &now, &delta);
		*c = (struct lat_coverage){ .dev = t->cov_devs[i],
			.compared = 1u << DISKSTATS_READ | 1u << DISKSTATS_WRITE |
				    1u << DISKSTATS_DISCARD };
		for (int op = 0; op < DISKSTATS_NR_OPS; op++) {
			struct iotrack_dev_op k = { .dev = c->dev, .op = (__u32)op };
			__u64 v = 0;

			c->kernel[op] = delta.completed[op];
			if (bpf_map_lookup_elem(fd, &k, &v) == 0)
				c->traced[op] = v;
		}
		r->ncov++;
	}
}

static struct proc *proc_find(struct check_trace *t, uint32_t tgid)
{
	/* Newest first: a reused pid means the latest process. */
	for (size_t i = t->n_procs; i-- > 0;)
		if (t->procs[i].tgid == tgid)
			return &t->procs[i];
	return NULL;
}

static struct proc *proc_add(struct check_trace *t, uint32_t tgid, uint32_t ppid)
{
	struct proc *p;

	if (t->n_procs == t->cap_procs) {
		size_t cap = t->cap_procs ? t->cap_procs * 2 : 32;
		struct proc *procs = realloc(t->procs, cap * sizeof(*procs));

		if (!procs)
			return NULL;
		t->procs = procs;
		t->cap_procs = cap;
	}
	p = &t->procs[t->n_procs++];
	p->tgid = tgid;
	p->ppid = ppid;
	p->cmdline = NULL;
	p->title = NULL;
	return p;
}

static int handle_event(void *ctx, void *data, size_t size)
{
	struct check_trace *t = ctx;
	const struct iotrack_event *e = data;
	struct proc *p;
	size_t len;

	if (size < sizeof(*e))
		return 0;
	if (e->kind == IOTRACK_EV_FORK) {
		proc_add(t, e->tgid, e->ppid);
		return 0;
	}
	p = proc_find(t, e->tgid);
	if (!p)
		p = proc_add(t, e->tgid, 0);
	if (!p)
		return 0;
	len = e->cmdline_len < IOTRACK_CMDLINE_MAX ? e->cmdline_len : IOTRACK_CMDLINE_MAX - 1;
	free(p->cmdline);
	p->cmdline = malloc(len + 1);
	if (!p->cmdline)
		return 0;
	/* /proc/PID/cmdline form: arguments separated by NULs; the rules see them joined by spaces. */
	for (size_t i = 0; i < len; i++)
		p->cmdline[i] = e->cmdline[i] ? e->cmdline[i] : ' ';
	while (len && p->cmdline[len - 1] == ' ')
		len--;
	p->cmdline[len] = '\0';
	return 0;
}

/* A process's title changed where it did I/O: the command line rules see from now on. */
static int handle_title(void *ctx, void *data, size_t size)
{
	struct check_trace *t = ctx;
	const struct iotitle_event *e = data;
	size_t limit, len;
	struct proc *p;
	char *title;

	if (size < sizeof(*e))
		return 0;
	p = proc_find(t, e->tgid);
	if (!p)
		p = proc_add(t, e->tgid, 0);
	title = malloc(TITLE_MAX + 1);
	if (!p || !title) {
		free(title);
		return 0;
	}
	/* The same bytes the shim reads from its own memory, made into the same string. */
	limit = e->len < IOTITLE_MAX ? e->len : IOTITLE_MAX;
	len = title_length(e->bytes, e->arg_len, limit);
	if (len > limit)
		len = limit;
	title_to_cmdline(e->bytes, len, title, TITLE_MAX + 1);
	free(p->title);
	p->title = title;
	return 0;
}

/*
 * The command line the rules see for @tgid: its title at its latest I/O, else the one it
 * exec'd with, else (a forked child that has not exec'd) its parent's.
 */
const char *check_trace_cmdline(struct check_trace *t, uint32_t tgid)
{
	for (int depth = 0; depth < 64 && tgid; depth++) {
		struct proc *p = proc_find(t, tgid);

		if (!p)
			break;
		if (p->title)
			return p->title;
		if (p->cmdline)
			return p->cmdline;
		tgid = p->ppid;
	}
	return "";
}

/* enum blk_start for this kernel, or -1 with one line in @err naming what it lacks. */
static int probe_check(char *err, size_t errlen)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int start = -1;

	if (libbpf_get_error(btf))
		btf = NULL;
	if (kernel_check_tracepoints(btf, err, errlen) == 0)
		start = kernel_blk_start(btf, err, errlen);
	btf__free(btf);
	return start;
}

/* Open and load iotitle on iotrack's map of tracked processes, so both follow the same tree;
 * it reads titles where iotrack learns the submitter (@start, enum blk_start). */
static int open_titles(struct check_trace *t, int start, char *err, size_t errlen)
{
	int ret;

	t->titles = iotitle__open();
	if (!t->titles) {
		ret = -errno;
		snprintf(err, errlen, "cannot open the BPF object: %s", strerror(-ret));
		return ret;
	}
	bpf_program__set_autoload(t->titles->progs.iotitle_io_start, start == BLK_START_IO_START);
	bpf_program__set_autoload(t->titles->progs.iotitle_getrq, start == BLK_START_GETRQ);
	ret = bpf_map__reuse_fd(t->titles->maps.tracked, bpf_map__fd(t->skel->maps.tracked));
	if (!ret)
		ret = iotitle__load(t->titles);
	if (ret)
		snprintf(err, errlen, "cannot load the BPF program (needs root or CAP_BPF and "
			 "CAP_PERFMON, and kernel BTF): %s", strerror(-ret));
	return ret;
}

int check_trace_open(struct check_trace **out, const uint32_t *devs, unsigned n_devs,
		     bool verbose, char *err, size_t errlen)
{
	struct check_trace *t;
	int ret, start;

	*out = NULL;
	if (n_devs > IOTRACK_MAX_DEVS) {
		snprintf(err, errlen, "at most %d devices", IOTRACK_MAX_DEVS);
		return -EINVAL;
	}
	/*
	 * The same preflight as `iotier lat`: name the missing capability or BTF in one line
	 * rather than let the load fail with libbpf's generic errors.
	 */
	if (lat_preflight(err, errlen) < 0)
		return -EPERM;
	bpf_print_setup(verbose);
	/* Refuse in one line on a kernel without what attribution needs: never count wrong. */
	start = probe_check(err, errlen);
	if (start < 0)
		return -ENOTSUP;
	t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	/* open: parse the object, nothing in the kernel yet */
	t->skel = iotrack__open();
	if (!t->skel) {
		ret = -errno;
		snprintf(err, errlen, "cannot open the BPF object: %s", strerror(-ret));
		goto fail;
	}
	/* rodata: the device filter, so that the verifier drops the branch when unused */
	t->skel->rodata->blk_ndevs = n_devs;
	for (unsigned i = 0; i < n_devs; i++)
		t->skel->rodata->blk_devs[i] = devs[i];
	t->skel->rodata->test_drop_every = diskstats_test_drop_every();
	/* where the submitter is known: block_io_start, or block_getrq before 6.5 */
	t->skel->rodata->blk_start_at = (__u32)start;
	bpf_program__set_autoload(t->skel->progs.iotrack_io_start, start == BLK_START_IO_START);
	bpf_program__set_autoload(t->skel->progs.iotrack_getrq, start == BLK_START_GETRQ);
	/* load: verify and create the maps */
	ret = iotrack__load(t->skel);
	if (ret) {
		snprintf(err, errlen, "cannot load the BPF program (needs root or CAP_BPF and "
			 "CAP_PERFMON, and kernel BTF): %s", strerror(-ret));
		goto fail;
	}
	ret = open_titles(t, start, err, errlen);
	if (ret)
		goto fail;
	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.events), handle_event, t, NULL);
	if (!t->rb || ring_buffer__add(t->rb, bpf_map__fd(t->titles->maps.titles), handle_title,
				       t) < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot create the ring buffer: %s", strerror(-ret));
		goto fail;
	}
	*out = t;
	return 0;
fail:
	check_trace_close(t);
	return ret;
}

int check_trace_follow(struct check_trace *t, pid_t pid)
{
	uint32_t key = (uint32_t)pid;
	uint8_t one = 1;

	if (!proc_add(t, key, 0))
		return -ENOMEM;
	if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.tracked), &key, &one, BPF_ANY) < 0)
		return -errno;
	return 0;
}

int check_trace_attach(struct check_trace *t, char *err, size_t errlen)
{
	/* attach: every tracepoint at once; until then nothing is counted */
	int ret = iotitle__attach(t->titles);

	if (!ret)
		ret = iotrack__attach(t->skel);
	if (!ret)
		coverage_start(t);
	if (ret)
		snprintf(err, errlen, "cannot attach the BPF programs: %s", strerror(-ret));
	return ret;
}

int check_trace_poll(struct check_trace *t, int timeout_ms)
{
	int ret = ring_buffer__poll(t->rb, timeout_ms);

	return ret == -EINTR ? 0 : ret;
}

int check_trace_collect(struct check_trace *t, check_classify_fn classify, void *ctx,
			struct check_report *r)
{
	int stats_fd = bpf_map__fd(t->skel->maps.stats);
	int counters_fd = bpf_map__fd(t->skel->maps.counters);
	struct iotrack_key key, next;
	struct iotrack_stats *st = malloc(sizeof(*st));
	void *prev = NULL;
	int ret = 0;

	if (!st)
		return -ENOMEM;
	coverage_collect(t, r);
	/* Late events (an exec just before exit) must be in before the rules are applied. */
	ring_buffer__consume(t->rb);
	while (bpf_map_get_next_key(stats_fd, prev, &next) == 0) {
		enum expect_tier tier;
		bool leak = false;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(stats_fd, &key, st) < 0)
			continue;
		tier = key.tgid ? classify(&key, check_trace_cmdline(t, key.tgid), &leak, ctx) :
		       TIER_UNATTRIBUTED;
		ret = check_report_add(r, tier, &key, st, leak);
		if (ret < 0)
			break;
	}
	for (uint32_t i = 0; i < IOTRACK_NR_COUNTERS; i++) {
		uint64_t v = 0;

		if (i == IOTRACK_MISSED)
			continue;
		if (bpf_map_lookup_elem(counters_fd, &i, &v) == 0)
			r->counters[i] = v;
	}
	/*
	 * A tracing program is skipped when it would nest on one CPU, for example a completion
	 * in an interrupt arriving while the same program runs for another request. The kernel
	 * counts those skips per program; a skipped start or completion is a request lost.
	 */
	{
		struct bpf_program *prog;

		bpf_object__for_each_program(prog, t->skel->obj) {
			struct bpf_prog_info info;
			__u32 len = sizeof(info);

			memset(&info, 0, sizeof(info));
			if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) == 0)
				r->counters[IOTRACK_MISSED] += info.recursion_misses;
		}
	}
	free(st);
	if (t->titles->bss->lost)
		fprintf(stderr, "iotier check: warning: %llu process title changes lost (ring "
			"buffer full): cmdline: rules may have seen an older command line\n",
			(unsigned long long)t->titles->bss->lost);
	return ret;
}

void check_trace_close(struct check_trace *t)
{
	if (!t)
		return;
	ring_buffer__free(t->rb);
	iotrack__destroy(t->skel);
	iotitle__destroy(t->titles);
	for (size_t i = 0; i < t->n_procs; i++) {
		free(t->procs[i].cmdline);
		free(t->procs[i].title);
	}
	free(t->procs);
	free(t);
}
