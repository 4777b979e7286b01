// SPDX-License-Identifier: MIT
/*
 * matrix-load: one cell of the adaptive matrix (bench/matrix/README.md) in one process.
 * Foreground reader threads named fg-N read 4 KiB at random offsets of a file in a pattern
 * (steady QD1, QD4, bursty on/off, open-loop Poisson); one background thread named bg-0
 * (the one `iotier run --low 'bg-*'` matches) writes, syncs or reads in bulk at the same
 * time. Every read's start and latency is kept, so that the percentiles are exact and the
 * reaction after each idle spell can be found; the background's bytes are counted per
 * 100 ms bucket so that its rate while the foreground reads and while it sleeps can be told
 * apart, and under a target the controller's level beside them (ctl_trace.h). One JSON line
 * of results goes to stdout. Only pread and pwrite are used: those are what the adaptive
 * tier gates today.
 *
 *   matrix-load --dir DIR --seconds S --pattern steady|qd4|bursty:ON_MS:OFF_MS|poisson:RATE
 *               --read dio|buf --bg none|dio|bufsync|seqread|wal [--bg-size BYTES]
 *               [--fg-wal] [--react-us US]
 * DIR holds fg.dat (read by the foreground), bg.dat (written by the background), seq.dat
 * (read by the seqread background) and wal.log (the shared log), made by bench/matrix/run.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ctl_trace.h"

#define READ_SIZE 4096
#define MAX_FG 4
#define BUCKET_NS 100000000LL /* background bytes per 100 ms */
#define WINDOW_NS 10000000LL  /* reaction: 10 ms windows */
#define WAL_EVERY 8           /* a foreground append after every 8th read */
#define WAL_FG_SIZE 4096
#define WAL_BG_SIZE (256 << 10)
#define WAL_WRAP (64LL << 20)
#define SYNC_EVERY (16LL << 20) /* bufsync: fdatasync after every 16 MiB */

enum pattern { P_STEADY, P_QD4, P_BURSTY, P_POISSON };
enum bgkind { BG_NONE, BG_DIO, BG_BUFSYNC, BG_SEQREAD, BG_WAL };

struct sample {
	uint32_t start_us; /* since t0 */
	uint32_t lat_ns;   /* saturates at ~4.3 s */
};

struct fg {
	pthread_t tid;
	int id, fd;
	uint64_t seed;
	struct sample *s;
	size_t n, cap, dropped;
	double *waits; /* lock waits in ns (WAL loads) */
	size_t nw, wcap;
};

static struct {
	const char *dir;
	double seconds;
	enum pattern pattern;
	int64_t on_ns, off_ns;
	double rate; /* poisson: arrivals per second, all threads together */
	int direct;
	enum bgkind bg;
	size_t bg_size;
	int fg_wal;
	double react_us;
	int nfg;
	off_t fg_span, bg_span, seq_span;
	int64_t t0, end;
	atomic_int stop;
	_Atomic uint64_t *buckets;
	int nbuckets;
	pthread_mutex_t wal_lock; /* with the two tickets: a FIFO lock, like a WAL's writer queue */
	pthread_cond_t wal_turn;
	uint64_t wal_next, wal_serving;
	int wal_fd;
	off_t wal_off; /* under wal_lock */
	uint64_t bg_syncs;
} g = { .bg_size = 1 << 20, .wal_lock = PTHREAD_MUTEX_INITIALIZER,
      .wal_turn = PTHREAD_COND_INITIALIZER };

