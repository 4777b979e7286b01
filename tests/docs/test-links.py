#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Description: every relative link in the Markdown a reader follows (README.md, docs/,
# docs/bench/, bench/ and examples/ READMEs) resolves: the file exists, and a #anchor names
# a heading of that file (GitHub's slug: lower case, punctuation dropped, spaces to dashes).
# Pages move (docs/BENCHMARKS.md's runs went to docs/bench/, adaptive.md's design to the
# controller's code) and headings change; a link left behind fails here, not in a reader's
# browser. Links inside fenced code are not links; absolute URLs are not checked.
# Usage: test-links.py SOURCE_ROOT
import glob
import os
import re
import sys


def markdown_files(root):
    files = [os.path.join(root, "README.md")]
    for pattern in ("docs/**/*.md", "bench/**/*.md", "examples/**/*.md"):
        files += glob.glob(os.path.join(root, pattern), recursive=True)
    return sorted(files)


def slugs(path):
    """The anchors GitHub gives the headings of one Markdown file."""
    out = set()
    with open(path) as f:
        text = re.sub(r"```.*?```", "", f.read(), flags=re.S)
    for line in text.splitlines():
        m = re.match(r"^#+\s+(.*)", line)
        if m:
            out.add(re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-"))
    return out


def bad_links(path):
    with open(path) as f:
        text = re.sub(r"```.*?```", "", f.read(), flags=re.S)
    for m in re.finditer(r"\]\(([^)\s]+)\)|<img src=\"([^\"]+)\"", text):
        link = m.group(1) or m.group(2)
        if re.match(r"^[a-z]+:", link):
            continue
        target, _, anchor = link.partition("#")
        target = os.path.normpath(os.path.join(os.path.dirname(path), target)) if target else path
        if not os.path.exists(target):
            yield f"{link}: no such file"
        elif anchor and target.endswith(".md") and anchor not in slugs(target):
            yield f"{link}: no heading '{anchor}' in {os.path.basename(target)}"


def main():
    root = sys.argv[1]
    files = markdown_files(root)
    bad = 0
    for path in files:
        for why in bad_links(path):
            print(f"{os.path.relpath(path, root)}: {why}")
            bad += 1
    print(f"{len(files)} Markdown files, {bad} broken relative link(s)")
    return 1 if bad or len(files) < 10 else 0


if __name__ == "__main__":
    sys.exit(main())
