#!/usr/bin/env python3
"""symlink.py TARGET LINK: creates (or replaces) LINK pointing to TARGET."""
import os
import sys

target, link = sys.argv[1], sys.argv[2]
tmp = link + ".tmp"
if os.path.lexists(tmp):
    os.unlink(tmp)
os.symlink(target, tmp)
os.replace(tmp, link)
