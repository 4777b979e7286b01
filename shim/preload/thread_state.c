// SPDX-License-Identifier: MIT
/*
 * thread_state.c: one record per thread, and the one place where a tier becomes an I/O
 * priority. Records live in a fixed table, allocated with a compare-and-swap, so nothing
 * here takes a lock or calls malloc: a thread may be renamed, created or forked from any
 * context, including a signal handler, without a deadlock. Concurrent re-evaluation of one
 * thread is serialised by a per-record try-lock plus a dirty flag: whoever finds the record
 * busy leaves the dirty flag set, and the holder loops until it is clear.
 */
#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "thread_state.h"

#include "fork.h"
#include "globals.h"
#include "state_file.h"
#include "core/cgroup_tier.h"

/* Given to threads the shim does not track (disabled, or table full): never dirty. */
static struct state_slot inert_slot;

#define ATOMIC_U32(field) ((_Atomic uint32_t *)&(field))
#define ATOMIC_S32(field) ((_Atomic int32_t *)&(field))

bool slot_is_inert(const struct state_slot *slot)
{
	return slot == &inert_slot;
}

struct state_slot *slot_inert(void)
{
	return &inert_slot;
}

/*
 * Slots are taken lowest-first and scans stop at the high-water mark, so a process with
 * few threads touches only the first pages of the table.
 */
static _Atomic unsigned slots_high;

static unsigned slots_in_use_bound(void)
{
	unsigned high = atomic_load_explicit(&slots_high, memory_order_acquire);

	return high < STATE_TABLE_SLOTS ? high : STATE_TABLE_SLOTS;
}

struct state_slot *slot_alloc(void)
{
	struct state_table *table = shim.table;

	if (!table)
		return NULL;
	for (unsigned i = 0; i < STATE_TABLE_SLOTS; i++) {
		struct state_slot *slot = &table->slots[i];
		uint32_t expected = 0;
		unsigned high;

		/*
		 * A freed slot that someone is still evaluating stays busy until they finish:
		 * reusing it now would let them publish the old thread's tier into the new one.
		 */
		if (atomic_load_explicit(ATOMIC_U32(slot->in_use), memory_order_relaxed) ||
		    atomic_load_explicit(ATOMIC_U32(slot->busy), memory_order_acquire))
			continue;
		if (!atomic_compare_exchange_strong(ATOMIC_U32(slot->in_use), &expected, 1))
			continue;
		if (atomic_load(ATOMIC_U32(slot->busy))) {
			atomic_store(ATOMIC_U32(slot->in_use), 0); /* lost a race with an evaluator */
			continue;
		}
		atomic_store(ATOMIC_S32(slot->tid), 0);
		atomic_store(ATOMIC_U32(slot->dirty), 0);
		memset(slot->name, 0, sizeof(slot->name));
		slot->explicit_tier = IOTIER_DEFAULT;
		slot->tier = IOTIER_DEFAULT;
		slot->base_ioprio = -1;
		slot->applied_ioprio = -1;
		slot->flags = 0;
		__atomic_store_n(&slot->handle, 0, __ATOMIC_RELEASE);
		high = atomic_load(&slots_high);
		while (high < i + 1 && !atomic_compare_exchange_weak(&slots_high, &high, i + 1))
			;
		__atomic_store_n(&table->header.slot_high, atomic_load(&slots_high), __ATOMIC_RELEASE);
		return slot;
	}
	shim_warn_once(WARN_SLOTS, "more than %d threads; new threads run untagged",
		       STATE_TABLE_SLOTS);
	return NULL;
}

void slot_free(struct state_slot *slot)
{
	bool tagged;

	if (!slot || slot == &inert_slot)
		return;
	tagged = __atomic_load_n(&slot->tier, __ATOMIC_RELAXED) != IOTIER_DEFAULT;
	__atomic_store_n(&slot->handle, 0, __ATOMIC_RELAXED);
	atomic_store(ATOMIC_S32(slot->tid), 0);
	atomic_store_explicit(ATOMIC_U32(slot->in_use), 0, memory_order_release);
	if (tagged)
		state_file_publish();   /* a tagged thread fewer */
}

struct state_slot *slot_find_handle(pthread_t handle)
{
	struct state_table *table = shim.table;

	if (!table)
		return NULL;
	for (unsigned i = 0, n = slots_in_use_bound(); i < n; i++) {
		struct state_slot *slot = &table->slots[i];

		if (atomic_load_explicit(ATOMIC_U32(slot->in_use), memory_order_acquire) &&
		    __atomic_load_n(&slot->handle, __ATOMIC_ACQUIRE) == (uint64_t)handle)
			return slot;
	}
	return NULL;
}

struct state_slot *slot_find_tid(pid_t tid)
{
	struct state_table *table = shim.table;