static void die(const char *what)
{
	fprintf(stderr, "matrix-load: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr, "usage: matrix-load --dir DIR --seconds S --pattern "
			"steady|qd4|bursty:ON_MS:OFF_MS|poisson:RATE --read dio|buf\n"
			"       --bg none|dio|bufsync|seqread|wal [--bg-size B] [--fg-wal] "
			"[--react-us US]\n");
	exit(2);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_until(int64_t t)
{
	struct timespec ts = { .tv_sec = t / 1000000000, .tv_nsec = t % 1000000000 };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static uint64_t rnd(uint64_t *s)
{
	/* xorshift64*: cheap, per thread, no lock */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static int open_in(const char *name, int flags)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", g.dir, name);
	int fd = open(path, flags);
	if (fd < 0)
		die(path);
	return fd;
}

static off_t size_of(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		die("fstat");
	return st.st_size;
}

/* Bursty: is t (since t0) in an on period? Periods start with on. */
static int in_on(int64_t t)
{
	if (g.pattern != P_BURSTY)
		return 1;
	return t % (g.on_ns + g.off_ns) < g.on_ns;
}

static void *xmalloc(size_t n)
{
	void *p = calloc(1, n);

	if (!p)
		die("calloc");
	return p;
}

/* The shared log's lock, first come first served: a plain mutex lets the background take it
 * again straight after it drops it, and the foreground would starve for seconds, which no
 * WAL does (RocksDB and PostgreSQL queue their writers). */
static void wal_lock(void)
{
	pthread_mutex_lock(&g.wal_lock);
	uint64_t me = g.wal_next++;
	while (g.wal_serving != me)
		pthread_cond_wait(&g.wal_turn, &g.wal_lock);
	pthread_mutex_unlock(&g.wal_lock);
}

static void wal_unlock(void)
{
	pthread_mutex_lock(&g.wal_lock);
	g.wal_serving++;
	pthread_cond_broadcast(&g.wal_turn);
	pthread_mutex_unlock(&g.wal_lock);
}

/* The foreground's part of the shared log: lock (timed), append, fdatasync, unlock. */
static void fg_append(struct fg *f, const char *buf)
{
	int64_t t = now_ns();

	wal_lock();
	if (f->nw < f->wcap)
		f->waits[f->nw++] = (double)(now_ns() - t);
	if (pwrite(g.wal_fd, buf, WAL_FG_SIZE, g.wal_off) != WAL_FG_SIZE)
		die("wal pwrite");
	g.wal_off = (g.wal_off + WAL_FG_SIZE) % WAL_WRAP;
	if (fdatasync(g.wal_fd))
		die("wal fdatasync");
	wal_unlock();
}

static void fg_read_one(struct fg *f, char *buf, int64_t issued)
{
	off_t off = (off_t)(rnd(&f->seed) % (uint64_t)(g.fg_span / READ_SIZE)) * READ_SIZE;

	if (pread(f->fd, buf, READ_SIZE, off) != READ_SIZE)
		die("fg pread");
	int64_t done = now_ns();
	/* buffered: forget the page so that the next read of it goes to the device too */
	if (!g.direct)
		posix_fadvise(f->fd, off, READ_SIZE, POSIX_FADV_DONTNEED);
	if (f->n < f->cap) {
		int64_t lat = done - issued;
		f->s[f->n].start_us = (uint32_t)((issued - g.t0) / 1000);
		f->s[f->n].lat_ns = lat > UINT32_MAX ? UINT32_MAX : (uint32_t)lat;
		f->n++;
	} else {
		f->dropped++;
	}
}

static void *fg_main(void *arg)
{
	struct fg *f = arg;
	char name[16];
	char *buf;
	uint64_t reads = 0;
	/* open-loop: each of nfg threads takes rate / nfg of the arrivals */
	double mean_gap_ns = g.rate > 0 ? 1e9 * g.nfg / g.rate : 0;
	int64_t next = g.t0;

	snprintf(name, sizeof(name), "fg-%d", f->id);
	pthread_setname_np(pthread_self(), name);
	if (posix_memalign((void **)&buf, 4096, READ_SIZE))
		die("posix_memalign");
	memset(buf, 'f', READ_SIZE);
	while (!atomic_load(&g.stop)) {
		int64_t t = now_ns();
		if (t >= g.end)
			break;
		if (!in_on(t - g.t0)) {
			int64_t c = g.on_ns + g.off_ns;
			sleep_until(g.t0 + ((t - g.t0) / c + 1) * c);
			continue;
		}
		int64_t issued = t;
		if (g.pattern == P_POISSON) {
			double u = (double)(rnd(&f->seed) >> 11) / 9007199254740992.0;
			next += (int64_t)(-log(1.0 - u) * mean_gap_ns);
			if (next > t)
				sleep_until(next);
			issued = next; /* latency from the arrival: an open loop counts its queue */
		}
		fg_read_one(f, buf, issued);
		if (g.fg_wal && ++reads % WAL_EVERY == 0)
			fg_append(f, buf);
	}
	free(buf);
	return NULL;
}

static void bg_count(uint64_t bytes)
{
	int64_t b = (now_ns() - g.t0) / BUCKET_NS;

	if (b >= 0 && b < g.nbuckets)
		atomic_fetch_add(&g.buckets[b], bytes);
}

/* O_DIRECT pieces (bg_size) over bg.dat, or buffered 1 MiB writes with an fdatasync per
 * 16 MiB. */
static void bg_writes(int direct)
{
	int fd = open_in("bg.dat", O_WRONLY | (direct ? O_DIRECT : 0));
	size_t sz = direct ? g.bg_size : 1 << 20;
	off_t off = 0, since_sync = 0;
	char *buf;

	if (posix_memalign((void **)&buf, 4096, sz))
		die("posix_memalign");
	memset(buf, 'b', sz);
	while (!atomic_load(&g.stop) && now_ns() < g.end) {
		if (off + (off_t)sz > g.bg_span)
			off = 0;
		if (pwrite(fd, buf, sz, off) != (ssize_t)sz)
			die("bg pwrite");
		off += sz;
		if (direct) {
			bg_count(sz);
			continue;
		}
		since_sync += sz;
		if (since_sync >= SYNC_EVERY) {
			if (fdatasync(fd))
				die("bg fdatasync");
			bg_count(since_sync); /* the bytes reach the device by the sync */
			since_sync = 0;
			g.bg_syncs++;
		}
	}
	free(buf);
	close(fd);
}

/* Buffered sequential 1 MiB reads of seq.dat, so that kernel readahead does the I/O; the
 * file's pages are dropped at each wrap so that every pass reads the device. */
static void bg_seqread(void)
{
	int fd = open_in("seq.dat", O_RDONLY);
	size_t sz = 1 << 20;
	off_t off = 0;
	char *buf = xmalloc(sz);

	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	while (!atomic_load(&g.stop) && now_ns() < g.end) {
		if (off + (off_t)sz > g.seq_span) {
			off = 0;
			posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		}
		if (pread(fd, buf, sz, off) != (ssize_t)sz)
			die("bg pread");
		off += sz;
		bg_count(sz);
	}
	free(buf);
	close(fd);
}

/* The WAL in miniature: the background's large appends, each synced under the lock the
 * foreground's small appends also take. */
static void bg_wal(void)
{
	char *buf = xmalloc(WAL_BG_SIZE);

	memset(buf, 'w', WAL_BG_SIZE);
	while (!atomic_load(&g.stop) && now_ns() < g.end) {
		wal_lock();
		if (pwrite(g.wal_fd, buf, WAL_BG_SIZE, g.wal_off) != WAL_BG_SIZE)
			die("wal pwrite");
		g.wal_off = (g.wal_off + WAL_BG_SIZE) % WAL_WRAP;
		if (fdatasync(g.wal_fd))
			die("wal fdatasync");
		wal_unlock();
		bg_count(WAL_BG_SIZE);
		g.bg_syncs++;
	}
	free(buf);
}

static void *bg_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "bg-0");
	switch (g.bg) {
	case BG_DIO: bg_writes(1); break;
	case BG_BUFSYNC: bg_writes(0); break;
	case BG_SEQREAD: bg_seqread(); break;
	case BG_WAL: bg_wal(); break;
	case BG_NONE: break;
	}
	return NULL;
}

