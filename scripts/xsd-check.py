#!/usr/bin/env python3
"""Validate RSS feeds against plikt's XML Schema 1.1 for the KB e-plikt profile 2.4.

Usage: python scripts/xsd-check.py SCHEMA FILE...

Prints one line per FILE, in argument order:
    PATH<TAB>valid
    PATH<TAB>invalid<TAB>first reason, on one line
A file that is not well-formed XML (or cannot be read) is `invalid`.
Exit status: 0 unless the script itself failed (bad usage, schema not loadable, xmlschema
missing) -> 2.

Needs the `xmlschema` package (pip install xmlschema). Nothing is fetched from the network:
the schema and its imports are loaded from local files only (allow="sandbox": the schema's
directory; defuse="always"), and feeds are read with no resource access (allow="none"), no
xsi:schemaLocation hints, and entity declarations refused. The feed's defusing is done here
rather than with xmlschema's defuse="always", which also refuses a plain
`<!DOCTYPE rss PUBLIC "…" "http://….dtd">` line; plikt passes a DOCTYPE through (G-XML), so
this script tolerates it too, but never reads the DTD: expat loads no external subset or
parameter entity (param-entity parsing is off). Internal general entities are expanded, as
plikt expands them, under expat's own bound on expansion (billion laughs is an error); an
external or parameter entity declaration makes the file `invalid` (never resolved).
"""

import os
import pyexpat
import re
import sys

try:
    import xmlschema
except ImportError:  # reported by main()
    xmlschema = None

USAGE = "usage: python scripts/xsd-check.py SCHEMA FILE..."


