#!/usr/bin/python3
"""Runs one python test module of attnprop_torch (CTest label `python`).

Usage: run.py MODULE.py. Exits 77 (CTest SKIP_RETURN_CODE) with a message when python3-torch
is not installed, else with unittest's result (0 passed, 1 failed). The attnprop binary is
taken from $ATTNPROP (CMake passes build/bin/attnprop).
"""
import os
import sys
import unittest

SKIP = 77


def main():
    if len(sys.argv) != 2:
        print("usage: run.py MODULE.py", file=sys.stderr)
        return 2
    try:
        import torch  # noqa: F401
        import numpy  # noqa: F401
    except ImportError as e:
        print("skipped: %s (python3-torch and python3-numpy are installed by "
              "scripts/install-deps.sh)" % e)
        return SKIP
    if os.path.basename(sys.argv[1]) == "test_onnx.py":
        try:
            import onnx  # noqa: F401
        except ImportError as e:
            print("skipped: %s (python3-onnx is installed by scripts/install-deps.sh)" % e)
            return SKIP
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    name = os.path.splitext(os.path.basename(sys.argv[1]))[0]
    suite = unittest.defaultTestLoader.loadTestsFromName(name)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
