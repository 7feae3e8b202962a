#!/usr/bin/env python3
"""Prints PATH, absolute, when it is a directory, else nothing.

Usage: dir_exists.py PATH   (for GN's exec_script)
"""
import os
import sys

path = os.path.abspath(sys.argv[1])
print(path if os.path.isdir(path) else "")
