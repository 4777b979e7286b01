/* SPDX-License-Identifier: MIT */
/*
 * cleanup.h: what a test changes on the host is put back however the test ends.
 *
 * Two layers. Registered cleanups run in the test itself, last added first, at exit() and
 * on SIGTERM, SIGINT and SIGHUP (after which the signal ends the test as it would have):
 * a failing check or meson's timeout still unmounts and restores. Nothing runs in the test
 * after SIGKILL, so the guardian, a process outside the test's process group (meson kills
 * the group on a timeout), waits for the test to end by any means and then removes the
 * scratch trees and restores the sysctls it was told about.
 */
#ifndef IOTIER_TEST_CLEANUP_H
#define IOTIER_TEST_CLEANUP_H

/*
 * Run @fn(@arg) when the test ends: at exit, and on the signals that end a process
 * (SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2, SIGABRT, SIGSEGV,
 * SIGBUS, SIGFPE, SIGILL) unless the test set its own handler. @fn must be async-signal-safe and safe to call after
 * the test already undid the thing itself. Only the process that registered it runs it,
 * never a child that forked from it. Returns 0 or -ENOSPC.
 */
int test_cleanup_add(void (*fn)(void *), void *arg);

/* Forget a cleanup: it was done, or @arg goes out of scope. */
void test_cleanup_remove(void (*fn)(void *), void *arg);

/* Run every cleanup now, last added first, and forget them. Async-signal-safe. */
void test_cleanup_run(void);

/*
 * Start the guardian. Call it before unshare(CLONE_NEWNS): it must see the host's mounts.
 * It holds none of the test's fds, so a loop device still auto-clears. 0 or -errno.
 */
int test_guardian_start(void);

/*
 * Make a scratch directory from @template ("/tmp/iotier-x.XXXXXX", replaced in place) that
 * the guardian removes, with all below it, after the test. Starts the guardian if needed, so
 * call it before unshare(CLONE_NEWNS) too. 0 or -errno.
 */
int test_tmpdir(char *template);

/* After the test: remove the tree @path (not crossing mount points). */
void test_guardian_rmtree(const char *path);

/*
 * After the test: if @path still reads @now, what the test set, write @old to @restore
 * (@path itself, or the twin that was in force before, see sysctl_guard.h).
 */
void test_guardian_sysctl(const char *path, const char *now, const char *restore,
			  const char *old);

/* Let the guardian act now, and wait for it. Async-signal-safe; a no-op when not started. */
void test_guardian_finish(void);

#endif
