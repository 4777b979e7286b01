// SPDX-License-Identifier: MIT
/*
 * debt_log.c: the database's log as the debt guard's signal (see debt_log.h). Everything
 * here runs inside a program's I/O call, so only raw syscalls: the shim's own wrappers
 * would time a pread or note an open, and a step must not recurse into itself.
 */
#include "debt_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "core/sys.h"

void debt_log_note(struct debt_log *d, int fd)
{
	char link[32], path[DEBT_LOG_PATH_MAX];
	uint32_t idle = 0;
	struct stat st;
	int saved = errno;
	long len;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = sys_call(SYS_readlinkat, AT_FDCWD, link, path, sizeof(path) - 1);
	/* Another process of the tree, with its own cwd, must find it: absolute paths only. */
	if (len <= 0 || len >= (long)sizeof(path) - 1 || path[0] != '/' ||
	    sys_call(SYS_fstat, fd, &st) != 0 ||
	    !atomic_compare_exchange_strong(&d->busy, &idle, 1))
		goto out;
	path[len] = '\0';
	atomic_fetch_add(&d->gen, 1); /* odd: being written */
	memcpy(d->path, path, (size_t)len + 1);
	d->note_dev = st.st_dev;
	d->note_ino = st.st_ino;
	d->note_size = (uint64_t)st.st_size;
	atomic_fetch_add(&d->gen, 1); /* even: complete */
	atomic_store(&d->busy, 0);
out:
	errno = saved;
}

/* A new file at the path: its options and events are printed again. */
static void forget_lsm(struct debt_log *d)
{
	d->lsm_events = 0;
	d->l0_files = d->l0_slowdown = d->l0_stop = 0;
}

/* Take a new note, if one came and is complete; a torn copy is retried at the next step. */
static void adopt_note(struct debt_log *d)
{
	uint32_t gen = atomic_load(&d->gen);

	if (gen == d->seen_gen || (gen & 1))
		return;
	memcpy(d->cur_path, d->path, sizeof(d->cur_path));
	d->cur_path[sizeof(d->cur_path) - 1] = '\0';
	d->dev = d->note_dev;
	d->ino = d->note_ino;
	d->offset = d->note_size;
	forget_lsm(d);
	if (atomic_load(&d->gen) != gen) {
		d->cur_path[0] = '\0'; /* written meanwhile: not this time */
		return;
	}
	d->seen_gen = gen;
}

static uint64_t count(const char *text, size_t len, const char *needle)
{
	size_t nlen = strlen(needle);
	uint64_t n = 0;

	for (const char *p = text, *end = text + len;
	     (p = memmem(p, (size_t)(end - p), needle, nlen)) != NULL; p += nlen)
		n++;
	return n;
}

/*
 * The number after @p (spaces skipped) up to @end, into *@v; false when there is none.
 * Clipped at a million: only a floor is computed from it.
 */
static bool number_at(const char *p, const char *end, uint32_t *v)
{
	uint32_t n = 0;

	while (p < end && *p == ' ')
		p++;
	if (p >= end || *p < '0' || *p > '9')
		return false;
	for (; p < end && *p >= '0' && *p <= '9'; p++)
		n = n < 1000000 ? n * 10 + (uint32_t)(*p - '0') : n;
	*v = n;
	return true;
}

/*
 * The number after each @needle in @text into *@v: the last, or with @smallest the smallest
 * (0 in *@v: none yet). How many were found.
 */
static uint64_t numbers_after(const char *text, size_t len, const char *needle, uint32_t *v,
			      bool smallest)
{
	size_t nlen = strlen(needle);
	const char *end = text + len;
	uint64_t n = 0;
	uint32_t x;

	for (const char *p = text; (p = memmem(p, (size_t)(end - p), needle, nlen)) != NULL;) {
		p += nlen;
		if (!number_at(p, end, &x))
			continue;
		n++;
		if (!smallest || !*v || x < *v)
			*v = x;
	}
	return n;
}

/* The L0 of the last lsm_state, the smallest triggers (0: not seen). */
static void scan_lsm(struct debt_log *d, const char *text, size_t len)
{
	d->lsm_events += numbers_after(text, len, DEBT_LOG_LSM_TEXT, &d->l0_files, false);
	numbers_after(text, len, DEBT_LOG_SLOWDOWN_TEXT, &d->l0_slowdown, true);
	numbers_after(text, len, DEBT_LOG_STOPAT_TEXT, &d->l0_stop, true);
}

