#!/usr/bin/env python3
"""Writes sections of a runtime header (the lines between "// tlc:section NAME ..." and
"// tlc:end") to a file of their own, in the order given, so that a test can include exactly
those sections' code.

    extract_section.py HEADER SECTION[,SECTION...] OUT
"""
import sys


def main():
    header, sections, out = sys.argv[1:4]
    text = f"// Sections {sections} of {header}, extracted by tests/simt/extract_section.py.\n#pragma once\n"
    for section in sections.split(","):
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
        text += "".join(lines)
    try:
        if open(out).read() == text:
            return
    except OSError:
        pass
    with open(out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
