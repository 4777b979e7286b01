// SPDX-License-Identifier: MIT
/*
 * state_file.c: keep this process's state file (format in state_file.h) for the exporter.
 * Publishing may happen inside a wrapped call made from a signal handler, so it uses raw
 * syscalls, stack buffers and no lock: two threads publishing at once each write their own
 * temp file (named by tid) and the later rename wins, which is at worst one change behind
 * until the next one.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "globals.h"
#include "state_file.h"
#include "adaptive/adaptive_view.h"
#include "core/cgroup_tier.h"
#include "core/ioprio.h"
#include "core/sys.h"

/* The directory (at most STATE_DIR_MAX - 1), "/.", pid, ".", tid, ".tmp" and a NUL. */
#define PATH_LEN (STATE_DIR_MAX + 32)
/*
 * The file's text at its longest: about 130 bytes of header, 8 thread lines of 24, and
 * under a target 3 + ADAPTIVE_VIEW_NFIELDS lines of at most 51 ("adaptive_", a name of
 * up to 19, a 20-digit number): 1.7 KiB with 27 fields. A text cut at its end would lose
 * lines silently, so the buffer is sized from the table, with room to spare.
 */
#define STATE_TEXT_MAX (512 + 64 * (3 + ADAPTIVE_VIEW_NFIELDS))

static const char *state_dir;   /* shim.cfg.state_dir once it is usable; NULL: off */
static pid_t state_owner;       /* the pid whose file this memory wrote */
static struct adaptive_region *adaptive; /* the controller to show, under a target */

void state_file_show_adaptive(struct adaptive_region *r)
{
	adaptive = r;
}

void state_file_init(void)
{
	const char *dir = shim.cfg.state_dir;

	/* No directory, no publishing: one syscall now instead of a failed open per change. */
	if (dir[0] && sys_call(SYS_faccessat, AT_FDCWD, dir, W_OK | X_OK, 0) == 0)
		state_dir = dir;
}

/* Tiny appenders for a fixed buffer; they stop quietly at its end. */
struct out {
	char *p, *end;
};

static void put_str(struct out *o, const char *s)
{
	while (*s && o->p < o->end)
		*o->p++ = *s++;
}

static void put_num(struct out *o, unsigned long long v)
{
	char digits[SYS_DECIMAL_MAX];

	sys_decimal(v, digits);
	put_str(o, digits);
}

static void put_path(struct out *o, const char *prefix, pid_t pid, pid_t tid)
{
	put_str(o, state_dir);
	put_str(o, prefix);
	put_num(o, (unsigned long long)pid);
	if (tid) {
		put_str(o, ".");
		put_num(o, (unsigned long long)tid);
		put_str(o, ".tmp");
	} else {
		put_str(o, STATE_FILE_SUFFIX);
	}
	*o->p = '\0';
}

static unsigned long long own_starttime(void)
{
	char buf[1024];
	long n = sys_read_text("/proc/self/stat", buf, sizeof(buf));

	return n > 0 ? state_file_starttime(buf, (unsigned long)n) : 0;
}

static const char *tier_name(int tier)
{
	return tier == IOTIER_LOW ? "low" : tier == IOTIER_HIGH ? "high" : "untagged";
}

/* Tagged threads by tier (low, high) and I/O class (none, rt, be, idle). */
static void count_threads(const struct state_table *t, unsigned counts[2][4])
{
	unsigned n = __atomic_load_n(&t->header.slot_high, __ATOMIC_ACQUIRE);

	for (unsigned i = 0; i < n && i < STATE_TABLE_SLOTS; i++) {
		const struct state_slot *s = &t->slots[i];
		int tier = __atomic_load_n(&s->tier, __ATOMIC_RELAXED);
		int prio = __atomic_load_n(&s->applied_ioprio, __ATOMIC_RELAXED);

		if (!__atomic_load_n(&s->in_use, __ATOMIC_ACQUIRE) ||
		    !__atomic_load_n(&s->tid, __ATOMIC_RELAXED) ||
		    (tier != IOTIER_LOW && tier != IOTIER_HIGH))
			continue;
		counts[tier == IOTIER_LOW ? 0 : 1][prio < 0 ? 0 : ioprio_class(prio) & 3]++;
	}
}

