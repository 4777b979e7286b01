/* SPDX-License-Identifier: MIT */
/*
 * sysctl_guard.h: change a sysctl for the length of a test (vm.dirty_* for writeback
 * tests), and have the old value put back on every exit: by test_cleanup_run() at exit and
 * on the usual signals, and by the guardian after SIGKILL when one is running (cleanup.h).
 * A value is only put back while the sysctl still holds the test's own: whoever changed it
 * since keeps theirs.
 */
#ifndef IOTIER_TEST_SYSCTL_GUARD_H
#define IOTIER_TEST_SYSCTL_GUARD_H

/*
 * Set @key ("vm/dirty_bytes", below /proc/sys) to @value, saving the value it had the first
 * time. Returns 0 or -errno (nothing changed; the test should skip).
 *
 * vm.dirty_bytes and vm.dirty_ratio (and the background pair) are twins: writing one
 * zeroes the other, so of a saved twin pair only the one that was in force is written back.
 * Save both with sysctl_save() before setting either.
 */
int sysctl_set(const char *key, const char *value);

/* Remember @key's value to put back, without changing it. 0 or -errno. */
int sysctl_save(const char *key);

/* Put back every saved value now (last saved first) and forget them. Async-signal-safe. */
void sysctl_restore(void);

#endif
