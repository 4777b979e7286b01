#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""support-table.py: keeps one column of the README's kernel support table true.

usage: support-table.py README COLUMN RESULTS MATRIX_SH

RESULTS has one "FEATURE CELL" line per feature, as tests/vm/matrix.sh's matrix_feature
prints them; MATRIX_SH gives each feature's row title. The table sits between the
<!-- support-table:begin --> and <!-- support-table:end --> markers, with one row per
feature and one column per kernel. Exit 0 when the README's column COLUMN says what was
measured, 1 (naming every difference) when it does not. With IOTIER_UPDATE_README=1 the
column is rewritten instead (rows, and the column itself, are added as needed) and the exit
status is 0. A column is a kernel version, or a version and what that kernel lacks ("6.18
(no bfq)", from tests/vm/matrix.sh's matrix_column), so hosts of one version that differ
in their kernel's features each have their own.
"""
import os
import re
import subprocess
import sys

BEGIN, END = "<!-- support-table:begin -->", "<!-- support-table:end -->"


def titles(matrix_sh):
    script = ('. "$1"; for f in $MATRIX_FEATURES; do printf "%s\\t%s\\n" "$f" '
              '"$(matrix_title "$f")"; done')
    out = subprocess.run(["sh", "-c", script, "sh", matrix_sh], check=True,
                         capture_output=True, text=True).stdout
    return [tuple(line.split("\t", 1)) for line in out.splitlines() if line]


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def main():
    readme, column, results, matrix_sh = sys.argv[1:5]
    update = os.environ.get("IOTIER_UPDATE_README") == "1"
    measured = {}
    for line in open(results):
        name, _, cell = line.strip().partition(" ")
        measured[name] = cell
    text = open(readme).read()
    if BEGIN not in text or END not in text:
        print(f"{readme}: no support table ({BEGIN} ... {END})")
        return 1
    head, rest = text.split(BEGIN, 1)
    table, tail = rest.split(END, 1)
    lines = [l for l in table.strip().splitlines() if l.startswith("|")]
    header = cells(lines[0])
    rows = {cells(l)[0]: cells(l) for l in lines[2:]}
    if column not in header:
        if not update:
            print(f"{readme}: the support table has no column {column}")
            return 1
        header.append(column)
        for row in rows.values():
            row.append("?")
    col = header.index(column)
    errors = []
    order = []
    failed = []
    for name, title in titles(matrix_sh):
        order.append(title)
        got = measured.get(name, "not run")
        row = rows.setdefault(title, [title] + ["?"] * (len(header) - 1))
        if got.startswith("FAIL") or got == "not run":
            # A broken test says nothing about the kernel: never written into the table.
            failed.append(f"{name} on {column}: {got}")
        elif row[col] != got:
            errors.append(f"{name} on {column}: the README says '{row[col]}', "
                          f"the test measured '{got}'")
            row[col] = got
    for title in rows:
        if title not in order:
            errors.append(f"the README lists '{title}', which no test measures")
    if failed:
        print("\n".join(failed))
    if not errors:
        return 1 if failed else 0
    if not update:
        print("\n".join(errors))
        print("(IOTIER_UPDATE_README=1 rewrites the column from these results)")
        return 1
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(rows[t]) + " |" for t in order]
    open(readme, "w").write(head + BEGIN + "\n" + "\n".join(out) + "\n" + END + tail)
    print(f"{readme}: column {column} rewritten")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