/* ---- results ---- */

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int cmp_start(const void *a, const void *b)
{
	const struct sample *x = a, *y = b;

	return (x->start_us > y->start_us) - (x->start_us < y->start_us);
}

/* The q-quantile of n sorted values (nearest rank); 0 for none. */
static double quant(const double *v, size_t n, double q)
{
	if (!n)
		return 0;
	size_t i = (size_t)ceil(q * (double)n);
	return v[i ? i - 1 : 0];
}

/* Does every read that starts in [s[j].start, s[j].start + 10 ms), cut at @end_us, take at
 * most react_us? */
static int window_clean(const struct sample *s, size_t n, size_t j, int64_t end_us)
{
	int64_t until = s[j].start_us + WINDOW_NS / 1000;
	if (until > end_us)
		until = end_us;
	for (; j < n && s[j].start_us < until; j++)
		if (s[j].lat_ns > g.react_us * 1000)
			return 0;
	return 1;
}

/*
 * Bursty: for each on period after the first (the first has no idle spell before it), how
 * long from its first read until the reader is back under react_us for good, two ways
 * (JSON arrays of ms; a period that never got there counts whole):
 *  - reaction_ms: to the first of the 10 ms windows laid from that first read whose reads
 *    all took at most react_us. Its steps are 10 ms: one slow first read makes it 10.
 *  - reaction_fine_ms: to the first read that opens a clean 10 ms window (every read
 *    starting in the 10 ms from it took at most react_us), read by read: a first read that
 *    waited behind a piece already on the device, then none, gives the second read's start.
 */
