#!/usr/bin/env python3
"""Writes one section of a runtime header (the lines between "// tlc:section NAME ..." and
"// tlc:end") to a file of its own, so that a test can include exactly that section's code.

    extract_section.py HEADER SECTION OUT
"""
import sys


def main():
    header, section, out = sys.argv[1:4]
    lines, inside, found = [], False, False
    for line in open(header):
        words = line.split()
        if line.startswith("// tlc:section ") and len(words) >= 3 and words[2] == section:
            inside = found = True
            continue
        if inside and line.strip() == "// tlc:end":
            inside = False
            continue
        if inside:
            lines.append(line)
    if not found:
        sys.exit(f"extract_section.py: no section {section} in {header}")
    text = f"// Section {section} of {header}, extracted by tests/simt/extract_section.py.\n#pragma once\n" + "".join(lines)
    try:
        if open(out).read() == text:
            return
    except OSError:
        pass
    with open(out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
