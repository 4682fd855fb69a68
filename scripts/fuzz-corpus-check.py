#!/usr/bin/env python3
"""Keeps copies of the public samples out of the committed fuzz corpus.

The campaign seeds the fuzzers with public samples (read-only, from
../shared/corpus/public), and libFuzzer's mutations of them keep whole lines of
the original. Those samples may not be redistributed in this repository, so
any corpus file containing a public sample line longer than 30 characters
(after trimming surrounding whitespace) is reported, and removed with --delete.
Short lines are skipped: `Port 1:` or `State: Active` is vocabulary, not a copy;
so are lines without a letter or digit (a rule of dashes under a heading).
Lines that also occur in the project's own captures and fixtures
(tests/fixtures/) are skipped too: they are what the tools print everywhere
(a legend, `PortSelect:......1`), so they say nothing about where a file came from.

    scripts/fuzz-corpus-check.py [--delete] [PUBLIC_DIR] [CORPUS_DIR]

Exit status 1 when an offending file is found and not deleted, 0 otherwise;
a missing PUBLIC_DIR is reported and skipped (exit 0).
"""

import sys
from pathlib import Path

MIN_LEN = 31


def public_lines(public: Path) -> set[bytes]:
    lines: set[bytes] = set()
    for path in public.rglob("*"):
        if path.is_file():
            for line in path.read_bytes().splitlines():
                line = line.strip()
                # A rule of dashes or `=` is layout, not a copy.
                if len(line) >= MIN_LEN and any(chr(b).isalnum() for b in line):
                    lines.add(line)
    return lines


def own_lines(fixtures: Path) -> set[bytes]:
    lines: set[bytes] = set()
    for path in fixtures.rglob("*"):
        if path.is_file():
            lines.update(line.strip() for line in path.read_bytes().splitlines())
    return lines


def offending_line(data: bytes, lines: set[bytes]) -> bytes | None:
    # Cheap exact-line test first, then substring search for lines that a
    # mutation embedded inside a longer line.
    for line in data.splitlines():
        if line.strip() in lines:
            return line.strip()
    for line in lines:
        if line in data:
            return line
    return None


def main(argv: list[str]) -> int:
    delete = "--delete" in argv
    args = [a for a in argv if a != "--delete"]
    root = Path(__file__).resolve().parent.parent
    public = Path(args[0]) if args else root.parent / "shared" / "corpus" / "public"
    corpus = Path(args[1]) if len(args) > 1 else root / "fuzz" / "corpus"
    if not public.is_dir():
        print(f"corpus check skipped: no public samples at {public}")
        return 0
    lines = public_lines(public) - own_lines(root / "tests" / "fixtures")
    found = 0
    checked = 0
    for path in sorted(corpus.rglob("*")):
        if not path.is_file():
            continue
        checked += 1
        line = offending_line(path.read_bytes(), lines)
        if line is None:
            continue
        found += 1
        shown = line[:60].decode("utf-8", "replace")
        print(f"{'deleted' if delete else 'contains public line'}: {path.relative_to(corpus)}: {shown!r}")
        if delete:
            path.unlink()
    print(f"checked {checked} files against {len(lines)} public lines: {found} offending")
    return 1 if found and not delete else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
