#!/usr/bin/env python3
"""Prints pkg-config's flags for the given packages as a GN scope (JSON).

With --static first, the packages' libraries are linked from their
archives: each -lNAME of `pkg-config --static --libs` becomes the path of
libNAME.a in the package's library directory, except the C library's own
parts (libm, libpthread, ...), which stay shared like libc itself.
"""
import json
import os
import shlex
import subprocess
import sys

LIBC_PARTS = {"c", "m", "pthread", "dl", "rt", "resolv", "util"}


def flags(args, packages):
    out = subprocess.run(["pkg-config"] + args + packages, check=True,
                         capture_output=True, text=True).stdout
    return shlex.split(out)


def archive(name, dirs):
    for d in dirs:
        path = os.path.join(d, "lib%s.a" % name)
        if os.path.isfile(path):
            return path
    return None


def main(args):
    static = bool(args) and args[0] == "--static"
    packages = args[1:] if static else args
    try:
        cflags = flags(["--cflags"], packages)
        link = flags(["--static", "--libs"] if static else ["--libs"],
                     packages)
        dirs = []
        if static:
            dirs = [f[2:] for f in link if f.startswith("-L")]
            for p in packages:
                dirs += flags(["--variable=libdir"], [p])
    except subprocess.CalledProcessError as e:
        sys.stderr.write("pkg-config failed for %s: %s\n"
                         "Run ./build.sh build to install the missing "
                         "packages.\n" % (" ".join(packages), e.stderr))
        return 1
    libs = []
    for f in link:
        if f.startswith("-l"):
            name = f[2:]
            if not static or name in LIBC_PARTS:
                libs.append(name)
                continue
            path = archive(name, dirs)
            if not path:
                sys.stderr.write("pkg-config: no archive lib%s.a for %s in "
                                 "%s; install its -dev package\n" %
                                 (name, " ".join(packages), " ".join(dirs)))
                return 1
            libs.append(path)
    lib_dirs = [f[2:] for f in link if f.startswith("-L")]
    ldflags = [f for f in link if not f.startswith(("-l", "-L"))]
    print(json.dumps({"cflags": cflags, "libs": libs, "lib_dirs": lib_dirs,
                      "ldflags": ldflags}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