static void print_reaction(const struct sample *s, size_t n, int fine)
{
	int64_t c_us = (g.on_ns + g.off_ns) / 1000, on_us = g.on_ns / 1000;
	int first = 1;
	size_t i = 0;

	printf("\"%s\":[", fine ? "reaction_fine_ms" : "reaction_ms");
	for (int64_t p = c_us; g.pattern == P_BURSTY && g.react_us > 0; p += c_us) {
		while (i < n && s[i].start_us < p)
			i++;
		if (i >= n)
			break;
		if (s[i].start_us >= p + on_us)
			continue;
		int64_t ts = s[i].start_us, got = -1;
		if (fine) {
			for (size_t j = i; j < n && s[j].start_us < p + on_us && got < 0; j++)
				if (window_clean(s, n, j, p + on_us))
					got = s[j].start_us - ts;
		} else {
			for (int64_t w = ts; w < p + on_us && got < 0; w += WINDOW_NS / 1000) {
				double worst = -1;
				for (; i < n && s[i].start_us < w + WINDOW_NS / 1000; i++)
					if (s[i].lat_ns > worst)
						worst = s[i].lat_ns;
				if (worst >= 0 && worst <= g.react_us * 1000)
					got = w - ts;
			}
		}
		printf("%s%.1f", first ? "" : ",", (got < 0 ? on_us : got) / 1000.0);
		first = 0;
	}
	printf("],");
}

/* The background's MB/s in buckets where the foreground was meant to read (busy) and where
 * it slept (idle), by the pattern's own schedule; the last partial bucket is left out. */
static void print_background(void)
{
	double busy_b = 0, idle_b = 0;
	int busy_n = 0, idle_n = 0, full = (int)((g.end - g.t0) / BUCKET_NS);

	for (int b = 0; b < full && b < g.nbuckets; b++) {
		int64_t mid = b * BUCKET_NS + BUCKET_NS / 2;
		double v = (double)atomic_load(&g.buckets[b]);
		if (in_on(mid)) {
			busy_b += v;
			busy_n++;
		} else {
			idle_b += v;
			idle_n++;
		}
	}
	double bt = BUCKET_NS / 1e9;
	printf("\"bg_mb_s\":%.3f,\"bg_mb_s_busy\":%.3f,\"bg_mb_s_idle\":%.3f,\"busy_s\":%.1f,"
	       "\"idle_s\":%.1f,\"bg_syncs\":%llu,\"bg_buckets_mb\":[",
	       (busy_b + idle_b) / 1e6 / ((busy_n + idle_n) * bt + 1e-9),
	       busy_b / 1e6 / (busy_n * bt + 1e-9), idle_n ? idle_b / 1e6 / (idle_n * bt) : 0.0,
	       busy_n * bt, idle_n * bt, (unsigned long long)g.bg_syncs);
	for (int b = 0; b < full && b < g.nbuckets; b++)
		printf("%s%.2f", b ? "," : "", (double)atomic_load(&g.buckets[b]) / 1e6);
	printf("],");
}

/*
 * Per 100 ms bucket, beside bg_buckets_mb, of the reads that started in it: the worst
 * latency (ms, from arrival) and how many took over react_us (k x alone's percentile, the
 * target's bound). They tell when a tail happened and where the run's slow reads are, which
 * a P99 over the run cannot (one stall of a second and sixty quiet buckets give the same
 * P99 as a steady tail). s is sorted by start; a bucket without reads is 0.
 */