enum adaptive_debt debt_log_scan(struct debt_log *d, const char *text, size_t len)
{
	uint64_t slow = count(text, len, DEBT_LOG_SLOW_TEXT);
	uint64_t stop = count(text, len, DEBT_LOG_STOP_TEXT);

	d->slow_lines += slow;
	d->stop_lines += stop;
	scan_lsm(d, text, len);
	return stop ? ADAPTIVE_DEBT_STOP : slow ? ADAPTIVE_DEBT_SLOW : ADAPTIVE_DEBT_NONE;
}

void debt_log_fill(const struct debt_log *d, struct adaptive_window *w)
{
	uint32_t trigger = d->l0_slowdown;
	bool known;

	if (d->l0_stop && (!trigger || d->l0_stop < trigger))
		trigger = d->l0_stop;
	known = d->lsm_events && trigger;
	w->l0_files = known ? d->l0_files : 0;
	w->l0_trigger = known ? trigger : 0;
}

/*
 * Where to start reading @st: from the top of a new file at the path (RocksDB moves its old
 * LOG aside and starts a new one) or of a truncated one (seen only if it is still shorter
 * than what was read); past a backlog larger than a step reads (old news, counted as
 * skipped). The step's last chunk is slack: each chunk stops at its last complete line.
 */
static void place(struct debt_log *d, const struct stat *st)
{
	uint64_t size = (uint64_t)st->st_size;
	uint64_t most = (uint64_t)DEBT_LOG_CHUNK * (DEBT_LOG_CHUNKS - 1);

	if ((uint64_t)st->st_dev != d->dev || (uint64_t)st->st_ino != d->ino) {
		d->dev = st->st_dev;
		d->ino = st->st_ino;
		d->offset = 0;
		forget_lsm(d);
	}
	if (size < d->offset) {
		d->offset = 0;
		forget_lsm(d);
	}
	if (size - d->offset > most) {
		d->skipped += size - most - d->offset;
		d->offset = size - most;
	}
}

/* Read and scan the complete lines appended since the last step. */
static enum adaptive_debt read_new(struct debt_log *d)
{
	enum adaptive_debt worst = ADAPTIVE_DEBT_NONE, debt;
	struct stat st;
	long fd = sys_call(SYS_openat, AT_FDCWD, d->cur_path,
			   O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return worst;
	if (sys_call(SYS_fstat, fd, &st) != 0 || !S_ISREG(st.st_mode))
		goto out;
	place(d, &st);
	for (int i = 0; i < DEBT_LOG_CHUNKS; i++) {
		long n = sys_call(SYS_pread64, fd, d->scratch, DEBT_LOG_CHUNK, d->offset);
		const char *nl;
		size_t used;

		if (n <= 0)
			break;
		nl = memrchr(d->scratch, '\n', (size_t)n);
		if (!nl && n < (long)DEBT_LOG_CHUNK)
			break; /* a line still being written: read it whole next time */
		used = nl ? (size_t)(nl - d->scratch) + 1 : (size_t)n;
		debt = debt_log_scan(d, d->scratch, used);
		worst = debt > worst ? debt : worst;
		d->offset += used;
	}
out:
	sys_close((int)fd);
	return worst;
}

enum adaptive_debt debt_log_poll(struct debt_log *d, uint64_t now_ns)
{
	enum adaptive_debt seen;

	adopt_note(d);
	if (!d->cur_path[0])
		return ADAPTIVE_DEBT_NONE;
	seen = read_new(d);
	if (seen == ADAPTIVE_DEBT_STOP)
		d->stop_until_ns = now_ns + DEBT_LOG_HOLD_NS;
	if (seen != ADAPTIVE_DEBT_NONE)
		d->slow_until_ns = now_ns + DEBT_LOG_HOLD_NS;
	if (now_ns < d->stop_until_ns)
		return ADAPTIVE_DEBT_STOP;
	return now_ns < d->slow_until_ns ? ADAPTIVE_DEBT_SLOW : ADAPTIVE_DEBT_NONE;
}
