/* SPDX-License-Identifier: MIT */
/*
 * state_file_format.h: the small text file each shimmed process keeps under IOTIER_STATE_DIR
 * (default /run/iotier) so that `iotier lat --listen` can publish which tiers and classes
 * the shims gave out (docs/operations.md). One file per process, <pid>.state:
 *
 *     iotier-shim-state 1
 *     pid 1234
 *     starttime 5678            (field 22 of /proc/PID/stat: tells a reused pid apart)
 *     process_tier low          (low, high or untagged: what comm:/cmdline: rules say)
 *     threads low idle 3        (tagged threads, by tier and the class they run with)
 *     low_cgroup_weight 10      (once the process has an iotier-low.<pid> cgroup: its weight,
 *                                or "none" when the kernel offers no weight file there, as
 *                                blkio v1 without bfq; docs/cgroup.md)
 *     adaptive_target_permille 990   (under a target only: the controller, one number a
 *     adaptive_level 5                line, as shim/adaptive/adaptive_view.h names the fields)
 *     adaptive_last_step_ns 81234567890  (CLOCK_MONOTONIC of the controller's last step)
 *
 * Under a target, the process that runs the controller also rewrites its file after a
 * step, at most every STATE_FILE_ADAPTIVE_EVERY_NS; the controller is one per process tree,
 * so the files of a tree's processes carry the same adaptive_creator_pid, and the one with
 * the latest adaptive_last_step_ns (then the most adaptive_windows) is the freshest. Only
 * low threads step, so with none calling, no file changes: a reader tells how old the
 * numbers are from adaptive_last_step_ns and its own CLOCK_MONOTONIC (the same clock in
 * every process of one time namespace), and calls them stale past ADAPTIVE_VIEW_STALE_NS +
 * STATE_FILE_ADAPTIVE_EVERY_NS (adaptive_view.h).
 *
 * The file is rewritten (temp file + rename) when a thread's tier changes, a tagged thread
 * ends or the process forks, and removed at exit. The directory must exist when the
 * process starts (the exporter or systemd creates it, mode 1733); otherwise the shim writes
 * nothing. Readers ignore files whose pid is gone, started later, or belongs to another user.
 *
 * A process killed by SIGKILL leaves its file, and one killed while publishing leaves its
 * temp file (.<pid>.<tid>.tmp). The exporter removes both at its scans (state_file_judge
 * below): a file whose pid is gone, or whose pid now belongs to a process that started at
 * another time (the pid was reused), and a temp file whose pid is gone or that is older
 * than STATE_FILE_TMP_MAX_AGE_S (a publish takes microseconds). A live process's file
 * always records its own pid and start time, so it is never judged stale; a file that says
 * nothing usable (cut short, garbled, start time 0) is only ignored.
 *
 * This is the format half, shared by the writer (shim/preload/state_file.c) and the reader
 * (the exporter); the writer's functions are in shim/preload/state_file.h.
 */
#ifndef IOTIER_STATE_FILE_FORMAT_H
#define IOTIER_STATE_FILE_FORMAT_H

#define STATE_FILE_DIR_ENV "IOTIER_STATE_DIR"   /* a setting: shim/core/settings.def */
#define STATE_FILE_DEFAULT_DIR "/run/iotier"
#define STATE_FILE_DIR_MODE 01733  /* everyone may add a file, only its owner may remove it */
#define STATE_FILE_MAGIC "iotier-shim-state 1"
#define STATE_FILE_SUFFIX ".state"
#define STATE_FILE_ADAPTIVE_EVERY_NS 1000000000ull /* 1 s: scrapes come every 15 s or so */

/*
 * The start time (clock ticks after boot) in the text of /proc/PID/stat, 0 if it does not
 * parse. Walks characters only: safe in a signal handler, shared by writer and reader.
 */
static inline unsigned long long state_file_starttime(const char *stat, unsigned long len)
{
	unsigned long i, paren = len, field = 2;
	unsigned long long v = 0;

	for (i = 0; i < len; i++)   /* the command name may hold ')': the last one ends it */
		if (stat[i] == ')')
			paren = i;
	for (i = paren + 1; i < len && field < 22; i++)
		if (stat[i] == ' ')
			field++;
	for (; field == 22 && i < len && stat[i] >= '0' && stat[i] <= '9'; i++)
		v = v * 10 + (unsigned long long)(stat[i] - '0');
	return v;
}

/* A temp file older than this was left by a publish that never finished. */
#define STATE_FILE_TMP_MAX_AGE_S 60

/* The start time recorded in a state file's text (its "starttime N" line), 0 if none. */
static inline unsigned long long state_file_recorded_start(const char *text, unsigned long len)
{
	static const char key[] = "\nstarttime ";
	unsigned long k = sizeof(key) - 1;
	unsigned long long v = 0;

	for (unsigned long i = 0; i + k <= len; i++) {
		unsigned long j = 0;

		while (j < k && text[i + j] == key[j])
			j++;
		if (j < k)
			continue;
		for (i += k; i < len && text[i] >= '0' && text[i] <= '9'; i++)
			v = v * 10 + (unsigned long long)(text[i] - '0');
		return i < len && text[i] == '\n' ? v : 0;
	}
	return 0;
}

enum state_file_verdict {
	STATE_FILE_LIVE,   /* its process runs: read it */
	STATE_FILE_STALE,  /* its process is dead: remove it */
	STATE_FILE_UNSURE, /* it says too little to tell: ignore it, keep it */
};

/*
 * The file of pid P, recording start time @recorded (0: none), when P is @gone or runs a
 * process started at @live_start (0: unknown). Stale only when it provably is: a live
 * process's file records its own start, so it never matches a different one.
 */
static inline enum state_file_verdict state_file_judge(int gone, unsigned long long live_start,
						       unsigned long long recorded)
{
	if (gone)
		return STATE_FILE_STALE;
	if (!live_start || !recorded)
		return STATE_FILE_UNSURE;
	return recorded == live_start ? STATE_FILE_LIVE : STATE_FILE_STALE;
}

#endif
