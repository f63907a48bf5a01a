#!/usr/bin/env python3
"""Runs every command of README.md and docs/ that needs no GPU, from a copy of the checkout, and checks the pages.

Commands are the fenced blocks marked sh, bash or console, and the `$ ` lines (with their `\\` continuations) of
unmarked blocks that show a command beside its output. A block whose first line is one of these markers is not run:

    # gpu: <why>                         it needs a GPU (CUDA or AMD) or a GPU toolchain
    # not run by the docs test: <why>    it cannot run here as written (it is the test suite itself, it needs your
                                         own library or a cluster); the reason is required

Also checked: README.md is a landing page of at most 250 lines, and every relative link of these pages exists.

Usage: doc_commands.py REPO_ROOT BIN_DIR WORK_DIR [--list | --pages-only]
    --list: print each block and whether it runs; --pages-only: check the pages and run nothing.
    BIN_DIR is the build's bin/ folder; the copy of the checkout in WORK_DIR sees it as build/bin.
"""
import os
import re
import shutil
import subprocess
import sys
import time

README_MAX_LINES = 250
BLOCK_TIMEOUT_S = 300
SHELL_INFO = {"sh", "bash", "shell", "console"}
GPU_MARKER = re.compile(r"^# gpu: \S")
NOT_RUN_MARKER = re.compile(r"^# not run by the docs test: \S")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def pages(root):
    found = ["README.md"]
    for folder, _, names in os.walk(os.path.join(root, "docs")):
        found += sorted(os.path.relpath(os.path.join(folder, name), root) for name in names if name.endswith(".md"))
    return found


def blocks(text):
    """(first line number, info string, lines) of every fenced block."""
    result, lines, start, info = [], None, 0, ""
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            if lines is None:
                lines, start, info = [], number + 1, line[3:].strip()
            else:
                result.append((start, info, lines))
                lines = None
        elif lines is not None:
            lines.append(line)
    return result


def commands(info, lines):
    """The script a block runs, or None when it holds no command."""
    if info in SHELL_INFO:
        return "\n".join(line[2:] if line.startswith("$ ") else line for line in lines)
    if info:
        return None
    script, continuing = [], False
    for line in lines:
        if line.startswith("$ ") or continuing:
            script.append(line[2:] if line.startswith("$ ") else line)
            continuing = line.endswith("\\")
    return "\n".join(script) if script else None


def marker(lines):
    first = next((line for line in lines if line.strip()), "")
    if GPU_MARKER.match(first):
        return "gpu"
    if NOT_RUN_MARKER.match(first):
        return "not run"
    if first.startswith("# gpu") or first.startswith("# not run"):
        raise SystemExit(f"a marker without its reason: '{first}' (write '# gpu: why' or "
                         "'# not run by the docs test: why')")
    return None


def copy_checkout(root, bin_dir, work):
    """The tracked files (what a fresh clone holds) plus the build's binaries as build/bin."""
    shutil.rmtree(work, ignore_errors=True)
    listing = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True)
    if listing.returncode != 0:  # not a git checkout: the tree as it is, without build folders
        shutil.copytree(root, work, symlinks=True, ignore=shutil.ignore_patterns("build*", ".git", "__pycache__"))
        listing.stdout = b""
    for name in (name for name in listing.stdout.decode().split("\0") if name):
        source = os.path.join(root, name)
        if not os.path.isfile(source):
            continue
        target = os.path.join(work, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(source, target)
    os.makedirs(os.path.join(work, "build"), exist_ok=True)
    os.symlink(os.path.abspath(bin_dir), os.path.join(work, "build", "bin"))
    library_dir = os.path.join(os.path.dirname(os.path.abspath(bin_dir)), "lib")
    if os.path.isdir(library_dir):
        os.symlink(library_dir, os.path.join(work, "build", "lib"))


def main():
    arguments = [argument for argument in sys.argv[1:] if argument not in ("--list", "--pages-only")]
    if len(arguments) != 3:
        print("usage: doc_commands.py REPO_ROOT BIN_DIR WORK_DIR [--list | --pages-only]", file=sys.stderr)
        return 2
    root, bin_dir, work = arguments
    listing = "--list" in sys.argv
    pages_only = "--pages-only" in sys.argv
    failures = []

    with open(os.path.join(root, "README.md"), encoding="utf-8") as file:
        readme_lines = len(file.read().splitlines())
    if readme_lines > README_MAX_LINES:
        failures.append(f"README.md: {readme_lines} lines, a landing page has at most {README_MAX_LINES}: move the "
                        "reference to docs/")

    runs = []
    for page in pages(root):
        with open(os.path.join(root, page), encoding="utf-8") as file:
            text = file.read()
        for number, line in enumerate(text.splitlines(), 1):
            for target in LINK.findall(line):
                if "://" in target or target.startswith("mailto:"):
                    continue
                if not os.path.exists(os.path.normpath(os.path.join(root, os.path.dirname(page), target))):
                    failures.append(f"{page}:{number}: the link {target} leads nowhere")
        for start, info, lines in blocks(text):
            script = commands(info, lines)
            if script is None:
                continue
            kind = marker(lines)
            if listing:
                print(f"{page}:{start}: {kind or 'run'}: {script.splitlines()[0][:100]}")
            if kind is None:
                runs.append((page, start, script))

    if not listing and not pages_only:
        copy_checkout(root, bin_dir, work)
        for page, start, script in runs:
            began = time.monotonic()
            try:
                result = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=work, capture_output=True,
                                        text=True, timeout=BLOCK_TIMEOUT_S)
                status = result.returncode
                output = (result.stdout + result.stderr)[-2000:]
            except subprocess.TimeoutExpired:
                status, output = "timeout", f"ran past {BLOCK_TIMEOUT_S} s"
            print(f"{page}:{start}: exit {status} in {time.monotonic() - began:.1f} s")
            if status != 0:
                failures.append(f"{page}:{start}: exit {status}:\n{script}\n--- output ---\n{output}")
    for failure in failures:
        print(failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
