// SPDX-License-Identifier: MIT
/*
 * lat_session.c: drives the iolat BPF tracer from user space: checks what loading needs,
 * probes tracepoint signatures from the kernel's BTF to pick tp_btf or raw_tp, sets the
 * rodata filters, loads, attaches, and reads the per-CPU histograms into plain snapshots.
 * Reads do not lose counts: the kernel writes under an epoch bit that a read flips first,
 * so the interval being read is no longer written while it is summed and deleted.
 */
#include "lat_session.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "iolat.skel.h"
#include "core/core.h"
#include "trace/common/bpf_print.h"
#include "trace/common/kernel_probe.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

struct lat_session {
	struct iolat *skel;
	int ncpus;
	int cgroup_fd;
	bool btf_mode;
	struct timespec last;
	struct iolat_hist *percpu;    /* lookup buffer: one value per possible CPU */
	/* diskstats of the traced devices at the start of the current window */
	bool coverage;
	bool cov_filtered;            /* the rows count a subset: the device count is compared */
	__u32 cov_compared;
	size_t ncov;
	__u32 cov_devs[LAT_MAX_COVERAGE];
	struct diskstats cov_base[LAT_MAX_COVERAGE];
	__u64 cov_seen[LAT_MAX_COVERAGE][DISKSTATS_NR_OPS]; /* dev_completions at that start */
	__u64 missed_runs;            /* program runs skipped, as of the last read */
	struct ring_buffer *spills;   /* completions without a histogram (iolat.bpf.c) */
	struct lat_snapshot *filling; /* the snapshot spilled completions go to */
};

_Static_assert(BLK_DS_READ == DISKSTATS_READ && BLK_DS_WRITE == DISKSTATS_WRITE &&
	       BLK_DS_DISCARD == DISKSTATS_DISCARD && BLK_DS_FLUSH == DISKSTATS_FLUSH,
	       "the BPF side numbers diskstats columns as diskstats.h does");

/* The completions of @dev in column @op that the BPF side counted so far (count_device). */
static __u64 device_seen(struct lat_session *s, __u32 dev, int op)
{
	struct iolat_dev_op k = { .dev = dev, .op = (__u32)op };
	__u64 v = 0;

	bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.dev_completions), &k, &v);
	return v;
}

/*
 * Take the diskstats the first window starts from. Every report is held to them: without a
 * submitter filter its rows are what the tracer counted; with --pid or --cgroup the rows
 * are a subset, so the tracer's count of every completion on the device (count_device) is
 * compared instead, and what it lacks bounds what the rows may lack.
 */
static void coverage_start(struct lat_session *s, const struct lat_options *o)
{
	__u32 mask = o->op_mask ? o->op_mask : (1u << IOLAT_NR_OPS) - 1;
	size_t n = 0;

	s->coverage = true;
	s->cov_filtered = o->filter_tgid || o->cgroup;
	if (mask & (1u << IOLAT_OP_READ) || s->cov_filtered)
		s->cov_compared |= 1u << DISKSTATS_READ;
	if (mask & (1u << IOLAT_OP_WRITE) || s->cov_filtered)
		s->cov_compared |= 1u << DISKSTATS_WRITE;
	if (mask & (1u << IOLAT_OP_DISCARD) || s->cov_filtered)
		s->cov_compared |= 1u << DISKSTATS_DISCARD;
	if (o->ndevs)
		for (unsigned i = 0; i < o->ndevs && n < LAT_MAX_COVERAGE; i++)
			s->cov_devs[n++] = o->devs[i];
	else
		n = diskstats_devices(false, s->cov_devs, LAT_MAX_COVERAGE);
	for (size_t i = 0; i < n; i++) {
		if (diskstats_read(s->cov_devs[i], &s->cov_base[s->ncov]) < 0)
			continue;
		s->cov_devs[s->ncov] = s->cov_devs[i];
		for (int op = 0; s->cov_filtered && op < DISKSTATS_NR_OPS; op++)
			s->cov_seen[s->ncov][op] = device_seen(s, s->cov_devs[i], op);
		s->ncov++;
	}
}

/* End the window: the completions diskstats counted in it, per device, into @snap, and with
 * a filter the tracer's count of the same (lat_coverage_count() fills it otherwise). */
