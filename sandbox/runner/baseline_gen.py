#!/usr/bin/env python3
"""Runs the baseline generator for GN (an action's script must be Python).

Usage: baseline_gen.py GENERATOR OUTPUT.c
"""
import os
import subprocess
import sys

sys.exit(subprocess.call([os.path.abspath(sys.argv[1]), sys.argv[2]]))
