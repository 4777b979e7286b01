// SPDX-License-Identifier: MIT
/*
 * refdisk-fs: the reference disk's device model, a small FUSE file system whose one data
 * file ("disk") is as fast as a model says, not as fast as the host's disk. The data lives
 * in anonymous memory (it dies with the process, so a crash leaves nothing on disk). Every
 * read or write of "disk" takes model time: a per-request latency plus size / bandwidth,
 * served by N channels, first come first served, with no priority, like the queue inside a
 * real device. bench/refdisk/refdisk puts a loop device (direct I/O) on the file, so that the block
 * layer, its scheduler and iotier's priorities act in front of a device whose speed is the
 * same on every host.
 *
 * Two more files steer and watch it: "model" reads and sets "LAT_US BW_BYTES_PER_S CHANNELS"
 * (0 0 N switches the model off, to measure the FUSE round trip itself), and "stats" reads
 * the counters: requests and bytes per direction, the largest request, the model time
 * handed out, and how late the sleeps woke (the emulation's own error).
 *
 * usage: refdisk-fs --size BYTES --lat-us N --bw BYTES_PER_S --channels N [--rt-prio N]
 *                   [-f] MOUNTPOINT
 */
#define FUSE_USE_VERSION 314
#include <errno.h>
#include <fuse3/fuse.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "refdisk-model.h"

#define MAX_REQUEST (1u << 20) /* the largest FUSE request we ask the kernel for */

static struct {
	char *data;
	uint64_t size;
	struct refdisk_model model; /* guarded by lock */
	pthread_mutex_t lock;
} disk = { .lock = PTHREAD_MUTEX_INITIALIZER };

enum node { NODE_ROOT, NODE_DISK, NODE_MODEL, NODE_STATS, NODE_NONE };

