// SPDX-License-Identifier: MIT
/*
 * wrap_exec.c: hand the adaptive tier's region to every program this one execs, so that one
 * target governs the whole process tree (adaptive_tree.h). Just before the real call, the
 * region's descriptor is duplicated without close-on-exec and IOTIER_ADAPTIVE_FD=N is added
 * to a copy of the environment; when the call returns (a failed exec, or posix_spawn in the
 * parent) the duplicate is closed and errno is the call's own, so the program sees what it
 * would without the shim. Nothing here allocates: a vfork() child runs these in its
 * parent's memory, so the copy is on the stack.
 *
 * Every exec entry point is wrapped because glibc's own execv, execl*, execvp and
 * posix_spawn reach execve internally, past any preload. system() and popen() do too, and
 * cannot be wrapped short of reimplementing them: a shell they start roots a tree of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "preload/preload.h"

#define EXPORT __attribute__((visibility("default")))

/* More variables than this, and the region is not handed over: the copy is on the stack. */
#define HANDOFF_ENV_MAX 4096
#define HANDOFF_PREFIX ADAPTIVE_FD_ENV "="

extern char **environ;

enum exec_kind { EXEC_VE, EXEC_VPE, EXEC_FD, EXEC_AT, EXEC_SPAWN, EXEC_SPAWNP };

/* One call of any exec function, its environment aside. */
struct exec_call {
	enum exec_kind kind;
	const char *path; /* or the file execvpe and posix_spawnp search PATH for */
	int fd;           /* fexecve's descriptor, execveat's directory */
	int flags;        /* execveat's */
	char *const *argv;
	pid_t *pid;       /* posix_spawn's */
	const posix_spawn_file_actions_t *actions;
	const posix_spawnattr_t *attr;
};

/* What a real call returns when dlsym found no such function: as a libc without it would. */
#define CALL(name, ...) (REAL(name) ? REAL(name)(__VA_ARGS__) : (errno = ENOSYS, -1))
#define SPAWN(name, ...) (REAL(name) ? REAL(name)(__VA_ARGS__) : ENOSYS)

static int call_real(const struct exec_call *c, char *const envp[])
{
	switch (c->kind) {
	case EXEC_VE:
		return CALL(execve, c->path, c->argv, envp);
	case EXEC_VPE:
		return CALL(execvpe, c->path, c->argv, envp);
	case EXEC_FD:
		return CALL(fexecve, c->fd, c->argv, envp);
	case EXEC_AT:
		return CALL(execveat, c->fd, c->path, c->argv, envp, c->flags);
	case EXEC_SPAWN:
		return SPAWN(posix_spawn, c->pid, c->path, c->actions, c->attr, c->argv, envp);
	case EXEC_SPAWNP:
		return SPAWN(posix_spawnp, c->pid, c->path, c->actions, c->attr, c->argv, envp);
	}
	errno = EINVAL;
	return -1;
}

/*
 * How many slots the environment's copy needs (its variables, ours, the NULL), with the
 * region's descriptor in *@fd; 0 when nothing is handed over.
 */
static size_t handoff_slots(char *const envp[], int *fd)
{
	size_t n = 0;

	if (atomic_load(&shim.status) != SHIM_ACTIVE || !envp ||
	    (*fd = adaptive_tree_fd()) < 0 || !adaptive_tree_shim_follows(envp))
		return 0;
	while (envp[n] && n < HANDOFF_ENV_MAX)
		n++;
	return envp[n] ? 0 : n + 2;
}

/*
 * Fill @copy with @envp minus any stale IOTIER_ADAPTIVE_FD, plus one naming a duplicate
 * of @fd (*@dup_fd); @envp itself when no duplicate can be made.
 */
static char *const *handoff_env(char *const envp[], int fd, char **copy, char entry[32],
				int *dup_fd)
{
	int saved = errno;
	size_t n = 0;

	/* Without FD_CLOEXEC: it survives exec. Raw: the shim's own fd, not the program's. */
	*dup_fd = (int)sys_call(SYS_fcntl, fd, F_DUPFD, 0);
	errno = saved;
	if (*dup_fd < 0)
		return envp;
	snprintf(entry, 32, HANDOFF_PREFIX "%d", *dup_fd);
	for (char *const *e = envp; *e; e++)
		if (strncmp(*e, HANDOFF_PREFIX, sizeof(HANDOFF_PREFIX) - 1))
			copy[n++] = *e;
	copy[n++] = entry;
	copy[n] = NULL;
	return copy;
}

