#!/usr/bin/env python3
"""Runs every registered test suite and prints one total line.

Suites are Check programs (CK_FORK=yes). Each is run once as the invoking
user and, when that user is root and the suite is marked unprivileged, once
more as nobody (65534) under setpriv: users of sbx are not root. A suite
marked without_userns is run again in each of those ways under
tests/sbx-without --no-userns, which answers CLONE_NEWUSER the way a
kernel that refuses user namespaces does. A suite marked sbx_run_modes is
run again in every one of those ways with SBX_RUN_MODE=explain, so its
sbx-run calls use the supervisor (--explain). Output is
streamed; the closing line is `N passed, N failed, N skipped`. A test
that cannot run here prints a line starting `sbx-skip: ` (with its name
and why) and passes; it counts as skipped, not passed.
"""
import json
import os
import re
import subprocess
import sys

SUMMARY = re.compile(r"(\d+)%: Checks: (\d+), Failures: (\d+), Errors: (\d+)")
# A test that cannot run here (its input is not part of the repository)
# prints this line and passes; it is counted as skipped instead.
SKIP = re.compile(r"^sbx-skip: ")
UNPRIV = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
          "--inh-caps=-all", "--"]


def run_suite(test, argv, label, env):
    print("==> %s (%s)" % (test["name"], label), flush=True)
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=env, text=True,
                            errors="replace")
    passed = failed = skipped = 0
    seen = False
    for line in proc.stdout:
        sys.stdout.write(line)
        if SKIP.match(line):
            skipped += 1
        m = SUMMARY.search(line)
        if m:
            seen = True
            checks, fails, errs = (int(m.group(i)) for i in (2, 3, 4))
            passed += checks - fails - errs
            failed += fails + errs
    rc = proc.wait()
    sys.stdout.flush()
    if not seen or (rc != 0 and failed == 0):
        print("%s (%s): exited %d without a complete Check summary"
              % (test["name"], label, rc), flush=True)
        failed += 1
    skipped = min(skipped, passed)
    return passed - skipped, failed, skipped


def main(argv):
    list_file, build_dir = argv[1], argv[2]
    only = set(argv[3:])
    with open(list_file) as f:
        tests = json.load(f)
    tests.sort(key=lambda t: t["name"])
    root = os.geteuid() == 0
    total_pass = total_fail = total_skip = 0
    failures = []
    for test in tests:
        if only and test["name"] not in only:
            continue
        path = os.path.abspath(os.path.join(build_dir, test["path"]))
        env = dict(os.environ)
        env["CK_FORK"] = "yes"
        env.setdefault("CK_VERBOSITY", "normal")
        mult = float(test.get("timeout_multiplier", 1))
        mult *= float(os.environ.get("SBX_TEST_TIMEOUT_SCALE", "1"))
        env["CK_TIMEOUT_MULTIPLIER"] = str(mult)
        env["SBX_BUILD_DIR"] = os.path.abspath(build_dir)
        if not test.get("leak_check", True):
            opts = env.get("ASAN_OPTIONS", "")
            env["ASAN_OPTIONS"] = (opts + ":" if opts else "") + "detect_leaks=0"
        runs = [([path], "as %s" % ("root" if root else "user"))]
        if root and test.get("unprivileged"):
            runs.append((UNPRIV + [path], "as nobody"))
        if test.get("without_userns"):
            without = [os.path.join(os.path.abspath(build_dir), "tests",
                                    "sbx-without"), "--no-userns", "--"]
            for cmd, label in list(runs):
                i = len(UNPRIV) if cmd[0] == UNPRIV[0] else 0
                runs.append((cmd[:i] + without + cmd[i:],
                             label + ", without user namespaces"))
        runs = [(cmd, label, env) for cmd, label in runs]
        if test.get("sbx_run_modes"):
            explain = dict(env)
            explain["SBX_RUN_MODE"] = "explain"
            runs += [(cmd, label + ", sbx-run --explain", explain)
                     for cmd, label, _ in runs]
        for cmd, label, run_env in runs:
            p, f, k = run_suite(test, cmd, label, run_env)
            total_pass += p
            total_fail += f
            total_skip += k
            if f:
                failures.append("%s (%s)" % (test["name"], label))
    if failures:
        print("failing suites: " + ", ".join(failures))
    print("%d passed, %d failed, %d skipped" % (total_pass, total_fail,
                                                total_skip), flush=True)
    return 1 if total_fail else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
