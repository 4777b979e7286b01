// SPDX-License-Identifier: MIT
/*
 * wrap_threads.c: track every thread from its first instruction. pthread_create() gets the
 * new thread's record from the table before the thread exists, so that the creator can
 * name it at once (RocksDB does), and starts it through a trampoline that records its tid
 * and evaluates its tier before the application's start routine runs.
 *
 * The new thread starts with every signal blocked and gets the creator's mask back only
 * once it is tracked: a handler's I/O before that would attach it a second time, and the
 * record so leaked would keep a pthread_t that a later thread reuses, so that naming that
 * later thread by its handle named a dead record instead.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "preload/preload.h"

#define EXPORT __attribute__((visibility("default")))

/*
 * The mask each new thread is to run with, by record: the record is the only thing the
 * creator hands over, and its layout is shared with `iotier threads`. Signals 1..64 are
 * all that Linux has, so one word per record holds a mask.
 */
static uint64_t start_masks[STATE_TABLE_SLOTS];

static uint64_t *start_mask_of(struct state_slot *slot)
{
	return &start_masks[slot - shim.table->slots];
}

static uint64_t mask_to_word(const sigset_t *set)
{
	uint64_t word = 0;

	for (int sig = 1; sig <= 64; sig++)
		if (sigismember(set, sig) == 1)
			word |= 1ull << (sig - 1);
	return word;
}

static void mask_from_word(uint64_t word, sigset_t *set)
{
	sigemptyset(set);
	for (int sig = 1; sig <= 64; sig++)
		if (word & (1ull << (sig - 1)))
			sigaddset(set, sig);
}

static void *tracked_start(void *arg)
{
	struct state_slot *slot = arg;
	void *(*start)(void *) = (void *(*)(void *))(uintptr_t)slot->start_routine;
	void *start_arg = (void *)(uintptr_t)slot->start_arg;
	sigset_t mask;

	mask_from_word(*start_mask_of(slot), &mask);
	/* The creator stores the handle too, but may only get to it after we have exited. */
	__atomic_store_n(&slot->handle, (uint64_t)pthread_self(), __ATOMIC_RELEASE);
	thread_start_tracking(slot);
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	return start(start_arg);
}

EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
			  void *(*start)(void *), void *arg)
{
	struct state_slot *creator, *slot;
	sigset_t all, old;
	char name[16];
	int ret, saved = errno;

	/*
	 * In a fresh child, reset the inherited table before a new thread can see it: a
	 * thread created before the atfork handlers ran (ThreadSanitizer restarts its own
	 * there) would otherwise reset it too, at the same time, keeping itself instead.
	 */
	if (in_shim || !shim_fork_check())
		return REAL(pthread_create)(thread, attr, start, arg);
	creator = self_slot ? self_slot : thread_attach_self();
	slot = creator && !slot_is_inert(creator) ? slot_alloc() : NULL;
	errno = saved;
	if (!slot)
		return REAL(pthread_create)(thread, attr, start, arg);

	slot->start_routine = (uint64_t)(uintptr_t)start;
	slot->start_arg = (uint64_t)(uintptr_t)arg;
	/*
	 * The kernel gives the new thread the creator's name and I/O priority. Record both
	 * now: the priority the creator had before iotier is the new thread's too, so that an
	 * untagged child of a low thread returns to that, not to low.
	 */
	slot_get_name(creator, name);
	slot_prefill_name(slot, name);
	slot->base_ioprio = creator->base_ioprio;
	slot->applied_ioprio = creator->applied_ioprio;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	*start_mask_of(slot) = mask_to_word(&old);
	real_resolve();
	in_shim++;
	ret = real_tracked_pthread_create(thread, attr, tracked_start, slot);
	in_shim--;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret != 0) {
		slot_free(slot);
		return ret;
	}
	/*
	 * Only if the slot still waits for it: the new thread may already have exited and its
	 * slot gone to another thread, whose own handle must not be overwritten.
	 */
	{
		uint64_t none = 0;

		__atomic_compare_exchange_n(&slot->handle, &none, (uint64_t)*thread, false,
					    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
	}
	return 0;
}
