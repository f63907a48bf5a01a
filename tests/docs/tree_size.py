#!/usr/bin/env python3
"""Fails when the tracked files outgrow the budget that keeps the tree copyable to a GPU machine.

A device call copies the tracked tree with the binaries it carries, 64 MB in all (docs/DESIGN.md); the budget
leaves 6 MB for a call's stripped binaries. Measurements are committed packed (tar.xz) for that reason.

Usage: tree_size.py REPO_ROOT [BUDGET_BYTES]   (exit 1 with the total and the largest files when over)
"""
import os
import subprocess
import sys

DEFAULT_BUDGET = 58_000_000


def main() -> int:
    root = sys.argv[1]
    budget = int(sys.argv[2]) if len(sys.argv) > 2 else DEFAULT_BUDGET
    names = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True, capture_output=True).stdout
    sizes = []
    for name in names.decode().split("\0"):
        path = os.path.join(root, name)
        if name and os.path.isfile(path):
            sizes.append((os.path.getsize(path), name))
    total = sum(size for size, _ in sizes)
    if total <= budget:
        return 0
    print(f"tracked files: {total:,} bytes, over the budget of {budget:,}: pack measurements (tar.xz); largest:")
    for size, name in sorted(sizes, reverse=True)[:10]:
        print(f"  {size:>12,}  {name}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