def one_line(text: str, limit: int = 500) -> str:
    """Collapse whitespace (incl. tabs and newlines) so the reason fits on one line."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def describe(error) -> str:
    """First reason of a validation error: what was wrong, and where."""
    if isinstance(error, xmlschema.XMLSchemaValidationError):
        reason = error.reason or error.message
        test = getattr(error.validator, "path", None)
        if type(error.validator).__name__ == "XsdPatternFacets":
            # Name the simple type instead of printing its (long) regular expression.
            node = getattr(error.validator, "parent", None)
            while node is not None and not getattr(node, "name", None):
                node = getattr(node, "parent", None)
            name = getattr(node, "prefixed_name", None) or getattr(node, "name", None)
            reason = re.sub(r"doesn't match any pattern of \[.*\]",
                            f"doesn't match the pattern of {name or 'its type'}", reason)
        elif type(error.validator).__name__ == "XsdAssert" and isinstance(test, str):
            # The schema's assertions start with an XPath comment naming the rule:
            # "(: F305: … :) test". Report that comment, or else the test itself.
            match = re.match(r"\s*\(:\s*(.*?)\s*:\)", test, re.S)
            reason = f"{reason}: {match.group(1) if match else test}"
        if isinstance(error.obj, str) and reason.startswith("value "):
            reason = f"value {one_line(error.obj, 120)!r}{reason[5:]}"
        where = []
        line = getattr(error, "sourceline", None)
        if line is not None:
            where.append(f"line {line}")
        if error.path:
            where.append(error.path)
        if where:
            reason = f"{reason} ({', '.join(where)})"
        return one_line(reason)
    return one_line(f"{type(error).__name__}: {error}")


class Refused(Exception):
    """The feed declares or references an external or parameter entity (refused)."""


class _PrologDone(Exception):
    """The root element starts: the prolog, where declarations live, is over."""


def refuse_entities(fp) -> None:
    """Pre-pass over the prolog (XML declaration, DOCTYPE) of a binary file object.

    Raises Refused for a parameter entity or external entity declaration and for any
    external entity reference; internal general entities are left to the parser (expat
    expands them, with its bound on expansion), and a DOCTYPE with an external identifier is
    allowed and not loaded. Syntax errors are ignored here (the real parse reports them).
    Rewinds fp.
    """

    def entity_decl(name, is_parameter, value, base, system_id, public_id, notation):
        if not is_parameter and system_id is None:
            return
        kind = "parameter entity" if is_parameter else "entity"
        where = f" (SYSTEM {system_id!r})" if system_id else ""
        raise Refused(f"{kind} declaration {name!r}{where} refused (never resolved)")

    def external_ref(context, base, system_id, public_id):
        raise Refused(f"external entity reference {system_id!r} refused")

    def root_start(name, attrs):
        raise _PrologDone

    parser = pyexpat.ParserCreate()
    parser.SetParamEntityParsing(pyexpat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.EntityDeclHandler = entity_decl
    parser.ExternalEntityRefHandler = external_ref
    parser.StartElementHandler = root_start
    try:
        parser.ParseFile(fp)
    except (_PrologDone, pyexpat.ExpatError):
        pass
    finally:
        fp.seek(0)


def check(schema, path: str) -> str:
    """Validate one file; return its report line."""
    try:
        with open(path, "rb") as fp:
            refuse_entities(fp)
            resource = xmlschema.XMLResource(fp, allow="none", defuse="never", lazy=False)
            for error in schema.iter_errors(resource, use_location_hints=False):
                return f"{path}\tinvalid\t{describe(error)}"
    except Refused as err:
        return f"{path}\tinvalid\trefused: {one_line(err)}"
    except xmlschema.XMLResourceError as err:
        # Parse errors (not well-formed, unbound prefix, undefined entity, bad encoding) and
        # xmlschema's own refusals (XMLResourceForbidden, XMLResourceBlocked).
        refused = any(word in type(err).__name__ for word in ("Forbidden", "Blocked"))
        kind = "refused" if refused else "not well-formed"
        return f"{path}\tinvalid\t{kind}: {one_line(err)}"
    except OSError as err:
        return f"{path}\tinvalid\tcannot read: {one_line(err)}"
    except (SyntaxError, ValueError, UnicodeError) as err:
        # Other parser and encoding errors.
        return f"{path}\tinvalid\tnot well-formed: {one_line(err)}"
    except xmlschema.XMLSchemaValidationError as err:
        return f"{path}\tinvalid\t{describe(err)}"
    except xmlschema.XMLSchemaException as err:
        # e.g. an xsi:type naming no type of the schema (dcterms:ISBN, dcterms:URI) or with an
        # unbound prefix: xmlschema raises instead of yielding a validation error.
        message = one_line(err)
        if isinstance(err, KeyError) and "global component" in message:
            message = f"xsi:type names no type of the schema: {message}"
        return f"{path}\tinvalid\t{message}"
    return f"{path}\tvalid"


def main(argv: list) -> int:
    if len(argv) < 3:
        print(USAGE, file=sys.stderr)
        return 2
    if xmlschema is None:
        print("xsd-check: the Python package `xmlschema` is required (pip install xmlschema)",
              file=sys.stderr)
        return 2

    # xmlschema stops at 10**6 elements by default, which a feed of ~75,000 items passes;
    # memory, not this cap, is the real limit of a tree-building validator.
    xmlschema.limits.MAX_XML_ELEMENTS = 10 ** 9
    schema_path = os.path.abspath(argv[1])
    try:
        schema = xmlschema.XMLSchema11(
            schema_path,
            base_url=os.path.dirname(schema_path),
            allow="sandbox",
            defuse="always",
        )
    except Exception as err:  # noqa: BLE001 - any failure here is the script's failure
        print(f"xsd-check: cannot load schema {argv[1]}: {one_line(err)}", file=sys.stderr)
        return 2

    for path in argv[2:]:
        try:
            line = check(schema, path)
        except Exception as err:  # noqa: BLE001 - report, keep going with the next file
            line = f"{path}\tinvalid\t{type(err).__name__}: {one_line(err)}"
        print(line, flush=False)
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