	if (!table || tid <= 0)
		return NULL;
	for (unsigned i = 0, n = slots_in_use_bound(); i < n; i++) {
		struct state_slot *slot = &table->slots[i];

		if (atomic_load_explicit(ATOMIC_U32(slot->in_use), memory_order_acquire) &&
		    atomic_load(ATOMIC_S32(slot->tid)) == tid)
			return slot;
	}
	return NULL;
}

/*
 * Names are copied as two 8-byte atomic words. A reader may see a mix of two names for an
 * instant, but the writer sets the dirty flag after the copy, so the mix is always
 * followed by an evaluation of the final name.
 */
static void slot_store_name(struct state_slot *slot, const char *name)
{
	uint64_t words[2] = { 0, 0 };
	size_t len = strnlen(name, sizeof(words) - 1);

	memcpy(words, name, len);
	__atomic_store_n((uint64_t *)slot->name, words[0], __ATOMIC_RELAXED);
	__atomic_store_n((uint64_t *)slot->name + 1, words[1], __ATOMIC_RELAXED);
}

static void slot_load_name(struct state_slot *slot, char name[16])
{
	uint64_t words[2];

	words[0] = __atomic_load_n((uint64_t *)slot->name, __ATOMIC_RELAXED);
	words[1] = __atomic_load_n((uint64_t *)slot->name + 1, __ATOMIC_RELAXED);
	memcpy(name, words, 16);
	name[15] = '\0';
}

void slot_set_name(struct state_slot *slot, const char *name)
{
	if (!slot || slot == &inert_slot)
		return;
	slot_store_name(slot, name);
	atomic_store(ATOMIC_U32(slot->dirty), 1);
	thread_reevaluate(slot);
}

void slot_prefill_name(struct state_slot *slot, const char *name)
{
	slot_store_name(slot, name);
}

void slot_get_name(struct state_slot *slot, char name[16])
{
	slot_load_name(slot, name);
}

static int desired_ioprio(const struct state_slot *slot, enum iotier_tier tier)
{
	int high = __atomic_load_n(&shim.cfg.high_ioprio, __ATOMIC_RELAXED);

	if (tier == IOTIER_LOW)
		return shim.cfg.low_ioprio;
	if (tier == IOTIER_HIGH && high != IOPRIO_KEEP)
		return high;
	return slot->base_ioprio;
}

/* Apply the priority for @tier. Returns 0 or an errno value. Holds slot->busy. */
static int apply_tier(struct state_slot *slot, pid_t tid, enum iotier_tier tier)
{
	int want, current;
	char cls[16];

	/*
	 * While iotier leaves a thread at its own priority, the program may change that
	 * priority itself (RocksDB's --enable_io_prio does). Take it as the new base before
	 * overriding it, so that "its old priority back" means the one it really had.
	 */
	if (slot->applied_ioprio == slot->base_ioprio && desired_ioprio(slot, tier) != slot->base_ioprio) {
		current = sys_ioprio_get(tid);
		if (current >= 0)
			slot->base_ioprio = slot->applied_ioprio = current;
	}
	want = desired_ioprio(slot, tier);

	if (want < 0 || want == slot->applied_ioprio)
		return 0;
	if (sys_ioprio_set(tid, want) == 0) {
		slot->applied_ioprio = want;
		return 0;
	}
	if (errno == ESRCH)
		return 0; /* the thread exited while we looked at it */
	if (errno == EPERM && tier == IOTIER_HIGH && want != slot->base_ioprio) {
		shim_warn_once(WARN_RT_DENIED,
			       "high class %s needs CAP_SYS_ADMIN or CAP_SYS_NICE; high threads keep "
			       "their own priority",
			       ioprio_format(want, cls, sizeof(cls)));
		__atomic_store_n(&shim.cfg.high_ioprio, IOPRIO_KEEP, __ATOMIC_RELAXED);
		return apply_tier(slot, tid, tier);
	}
	shim_warn_once(WARN_IOPRIO, "ioprio_set(%s) for thread %d failed: %s",
		       ioprio_format(want, cls, sizeof(cls)), (int)tid, strerrordesc_np(errno));
	return errno;
}

