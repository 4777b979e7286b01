// SPDX-License-Identifier: MIT
/*
 * stalls_session.c: user-space side of bpf/stalls.bpf.c. It probes the kernel's BTF for the
 * tracepoints the tool needs (and picks the folio or the older page variants), sets the
 * filters and syscall numbers in rodata, loads, attaches and reads the maps one interval at
 * a time: the kernel writes under an epoch that a read flips first, so the interval being
 * read is no longer written while it is copied and deleted.
 */
#include "stalls_session.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "stalls.skel.h"
#include "trace/common/bpf_print.h"
#include "trace/common/kernel_probe.h"
#include "trace/lat/lat_session.h" /* lat_preflight */

struct stalls_session {
	struct stalls *skel;
	uint32_t epoch;
};

/* Which variants this kernel has; the names are what a refusal says is missing. */
static int probe_tracepoints(struct stalls *skel, char *err, size_t errlen)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool folio_wait, folio_dirty;
	const char *missing = NULL;

	if (!btf) {
		snprintf(err, errlen, "cannot read the kernel's BTF: %s", strerror(errno));
		return -ENOENT;
	}
	folio_wait = kernel_tp_args(btf, "folio_wait_writeback", "folio") == 2;
	folio_dirty = kernel_tp_args(btf, "writeback_dirty_folio", "folio") == 2;
	/* stalls_dirty_throttle reads `pause`, the 7th of 8 arguments since 4.11. */
	if (kernel_tp_args(btf, "balance_dirty_pages", "bdi_writeback") != 8)
		missing = "writeback:balance_dirty_pages (wb, dtc, ..., pause, start_time)";
	else if (!folio_wait && kernel_tp_args(btf, "wait_on_page_writeback", "page") != 2)
		missing = "writeback:folio_wait_writeback or wait_on_page_writeback";
	else if (!folio_dirty && kernel_tp_args(btf, "writeback_dirty_page", "page") != 2)
		missing = "writeback:writeback_dirty_folio or writeback_dirty_page";
	else if (kernel_tp_args(btf, "sys_enter", "pt_regs") != 2 ||
		 kernel_tp_args(btf, "sys_exit", "pt_regs") != 2)
		missing = "raw_syscalls:sys_enter and sys_exit";
	else if (btf__find_by_name_kind(btf, "btf_trace_sched_switch", BTF_KIND_TYPEDEF) < 0)
		missing = "sched:sched_switch";
	btf__free(btf);
	if (missing) {
		snprintf(err, errlen, "the kernel lacks the tracepoint %s in its BTF", missing);
		return -ENOTSUP;
	}
	bpf_program__set_autoload(skel->progs.stalls_folio_wait, folio_wait);
	bpf_program__set_autoload(skel->progs.stalls_page_wait, !folio_wait);
	bpf_program__set_autoload(skel->progs.stalls_dirty_folio, folio_dirty);
	bpf_program__set_autoload(skel->progs.stalls_dirty_page, !folio_dirty);
	return 0;
}

static void set_rodata(struct stalls *skel, const struct stalls_options *opt)
{
	skel->rodata->filter_tgids = opt->filter_pids;
	skel->rodata->follow_children = opt->children;
	skel->rodata->n_devs = opt->n_devs;
	for (unsigned i = 0; i < opt->n_devs; i++)
		skel->rodata->devs[i] = opt->devs[i];
	skel->rodata->nr_fsync = SYS_fsync;
	skel->rodata->nr_fdatasync = SYS_fdatasync;
#ifdef SYS_sync_file_range
	skel->rodata->nr_sync_file_range = SYS_sync_file_range;
#endif
}

int stalls_session_open(struct stalls_session **out, const struct stalls_options *opt,
			char *err, size_t errlen)
{
	struct stalls_session *s;
	int ret;

	*out = NULL;
	if (opt->n_devs > STALLS_MAX_DEVS) {
		snprintf(err, errlen, "at most %d devices", STALLS_MAX_DEVS);
		return -EINVAL;
	}
	/* Name the missing capability or BTF in one line, not libbpf's generic errors. */
	if (lat_preflight(err, errlen) < 0)
		return -EPERM;
	bpf_print_setup(opt->verbose);
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	/* open: parse the object, nothing in the kernel yet */
	s->skel = stalls__open();
	if (!s->skel) {
		ret = -errno;
		snprintf(err, errlen, "cannot open the BPF object: %s", strerror(-ret));
		goto fail;
	}
	ret = probe_tracepoints(s->skel, err, errlen);
	if (ret)
		goto fail;
	/* rodata: filters, so the verifier drops the branches a run does not use */
	set_rodata(s->skel, opt);
	/* load: verify and create the maps */
	ret = stalls__load(s->skel);
	if (ret) {
		snprintf(err, errlen, "cannot load the BPF program (needs root or CAP_BPF and "
			 "CAP_PERFMON, and kernel BTF): %s", strerror(-ret));
		goto fail;
	}
	*out = s;
	return 0;
fail:
	stalls_session_close(s);
	return ret;
}

static int track(struct stalls_session *s, uint32_t tgid)
{
	uint8_t one = 1;

	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.tracked), &tgid, &one, BPF_ANY) < 0)
		return -errno;
	return 0;
}

/* The parent of @pid from /proc/PID/stat, 0 when it is gone. */
static uint32_t parent_of(uint32_t pid)
{
	char path[64], buf[512], *paren;
	uint32_t ppid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	/* The name may hold spaces and parentheses: the fields resume after the last ')'. */
	if (fgets(buf, sizeof(buf), f) && (paren = strrchr(buf, ')')) &&
	    sscanf(paren + 1, " %*c %u", &ppid) != 1)
		ppid = 0;
	fclose(f);
	return ppid;
}