static void put_line(struct out *o, const char *name, unsigned long long v)
{
	put_str(o, name);
	put_str(o, " ");
	put_num(o, v);
	put_str(o, "\n");
}

/* The controller, when this process runs under a target: numbers only, no formatting. */
static void format_adaptive(struct out *o)
{
	struct adaptive_view v;

	if (!adaptive || adaptive_view_read(adaptive_view_copy_local, adaptive, &v))
		return;
	put_line(o, "adaptive_target_permille", v.target.permille);
	put_line(o, "adaptive_target_factor_milli", v.target.relative ? v.target.factor_milli : 0);
	put_line(o, "adaptive_target_latency_ns", v.target.relative ? 0 : v.target.latency_ns);
	for (unsigned i = 0; i < ADAPTIVE_VIEW_NFIELDS; i++) {
		put_str(o, "adaptive_");
		put_line(o, adaptive_view_fields[i].name, *adaptive_view_at(&v, i));
	}
}

/* The low cgroup's weight, once there is one: "none" when the kernel offers no weight file. */
static void format_low_cgroup(struct out *o)
{
	int weight = cgroup_tier_weight();

	if (weight < 0)
		return;
	if (weight == 0)
		put_str(o, "low_cgroup_weight none\n");
	else
		put_line(o, "low_cgroup_weight", (unsigned long long)weight);
}

static void format_state(struct out *o, pid_t pid)
{
	unsigned counts[2][4] = { { 0 } };

	count_threads(shim.table, counts);
	put_str(o, STATE_FILE_MAGIC "\npid ");
	put_num(o, (unsigned long long)pid);
	put_str(o, "\nstarttime ");
	put_num(o, own_starttime());
	put_str(o, "\nprocess_tier ");
	put_str(o, tier_name(atomic_load(&shim.process_tier)));
	put_str(o, "\n");
	for (int t = 0; t < 2; t++)
		for (int c = 0; c < 4; c++) {
			if (!counts[t][c])
				continue;
			put_str(o, "threads ");
			put_str(o, t ? "high " : "low ");
			put_str(o, ioprio_class_name((unsigned)c));
			put_str(o, " ");
			put_num(o, counts[t][c]);
			put_str(o, "\n");
		}
	format_low_cgroup(o);
	format_adaptive(o);
}

static void publish(void)
{
	char tmp[PATH_LEN], final[PATH_LEN], text[STATE_TEXT_MAX];
	struct out o;
	pid_t pid, tid;
	long fd, len, ok;

	if (!state_dir || !shim.table)
		return;
	pid = sys_getpid();
	tid = sys_gettid();
	o = (struct out){ tmp, tmp + sizeof(tmp) - 1 };
	put_path(&o, "/.", pid, tid);
	o = (struct out){ final, final + sizeof(final) - 1 };
	put_path(&o, "/", pid, 0);
	o = (struct out){ text, text + sizeof(text) };
	format_state(&o, pid);
	len = o.p - text;

	fd = sys_call(SYS_openat, AT_FDCWD, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		      0644);
	if (fd < 0)
		return;
	ok = sys_call(SYS_write, fd, text, len) == len;
	sys_close((int)fd);
	if (ok && sys_call(SYS_renameat, AT_FDCWD, tmp, AT_FDCWD, final) == 0)
		state_owner = pid;
	else
		sys_call(SYS_unlinkat, AT_FDCWD, tmp, 0);
}

/* The program never sees the shim's errno: a failed publish is silent. */
void state_file_publish(void)
{
	int saved = errno;

	publish();
	errno = saved;
}

void state_file_remove(void)
{
	char final[PATH_LEN];
	struct out o = { final, final + sizeof(final) - 1 };
	int saved = errno;

	if (!state_dir || !state_owner || sys_getpid() != state_owner)
		return;
	put_path(&o, "/", state_owner, 0);
	sys_call(SYS_unlinkat, AT_FDCWD, final, 0);
	state_owner = 0;
	errno = saved;
}