static void print_fg_buckets(const struct sample *s, size_t n)
{
	int full = (int)((g.end - g.t0) / BUCKET_NS);
	size_t i = 0;

	printf("\"fg_worst_ms\":[");
	for (int b = 0; b < full; b++) {
		uint32_t worst = 0;
		for (; i < n && (int64_t)s[i].start_us * 1000 < (b + 1) * BUCKET_NS; i++)
			worst = s[i].lat_ns > worst ? s[i].lat_ns : worst;
		printf("%s%.2f", b ? "," : "", worst / 1e6);
	}
	printf("],\"fg_slow\":[");
	i = 0;
	for (int b = 0; b < full; b++) {
		unsigned slow = 0;
		for (; i < n && (int64_t)s[i].start_us * 1000 < (b + 1) * BUCKET_NS; i++)
			slow += g.react_us > 0 && s[i].lat_ns > g.react_us * 1000;
		printf("%s%u", b ? "," : "", slow);
	}
	printf("],");
}

static void print_results(struct fg *fgs)
{
	size_t n = 0, nw = 0, dropped = 0;

	for (int i = 0; i < g.nfg; i++) {
		n += fgs[i].n;
		nw += fgs[i].nw;
		dropped += fgs[i].dropped;
	}
	struct sample *all = xmalloc((n + 1) * sizeof(*all));
	double *lat = xmalloc((n + 1) * sizeof(*lat)), *waits = xmalloc((nw + 1) * sizeof(double));
	size_t k = 0, kw = 0;
	for (int i = 0; i < g.nfg; i++) {
		memcpy(all + k, fgs[i].s, fgs[i].n * sizeof(*all));
		k += fgs[i].n;
		memcpy(waits + kw, fgs[i].waits, fgs[i].nw * sizeof(double));
		kw += fgs[i].nw;
	}
	double lat_sum = 0;
	for (size_t i = 0; i < n; i++) {
		lat[i] = all[i].lat_ns / 1e3;
		lat_sum += lat[i];
	}
	qsort(lat, n, sizeof(*lat), cmp_dbl);
	qsort(waits, nw, sizeof(*waits), cmp_dbl);
	qsort(all, n, sizeof(*all), cmp_start);
	double busy_s = 0, wait_sum = 0;
	for (int64_t t = 0; t < g.end - g.t0; t += BUCKET_NS)
		busy_s += in_on(t + BUCKET_NS / 2) ? BUCKET_NS / 1e9 : 0;
	for (size_t i = 0; i < nw; i++)
		wait_sum += waits[i];
	printf("{\"reads\":%zu,\"dropped\":%zu,\"reads_per_s\":%.1f,\"p50_us\":%.1f,\"p99_us\":%.1f,"
	       "\"p999_us\":%.1f,\"max_us\":%.1f,\"mean_us\":%.1f,",
	       n, dropped, n / (busy_s + 1e-9), quant(lat, n, 0.5), quant(lat, n, 0.99),
	       quant(lat, n, 0.999), n ? lat[n - 1] : 0.0, lat_sum / (n + 1e-9));
	printf("\"lock_waits\":%zu,\"lock_wait_p99_us\":%.1f,\"lock_wait_max_us\":%.1f,"
	       "\"lock_wait_ms_per_s\":%.3f,",
	       nw, quant(waits, nw, 0.99) / 1e3, nw ? waits[nw - 1] / 1e3 : 0.0,
	       wait_sum / 1e6 / (busy_s + 1e-9));
	print_background();
	print_reaction(all, n, 0);
	print_reaction(all, n, 1);
	print_fg_buckets(all, n);
	ctl_trace_print((int)((g.end - g.t0) / BUCKET_NS));
	printf("\"react_us\":%.1f,\"seconds\":%.1f}\n", g.react_us, (g.end - g.t0) / 1e9);
	free(all);
	free(lat);
	free(waits);
}

/* ---- setup ---- */

static void parse_pattern(const char *v)
{
	double a, b;

	if (!strcmp(v, "steady")) {
		g.pattern = P_STEADY;
	} else if (!strcmp(v, "qd4")) {
		g.pattern = P_QD4;
	} else if (sscanf(v, "bursty:%lf:%lf", &a, &b) == 2 && a > 0 && b > 0) {
		g.pattern = P_BURSTY;
		g.on_ns = (int64_t)(a * 1e6);
		g.off_ns = (int64_t)(b * 1e6);
	} else if (sscanf(v, "poisson:%lf", &a) == 1 && a > 0) {
		g.pattern = P_POISSON;
		g.rate = a;
	} else {
		usage();
	}
}