/* Is @pid a descendant of @root? Ancestry is short; the bound guards against a cycle. */
static bool descends_from(uint32_t pid, uint32_t root)
{
	for (int depth = 0; depth < 64 && pid > 1; depth++) {
		pid = parent_of(pid);
		if (pid == root)
			return true;
	}
	return false;
}

int stalls_session_follow(struct stalls_session *s, pid_t pid, bool tree)
{
	struct dirent *d;
	DIR *proc;
	int ret = track(s, (uint32_t)pid);

	if (ret || !tree)
		return ret;
	/* Children forked from now on are followed in the kernel; these exist already. */
	proc = opendir("/proc");
	if (!proc)
		return -errno;
	while ((d = readdir(proc)) && !ret) {
		char *end;
		unsigned long other = strtoul(d->d_name, &end, 10);

		if (*end || !other || other == (unsigned long)pid)
			continue;
		if (descends_from((uint32_t)other, (uint32_t)pid))
			ret = track(s, (uint32_t)other);
	}
	closedir(proc);
	return ret;
}

int stalls_session_attach(struct stalls_session *s, char *err, size_t errlen)
{
	/* attach: every tracepoint at once; until then nothing is counted */
	int ret = stalls__attach(s->skel);

	if (ret)
		snprintf(err, errlen, "cannot attach the BPF programs: %s", strerror(-ret));
	return ret;
}

static void copy_name(char *dst, const char *src)
{
	memcpy(dst, src, STALLS_COMM_LEN);
	dst[STALLS_COMM_LEN] = '\0';
}

static int read_stats(struct stalls_session *s, uint32_t old, struct stalls_snapshot *snap)
{
	int fd = bpf_map__fd(s->skel->maps.stats);
	struct stalls_key key, next;
	struct stalls_stats st;
	void *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct stalls_row *rows, *r;

		key = next;
		prev = &key;
		if (key.epoch != old || bpf_map_lookup_elem(fd, &key, &st) < 0)
			continue;
		rows = realloc(snap->rows, (snap->n_rows + 1) * sizeof(*rows));
		if (!rows)
			return -ENOMEM;
		snap->rows = rows;
		r = &rows[snap->n_rows++];
		r->tgid = key.tgid;
		r->tid = key.tid;
		r->ioprio = key.ioprio;
		r->cause = key.cause;
		copy_name(r->thread, key.comm);
		copy_name(r->process, key.pcomm);
		r->lat = st.lat;
	}
	/* Deleted after the walk: deleting under get_next_key would restart it. */
	for (size_t i = 0; i < snap->n_rows; i++) {
		const struct stalls_row *r = &snap->rows[i];

		memset(&key, 0, sizeof(key));
		key.epoch = old;
		key.tgid = r->tgid;
		key.tid = r->tid;
		key.ioprio = r->ioprio;
		key.cause = r->cause;
		memcpy(key.comm, r->thread, STALLS_COMM_LEN);
		memcpy(key.pcomm, r->process, STALLS_COMM_LEN);
		bpf_map_delete_elem(fd, &key);
	}
	return 0;
}

static int read_dirtiers(struct stalls_session *s, uint32_t old, struct stalls_snapshot *snap)
{
	int fd = bpf_map__fd(s->skel->maps.dirtied);
	struct stalls_dirty_key key, next, *gone = NULL;
	struct stalls_dirty d;
	size_t n_gone = 0;
	void *prev = NULL;
	int ret = 0;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct stalls_dirtier *list, *x;
		struct stalls_dirty_key *g;

		key = next;
		prev = &key;
		if (key.epoch != old || bpf_map_lookup_elem(fd, &key, &d) < 0)
			continue;
		list = realloc(snap->dirtiers, (snap->n_dirtiers + 1) * sizeof(*list));
		g = list ? realloc(gone, (n_gone + 1) * sizeof(*gone)) : NULL;
		if (list)
			snap->dirtiers = list;
		if (!g) {
			ret = -ENOMEM;
			break;
		}
		gone = g;
		gone[n_gone++] = key;
		x = &list[snap->n_dirtiers++];
		x->tgid = key.tgid;
		x->tid = key.tid;
		copy_name(x->thread, key.comm);
		copy_name(x->process, key.pcomm);
		x->bytes = d.bytes;
	}
	for (size_t i = 0; i < n_gone; i++)
		bpf_map_delete_elem(fd, &gone[i]);
	free(gone);
	return ret;
}

int stalls_session_read(struct stalls_session *s, struct stalls_snapshot *snap)
{
	int counters_fd = bpf_map__fd(s->skel->maps.counters);
	uint32_t old = s->epoch;
	int ret;

	stalls_snapshot_free(snap);
	/* Flip first: from here on the kernel counts into the other epoch. */
	s->epoch ^= 1;
	__atomic_store_n(&s->skel->bss->epoch, s->epoch, __ATOMIC_SEQ_CST);
	ret = read_stats(s, old, snap);
	if (!ret)
		ret = read_dirtiers(s, old, snap);
	for (uint32_t i = 0; i < STALLS_NR_COUNTERS; i++) {
		uint64_t v = 0;

		if (bpf_map_lookup_elem(counters_fd, &i, &v) == 0)
			snap->counters[i] = v;
	}
	return ret;
}

void stalls_session_close(struct stalls_session *s)
{
	if (!s)
		return;
	stalls__destroy(s->skel);
	free(s);
}
