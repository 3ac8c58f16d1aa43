#!/usr/bin/env python3
"""Benchmark peer: parse one feed with feedparser and print its number of entries.

Usage: python scripts/bench/feedparser_parse.py FILE

feedparser reads the file itself (no network: FILE is a local path). Exit 1 if feedparser
flags the document as not well-formed (bozo with no entries), 2 on bad usage.
Used by scripts/bench-validate.
"""

import sys

import feedparser


def main(argv: list) -> int:
    if len(argv) != 2:
        print("usage: feedparser_parse.py FILE", file=sys.stderr)
        return 2
    result = feedparser.parse(argv[1])
    print(len(result.entries))
    if result.get("bozo") and not result.entries:
        print(f"bozo: {result.get('bozo_exception')}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