static int evaluate_locked(struct state_slot *slot)
{
	pid_t tid = atomic_load(ATOMIC_S32(slot->tid));
	enum iotier_tier by_thread, by_process, tier;
	char name[16], cls[16];
	int err;

	if (tid == 0)
		return 0; /* not started yet: the thread evaluates itself when it starts */
	slot_load_name(slot, name);
	by_thread = tier_from_thread_rules(&shim.cfg.rules, name);
	by_process = atomic_load(&shim.process_tier);
	tier = tier_resolve(slot->explicit_tier, by_thread, by_process);
	err = apply_tier(slot, tid, tier);
	if ((int32_t)tier != slot->tier)
		shim_log(LOG_DEBUG, "thread %d '%s' is now %s (%s)", (int)tid, name,
			 tier == IOTIER_LOW ? "low" : tier == IOTIER_HIGH ? "high" : "untagged",
			 ioprio_format(slot->applied_ioprio, cls, sizeof(cls)));
	/* Atomic: the adaptive hook reads SLOT_URGENT on every I/O of the thread. */
	__atomic_store_n(&slot->flags,
			 (slot->explicit_tier ? SLOT_EXPLICIT : 0) |
			 (!slot->explicit_tier && by_thread ? SLOT_BY_THREAD_RULE : 0) |
			 (!slot->explicit_tier && !by_thread && by_process ? SLOT_BY_PROCESS_RULE : 0) |
			 (config_urgent_matches(&shim.cfg, name) ? SLOT_URGENT : 0),
			 __ATOMIC_RELAXED);
	/* v1 only; no syscall until a low cgroup exists. Before publishing: the state file
	 * shows the low cgroup's weight once the cgroup exists. */
	cgroup_tier_thread(tid, tier == IOTIER_LOW);
	if ((int32_t)tier != slot->tier) {
		__atomic_store_n(&slot->tier, tier, __ATOMIC_RELEASE);
		state_file_publish();
	}
	return err;
}

int thread_reevaluate_result(struct state_slot *slot)
{
	int saved_guard = in_shim, err = 0;

	if (!slot || slot == &inert_slot)
		return 0;
	if (!shim_fork_check())
		return 0;
	in_shim = 1;
	while (atomic_load(ATOMIC_U32(slot->dirty))) {
		uint32_t unlocked = 0;

		if (!atomic_compare_exchange_strong(ATOMIC_U32(slot->busy), &unlocked, 1))
			break; /* the holder will see dirty and go round again */
		atomic_store(ATOMIC_U32(slot->dirty), 0);
		err = evaluate_locked(slot);
		atomic_store(ATOMIC_U32(slot->busy), 0);
	}
	in_shim = saved_guard;
	return err;
}

void thread_reevaluate(struct state_slot *slot)
{
	thread_reevaluate_result(slot);
}

void threads_reevaluate_all(void)
{
	struct state_table *table = shim.table;

	if (!table || !shim_fork_check())
		return;
	for (unsigned i = 0, n = slots_in_use_bound(); i < n; i++) {
		struct state_slot *slot = &table->slots[i];

		if (!atomic_load(ATOMIC_U32(slot->in_use)) || !atomic_load(ATOMIC_S32(slot->tid)))
			continue;
		atomic_store(ATOMIC_U32(slot->dirty), 1);
		thread_reevaluate(slot);
	}
}

static void release_slot_at_exit(void *arg)
{
	slot_free(arg);
	self_slot = &inert_slot; /* later destructors may still do I/O: do not re-attach */
}

int threads_init(void)
{
	return pthread_key_create(&shim.exit_key, release_slot_at_exit);
}

void thread_start_tracking(struct state_slot *slot)
{
	char name[16];

	if (slot->base_ioprio < 0) {
		slot->base_ioprio = sys_ioprio_get(0);
		slot->applied_ioprio = slot->base_ioprio;
	}
	/* Atomically: the creator may be naming us right now (pthread_setname_np by handle). */
	slot_load_name(slot, name);
	if (!name[0]) {
		sys_get_own_name(name);
		slot_store_name(slot, name);
	}
	self_slot = slot;
	pthread_setspecific(shim.exit_key, slot);
	atomic_store(ATOMIC_S32(slot->tid), sys_gettid());
	atomic_store(ATOMIC_U32(slot->dirty), 1);
	thread_reevaluate(slot);
}

struct state_slot *thread_attach_current(void)
{
	struct state_slot *slot;

	if (in_shim || atomic_load(&shim.status) == SHIM_UNINITIALISED)
		return NULL;
	if (atomic_load(&shim.status) != SHIM_ACTIVE) {
		self_slot = &inert_slot;
		return self_slot;
	}
	/* A signal handler's I/O until self_slot is set must not attach us a second time. */
	in_shim++;
	slot = slot_alloc();
	if (!slot) {
		self_slot = &inert_slot;
		in_shim--;
		return self_slot;
	}
	__atomic_store_n(&slot->handle, (uint64_t)pthread_self(), __ATOMIC_RELEASE);
	thread_start_tracking(slot);
	in_shim--;
	return slot;
}

void threads_after_fork_child(void)
{
	struct state_table *table = shim.table;
	struct state_slot *self = self_slot;

	if (!table)
		return;
	/* Only this thread exists now: no one else can hold a busy flag. */
	for (unsigned i = 0, n = slots_in_use_bound(); i < n; i++) {
		if (&table->slots[i] == self)
			continue;
		atomic_store(ATOMIC_U32(table->slots[i].busy), 0);
		slot_free(&table->slots[i]);
	}
	table->header.pid = getpid();
	if (self && self != &inert_slot) {
		atomic_store(ATOMIC_S32(self->tid), sys_gettid());
		atomic_store(ATOMIC_U32(self->busy), 0); /* held by a thread that no longer exists */
	}
}
