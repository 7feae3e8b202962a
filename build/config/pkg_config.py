#!/usr/bin/env python3
"""Prints pkg-config's flags for the given packages as a GN scope (JSON)."""
import json
import shlex
import subprocess
import sys


def flags(kind, packages):
    out = subprocess.run(["pkg-config", kind] + packages, check=True,
                         capture_output=True, text=True).stdout
    return shlex.split(out)


def main(packages):
    try:
        cflags = flags("--cflags", packages)
        link = flags("--libs", packages)
    except subprocess.CalledProcessError as e:
        sys.stderr.write("pkg-config failed for %s: %s\n"
                         "Run ./build.sh build to install the missing "
                         "packages.\n" % (" ".join(packages), e.stderr))
        return 1
    libs = [f[2:] for f in link if f.startswith("-l")]
    lib_dirs = [f[2:] for f in link if f.startswith("-L")]
    ldflags = [f for f in link if not f.startswith(("-l", "-L"))]
    print(json.dumps({"cflags": cflags, "libs": libs, "lib_dirs": lib_dirs,
                      "ldflags": ldflags}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
