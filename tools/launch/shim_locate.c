// SPDX-License-Identifier: MIT
/*
 * shim_locate.c: find libiotier.so and put it into LD_PRELOAD for the command we start.
 * Whatever path is found or given is checked the way ld.so will use it, because ld.so
 * skips a preload it cannot use with only a warning, and the program would then run
 * untagged while iotier reported success: it must be absolute (the program may chdir, and
 * a bare name is searched in system directories), an ELF shared object of our own class,
 * and free of the spaces and colons that split LD_PRELOAD.
 */
#include "shim_locate.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iotier-config.h"

#define LD_PRELOAD_SEPARATORS " :\t\n"

/* Does the ELF file on @fd with header @eh ask for a program interpreter (an executable)? */
static int has_interpreter(int fd, const ElfW(Ehdr) *eh)
{
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		ElfW(Phdr) ph;
		off_t at = (off_t)(eh->e_phoff + (ElfW(Off))i * eh->e_phentsize);

		if (pread(fd, &ph, sizeof(ph), at) != (ssize_t)sizeof(ph))
			return 0;
		if (ph.p_type == PT_INTERP)
			return 1;
	}
	return 0;
}

/* Why ld.so could not preload @path (already absolute), or NULL when it can. */
static const char *unusable_reason(const char *path)
{
	const char *why = NULL;
	struct stat st;
	ElfW(Ehdr) eh;
	int fd;

	if (path[strcspn(path, LD_PRELOAD_SEPARATORS)])
		return "holds a space or colon, which split LD_PRELOAD";
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return strerror(errno);
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		why = "not a regular file";
	else if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
		 memcmp(eh.e_ident, ELFMAG, SELFMAG))
		why = "not an ELF file";
	else if (eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32))
		why = "an ELF file of another word size";
	else if (eh.e_type != ET_DYN || eh.e_phentsize != sizeof(ElfW(Phdr)))
		why = "not an ELF shared object";
	else if (has_interpreter(fd, &eh))
		why = "an executable, not a shared object"; /* a PIE is ET_DYN too */
	close(fd);
	return why;
}

/*
 * @path made absolute into @out. Its folder is resolved when it can be (a clean path in
 * LD_PRELOAD), but not its file name: the SONAME link libiotier.so.0 must stay what is
 * preloaded, or a package upgrade would leave LD_PRELOAD naming a version that is gone.
 * Where realpath fails (e.g. under a sanitizer whose interceptor misses libc) the path is
 * joined to the working directory, and open() then says what is wrong with it.
 */
static int absolute_path(const char *path, char *out, size_t len)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char dir[PATH_MAX], cwd[PATH_MAX], *real;
	int n;

	if ((size_t)snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1,
			     slash ? (slash == path ? "/" : path) : ".") >= sizeof(dir))
		return -1;
	real = realpath(dir, NULL);
	if (real)
		n = snprintf(out, len, "%s/%s", strcmp(real, "/") ? real : "", base);
	else if (path[0] == '/')
		n = snprintf(out, len, "%s", path);
	else
		n = getcwd(cwd, sizeof(cwd)) ? snprintf(out, len, "%s/%s", cwd, path) : -1;
	free(real);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* Make @path absolute and check it; -1 with "@what (path): reason" in @err otherwise. */
static int checked_path(const char *what, const char *path, char *out, size_t len,
			char *err, size_t errlen)
{
	const char *why;

	if (absolute_path(path, out, len) < 0) {
		snprintf(err, errlen, "%s: path too long", what);
		return -1;
	}
	why = unusable_reason(out);
	if (why)
		snprintf(err, errlen, "%s (%s): %s", what, out, why);
	return why ? -1 : 0;
}

int shim_locate(char *out, size_t len, char *err, size_t errlen)
{
	const char *env = getenv("IOTIER_SHIM");
	char exe[PATH_MAX], what[PATH_MAX + 16], beside[PATH_MAX + 32];
	ssize_t n;

	if (env && *env) {
		snprintf(what, sizeof(what), "IOTIER_SHIM=%s", env);
		return checked_path(what, env, out, len, err, errlen) < 0 ? SHIM_BAD : 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(beside, sizeof(beside), "%s/../shim/libiotier.so.0", exe);
			if (access(beside, F_OK) == 0)
				return checked_path(beside, beside, out, len, err, errlen) < 0 ? SHIM_BAD
											  : 0;
		}
	}
	if (access(IOTIER_INSTALLED_SHIM, F_OK) == 0)
		return checked_path(IOTIER_INSTALLED_SHIM, IOTIER_INSTALLED_SHIM, out, len, err,
				    errlen) < 0 ? SHIM_BAD : 0;
	snprintf(err, errlen, "cannot find libiotier.so (looked beside the executable and at %s; "
		 "set IOTIER_SHIM to its path)", IOTIER_INSTALLED_SHIM);
	return SHIM_MISSING;
}

/* Is @shim one of the entries of @list (LD_PRELOAD), exactly? */
static int preloaded(const char *list, const char *shim)
{
	size_t len = strlen(shim);

	for (const char *p = list; *p;) {
		size_t n;

		p += strspn(p, LD_PRELOAD_SEPARATORS);
		n = strcspn(p, LD_PRELOAD_SEPARATORS);
		if (n == len && !strncmp(p, shim, len))
			return 1;
		p += n;
	}
	return 0;
}

int shim_preload_env(const char *shim)
{
	const char *old = getenv("LD_PRELOAD");
	char *joined;
	int ret;

	if (!old || !*old)
		return setenv("LD_PRELOAD", shim, 1);
	if (preloaded(old, shim))
		return 0; /* already preloaded, by a parent iotier for example */
	/* A sanitizer runtime must be loaded before everything else, the shim included. */
	if (strstr(old, "libasan") || strstr(old, "libubsan") || strstr(old, "libtsan")) {
		if (asprintf(&joined, "%s %s", old, shim) < 0)
			return -1;
	} else if (asprintf(&joined, "%s %s", shim, old) < 0) {
		return -1;
	}
	ret = setenv("LD_PRELOAD", joined, 1);
	free(joined);
	return ret;
}
