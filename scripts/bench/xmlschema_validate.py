#!/usr/bin/env python3
"""Benchmark peer: validate one feed with xmlschema against plikt's XSD 1.1 schema.

Usage: python scripts/bench/xmlschema_validate.py SCHEMA FILE

Loads the schema once (xmlschema.XMLSchema11, local files only: allow="sandbox" keeps every
import inside the schema's directory, nothing is fetched), then validates FILE the way a user
of the library would (schema.iter_errors on an XMLResource, fully loaded as by default, no
xsi:schemaLocation hints; the element-count cap is raised, see below).
Prints `valid`, or `invalid: <first error>` and exits 1. Exit 2: usage or unreadable input.
Used by scripts/bench-validate; for a reporting tool see scripts/xsd-check.py.
"""

import os
import sys

import xmlschema


def main(argv: list) -> int:
    if len(argv) != 3:
        print("usage: xmlschema_validate.py SCHEMA FILE", file=sys.stderr)
        return 2
    schema_path = os.path.abspath(argv[1])
    schema = xmlschema.XMLSchema11(schema_path, base_url=os.path.dirname(schema_path),
                                   allow="sandbox", defuse="always")
    # The default cap of 10**6 elements stops the 100,000-item feed (1.33 million elements);
    # a user would raise it as the error message suggests. The resource stays fully
    # loaded (lazy=False, the default), as in scripts/xsd-check.py.
    xmlschema.limits.MAX_XML_ELEMENTS = 10 ** 9
    try:
        with open(argv[2], "rb") as fp:
            # allow="none": the feed may not make xmlschema open anything else.
            resource = xmlschema.XMLResource(fp, allow="none")
    except (OSError, xmlschema.XMLResourceError, SyntaxError) as err:
        print(f"unreadable: {err}", file=sys.stderr)
        return 2
    for error in schema.iter_errors(resource, use_location_hints=False):
        print(f"invalid: {' '.join(str(error).split())[:500]}")
        return 1
    print("valid")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
