/* SPDX-License-Identifier: MIT */
/*
 * debt_log.h: the debt guard's signal (docs/adaptive.md, "Floor and debt"): the database's
 * own log, saying in its own words that it has fallen behind. RocksDB's write controller
 * writes "Stalling writes because ..." to its LOG when it slows the database's writes down
 * (too many L0 files, too many pending compaction bytes, too many memtables) and "Stopping
 * writes because ..." when it stops them.
 *
 * The program opens the log for writing; the open wrappers see a path matching
 * IOTIER_DEBT_LOG and note it here, in the shared region, so that every process of the tree
 * shares one log. Whoever steps the controller then reads what was appended since its last
 * look (open by path, pread, close: raw syscalls, no thread, no inotify; a bounded number of
 * bytes a step) and turns the lines into a debt level, held for DEBT_LOG_HOLD_NS after the
 * last line, because RocksDB writes such a line only when its state changes (a flush or a
 * compaction ends), not while it stays stalled.
 *
 * The same lines give the floor (adaptive.c, "Floor and debt"): every flush and compaction
 * event (an EVENT_LOG_v1 JSON line) carries "lsm_state": [files per level], whose first
 * number is L0 now, and at open the options print level0_slowdown_writes_trigger and
 * level0_stop_writes_trigger. L0 is a state, not a pulse: the last event's count stands
 * until the next event. With several column families, the last event's L0 and the smallest
 * trigger (the floor rises early rather than late). A log noted after the options were
 * written (a program appending to an old log) has no trigger, and so no floor.
 */
#ifndef IOTIER_DEBT_LOG_H
#define IOTIER_DEBT_LOG_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "adaptive.h"

#define DEBT_LOG_PATH_MAX 512          /* the log's absolute path, NUL included */
#define DEBT_LOG_CHUNK (64u * 1024)    /* bytes read by one pread */
#define DEBT_LOG_CHUNKS 4              /* preads a step at most: 256 KiB */
#define DEBT_LOG_HOLD_NS 2000000000ull /* the debt stays up this long after the last line */

#define DEBT_LOG_SLOW_TEXT "Stalling writes"
#define DEBT_LOG_STOP_TEXT "Stopping writes"
#define DEBT_LOG_LSM_TEXT "\"lsm_state\": ["
#define DEBT_LOG_SLOWDOWN_TEXT "Options.level0_slowdown_writes_trigger:"
#define DEBT_LOG_STOPAT_TEXT "Options.level0_stop_writes_trigger:"

struct debt_log {
	/* Written by the open wrappers of any process of the tree. */
	/*
	 * One writer at a time: a try-lock, a loser gives up (a signal handler's open inside an
	 * open cannot wait for itself). A writer killed inside its few stores leaves it taken
	 * and gen odd: later notes are dropped, the log already adopted is still read.
	 */
	_Atomic uint32_t busy;
	_Atomic uint32_t gen;          /* odd while the fields below are written */
	char path[DEBT_LOG_PATH_MAX];  /* absolute; "" none */
	uint64_t note_dev, note_ino, note_size; /* the file when it was opened */

	/* Guarded by the region's stepper. */
	uint32_t seen_gen;             /* the note the fields below follow */
	char cur_path[DEBT_LOG_PATH_MAX];
	uint64_t dev, ino, offset;     /* where the next read starts */
	uint64_t slow_until_ns, stop_until_ns;
	uint64_t slow_lines, stop_lines; /* lines seen, ever: for `iotier threads` */
	uint64_t skipped;              /* bytes skipped when the log grew faster than it is read */
	/* Of the file read now (forgotten at a new one): */
	uint64_t lsm_events;           /* lsm_state lines seen; 0: L0 unknown */
	uint32_t l0_files;             /* L0 in the last of them */
	uint32_t l0_slowdown, l0_stop; /* the triggers, the smallest seen; 0: not seen */
	char scratch[DEBT_LOG_CHUNK];
};

/*
 * The program opened @fd (a log matching the glob) for writing: note its absolute path and
 * its size now, so that what it held before (an appended old log) is not read as news. A
 * concurrent note wins and this one is dropped. errno is left as it was.
 */
void debt_log_note(struct debt_log *d, int fd);

/*
 * Read what the log gained since the last call and return the debt at @now_ns: STOP or SLOW
 * while a line of that kind was seen within DEBT_LOG_HOLD_NS, else NONE. Raw syscalls; the
 * caller serialises calls (the region's stepper) and keeps errno.
 */
enum adaptive_debt debt_log_poll(struct debt_log *d, uint64_t now_ns);

/*
 * The worst debt in @len bytes of complete log lines, counting the lines into @d, and the
 * last lsm_state's L0 and the triggers in them noted in @d.
 */
enum adaptive_debt debt_log_scan(struct debt_log *d, const char *text, size_t len);

/*
 * The floor's inputs into @w: L0 now and the trigger it must stay under (the smaller of
 * the two), or both 0 while either is unknown.
 */
void debt_log_fill(const struct debt_log *d, struct adaptive_window *w);

#endif