static void coverage_window(struct lat_session *s, struct lat_snapshot *snap)
{
	snap->has_coverage = s->coverage;
	snap->coverage_filtered = s->cov_filtered;
	snap->ncov = 0;
	for (size_t i = 0; i < s->ncov; i++) {
		struct lat_coverage *c = &snap->cov[snap->ncov];
		struct diskstats now, delta;

		if (diskstats_read(s->cov_devs[i], &now) < 0)
			continue; /* the device went away */
		diskstats_delta(&s->cov_base[i], &now, &delta);
		s->cov_base[i] = now;
		*c = (struct lat_coverage){ .dev = s->cov_devs[i], .compared = s->cov_compared };
		for (int op = 0; op < DISKSTATS_NR_OPS; op++) {
			c->kernel[op] = delta.completed[op];
			if (s->cov_filtered) {
				__u64 seen = device_seen(s, s->cov_devs[i], op);

				c->traced[op] = seen - s->cov_seen[i][op];
				s->cov_seen[i][op] = seen;
			}
		}
		snap->ncov++;
	}
}

static void set_err(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

/* Readable and starting with the BTF magic, not merely present. */
static bool have_kernel_btf(void)
{
	unsigned char magic[2];
	int fd = open("/sys/kernel/btf/vmlinux", O_RDONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = read(fd, magic, 2) == 2 && magic[0] == 0x9f && magic[1] == 0xeb; /* 0xeB9F, LE */
	close(fd);
	return ok;
}

int lat_preflight(char *err, size_t errlen)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };
	bool bpf, perfmon, admin;

	if (!have_kernel_btf()) {
		set_err(err, errlen, "kernel BTF missing: /sys/kernel/btf/vmlinux is absent or not "
			"BTF (the kernel needs CONFIG_DEBUG_INFO_BTF=y)");
		return -1;
	}
	if (syscall(SYS_capget, &hdr, data) != 0) {
		set_err(err, errlen, "cannot read capabilities: %s", strerror(errno));
		return -1;
	}
#define HAS(cap) (!!(data[(cap) / 32].effective & (1u << ((cap) % 32))))
	bpf = HAS(CAP_BPF);
	perfmon = HAS(CAP_PERFMON);
	admin = HAS(CAP_SYS_ADMIN);
#undef HAS
	if (!admin && (!bpf || !perfmon)) {
		set_err(err, errlen, "missing capability %s%s%s (run as root, or grant them)",
			bpf ? "" : "CAP_BPF", !bpf && !perfmon ? " and " : "",
			perfmon ? "" : "CAP_PERFMON");
		return -1;
	}
	return 0;
}

struct probe {
	bool btf_ok;           /* every required tracepoint has a BTF signature */
	int blk_start;         /* enum blk_start for an exact submitter, or -1 */
	char no_start[256];    /* why there is none */
	bool complete_nr_bytes;
	bool fork_btf;
};

static void probe_kernel(struct probe *pr, bool need_fork)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int insert, issue, complete, requeue, merge, fork;

	if (libbpf_get_error(btf))
		btf = NULL;
	insert = kernel_tp_args(btf, "block_rq_insert", "request");
	issue = kernel_tp_args(btf, "block_rq_issue", "request");
	complete = kernel_tp_args(btf, "block_rq_complete", "request");
	requeue = kernel_tp_args(btf, "block_rq_requeue", "request");
	merge = kernel_tp_args(btf, "block_rq_merge", "request");
	fork = kernel_tp_args(btf, "sched_process_fork", "task_struct");
	pr->btf_ok = insert == 1 && issue == 1 && complete >= 2 && requeue == 1 && merge == 1 &&
		     (!need_fork || fork == 2);
	pr->blk_start = kernel_blk_start(btf, pr->no_start, sizeof(pr->no_start));
	/* Without BTF, assume the 3-argument complete that every kernel since 4.x has. */
	pr->complete_nr_bytes = complete < 0 || complete >= 3;
	pr->fork_btf = fork == 2;
	btf__free(btf);
}

/* A completion the kernel could not put in a histogram: into the row it belongs to. */
static int on_spill(void *ctx, void *data, size_t size)
{
	struct lat_session *s = ctx;
	const struct iolat_spill *e = data;
	struct lat_row *row;

	if (size < sizeof(*e) || !s->filling)
		return 0;
	row = lat_snapshot_row(s->filling, e->key.dev, e->key.op, e->key.ioclass,
			       (int)e->key.level);
	if (!row)
		return -ENOMEM;
	row->count++;
	row->bytes += e->bytes;
	iolat_lat_count(&row->q2c, hist_bucket(e->q2c_ns), e->q2c_ns);
	if (e->has_d2c)
		iolat_lat_count(&row->d2c, hist_bucket(e->d2c_ns), e->d2c_ns);
	return 0;
}

/* Load one program set, tp_btf or raw_tp, and only the hooks needed: where the submitter
 * is learnt (@start, enum blk_start) and the fork hook for --children. */
