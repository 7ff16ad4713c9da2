"""The fixture generators' command line: write the fixture, or with --check exit 1 when the
committed file differs from what the generator makes now (the test command runs the checks)."""

import argparse
import os
import sys


def main(path, make_text, script):
    """path: the fixture; make_text(): its whole text; script: the generator's __file__."""
    p = argparse.ArgumentParser()
    p.add_argument("--check", action="store_true")
    args = p.parse_args()
    text = make_text()
    if args.check:
        with open(path, encoding="utf-8") as f:
            if f.read() != text:
                print(f"{path} is stale: run /usr/bin/python3 {os.path.relpath(script)}", file=sys.stderr)
                return 1
        return 0
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {path}")
    return 0