static enum node lookup(const char *path)
{
	if (strcmp(path, "/") == 0)
		return NODE_ROOT;
	if (strcmp(path, "/disk") == 0)
		return NODE_DISK;
	if (strcmp(path, "/model") == 0)
		return NODE_MODEL;
	if (strcmp(path, "/stats") == 0)
		return NODE_STATS;
	return NODE_NONE;
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	memset(st, 0, sizeof(*st));
	st->st_nlink = 1;
	switch (lookup(path)) {
	case NODE_ROOT:
		st->st_mode = S_IFDIR | 0700;
		st->st_nlink = 2;
		return 0;
	case NODE_DISK:
		st->st_mode = S_IFREG | 0600;
		st->st_size = (off_t)disk.size;
		st->st_blocks = (blkcnt_t)(disk.size / 512);
		st->st_blksize = 4096;
		return 0;
	case NODE_MODEL:
	case NODE_STATS:
		/* a size the text always fits in; reads return the real length */
		st->st_mode = S_IFREG | 0600;
		st->st_size = 4096;
		return 0;
	default:
		return -ENOENT;
	}
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	(void)off, (void)fi, (void)flags;
	if (lookup(path) != NODE_ROOT)
		return -ENOENT;
	static const char *const names[] = { ".", "..", "disk", "model", "stats" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		fill(buf, names[i], NULL, 0, 0);
	return 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
	switch (lookup(path)) {
	case NODE_DISK:
		/* Not FOPEN_DIRECT_IO: the loop device opens the file O_DIRECT itself, and the
		 * kernel's direct_IO path for such a file submits asynchronously (async_dio), so
		 * the loop device's requests reach us in parallel instead of one at a time
		 * behind the inode lock. */
		return 0;
	case NODE_MODEL:
	case NODE_STATS:
		fi->direct_io = 1; /* never cached: every read asks us */
		return 0;
	default:
		return -ENOENT;
	}
}

static int text_read(const char *text, char *buf, size_t len, off_t off)
{
	size_t n = strlen(text);
	if ((size_t)off >= n)
		return 0;
	n -= (size_t)off;
	if (n > len)
		n = len;
	memcpy(buf, text + off, n);
	return (int)n;
}

/* Clip a request to the disk's end; 0 bytes past it. */
static size_t clip(size_t len, off_t off)
{
	if (off < 0 || (uint64_t)off >= disk.size)
		return 0;
	return (uint64_t)off + len > disk.size ? (size_t)(disk.size - (uint64_t)off) : len;
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Take the model's time for one request: reserve a channel, copy, sleep to the finish. */
static void serve(int write, size_t len)
{
	int64_t arrive = now_ns(), done;

	pthread_mutex_lock(&disk.lock);
	done = refdisk_model_admit(&disk.model, arrive, write, len);
	pthread_mutex_unlock(&disk.lock);
	if (done > arrive) {
		struct timespec ts = { .tv_sec = done / 1000000000, .tv_nsec = done % 1000000000 };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	int64_t late = now_ns() - done;
	pthread_mutex_lock(&disk.lock);
	refdisk_model_finished(&disk.model, late > 0 ? late : 0);
	pthread_mutex_unlock(&disk.lock);
}

static int fs_read(const char *path, char *buf, size_t len, off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	char text[1024];

	switch (lookup(path)) {
	case NODE_DISK:
		len = clip(len, off);
		if (len) {
			memcpy(buf, disk.data + off, len);
			serve(0, len);
		}
		return (int)len;
	case NODE_MODEL:
		pthread_mutex_lock(&disk.lock);
		refdisk_model_format(&disk.model, text, sizeof(text));
		pthread_mutex_unlock(&disk.lock);
		return text_read(text, buf, len, off);
	case NODE_STATS:
		pthread_mutex_lock(&disk.lock);
		refdisk_stats_format(&disk.model, text, sizeof(text));
		pthread_mutex_unlock(&disk.lock);
		return text_read(text, buf, len, off);
	default:
		return -ENOENT;
	}
}

static int fs_write(const char *path, const char *buf, size_t len, off_t off,
		    struct fuse_file_info *fi)
{
	(void)fi;
	char text[128];
	int rc;

	switch (lookup(path)) {
	case NODE_DISK:
		len = clip(len, off);
		if (!len)
			return -ENOSPC;
		memcpy(disk.data + off, buf, len);
		serve(1, len);
		return (int)len;
	case NODE_MODEL:
		if (off != 0 || len >= sizeof(text))
			return -EINVAL;
		memcpy(text, buf, len);
		text[len] = '\0';
		pthread_mutex_lock(&disk.lock);
		rc = refdisk_model_parse(&disk.model, text);
		pthread_mutex_unlock(&disk.lock);
		return rc < 0 ? rc : (int)len;
	default:
		return -EACCES;
	}
}

/* Writes to model and stats come with O_TRUNC from a shell's `>`: accept and ignore it. */
static int fs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	(void)size, (void)fi;
	return lookup(path) == NODE_MODEL ? 0 : -EACCES;
}

/* Discard (the loop device turns it into a punched hole): give the memory back, for free
 * in model time, so that fstrim between benchmark runs keeps the footprint small. */
static int fs_fallocate(const char *path, int mode, off_t off, off_t len, struct fuse_file_info *fi)
{
	(void)fi;
	if (lookup(path) != NODE_DISK)
		return -EACCES;
	if (mode != (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE))
		return mode == 0 ? 0 : -EOPNOTSUPP; /* plain allocation: memory is always there */
	size_t n = clip((size_t)len, off);
	if (!n)
		return 0;
	long page = sysconf(_SC_PAGESIZE);
	uint64_t lo = ((uint64_t)off + page - 1) / page * page, hi = ((uint64_t)off + n) / page * page;
	if (hi > lo) {
		memset(disk.data + off, 0, lo - (uint64_t)off);
		madvise(disk.data + lo, hi - lo, MADV_DONTNEED); /* reads back as zeros */
		memset(disk.data + hi, 0, (uint64_t)off + n - hi);
	} else {
		memset(disk.data + off, 0, n);
	}
	return 0;
}

static int fs_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path, (void)datasync, (void)fi;
	return 0; /* memory is as durable as this disk gets */
}

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	/* Whole loop requests in one FUSE request (up to 1 MiB), so that the per-request
	 * latency is paid once per block-layer request, as on a real device. Reads are sized
	 * by the kernel's max_pages, which libfuse derives from max_write. */
	conn->max_write = MAX_REQUEST;
	conn->want |= conn->capable & FUSE_CAP_ASYNC_DIO;
	cfg->entry_timeout = cfg->attr_timeout = 3600;
	cfg->negative_timeout = 0;
	return NULL;
}

