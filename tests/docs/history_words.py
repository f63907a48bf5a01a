#!/usr/bin/env python3
"""Fails when a tracked file's name or text speaks of the project's own history instead of itself.

The project names a measurement by its date, GPU and build (commit). Numbered work periods (in text or as a
file-name part), tracker numbers and version numbers used as names say nothing to a reader of the tree and
belong in git's log; the patterns below say exactly what counts. Third-party data (data/) is not ours and is
not read.

Usage: history_words.py REPO_ROOT        (exit 1 and one line per hit when any is found)
"""
import re
import subprocess
import sys

# Each pattern is precise enough not to match the tree's own words: kernel configurations name their pipeline
# stages "_s4_" inside one identifier ("ws_m64n128k128_kgroups1_s4_splitk1"), DeepSeek-V3 has a capital V,
# and "round" alone is rounding.
TEXT_PATTERNS = [
    (re.compile(r"\b[Ss]essions?[ -][0-9]+\b"), "a numbered work period"),
    (re.compile(r"\b[Ss]ession-[0-9]+'s\b"), "a numbered work period"),
    (re.compile(r"\b[Ii]ssues? #?[0-9]+\b"), "a tracker number"),
    (re.compile(r"\b(?:this|last|previous|next|earlier) (?:session|round)\b", re.I), "a work period"),
    (re.compile(r"\bround [0-9]+\b", re.I), "a numbered work period"),
    (re.compile(r"(?<![\w.-])s[0-9](?![\w.-])"), "a numbered work period"),
]
# Version names are looked for in prose only (documents, and comments in code), where code's own names such as
# "v0" and "v1" do not occur.
VERSION_PATTERN = re.compile(r"(?<![\w.+-])v[0-9]{1,2}(?:\s*(?:→|->|–|-)\s*v[0-9]{1,2})?(?![\w.-])")
CODE_COMMENT = {".cpp": "//", ".hpp": "//", ".cu": "//", ".cuh": "//", ".c": "//", ".h": "//", ".hip": "//",
                ".py": "#", ".sh": "#", ".cmake": "#", ".txt": None, ".md": None}

# A work period in a file name: "h100_s6_gpu_tests.txt", "s5_graph_dsv3_tp1.log".
NAME_PATTERN = re.compile(r"(?:^|[/_-])s[0-9]+_(?!splitk)")

SKIPPED_PREFIXES = ("data/", "tests/docs/history_words.py")  # this file spells out what it looks for
# Files written by our tools while measuring: their text is the tools' output, not prose about the project.
MACHINE_WRITTEN_SUFFIXES = (".csv", ".json", ".html", ".svg", ".log")


def tracked_files(root):
    listing = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True, capture_output=True).stdout
    return [name for name in listing.decode().split("\0") if name]


def main():
    if len(sys.argv) != 2:
        print("usage: history_words.py REPO_ROOT", file=sys.stderr)
        return 2
    root = sys.argv[1]
    hits = []
    for name in tracked_files(root):
        if name.startswith(SKIPPED_PREFIXES):
            continue
        if NAME_PATTERN.search(name):
            hits.append(f"{name}: a numbered work period in the file name")
        if name.startswith("profiles/") and name.endswith(MACHINE_WRITTEN_SUFFIXES):
            continue
        try:
            with open(f"{root}/{name}", encoding="utf-8") as file:
                text = file.read()
        except (UnicodeDecodeError, IsADirectoryError, FileNotFoundError):
            continue
        suffix = "." + name.rsplit(".", 1)[-1] if "." in name.rsplit("/", 1)[-1] else ""
        comment = CODE_COMMENT.get(suffix, "#" if name.endswith("CMakeLists.txt") else None)
        for number, line in enumerate(text.splitlines(), 1):
            prose = line if comment is None else line.partition(comment)[2]
            for pattern, what in TEXT_PATTERNS + [(VERSION_PATTERN, "a version number used as a name")]:
                match = pattern.search(prose if pattern is VERSION_PATTERN else line)
                if match:
                    hits.append(f"{name}:{number}: {what}: '{match.group(0)}' in: {line.strip()[:120]}")
    for hit in hits:
        print(hit)
    if hits:
        print(f"{len(hits)} history word(s): say what is true now; a measurement cites its date, GPU and build")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