static enum bgkind parse_bg(const char *v)
{
	static const char *names[] = { "none", "dio", "bufsync", "seqread", "wal" };

	for (int i = 0; i < 5; i++)
		if (!strcmp(v, names[i]))
			return (enum bgkind)i;
	usage();
	return BG_NONE;
}

static void parse(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(o, "--fg-wal")) {
			g.fg_wal = 1;
			continue;
		}
		if (!v)
			usage();
		i++;
		if (!strcmp(o, "--dir"))
			g.dir = v;
		else if (!strcmp(o, "--seconds"))
			g.seconds = atof(v);
		else if (!strcmp(o, "--pattern"))
			parse_pattern(v);
		else if (!strcmp(o, "--read") && (!strcmp(v, "dio") || !strcmp(v, "buf")))
			g.direct = !strcmp(v, "dio");
		else if (!strcmp(o, "--bg"))
			g.bg = parse_bg(v);
		else if (!strcmp(o, "--bg-size"))
			g.bg_size = (size_t)strtoull(v, NULL, 0);
		else if (!strcmp(o, "--react-us"))
			g.react_us = atof(v);
		else
			usage();
	}
	if (!g.dir || g.seconds <= 0 || g.bg_size < 4096 || g.bg_size % 4096)
		usage();
	if (g.bg == BG_WAL)
		g.fg_wal = 1;
	g.nfg = g.pattern == P_QD4 || g.pattern == P_POISSON ? MAX_FG : 1;
}

int main(int argc, char **argv)
{
	struct fg fgs[MAX_FG] = { 0 };
	pthread_t bg;

	parse(argc, argv);
	pthread_setname_np(pthread_self(), "matrix-main");
	int probe = open_in("fg.dat", O_RDONLY);
	g.fg_span = size_of(probe);
	close(probe);
	if (g.bg == BG_DIO || g.bg == BG_BUFSYNC) {
		probe = open_in("bg.dat", O_RDONLY);
		g.bg_span = size_of(probe);
		close(probe);
	}
	if (g.bg == BG_SEQREAD) {
		probe = open_in("seq.dat", O_RDONLY);
		g.seq_span = size_of(probe);
		close(probe);
	}
	if (g.fg_wal)
		g.wal_fd = open_in("wal.log", O_WRONLY);
	g.nbuckets = (int)(g.seconds * 1e9 / BUCKET_NS) + 2;
	g.buckets = xmalloc(g.nbuckets * sizeof(*g.buckets));
	/* 40k reads/s per thread is more than the fastest preset gives one QD1 thread here */
	size_t cap = (size_t)(g.seconds * 40000) + 1024;
	for (int i = 0; i < g.nfg; i++) {
		fgs[i].id = i;
		fgs[i].seed = 0x9e3779b97f4a7c15ULL * (i + 1);
		fgs[i].cap = cap;
		fgs[i].s = xmalloc(cap * sizeof(struct sample));
		fgs[i].wcap = cap / WAL_EVERY + 1;
		fgs[i].waits = xmalloc(fgs[i].wcap * sizeof(double));
		fgs[i].fd = open_in("fg.dat", O_RDONLY | (g.direct ? O_DIRECT : 0));
		if (!g.direct) {
			posix_fadvise(fgs[i].fd, 0, 0, POSIX_FADV_RANDOM);
			posix_fadvise(fgs[i].fd, 0, 0, POSIX_FADV_DONTNEED);
		}
	}
	g.t0 = now_ns();
	g.end = g.t0 + (int64_t)(g.seconds * 1e9);
	ctl_trace_start(g.t0, BUCKET_NS, g.nbuckets);
	if (g.bg != BG_NONE && pthread_create(&bg, NULL, bg_main, NULL))
		die("pthread_create");
	for (int i = 0; i < g.nfg; i++)
		if (pthread_create(&fgs[i].tid, NULL, fg_main, &fgs[i]))
			die("pthread_create");
	for (int i = 0; i < g.nfg; i++)
		pthread_join(fgs[i].tid, NULL);
	atomic_store(&g.stop, 1);
	if (g.bg != BG_NONE)
		pthread_join(bg, NULL);
	ctl_trace_stop();
	print_results(fgs);
	return 0;
}