static const struct fuse_operations ops = {
	.init = fs_init,
	.getattr = fs_getattr,
	.readdir = fs_readdir,
	.open = fs_open,
	.read = fs_read,
	.write = fs_write,
	.truncate = fs_truncate,
	.fallocate = fs_fallocate,
	.fsync = fs_fsync,
};

/* A device keeps its own time whatever else the host runs: the model's sleeps must end on
 * time on a loaded 2-core machine, where a normal thread wakes up milliseconds late. So
 * every thread of the daemon runs SCHED_FIFO (inherited by the threads libfuse starts), with
 * no timer slack. The threads mostly sleep; their work is a copy of at most 1 MiB. */
static void realtime(int prio)
{
	struct sched_param sp = { .sched_priority = prio };

	if (prio > 0 && sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
		fprintf(stderr, "refdisk-fs: SCHED_FIFO %d: %s; model times will be late under load\n",
			prio, strerror(errno));
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
}

static void usage(FILE *to)
{
	fprintf(to, "usage: refdisk-fs --size BYTES --lat-us N --bw BYTES_PER_S --channels N [--rt-prio N] [-f] MOUNTPOINT\n");
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-')
		return -1;
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "size", required_argument, NULL, 's' }, { "lat-us", required_argument, NULL, 'l' },
		{ "bw", required_argument, NULL, 'b' },	  { "channels", required_argument, NULL, 'c' },
		{ "rt-prio", required_argument, NULL, 'r' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t size = 0, lat_us = 0, bw = 0, channels = 1, rt_prio = 10;
	int foreground = 0, c;
	char model_text[128];

	while ((c = getopt_long(argc, argv, "fh", longopts, NULL)) != -1) {
		uint64_t *dst = c == 's' ? &size : c == 'l' ? &lat_us : c == 'b' ? &bw :
				c == 'r' ? &rt_prio : &channels;
		switch (c) {
		case 's': case 'l': case 'b': case 'c': case 'r':
			if (parse_u64(optarg, dst) < 0) {
				fprintf(stderr, "refdisk-fs: '%s' is not a whole number\n", optarg);
				return 2;
			}
			break;
		case 'f': foreground = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (rt_prio > 99) {
		fprintf(stderr, "refdisk-fs: --rt-prio is 0 (off) to 99\n");
		return 2;
	}
	if (optind != argc - 1 || size == 0 || size % 4096) {
		fprintf(stderr, "refdisk-fs: a MOUNTPOINT and a --size (a multiple of 4096) are required\n");
		return 2;
	}
	snprintf(model_text, sizeof(model_text), "%" PRIu64 " %" PRIu64 " %" PRIu64, lat_us, bw, channels);
	if (refdisk_model_parse(&disk.model, model_text) < 0) {
		fprintf(stderr, "refdisk-fs: bad model '%s' (channels 1..%d)\n", model_text, REFDISK_MAX_CHANNELS);
		return 2;
	}
	disk.size = size;
	/* NORESERVE: pages are only taken when written; unwritten ones read as zeros. */
	disk.data = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (disk.data == MAP_FAILED) {
		perror("refdisk-fs: mmap");
		return 1;
	}

	char *fargv[] = { argv[0], "-o", "fsname=refdisk,subtype=refdisk", NULL };
	struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
	struct fuse *f = fuse_new(&args, &ops, sizeof(ops), NULL);
	int rc = 1;
	if (!f)
		return 1;
	if (fuse_mount(f, argv[optind]) != 0)
		goto out_destroy;
	/* SIGINT/SIGTERM/SIGHUP end the loop; the unmount below then runs. */
	if (fuse_set_signal_handlers(fuse_get_session(f)) != 0)
		goto out_unmount;
	if (fuse_daemonize(foreground) != 0)
		goto out_signals;
	realtime((int)rt_prio);
	struct fuse_loop_config *cfg = fuse_loop_cfg_create();
	/* Enough threads for every request the loop device can have out (its driver tags) and
	 * the pieces a large one is split into; each sleeps its model time. */
	fuse_loop_cfg_set_max_threads(cfg, 64);
	fuse_loop_cfg_set_idle_threads(cfg, 16);
	rc = fuse_loop_mt(f, cfg) ? 1 : 0;
	fuse_loop_cfg_destroy(cfg);
out_signals:
	fuse_remove_signal_handlers(fuse_get_session(f));
out_unmount:
	fuse_unmount(f);
out_destroy:
	fuse_destroy(f);
	return rc;
}