static int exec_with_region(const struct exec_call *c, char *const envp[])
{
	int fd = -1, dup_fd = -1, ret, saved;
	size_t slots = handoff_slots(envp, &fd);
	char *copy[slots ? slots : 1], entry[32];

	if (slots)
		envp = handoff_env(envp, fd, copy, entry, &dup_fd);
	ret = call_real(c, envp);
	if (dup_fd >= 0) { /* the exec failed, or posix_spawn returned in the parent */
		saved = errno;
		sys_close(dup_fd);
		errno = saved;
	}
	return ret;
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	struct exec_call c = { .kind = EXEC_VE, .path = path, .argv = argv };

	return exec_with_region(&c, envp);
}

EXPORT int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	struct exec_call c = { .kind = EXEC_VPE, .path = file, .argv = argv };

	return exec_with_region(&c, envp);
}

EXPORT int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	struct exec_call c = { .kind = EXEC_FD, .fd = fd, .argv = argv };

	return exec_with_region(&c, envp);
}

EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
		    int flags)
{
	struct exec_call c = { .kind = EXEC_AT, .fd = dirfd, .path = path, .argv = argv,
			       .flags = flags };

	return exec_with_region(&c, envp);
}

EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
		       const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	struct exec_call c = { .kind = EXEC_SPAWN, .path = path, .argv = argv, .pid = pid,
			       .actions = actions, .attr = attr };

	return exec_with_region(&c, envp);
}

EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
			const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	struct exec_call c = { .kind = EXEC_SPAWNP, .path = file, .argv = argv, .pid = pid,
			       .actions = actions, .attr = attr };

	return exec_with_region(&c, envp);
}

/*
 * The execl family: the arguments into an array on the stack, as glibc does, then the
 * same path as execve/execvpe. execle's environment follows the NULL that ends the list.
 */
static size_t count_args(const char *arg, va_list ap)
{
	size_t n = 1;

	if (!arg)
		return 0;
	while (va_arg(ap, const char *))
		n++;
	return n;
}

static void fill_args(char **argv, const char *arg, size_t n, va_list ap)
{
	argv[0] = (char *)arg;
	for (size_t i = 1; i < n; i++)
		argv[i] = va_arg(ap, char *);
	argv[n] = NULL;
}

/* @ap: the arguments after @arg; for execle (@with_env), then the environment. */
static int exec_list(enum exec_kind kind, const char *path, const char *arg, bool with_env,
		     va_list ap)
{
	va_list again;
	size_t n;

	va_copy(again, ap);
	n = count_args(arg, again);
	va_end(again);

	char *argv[n + 1];
	char *const *envp = environ;
	struct exec_call c = { .kind = kind, .path = path, .argv = argv };

	fill_args(argv, arg, n, ap);
	if (with_env) {
		if (n)
			(void)va_arg(ap, char *); /* the NULL that ends the list */
		envp = va_arg(ap, char *const *);
	}
	return exec_with_region(&c, envp);
}

/* The arguments after @arg as a va_list, for exec_list; a GNU statement expression. */
#define EXEC_LIST(kind, path, with_env)                                                    \
	({                                                                                 \
		va_list ap_;                                                               \
		int ret_;                                                                  \
		va_start(ap_, arg);                                                        \
		ret_ = exec_list(kind, path, arg, with_env, ap_);                          \
		va_end(ap_);                                                               \
		ret_;                                                                      \
	})

EXPORT int execl(const char *path, const char *arg, ...)
{
	return EXEC_LIST(EXEC_VE, path, false);
}

EXPORT int execle(const char *path, const char *arg, ...)
{
	return EXEC_LIST(EXEC_VE, path, true);
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
	return EXEC_LIST(EXEC_VPE, file, false);
}
