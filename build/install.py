#!/usr/bin/env python3
"""install.py BUILD_DIR PREFIX: installs libsbx, its public headers, sbx.pc
and the tools that were built into PREFIX/{lib,include,bin}."""
import os
import shutil
import sys

TOOLS = ["sbx-run", "sbx-policy", "sbx-learn", "sbx-bench"]
PC = """prefix={prefix}
libdir=${{prefix}}/lib
includedir=${{prefix}}/include

Name: sbx
Description: Chromium-style sandbox framework for Linux
Version: 0.1.0
Requires: glib-2.0
Libs: -L${{libdir}} -Wl,-rpath,${{libdir}} -lsbx
Cflags: -I${{includedir}}
"""


def main(build_dir, prefix):
    prefix = os.path.abspath(prefix)
    lib = os.path.join(prefix, "lib")
    inc = os.path.join(prefix, "include", "sbx")
    bindir = os.path.join(prefix, "bin")
    for d in (lib, inc, bindir, os.path.join(lib, "pkgconfig")):
        os.makedirs(d, exist_ok=True)
    shutil.copy2(os.path.join(build_dir, "libsbx.so.0"), lib)
    link = os.path.join(lib, "libsbx.so")
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink("libsbx.so.0", link)
    shutil.copy2(os.path.join(build_dir, "libsbx.a"), lib)
    src_inc = os.path.join(os.path.dirname(__file__), "..", "sandbox",
                           "include", "sbx")
    for name in sorted(os.listdir(src_inc)):
        if name.endswith(".h"):
            shutil.copy2(os.path.join(src_inc, name), inc)
    for tool in TOOLS:
        path = os.path.join(build_dir, tool)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            shutil.copy2(path, bindir)
    with open(os.path.join(lib, "pkgconfig", "sbx.pc"), "w") as f:
        f.write(PC.format(prefix=prefix))
    print("installed sbx into %s" % prefix)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: install.py BUILD_DIR PREFIX")
    sys.exit(main(sys.argv[1], sys.argv[2]))
