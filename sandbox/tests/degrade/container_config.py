#!/usr/bin/env python3
"""Writes the config.json of a runc bundle that runs the renderer demo.

usage: container_config.py SPEC OUT ROOTFS BUILD_DIR PAGES_DIR OUT_DIR [SECCOMP]

SPEC is what `runc spec` wrote; OUT the bundle's config.json. The root
file system is ROOTFS (read-only: empty directories, /usr of this machine
bound read-only, the usual links into it), the build directory is bound
at /sbx, the pages at /pages and OUT_DIR writable at /out. The process
runs as root with Docker's default capability set. SECCOMP, when given,
is an OCI seccomp profile placed at linux.seccomp, as Docker places its
default profile.
"""
import json
import os
import sys

DOCKER_CAPS = [
    "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD",
    "CAP_NET_RAW", "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP",
    "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE",
]


def bind(dest, src, writable=False):
    return {"destination": dest, "type": "bind", "source": src,
            "options": ["rbind", "rw" if writable else "ro"]}


def main(argv):
    spec, out, rootfs, build, pages, out_dir = argv[1:7]
    seccomp = argv[7] if len(argv) > 7 else None
    with open(spec) as f:
        c = json.load(f)
    c["root"] = {"path": os.path.abspath(rootfs), "readonly": True}
    p = c["process"]
    p["terminal"] = False
    p["args"] = ["/sbx/renderer-demo", "--out", "/out", "--pages", "/pages"]
    # Sanitizer settings of the build under test reach the demo.
    p["env"] = [e for e in p.get("env", [])] + [
        "%s=%s" % (k, v) for k, v in os.environ.items()
        if k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS")]
    p["capabilities"] = {k: list(DOCKER_CAPS)
                         for k in ("bounding", "effective", "permitted")}
    c["mounts"] += [
        bind("/usr", "/usr"),
        bind("/sbx", os.path.abspath(build)),
        bind("/pages", os.path.abspath(pages)),
        bind("/out", os.path.abspath(out_dir), writable=True),
        {"destination": "/tmp", "type": "tmpfs", "source": "tmpfs",
         "options": ["nosuid", "nodev", "mode=1777"]},
    ]
    if seccomp:
        with open(seccomp) as f:
            c["linux"]["seccomp"] = json.load(f)
    else:
        c["linux"].pop("seccomp", None)
    with open(out, "w") as f:
        json.dump(c, f, indent=1)


if __name__ == "__main__":
    main(sys.argv)
