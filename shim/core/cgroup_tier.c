// SPDX-License-Identifier: MIT
/*
 * cgroup_tier.c: place low processes (and, on cgroup v1, low threads) in a child cgroup
 * iotier-low.<pid> with a low blkio/io weight, and remove it again. Everything runs on raw
 * syscalls with stack buffers and static state written only at init (or on the first call
 * after a fork), because the shim calls in from I/O wrappers and signal handlers, where
 * malloc, stdio and locks are not safe. Why the child is per process and below the current
 * cgroup is explained in cgroup_tier.h; v1 against v2 in docs/cgroup.md.
 */
#include "cgroup_tier.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "sys.h"

#define BFQ_WEIGHT_MAX 1000   /* blkio.bfq.weight and io.bfq.weight take 1..1000 */
#define CFQ_WEIGHT_MIN 10     /* the old CFQ blkio.weight takes 10..1000 */
#define DEFAULT_WEIGHT 100    /* what a cgroup has before anyone sets it */

/*
 * Everything below is written by cgroup_tier_init (or refresh() on the first call in a
 * forked child) before any placement, and only read afterwards, except the flags, which are
 * set with atomics so that two threads placing at once at worst repeat an idempotent write.
 */
static struct {
	int version;             /* 0 inert, 1 blkio v1, 2 io v2 */
	bool warn;               /* IOTIER_LOG is not off */
	unsigned weight;         /* IOTIER_LOW_WEIGHT */
	bool weight_asked;       /* ... was given, not the default: its absence is warned of */
	enum cgroup_mode mode;
	char mount[PATH_MAX];    /* where the hierarchy is mounted */
	char mount_root[PATH_MAX]; /* which cgroup the mount shows at its top (usually "/") */
	pid_t pid;               /* the process the paths below were computed for */
	char parent[PATH_MAX];   /* the cgroup the process was given, as a path */
	char child[PATH_MAX];    /* parent/iotier-low.<pid> */
	bool pinned;             /* started inside an iotier-low cgroup: stays low */
	bool owned;              /* child is ours to remove at exit */
	int ready;               /* child exists with its weight */
	int placed;              /* the whole process is in child */
	int broken;              /* placement failed once: stop trying (already warned) */
	int weight_file;         /* the child's weight: 1 has one, -1 no weight file, 0 unknown */
} st;


/* ---- raw I/O helpers: no libc buffering, errno preserved for the caller ---- */

