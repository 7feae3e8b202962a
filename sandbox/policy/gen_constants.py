#!/usr/bin/env python3
"""Writes the named-constant tables that sbx_constant_lookup searches.

For each [group] of constants_headers.txt the script asks the build compiler
for every macro the headers define (cc -E -dM), keeps the object-like ones
whose names look like constants, and writes a C file of

    #ifdef NAME
      {"NAME", (uint64_t)((NAME) | 0)},
    #endif

entries that includes the same headers. The compiler evaluates every value
against those headers; this script never computes one. Macros that are not
integer constant expressions (function calls, pointers, floating values,
strings, types) make the compiler complain; the script compiles the file with -fsyntax-only,
drops the entries the diagnostics point at, and repeats until the file
compiles cleanly with the build's own warning flags.

A supplement of reviewed constants newer than the headers becomes one more
table of literals; wherever a group's headers do define such a name, that
group asserts at compile time that the values agree.

Usage: gen_constants.py --cc CC --headers FILE --supplement FILE
          --out-header FILE --out-c FILE... [--depfile FILE] -- CFLAGS...
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

DEFINE_RE = re.compile(r"^#define ([A-Za-z_][A-Za-z0-9_]*)(\(?)(?: (.*))?$")
NAME_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")
GROUP_RE = re.compile(r"^\[([a-z][a-z0-9_]*)\]$")
# A decimal or hexadecimal literal without suffix trouble; used only to
# validate the supplement, whose values are literals.
LITERAL_RE = re.compile(r"^(0[xX][0-9a-fA-F]+|[0-9]+)$")
# Floating literals would convert silently; keep them out.
FLOAT_RE = re.compile(r"(?<![0-9A-Za-z_])(?:[0-9]+\.[0-9]*|\.[0-9]+|"
                      r"[1-9][0-9]*[eE][+-]?[0-9])")
MAX_ROUNDS = 8


def fail(msg):
    sys.stderr.write("gen_constants.py: %s\n" % msg)
    sys.exit(1)


def read_groups(path):
    """Returns ([(group, [header...])...], {excluded name...})."""
    groups = []
    excluded = set()
    section = None
    with open(path) as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            m = GROUP_RE.match(line)
            if m:
                section = m.group(1)
                if section == "exclude":
                    continue
                if any(g[0] == section for g in groups):
                    fail("%s:%d: group %s repeated" % (path, lineno, line))
                groups.append((section, []))
            elif section is None:
                fail("%s:%d: header before the first [group]" %
                     (path, lineno))
            elif section == "exclude":
                if not NAME_RE.match(line):
                    fail("%s:%d: not a constant name: %s" %
                         (path, lineno, line))
                excluded.add(line)
            elif not re.match(r"^[A-Za-z0-9_./-]+\.h$", line):
                fail("%s:%d: not a header name: %s" % (path, lineno, line))
            else:
                groups[-1][1].append(line)
    if not groups:
        fail("%s: no groups" % path)
    return groups, excluded


def read_supplement(path):
    table = []
    seen = set()
    with open(path) as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            fields = line.split()
            if len(fields) != 2 or not NAME_RE.match(fields[0]) or \
                    not LITERAL_RE.match(fields[1]):
                fail("%s:%d: expected 'NAME value'" % (path, lineno))
            if fields[0] in seen:
                fail("%s:%d: %s listed twice" % (path, lineno, fields[0]))
            seen.add(fields[0])
            table.append((fields[0], fields[1]))
    return sorted(table)


def includes(headers):
    # stdint.h first: a few uapi headers use uint32_t without including it,
    # and the table needs uint64_t anyway.
    return "".join("#include <%s>\n" % h for h in ["stdint.h"] + headers)


def macro_names(cc, cflags, headers):
    out = subprocess.run([cc, "-E", "-dM"] + cflags + ["-x", "c", "-"],
                         input=includes(headers), capture_output=True,
                         text=True)
    if out.returncode != 0:
        fail("%s cannot preprocess the headers:\n%s" % (cc, out.stderr))
    names = set()
    for line in out.stdout.splitlines():
        m = DEFINE_RE.match(line)
        if not m or m.group(2) or not NAME_RE.match(m.group(1)):
            continue
        value = (m.group(3) or "").strip()
        if not value or '"' in value or FLOAT_RE.search(value):
            continue
        names.add(m.group(1))
    return names


def name_pool(names):
    """Offsets of names in one pool of NUL-terminated strings, and the
    pool as C string literal lines. Tables hold these offsets rather than
    pointers, so they need no relocation when a program loads."""
    offsets = {}
    pool = []
    at = 0
    for name in names:
        offsets[name] = at
        pool.append('    "%s\\0"' % name)
        at += len(name) + 1
    return offsets, pool


def render(group, headers, names, supplement, table_header):
    lines = ["/* Generated by sandbox/policy/gen_constants.py from the [%s] "
             "group; do not edit. */" % group]
    lines.extend(includes(headers).splitlines())
    lines.append("")
    lines.append('#include "%s"' % table_header)
    lines.append("")
    for name, value in supplement:
        lines.append("#ifdef %s" % name)
        lines.append("_Static_assert((uint64_t)(%s) == (uint64_t)(%s), "
                     "\"constants_supplement.txt disagrees with the headers "
                     "on %s\");" % (name, value, name))
        lines.append("#endif")
    lines.append("")
    offsets, pool = name_pool(sorted(names))
    lines.append("const char sbx_constants_%s_names[] =" % group)
    lines.extend(pool)
    lines[-1] += ";"
    lines.append("")
    lines.append("const sbx_constant_entry sbx_constants_%s[] = {" % group)
    entry_lines = {}
    for name in sorted(names):
        lines.append("#ifdef %s" % name)
        # "| 0": a pointer or floating value is then a compile error, so the
        # entry is dropped instead of converted.
        lines.append("    {%d, (uint64_t)((%s) | 0)}, /* %s */" %
                     (offsets[name], name, name))
        entry_lines[len(lines)] = name
        lines.append("#endif")
    lines.append("};")
    lines.append("const size_t sbx_constants_%s_count =" % group)
    lines.append("    sizeof(sbx_constants_%s) / sizeof(sbx_constants_%s[0]);"
                 % (group, group))
    return "\n".join(lines) + "\n", entry_lines


def probe(cc, cflags, text, gen_dir):
    """Compiles text; returns the set of its line numbers diagnostics name."""
    fd, path = tempfile.mkstemp(suffix=".c", dir=gen_dir)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        # Every error is wanted, to find every bad entry in one pass; the
        # two compilers spell "no limit" differently.
        no_limit = ("-ferror-limit=0" if "clang" in os.path.basename(cc)
                    else "-fmax-errors=0")
        out = subprocess.run([cc, "-fsyntax-only", no_limit] +
                             cflags + [path], capture_output=True, text=True)
        if out.returncode == 0:
            return set(), ""
        pat = re.compile(r"^%s:(\d+):" % re.escape(path))
        bad = set()
        for line in out.stderr.splitlines():
            m = pat.match(line)
            if m:
                bad.add(int(m.group(1)))
        return bad, out.stderr
    finally:
        os.unlink(path)


def header_deps(cc, cflags, headers):
    out = subprocess.run([cc, "-M", "-MT", "x"] + cflags +
                         ["-x", "c", "-"], input=includes(headers),
                         capture_output=True, text=True)
    if out.returncode != 0:
        fail("%s -M failed:\n%s" % (cc, out.stderr))
    text = out.stdout.replace("\\\n", " ")
    return text.split(":", 1)[1].split()


def main(argv):
    if "--" in argv:
        split = argv.index("--")
        argv, cflags = argv[:split], argv[split + 1:]
    else:
        cflags = []
    ap = argparse.ArgumentParser()
    ap.add_argument("--cc", required=True)
    ap.add_argument("--headers", required=True)
    ap.add_argument("--supplement", required=True)
    ap.add_argument("--out-header", required=True)
    ap.add_argument("--include-name", required=True,
                    help="how the generated C files #include --out-header")
    ap.add_argument("--out-c", nargs="+", required=True)
    ap.add_argument("--depfile")
    opts = ap.parse_args(argv)

    groups, excluded = read_groups(opts.headers)
    supplement = read_supplement(opts.supplement)
    expected = ["constants_%s.c" % g for g, _ in groups]
    if [os.path.basename(p) for p in opts.out_c] != expected:
        fail("--out-c must be %s, in that order (from %s)" %
             (" ".join(expected), opts.headers))
    gen_dir = os.path.dirname(os.path.abspath(opts.out_header))
    header_path = os.path.abspath(opts.out_header)
    if not header_path.endswith("/" + opts.include_name):
        fail("--out-header must end with --include-name")
    include_root = header_path[:-len(opts.include_name) - 1]
    probe_flags = cflags + ["-I", include_root]

    # The header the group files and constants.c share.
    hdr = ["/* Generated by sandbox/policy/gen_constants.py; do not edit. */",
           "#ifndef SBX_POLICY_CONSTANTS_TABLES_H_",
           "#define SBX_POLICY_CONSTANTS_TABLES_H_",
           "",
           "#include <stddef.h>",
           "#include <stdint.h>",
           "",
           "/* name: the offset of the constant's name in its table's pool",
           " * of names (sbx_name_search). */",
           "typedef struct {",
           "  uint32_t name;",
           "  uint64_t value;",
           "} sbx_constant_entry;",
           ""]
    for g, _ in groups:
        hdr.append("extern const char sbx_constants_%s_names[];" % g)
        hdr.append("extern const sbx_constant_entry sbx_constants_%s[];" % g)
        hdr.append("extern const size_t sbx_constants_%s_count;" % g)
    hdr.append("")
    hdr.append("/* Searched in this order; each table is sorted by name. */")
    hdr.append("#define SBX_CONSTANT_TABLES(X) \\")
    for g, _ in groups:
        hdr.append("  X(%s) \\" % g)
    hdr.append("  /* end */")
    hdr.append("")
    offsets, pool = name_pool([name for name, _ in supplement])
    hdr.append("#define SBX_CONSTANT_SUPPLEMENT_NAMES \\")
    hdr.extend(line + " \\" for line in pool)
    hdr.append("  /* end */")
    hdr.append("#define SBX_CONSTANT_SUPPLEMENT \\")
    for name, value in supplement:
        hdr.append("  {%d, %s}, /* %s */ \\" % (offsets[name], value, name))
    hdr.append("  /* end */")
    hdr.append("")
    hdr.append("#endif")
    with open(opts.out_header, "w") as f:
        f.write("\n".join(hdr) + "\n")

    deps = set()
    for (group, headers), out_path in zip(groups, opts.out_c):
        names = macro_names(opts.cc, cflags, headers) - excluded
        if not names:
            fail("group %s defines no constants" % group)
        diag = ""
        for _ in range(MAX_ROUNDS):
            text, entry_lines = render(group, headers, names, supplement,
                                       opts.include_name)
            bad, diag = probe(opts.cc, probe_flags, text, gen_dir)
            if not diag:
                break
            dropped = {entry_lines[n] for n in bad if n in entry_lines}
            if not dropped:
                fail("group %s does not compile, and not because of one "
                     "entry:\n%s" % (group, diag))
            names -= dropped
        else:
            fail("group %s still does not compile after %d rounds:\n%s" %
                 (group, MAX_ROUNDS, diag))
        with open(out_path, "w") as f:
            f.write(text)
        if opts.depfile:
            deps.update(header_deps(opts.cc, cflags, headers))
    if opts.depfile:
        # Ninja reads one target per depfile: the action's first output.
        with open(opts.depfile, "w") as f:
            f.write("%s: %s\n" % (opts.out_header,
                                   " \\\n  ".join(sorted(deps))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
