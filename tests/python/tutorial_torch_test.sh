#!/bin/bash
# tests/python/tutorial_torch_test.sh: every python block of docs/tutorial.md step 10, the PyTorch one last
# (tutorial_lib.sh). Skipped, saying why, where torch or onnx is not installed.
. "$(dirname "$0")/tutorial_lib.sh"
run_tutorial_python torch