static size_t slen(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

/* Append @s to @buf (total size @len); returns -1 when it does not fit. */
static int cat(char *buf, size_t len, const char *s)
{
	size_t used = slen(buf), add = slen(s);

	if (used + add + 1 > len)
		return -1;
	memcpy(buf + used, s, add + 1);
	return 0;
}

/* Build "@a/@b" (or "@a@b" when @b starts with '/') into @out. */
static int join(char *out, size_t len, const char *a, const char *b)
{
	out[0] = '\0';
	if (cat(out, len, a) < 0)
		return -1;
	if (b[0] != '/' && cat(out, len, "/") < 0)
		return -1;
	return cat(out, len, b);
}

static int write_in(const char *dir, const char *file, const char *text)
{
	char path[PATH_MAX];

	if (join(path, sizeof(path), dir, file) < 0)
		return -ENAMETOOLONG;
	return sys_write_text(path, text);
}

static int write_num_in(const char *dir, const char *file, unsigned long v)
{
	char num[24];

	sys_decimal(v, num);
	return write_in(dir, file, num);
}

/* Is @word one of the tokens in @list, separated by any of @seps? */
static bool has_token(const char *list, const char *word, const char *seps)
{
	size_t wl = slen(word);

	for (const char *p = list; *p;) {
		size_t n = 0;

		while (p[n] && !strchr(seps, p[n]))
			n++;
		if (n == wl && !memcmp(p, word, wl))
			return true;
		p += n;
		while (*p && strchr(seps, *p))
			p++;
	}
	return false;
}

/* ---- the one warning ---- */

static void warn_once(const char *what, const char *path, int err)
{
	const char *desc = err ? strerrordesc_np(err) : NULL;

	if (!st.warn)
		return;
	shim_warn_once(WARN_CGROUP, "%s%s%s%s%s; low threads keep only their I/O priority", what,
		       path ? " " : "", path ? path : "", err ? ": " : "",
		       err ? (desc ? desc : "error") : "");
}

/*
 * Does @dir have any weight file? v1 blkio has one only with bfq (or the old CFQ) in the
 * kernel, v2 io only with io.weight's iocost or bfq.
 */
static bool has_weight_file(const char *dir)
{
	static const char *const files[] = { "blkio.bfq.weight", "blkio.weight", "io.weight",
					     "io.bfq.weight" };
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (join(path, sizeof(path), dir, files[i]) == 0 &&
		    sys_call(SYS_faccessat, AT_FDCWD, path, F_OK, 0) == 0)
			return true;
	return false;
}

/* ---- finding the hierarchy and our place in it ---- */

/*
 * Call @fn on each line of @path, read in pieces through a stack buffer (mountinfo can be
 * long). A line longer than the buffer is skipped. Stops when @fn returns non-zero.
 */
static int for_each_line(const char *path, int (*fn)(char *line, void *ctx), void *ctx)
{
	char buf[4096];
	size_t have = 0;
	bool skipping = false;
	long fd = sys_call(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC), n;
	int ret = 0;

	if (fd < 0)
		return -errno;
	for (;;) {
		char *start = buf, *nl;

		n = sys_call(SYS_read, (int)fd, buf + have, sizeof(buf) - 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		while ((nl = memchr(start, '\n', have - (size_t)(start - buf)))) {
			*nl = '\0';
			if (!skipping && (ret = fn(start, ctx)))
				goto out;
			skipping = false;
			start = nl + 1;
		}
		have -= (size_t)(start - buf);
		memmove(buf, start, have);
		if (have == sizeof(buf) - 1) { /* a monster line: drop it */
			have = 0;
			skipping = true;
		}
	}
	if (have && !skipping) {
		buf[have] = '\0';
		ret = fn(buf, ctx);
	}
out:
	sys_call(SYS_close, (int)fd);
	return ret;
}

struct mount_search {
	int version;     /* 1: want a v1 hierarchy holding blkio; 2: want cgroup2 */
	char *mount, *root;
};

/* "36 35 0:30 ROOT MOUNTPOINT OPTS [optional...] - FSTYPE SOURCE SUPEROPTS" */
static int mount_line(char *line, void *ctx)
{
	struct mount_search *ms = ctx;
	char *field[6] = { 0 }, *dash, *fstype, *super;
	int i = 0;

	dash = strstr(line, " - ");
	if (!dash)
		return 0;
	*dash = '\0';
	fstype = dash + 3;
	super = strchr(fstype, ' ');
	if (!super)
		return 0;
	*super++ = '\0';
	super = strchr(super, ' '); /* skip SOURCE */
	if (!super)
		return 0;
	super++;
	for (char *p = line; i < 6 && *p; i++) {
		field[i] = p;
		p = strchr(p, ' ');
		if (!p)
			break;
		*p++ = '\0';
	}
	if (!field[3] || !field[4])
		return 0;
	if (ms->version == 1 && (strcmp(fstype, "cgroup") || !has_token(super, "blkio", ",")))
		return 0;
	if (ms->version == 2 && strcmp(fstype, "cgroup2"))
		return 0;
	if (slen(field[3]) >= PATH_MAX || slen(field[4]) >= PATH_MAX)
		return 0;
	memcpy(ms->root, field[3], slen(field[3]) + 1);
	memcpy(ms->mount, field[4], slen(field[4]) + 1);
	return 1;
}

static bool find_mount(int version, char *mount, char *root)
{
	struct mount_search ms = { version, mount, root };

	return for_each_line("/proc/self/mountinfo", mount_line, &ms) == 1;
}

struct cgroup_search {
	int version;
	char *path;
	size_t len;
};

/* "7:blkio:/a/b" (v1, controllers comma-separated) or "0::/a/b" (v2). */
static int cgroup_line(char *line, void *ctx)
{
	struct cgroup_search *cs = ctx;
	char *c1 = strchr(line, ':'), *c2;

	if (!c1 || !(c2 = strchr(c1 + 1, ':')))
		return 0;
	*c2 = '\0';
	if (cs->version == 1 ? !has_token(c1 + 1, "blkio", ",") : (c1[1] != '\0' || line[0] != '0'))
		return 0;
	if (slen(c2 + 1) + 1 > cs->len)
		return 0;
	memcpy(cs->path, c2 + 1, slen(c2 + 1) + 1);
	return 1;
}

/* The path of @file's cgroup for @version: /proc/.../cgroup → a path below the mount. */
static int task_cgroup(const char *file, int version, char *path, size_t len)
{
	struct cgroup_search cs = { version, path, len };
	int ret = for_each_line(file, cgroup_line, &cs);

	return ret == 1 ? 0 : ret < 0 ? ret : -ENOENT;
}

/* mount + cgroup path, with the mount's own root stripped (bind mounts, namespaces). */
static int cgroup_dir(const char *mount, const char *root, const char *cg, char *out, size_t len)
{
	size_t rl = slen(root);

	if (rl > 1 && !strncmp(cg, root, rl) && (cg[rl] == '/' || cg[rl] == '\0'))
		cg += rl;
	if (!strcmp(cg, "/") || !*cg) {
		out[0] = '\0';
		return cat(out, len, mount);
	}
	return join(out, len, mount, cg);
}

static bool is_low_name(const char *base, pid_t *owner)
{
	size_t pl = slen(CGROUP_LOW_PREFIX);
	unsigned long v = 0;
	const char *p;

	if (strncmp(base, CGROUP_LOW_PREFIX, pl))
		return false;
	for (p = base + pl; *p >= '0' && *p <= '9' && v < INT_MAX; p++)
		v = v * 10 + (unsigned long)(*p - '0');
	if (p == base + pl || *p || v == 0 || v >= INT_MAX)
		return false;
	*owner = (pid_t)v;
	return true;
}

/*
 * Work out parent and child for the calling process. Run at init and again on the first
 * call after a fork, since a child has its own pid and so its own iotier-low.<pid>.
 */
static int locate(void)
{
	char cg[PATH_MAX], dir[PATH_MAX], num[24], *slash;
	pid_t owner;
	int ret;

	st.pid = (pid_t)sys_call(SYS_getpid);
	st.ready = st.placed = st.broken = st.weight_file = 0;
	st.pinned = st.owned = false;
	ret = task_cgroup("/proc/self/cgroup", st.version, cg, sizeof(cg));
	if (ret < 0)
		return ret;
	if (cgroup_dir(st.mount, st.mount_root, cg, dir, sizeof(dir)) < 0)
		return -ENAMETOOLONG;
	slash = strrchr(dir, '/');
	if (slash && slash > dir + slen(st.mount) - 1 && is_low_name(slash + 1, &owner)) {
		/* iotier run --cgroup-weight put us here (owner == us) or a low parent forked us */
		st.pinned = true;
		st.owned = owner == st.pid;
		st.ready = st.placed = 1;
		memcpy(st.child, dir, slen(dir) + 1);
		st.weight_file = has_weight_file(st.child) ? 1 : -1;
		*slash = '\0';
		memcpy(st.parent, dir, slen(dir) + 1);
		return 0;
	}
	memcpy(st.parent, dir, slen(dir) + 1);
	sys_decimal((unsigned long)st.pid, num);
	st.child[0] = '\0';
	if (cat(st.child, sizeof(st.child), st.parent) < 0 ||
	    cat(st.child, sizeof(st.child), "/" CGROUP_LOW_PREFIX) < 0 ||
	    cat(st.child, sizeof(st.child), num) < 0)
		return -ENAMETOOLONG;
	st.owned = true;
	return 0;
}

static bool refresh(void)
{
	/* broken is set by whichever thread fails first, while others read it */
	if (!st.version || __atomic_load_n(&st.broken, __ATOMIC_RELAXED))
		return false;
	if ((pid_t)sys_call(SYS_getpid) != st.pid && locate() < 0) {
		__atomic_store_n(&st.broken, 1, __ATOMIC_RELAXED);
		return false;
	}
	return !__atomic_load_n(&st.broken, __ATOMIC_RELAXED);
}

/* The version that has io/blkio here: v1 when blkio is mounted, else cgroup2 with io. */
static int detect(int want, char *mount, char *root)
{
	char path[PATH_MAX], text[512];

	if (want != 2 && find_mount(1, mount, root))
		return 1;
	if (want != 1 && find_mount(2, mount, root) &&
	    join(path, sizeof(path), mount, "cgroup.controllers") == 0 &&
	    sys_read_text(path, text, sizeof(text)) >= 0 && has_token(text, "io", " \n"))
		return 2;
	return 0;
}

/* Remove empty iotier-low.<pid> siblings whose process is gone (killed before its exit). */
static void remove_stale(void)
{
	char buf[4096], path[PATH_MAX];
	long fd, n;

	fd = sys_call(SYS_openat, AT_FDCWD, st.parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	while ((n = sys_call(SYS_getdents64, (int)fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (void *)(buf + off);
			pid_t owner;

			off += d->reclen;
			if (d->type != DT_DIR || !is_low_name(d->name, &owner))
				continue;
			if (join(path, sizeof(path), st.parent, d->name) < 0 || !strcmp(path, st.child))
				continue;
			/* a live owner may be about to move in; a dead one never will */
			if (owner == st.pid || (sys_call(SYS_kill, owner, 0) < 0 && errno == ESRCH))
				sys_call(SYS_unlinkat, AT_FDCWD, path, AT_REMOVEDIR);
		}
	}
	sys_call(SYS_close, (int)fd);
}

int cgroup_tier_init(const struct config *cfg)
{
	int saved = errno;

	memset(&st, 0, sizeof(st));
	st.warn = cfg->log != LOG_OFF;
	st.weight = cfg->low_weight ? cfg->low_weight : LOW_WEIGHT_DEFAULT;
	st.weight_asked = cfg->low_weight_given;
	st.mode = cfg->cgroup_mode;
	if (st.mode == CGROUP_OFF)
		return 0;
	st.version = detect(st.mode == CGROUP_V1 ? 1 : st.mode == CGROUP_V2 ? 2 : 0, st.mount,
			    st.mount_root);
	if (!st.version) {
		errno = saved;
		if (st.mode == CGROUP_AUTO)
			return 0;
		warn_once(st.mode == CGROUP_V1 ? "IOTIER_CGROUP=v1 but no blkio hierarchy is mounted"
			  : "IOTIER_CGROUP=v2 but cgroup2 has no io controller", NULL, 0);
		return -1;
	}
	if (locate() < 0) {
		st.version = 0;
		errno = saved;
		return 0;
	}
	remove_stale();
	errno = saved;
	return 0;
}

int cgroup_tier_version(void)
{
	return st.version;
}

bool cgroup_tier_usable(void)
{
	return st.version && !__atomic_load_n(&st.broken, __ATOMIC_RELAXED);
}

int cgroup_tier_weight(void)
{
	int file = __atomic_load_n(&st.weight_file, __ATOMIC_RELAXED);

	if (!st.version || (pid_t)sys_call(SYS_getpid) != st.pid || !file)
		return -1;
	return file > 0 ? (int)st.weight : 0;
}

/* ---- placement ---- */

static unsigned clamp(unsigned v, unsigned lo, unsigned hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Write @weight to whichever weight files this kernel has; returns how many took it. */
static int write_weights(unsigned weight)
{
	int n = 0;

	if (st.version == 1) {
		n += write_num_in(st.child, "blkio.bfq.weight", clamp(weight, 1, BFQ_WEIGHT_MAX)) == 0;
		n += write_num_in(st.child, "blkio.weight",
				  clamp(weight, CFQ_WEIGHT_MIN, BFQ_WEIGHT_MAX)) == 0;
	} else {
		char text[32] = "default ";

		sys_decimal(weight, text + 8);
		n += write_in(st.child, "io.weight", text) == 0;
		n += write_num_in(st.child, "io.bfq.weight", clamp(weight, 1, BFQ_WEIGHT_MAX)) == 0;
	}
	return n;
}

static int move_to(const char *dir, const char *file, pid_t id)
{
	return write_num_in(dir, file, (unsigned long)id);
}

static void fail(const char *what, const char *path, int err)
{
	__atomic_store_n(&st.broken, 1, __ATOMIC_RELAXED);
	warn_once(what, path, err);
}

/*
 * v2 only distributes io below a cgroup with no processes of its own (except at the root):
 * enable it in parent's subtree_control, moving ourselves into the child first when the
 * parent is not the root. memory goes with io because writeback is charged through the
 * page's memory cgroup: without it the flusher's I/O would land in the parent.
 */
static int enable_v2(void)
{
	char path[PATH_MAX], text[512];
	bool memory;
	int ret;

	if (join(path, sizeof(path), st.parent, "cgroup.controllers") < 0 ||
	    sys_read_text(path, text, sizeof(text)) < 0 || !has_token(text, "io", " \n"))
		return -ENODEV;
	memory = has_token(text, "memory", " \n");

	if (join(path, sizeof(path), st.parent, "cgroup.subtree_control") < 0 ||
	    sys_read_text(path, text, sizeof(text)) < 0)
		return -ENOENT;
	if (!has_token(text, "io", " \n")) {
		ret = sys_write_text(path, "+io");
		if (ret == -EBUSY) {
			/* the parent holds us: step into the child, then try again */
			if (move_to(st.child, "cgroup.procs", st.pid) == 0)
				__atomic_store_n(&st.placed, 1, __ATOMIC_RELAXED);
			ret = sys_write_text(path, "+io");
		}
		if (ret < 0)
			return ret;
	}
	if (memory && !has_token(text, "memory", " \n"))
		sys_write_text(path, "+memory"); /* best effort: weights work without it */
	return 0;
}

/* Make the child exist with the low weight. Returns 0, or -1 after warning. */
static int ensure_child(void)
{
	long r;
	int ret;

	if (__atomic_load_n(&st.ready, __ATOMIC_RELAXED))
		return 0;
	r = sys_call(SYS_mkdirat, AT_FDCWD, st.child, 0755);
	if (r < 0 && errno != EEXIST) {
		fail("cannot create cgroup", st.child, errno);
		return -1;
	}
	if (st.version == 2 && (ret = enable_v2()) < 0) {
		if (st.placed)
			move_to(st.parent, "cgroup.procs", st.pid);
		st.placed = 0;
		sys_call(SYS_unlinkat, AT_FDCWD, st.child, AT_REMOVEDIR);
		fail(ret == -EBUSY ? "cannot enable io (other processes share the cgroup) in"
		     : ret == -ENODEV ? "io controller not delegated to" : "cannot enable io in",
		     st.parent, ret == -EBUSY || ret == -ENODEV ? 0 : -ret);
		return -1;
	}
	/*
	 * No weight file: the kernel offers no weight here (v1 blkio without bfq). A weight the
	 * user asked for and cannot have is worth the one warning; the default's absence would
	 * only be noise on every wrapped program's stderr, so it is told where one looks for it
	 * instead: the state file and `iotier threads` (docs/cgroup.md).
	 */
	if (write_weights(st.weight) == 0) {
		__atomic_store_n(&st.weight_file, -1, __ATOMIC_RELAXED);
		if (st.weight_asked)
			warn_once("no weight file (blkio.bfq.weight, blkio.weight, io.weight) in",
				  st.child, 0);
	} else {
		__atomic_store_n(&st.weight_file, 1, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&st.ready, 1, __ATOMIC_RELAXED);
	return 0;
}

void cgroup_tier_process(bool low)
{
	int saved = errno, ret;

	if (!refresh() || st.pinned)
		goto out;
	if (low) {
		if (ensure_child() < 0 || __atomic_load_n(&st.placed, __ATOMIC_RELAXED))
			goto out;
		ret = move_to(st.child, "cgroup.procs", st.pid);
		if (ret < 0)
			fail("cannot move the process into", st.child, -ret);
		else
			__atomic_store_n(&st.placed, 1, __ATOMIC_RELAXED);
	} else if (__atomic_load_n(&st.ready, __ATOMIC_RELAXED)) {
		ret = move_to(st.parent, "cgroup.procs", st.pid);
		if (ret == -EBUSY) /* v2 parent with io enabled: neutralise the weight instead */
			write_weights(DEFAULT_WEIGHT);
		else if (ret == 0)
			__atomic_store_n(&st.placed, 0, __ATOMIC_RELAXED);
		if (ret == -EBUSY)
			__atomic_store_n(&st.ready, 0, __ATOMIC_RELAXED);
	}
out:
	errno = saved;
}

void cgroup_tier_thread(pid_t tid, bool low)
{
	int saved = errno, ret;

	if (!refresh() || st.version != 1 || st.pinned)
		goto out;
	if (low) {
		if (ensure_child() < 0)
			goto out;
		ret = move_to(st.child, "tasks", tid);
		if (ret < 0 && ret != -ESRCH)
			fail("cannot move a thread into", st.child, -ret);
	} else if (__atomic_load_n(&st.ready, __ATOMIC_RELAXED)) {
		move_to(st.parent, "tasks", tid);
	}
out:
	errno = saved;
}

/* for_each_line callback: stop (1) at a process other than ours. */
static int other_process_line(char *line, void *ctx)
{
	pid_t self = *(const pid_t *)ctx;
	long pid = 0;

	for (; *line >= '0' && *line <= '9'; line++)
		pid = pid * 10 + (*line - '0');
	return pid != 0 && pid != self;
}

/*
 * rmdir of the low cgroup failed with EBUSY. That is final when another process (a forked
 * child) still sits in it. But our own threads that have just ended keep it populated too:
 * pthread_join() returns when the kernel clears the thread's tid, which is before that thread
 * leaves its cgroup in do_exit(), and a move through cgroup.procs skips exiting threads. So
 * while the cgroup holds nothing but ourselves, it is retried, @max_tries times 1 ms apart.
 */
static void remove_child_when_threads_gone(int max_tries)
{
	struct timespec tick = { 0, 1000000 }; /* 1 ms between tries */
	char procs[PATH_MAX];
	pid_t self = st.pid;

	if (join(procs, sizeof(procs), st.child, "cgroup.procs") < 0)
		return;
	for (int tries = 0; tries < max_tries; tries++) {
		if (sys_call(SYS_unlinkat, AT_FDCWD, st.child, AT_REMOVEDIR) == 0 || errno != EBUSY)
			return;
		if (for_each_line(procs, other_process_line, &self) != 0)
			return; /* a child process, or unreadable: the next run's init removes it */
		sys_call(SYS_nanosleep, &tick, NULL);
	}
}

void cgroup_tier_exit(void)
{
	int saved = errno;
	bool moved;

	if (!st.version || (pid_t)sys_call(SYS_getpid) != st.pid || !st.owned)
		goto out;
	if (!__atomic_load_n(&st.ready, __ATOMIC_RELAXED) &&
	    !__atomic_load_n(&st.placed, __ATOMIC_RELAXED))
		goto out;
	/* v1 threads may sit in the child even when the process does not: move them all. If
	 * that failed, our live threads hold the cgroup and waiting would not help. */
	moved = move_to(st.parent, "cgroup.procs", st.pid) == 0;
	/* EBUSY when a forked child still uses it; the next run's init removes it when empty */
	remove_child_when_threads_gone(moved ? 50 : 1);
	/* other threads may still be running and reading these */
	__atomic_store_n(&st.ready, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&st.placed, 0, __ATOMIC_RELAXED);
out:
	errno = saved;
}

/* ---- describing any thread, for `iotier threads` ---- */

int cgroup_describe_task(pid_t pid, pid_t tid, char *cgroup, size_t len, unsigned *weight)
{
	char mount[PATH_MAX], root[PATH_MAX], file[64], num[24], dir[PATH_MAX], path[PATH_MAX];
	char text[128];
	static const char *const files[3][2] = {
		{ NULL, NULL },
		{ "blkio.bfq.weight", "blkio.weight" },
		{ "io.weight", "io.bfq.weight" },
	};
	int version = detect(0, mount, root), ret;

	*weight = 0;
	if (!version)
		return -ENODEV;
	file[0] = '\0';
	sys_decimal((unsigned long)pid, num);
	cat(file, sizeof(file), "/proc/");
	cat(file, sizeof(file), num);
	cat(file, sizeof(file), "/task/");
	sys_decimal((unsigned long)tid, num);
	cat(file, sizeof(file), num);
	cat(file, sizeof(file), "/cgroup");
	ret = task_cgroup(file, version, cgroup, len);
	if (ret < 0)
		return ret;
	if (cgroup_dir(mount, root, cgroup, dir, sizeof(dir)) < 0)
		return version;
	for (int i = 0; i < 2 && !*weight; i++) {
		char *p;

		if (join(path, sizeof(path), dir, files[version][i]) < 0 ||
		    sys_read_text(path, text, sizeof(text)) <= 0)
			continue;
		/* "100", or v2's "default 100\n8:0 200": the default is what we show */
		p = strstr(text, "default ");
		p = p ? p + 8 : text;
		while (*p >= '0' && *p <= '9')
			*weight = *weight * 10 + (unsigned)(*p++ - '0');
	}
	return version;
}
