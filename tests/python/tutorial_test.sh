#!/bin/bash
# tests/python/tutorial_test.sh: the python blocks of docs/tutorial.md step 10 that need no torch run, and
# print what the doc shows (tutorial_lib.sh). Skipped without python3-numpy.
. "$(dirname "$0")/tutorial_lib.sh"
run_tutorial_python plain