static void choose_programs(struct iolat *skel, bool btf_mode, int start)
{
	bool io_start = start == BLK_START_IO_START, getrq = start == BLK_START_GETRQ;
	bool forks = skel->rodata->follow_forks;

	bpf_program__set_autoload(skel->progs.btf_io_start, btf_mode && io_start);
	bpf_program__set_autoload(skel->progs.btf_getrq, btf_mode && getrq);
	bpf_program__set_autoload(skel->progs.btf_rq_insert, btf_mode);
	bpf_program__set_autoload(skel->progs.btf_rq_issue, btf_mode);
	bpf_program__set_autoload(skel->progs.btf_rq_complete, btf_mode);
	bpf_program__set_autoload(skel->progs.btf_rq_requeue, btf_mode);
	bpf_program__set_autoload(skel->progs.btf_rq_merge, btf_mode);
	bpf_program__set_autoload(skel->progs.btf_fork, btf_mode && forks);
	bpf_program__set_autoload(skel->progs.raw_io_start, !btf_mode && io_start);
	bpf_program__set_autoload(skel->progs.raw_getrq, !btf_mode && getrq);
	bpf_program__set_autoload(skel->progs.raw_rq_insert, !btf_mode);
	bpf_program__set_autoload(skel->progs.raw_rq_issue, !btf_mode);
	bpf_program__set_autoload(skel->progs.raw_rq_complete, !btf_mode);
	bpf_program__set_autoload(skel->progs.raw_rq_requeue, !btf_mode);
	bpf_program__set_autoload(skel->progs.raw_rq_merge, !btf_mode);
	bpf_program__set_autoload(skel->progs.raw_fork, !btf_mode && forks);
}

static int setup(struct lat_session *s, const struct lat_options *o, const struct probe *pr,
		 bool btf_mode, char *err, size_t errlen)
{
	struct iolat *skel;
	bool attribute;
	__u8 one = 1;
	int err_no;

	/* open: parse the embedded object */
	skel = iolat__open();
	if (!skel) {
		set_err(err, errlen, "cannot open the BPF object: %s", strerror(errno));
		return -errno;
	}
	s->skel = skel;

	/* configure: filters become rodata so the verifier drops the unused branches */
	skel->rodata->blk_ndevs = o->ndevs;
	for (unsigned i = 0; i < o->ndevs; i++)
		skel->rodata->blk_devs[i] = o->devs[i];
	skel->rodata->filter_tgid = o->filter_tgid;
	skel->rodata->follow_forks = o->filter_tgid && o->follow_forks;
	skel->rodata->filter_cgroup = o->cgroup != NULL;
	skel->rodata->op_mask = o->op_mask ? o->op_mask : (1u << IOLAT_NR_OPS) - 1;
	/* Attribution costs a third hook and a map update per request; only a filter on the
	 * submitter needs it. Without one, the request is tracked from its first insert or
	 * issue, which is where its queue time starts anyway. lat_session_open() made sure
	 * that a filter has a way to know the submitter. */
	attribute = o->filter_tgid || o->cgroup;
	skel->rodata->blk_start_at = attribute ? (__u32)pr->blk_start : BLK_START_FIRST_SEEN;
	skel->rodata->complete_has_nr_bytes = pr->complete_nr_bytes;
	skel->rodata->count_device = attribute;
	skel->rodata->test_drop_every = diskstats_test_drop_every();
	bpf_map__set_max_entries(skel->maps.inflight,
				 o->inflight_max ? o->inflight_max : IOLAT_DEFAULT_INFLIGHT);
	/* Test hook: a tiny histogram map makes completions spill, as a dry allocator does. */
	if (getenv("IOTIER_TEST_LAT_HISTS"))
		bpf_map__set_max_entries(skel->maps.hists, (__u32)atoi(getenv("IOTIER_TEST_LAT_HISTS")));

	/* choose one program set: tp_btf or raw_tp, and skip hooks nobody needs */
	choose_programs(skel, btf_mode, attribute ? pr->blk_start : BLK_START_FIRST_SEEN);

	/* load: verify and create the maps */
	err_no = iolat__load(skel);
	if (err_no) {
		set_err(err, errlen, "cannot load the BPF programs (%s attach): %s",
			btf_mode ? "tp_btf" : "raw_tp", strerror(-err_no));
		return err_no;
	}

	s->spills = ring_buffer__new(bpf_map__fd(skel->maps.spills), on_spill, s, NULL);
	if (!s->spills) {
		set_err(err, errlen, "cannot create the ring buffer: %s", strerror(errno));
		return -errno;
	}

	/* fill the filter maps before any event can see them empty */
	for (unsigned i = 0; i < o->ntgids; i++)
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.tgids), &o->tgids[i], &one, BPF_ANY)) {
			set_err(err, errlen, "cannot set the pid filter: %s", strerror(errno));
			return -errno;
		}
	if (o->cgroup) {
		__u32 zero = 0;

		s->cgroup_fd = open(o->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (s->cgroup_fd < 0) {
			set_err(err, errlen, "cannot open cgroup %s: %s", o->cgroup, strerror(errno));
			return -errno;
		}
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.cgroup_map), &zero, &s->cgroup_fd,
					BPF_ANY)) {
			set_err(err, errlen, "cannot use cgroup %s (it must be a cgroup v2 directory): %s",
				o->cgroup, strerror(errno));
			return -errno;
		}
	}

	/* attach: from here on requests are counted */
	err_no = iolat__attach(skel);
	if (err_no) {
		set_err(err, errlen, "cannot attach to the block tracepoints (%s): %s",
			btf_mode ? "tp_btf" : "raw_tp", strerror(-err_no));
		return err_no;
	}
	s->btf_mode = btf_mode;
	return 0;
}

