// SPDX-License-Identifier: MIT
/*
 * cmd_lat_stub.c: `iotier lat` in a build without BPF support (meson -Dbpf=disabled, or
 * clang, bpftool or libbpf missing). The command stays listed so that a user learns why it
 * cannot run, in one line, instead of being told it does not exist.
 */
#include <stdio.h>

#include "cli/cli.h"
#include "commands.h"

static const char lat_stub_help[] =
	"usage: iotier lat [OPTIONS]\n"
	"\n"
	"Block I/O latency per priority class and level, traced with BPF. This iotier was\n"
	"built without BPF support; rebuild with clang, bpftool and libbpf installed\n"
	"(meson setup -Dbpf=enabled) to use it.\n"
	"\n"
	"examples:\n"
	"  meson setup build -Dbpf=enabled && ninja -C build\n"
	"      rebuild with the BPF tracers\n";

static int lat_stub_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "iotier lat: this iotier was built without BPF support "
		"(rebuild with clang, bpftool and libbpf: meson setup -Dbpf=enabled)\n");
	return 1;
}

const struct command command_lat = {
	.name = "lat",
	.summary = "block I/O latency per priority class and level (BPF; not built)",
	.help = lat_stub_help,
	.main = lat_stub_main,
};
