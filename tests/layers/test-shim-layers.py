#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Description: scripts/shim-layers bites. On a copy of shim/ and of its built objects it
passes as the tree is, then fails, one planted fault at a time, on: an include of a higher
layer's header, a call up a layer (an object that calls init.c from core/), a header that
declares another file's function, prologue.h included outside wrap/, an include of
preload/ from outside shim/, and a docs layer table that is not ROOMS.

Usage: test-shim-layers.py SHIM_LAYERS SRC_SHIM_DIR CC OBJ_DIR...
Exit 0 when every fault is caught and the clean tree passes, 1 otherwise."""
import os
import shutil
import subprocess
import sys
import tempfile

failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def copy_tree(work, src, obj_dirs):
    shutil.copytree(src, os.path.join(work, "shim"))
    objs = []
    for d in obj_dirs:  # keep <room>/<lib>.p: shim-layers takes the room from the path
        room = os.path.basename(os.path.dirname(os.path.abspath(d)))
        dest = os.path.join(work, "obj", room, os.path.basename(os.path.abspath(d)))
        shutil.copytree(d, dest, ignore=shutil.ignore_patterns("*.d"))
        objs.append(dest)
    return os.path.join(work, "shim"), objs


def run(tool, src, objs, *extra):
    p = subprocess.run([sys.executable, tool, src, *objs, *extra], capture_output=True,
                       text=True)
    return p.returncode, p.stdout + p.stderr


def planted(tool, src, obj_dirs, name, plant, want, extra=()):
    """Plant one fault in a fresh copy; shim-layers must fail naming it."""
    with tempfile.TemporaryDirectory() as work:
        s, objs = copy_tree(work, src, obj_dirs)
        args = plant(work, s, objs) or ()
        rc, out = run(tool, s, objs, *extra, *args)
        expect(rc == 1 and want in out, f"{name}: want exit 1 and '{want}', got {rc}:\n{out}")


def append(path, text):
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)


def main():
    tool, src, cc, obj_dirs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    with tempfile.TemporaryDirectory() as work:
        s, objs = copy_tree(work, src, obj_dirs)
        rc, out = run(tool, s, objs)
        expect(rc == 0, f"the tree as it is: want exit 0, got {rc}:\n{out}")

    planted(tool, src, obj_dirs, "upward include",
            lambda w, s, o: append(os.path.join(s, "core", "title.c"),
                                   '#include "preload/globals.h"\n'),
            "core/title (core/ layer 2) includes, up a layer, preload/globals")

    def upward_call(work, s, objs):
        core = next(o for o in objs if os.sep + "core" + os.sep in o)
        c = os.path.join(work, "planted.c")
        with open(c, "w", encoding="utf-8") as f:
            f.write("void shim_init(void);\nvoid planted(void) { shim_init(); }\n")
        subprocess.run([cc, "-c", "-o", os.path.join(core, "title.c.o"), c], check=True)
    planted(tool, src, obj_dirs, "upward call", upward_call,
            "core/title (core/ layer 2) calls up into preload/init (preload/ layer 4)")

    planted(tool, src, obj_dirs, "a header declaring another file's function",
            lambda w, s, o: append(os.path.join(s, "preload", "low_paths.h"),
                                   "void uring_fd_closing(int fd);\n"),
            "preload/low_paths.h declares uring_fd_closing, which wrap/wrap_uring.c defines")

    planted(tool, src, obj_dirs, "prologue.h below wrap/",
            lambda w, s, o: append(os.path.join(s, "api", "api.c"),
                                   '#include "preload/prologue.h"\n'),
            "which only wrap/ may include")

    def outside(work, s, objs):
        os.makedirs(os.path.join(work, "tools"))
        append(os.path.join(work, "tools", "x.c"), '#include "preload/globals.h"\n')
        return ["--outside", os.path.join(work, "tools")]
    planted(tool, src, obj_dirs, "preload/ included from outside shim/", outside,
            "nothing outside shim/ includes preload/ or wrap/")

    def stale_docs(work, s, objs):
        table = subprocess.run([sys.executable, tool, "--print-docs"], check=True,
                               capture_output=True, text=True).stdout
        doc = os.path.join(work, "doc.md")
        append(doc, "# x\n\n" + table.replace("`init`", "`init`, `wrap_fd`"))
        return ["--check-docs", doc]
    planted(tool, src, obj_dirs, "a stale docs table", stale_docs,
            "its layer table is not ROOMS")

    planted(tool, src, obj_dirs, "a room without its face",
            lambda w, s, o: os.remove(os.path.join(s, "adaptive", "adaptive_tier.h")),
            "adaptive/ lacks its face header adaptive_tier.h")

    if failures:
        print(f"{len(failures)} planted fault(s) not caught")
        return 1
    print("ok: the clean tree passes, every planted fault fails")
    return 0


if __name__ == "__main__":
    sys.exit(main())