static void teardown(struct lat_session *s)
{
	ring_buffer__free(s->spills);
	s->spills = NULL;
	iolat__destroy(s->skel);
	s->skel = NULL;
	if (s->cgroup_fd >= 0)
		close(s->cgroup_fd);
	s->cgroup_fd = -1;
}

int lat_session_open(struct lat_session **out, const struct lat_options *o, char *err,
		     size_t errlen)
{
	struct lat_session *s;
	struct probe pr;
	bool btf_mode;
	int ret;

	bpf_print_setup(o->verbose);
	s = calloc(1, sizeof(*s));
	if (!s) {
		set_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->cgroup_fd = -1;
	s->ncpus = libbpf_num_possible_cpus();
	if (s->ncpus <= 0) {
		set_err(err, errlen, "cannot count possible CPUs");
		free(s);
		return -EINVAL;
	}
	s->percpu = calloc((size_t)s->ncpus, sizeof(*s->percpu));
	if (!s->percpu) {
		free(s);
		set_err(err, errlen, "out of memory");
		return -ENOMEM;
	}

	probe_kernel(&pr, o->filter_tgid && o->follow_forks);
	if ((o->filter_tgid || o->cgroup) && pr.blk_start < 0) {
		/* Counting at insert or issue would name whichever task ran them: refuse. */
		set_err(err, errlen, "%s needs an exact submitter, but %s",
			o->cgroup ? "--cgroup" : "--pid", pr.no_start);
		lat_session_close(s);
		return -ENOTSUP;
	}
	btf_mode = o->attach == LAT_ATTACH_BTF || (o->attach == LAT_ATTACH_AUTO && pr.btf_ok);
	if (o->attach == LAT_ATTACH_BTF && !pr.btf_ok) {
		set_err(err, errlen, "tp_btf attach unavailable: kernel BTF lacks the block "
			"tracepoint signatures");
		lat_session_close(s);
		return -ENOTSUP;
	}
	ret = setup(s, o, &pr, btf_mode, err, errlen);
	if (ret && btf_mode && o->attach == LAT_ATTACH_AUTO) {
		/* BTF-typed attach failed on this kernel: the raw tracepoints may still work. */
		if (o->verbose)
			fprintf(stderr, "iotier: %s; retrying with raw_tp\n", err);
		teardown(s);
		ret = setup(s, o, &pr, false, err, errlen);
	}
	if (ret) {
		lat_session_close(s);
		return ret;
	}
	clock_gettime(CLOCK_REALTIME, &s->last);
	coverage_start(s, o);
	*out = s;
	return 0;
}

int lat_session_track(struct lat_session *s, __u32 tgid)
{
	__u8 one = 1;

	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.tgids), &tgid, &one, BPF_ANY))
		return -errno;
	return 0;
}

void lat_session_close(struct lat_session *s)
{
	if (!s)
		return;
	teardown(s);
	free(s->percpu);
	free(s);
}

int lat_session_missed_runs(struct lat_session *s, __u64 *missed)
{
	struct bpf_program *prog;

	*missed = 0;
	bpf_object__for_each_program(prog, s->skel->obj) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0)
			continue;   /* not loaded: autoload was off for this attach mode */
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			return -errno;
		*missed += info.recursion_misses;
	}
	return 0;
}

