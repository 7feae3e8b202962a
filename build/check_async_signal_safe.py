#!/usr/bin/env python3
"""Checks that code marked async-signal-safe calls only what may be called
in a signal handler or between fork and exec.

Usage: check_async_signal_safe.py OBJECTS.json ALLOWLIST STAMP DEPFILE

OBJECTS.json lists the object files of every target built with the
sbx_async_signal_safe template (build/async_signal_safe.gni). Each object's
undefined symbols (nm -u) must be in ALLOWLIST, or be defined by another
of those objects: a marked target may call another marked target, never
an unmarked one. Sanitizer and coverage runtime hooks are accepted (they
are the build's, not the code's). Writes STAMP on success, and DEPFILE so
that ninja runs the check again when an object changes.
"""
import json
import os
import subprocess
import sys

RUNTIME_PREFIXES = ("__asan_", "__ubsan_", "__sanitizer_", "__lsan_",
                    "__msan_", "__tsan_")


def symbols(obj, flag):
    out = subprocess.check_output(["nm", flag, obj], text=True)
    result = set()
    for line in out.splitlines():
        parts = line.split()
        if flag == "-u" and len(parts) >= 2:
            result.add(parts[-1])
        elif flag == "--defined-only" and len(parts) == 3 and parts[1].isupper():
            result.add(parts[2])
    return result


def main(argv):
    if len(argv) != 5:
        sys.stderr.write(__doc__)
        return 2
    objects_json, allowlist_path, stamp, depfile = argv[1:]
    with open(objects_json) as f:
        objects = sorted({o for group in json.load(f) for o in group})
    allowed = set()
    with open(allowlist_path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                allowed.add(line)
    defined = set()
    for obj in objects:
        defined |= symbols(obj, "--defined-only")
    problems = []
    for obj in objects:
        for sym in sorted(symbols(obj, "-u")):
            if sym in allowed or sym in defined or sym.startswith(RUNTIME_PREFIXES):
                continue
            problems.append("%s: %s" % (obj, sym))
    if problems:
        sys.stderr.write(
            "check_async_signal_safe: code marked async-signal-safe calls "
            "functions that are not (build/async_signal_safe.txt lists what "
            "is allowed):\n  " + "\n  ".join(problems) + "\n")
        return 1
    with open(depfile, "w") as f:
        f.write("%s: %s\n" % (stamp, " ".join(objects + [allowlist_path])))
    with open(stamp, "w") as f:
        f.write("%d objects checked\n" % len(objects))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