int lat_session_inflight_by_class(struct lat_session *s, __u64 count[IOLAT_NR_CLASSES],
				  __u64 oldest_ns[IOLAT_NR_CLASSES])
{
	int fd = bpf_map__fd(s->skel->maps.inflight);
	__u64 key, *prev = NULL;
	struct iolat_inflight v;
	__u32 c;

	memset(count, 0, IOLAT_NR_CLASSES * sizeof(*count));
	memset(oldest_ns, 0, IOLAT_NR_CLASSES * sizeof(*oldest_ns));
	while (bpf_map_get_next_key(fd, prev, &key) == 0) {
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;   /* completed since: no longer in flight */
		c = ioprio_class(v.ioprio) & (IOLAT_NR_CLASSES - 1);
		count[c]++;
		if (!oldest_ns[c] || v.t.start_ns < oldest_ns[c])
			oldest_ns[c] = v.t.start_ns;
	}
	return 0;
}

static __u64 stat_sum(struct lat_session *s, __u32 idx)
{
	__u64 vals[s->ncpus], sum = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.stats), &idx, vals))
		return 0;
	for (int c = 0; c < s->ncpus; c++)
		sum += vals[c];
	return sum;
}

int lat_session_read(struct lat_session *s, struct lat_snapshot *snap, bool final)
{
	int hfd = bpf_map__fd(s->skel->maps.hists), ifd = bpf_map__fd(s->skel->maps.inflight);
	struct iolat_key *keys = NULL, key, *prev = NULL;
	size_t nkeys = 0, cap = 0;
	__u64 ikey, *iprev = NULL;
	__u32 old;
	int ret = 0;

	snap->nrows = 0;
	old = __atomic_load_n(&s->skel->bss->epoch, __ATOMIC_RELAXED) & 1;
	__atomic_store_n(&s->skel->bss->epoch, old ^ 1, __ATOMIC_SEQ_CST);
	/* The tracer counts a completion a few microseconds before diskstats does: read them
	 * right at the flip, so that a window's two counts end as close together as can be. */
	coverage_window(s, snap);
	/* A handler that read the old epoch just before the flip finishes within microseconds;
	 * give it ample time before its histogram is summed and deleted. */
	if (!final)
		nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000 * 1000 }, NULL);

	while (bpf_map_get_next_key(hfd, prev, &key) == 0) {
		if (nkeys == cap) {
			struct iolat_key *n = realloc(keys, (cap = cap ? 2 * cap : 64) * sizeof(*keys));

			if (!n) {
				ret = -ENOMEM;
				goto out;
			}
			keys = n;
		}
		keys[nkeys++] = key;
		prev = &keys[nkeys - 1];
	}
	for (size_t k = 0; k < nkeys; k++) {
		struct lat_row *row;

		if (!final && keys[k].epoch != old)
			continue;
		if (bpf_map_lookup_elem(hfd, &keys[k], s->percpu))
			continue;
		bpf_map_delete_elem(hfd, &keys[k]);
		row = lat_snapshot_row(snap, keys[k].dev, keys[k].op, keys[k].ioclass,
				       (int)keys[k].level);
		if (!row) {
			ret = -ENOMEM;
			goto out;
		}
		for (int c = 0; c < s->ncpus; c++) {
			row->count += s->percpu[c].count;
			row->bytes += s->percpu[c].bytes;
			lat_sum(&row->q2c, &s->percpu[c].q2c);
			lat_sum(&row->d2c, &s->percpu[c].d2c);
		}
	}

	/* Spilled completions land in this interval, whichever epoch they were counted in:
	 * a request near the flip may be reported one interval early, never lost. */
	s->filling = snap;
	ret = ring_buffer__consume(s->spills);
	s->filling = NULL;
	if (ret < 0)
		goto out;
	ret = 0;

	snap->drops = stat_sum(s, IOLAT_STAT_DROPS);
	snap->hist_drops = stat_sum(s, IOLAT_STAT_HIST_DROPS);
	snap->requeues = stat_sum(s, IOLAT_STAT_REQUEUES);
	snap->merges = stat_sum(s, IOLAT_STAT_MERGES);
	snap->inflight = 0;
	while (bpf_map_get_next_key(ifd, iprev, &ikey) == 0) {
		snap->inflight++;
		iprev = &ikey;
	}
	snap->inflight_max = bpf_map__max_entries(s->skel->maps.inflight);
	snap->attach = s->btf_mode ? "tp_btf" : "raw_tp";
	snap->start = s->last;
	clock_gettime(CLOCK_REALTIME, &snap->end);
	s->last = snap->end;
	lat_snapshot_sort(snap);
	lat_coverage_count(snap);
	{
		__u64 missed = s->missed_runs;

		if (lat_session_missed_runs(s, &missed) == 0) {
			snap->missed_runs = missed - s->missed_runs;
			s->missed_runs = missed;
		}
	}
out:
	free(keys);
	return ret;
}

