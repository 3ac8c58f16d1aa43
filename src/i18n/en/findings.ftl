# The findings' messages in English: templates with named arguments ({ $name }), one per
# ID. Every ID is also in sv/findings.ftl (a test checks it, and that both languages use
# the same arguments). What is in `…` is code, written the same in both languages. This
# English is also what the JSON report, the API and the catalog give by default: change
# it only on purpose (the golden reports in tests/ compare it byte for byte).

## URLs, URIs, MIME types, typed identifiers (src/profile/syntax.rs)

url-empty = the URL is empty
url-space = the URL contains a space; percent-encode it (a space is `%20`)
url-control = the URL contains the control character U+{ $code }; percent-encode it (a space is `%20`)
url-relative = `{ $value }` is a relative URL; write the absolute URL starting with `https://`
url-invalid = `{ $value }` is not a valid URL ({ $error })
url-error-empty-host = empty host
url-error-idna = invalid international domain name
url-error-port = invalid port number
url-error-ipv4 = invalid IPv4 address
url-error-ipv6 = invalid IPv6 address
url-error-domain-character = invalid domain character
url-error-overflow = URLs more than 4 GB are not supported
url-error-other = { $detail }
url-scheme = `{ $value }` uses the scheme `{ $scheme }:`; all URLs must be http or https (profile §2) — files delivered another way (FTP) go in `dcterms:references`
url-no-host = `{ $value }` has no host
uri-empty = the URI is empty
uri-space = `{ $value }` is not a URI: it contains white space; write a URI such as `https://creativecommons.org/licenses/by/4.0/`
uri-no-scheme = `{ $value }` is not an absolute URI (no scheme); write e.g. `https://creativecommons.org/licenses/by/4.0/`
uri-not-absolute = `{ $value }` is not an absolute URI
mime-invalid = `{ $value }` is not a MIME type; write `type/subtype` from the IANA register, e.g. `text/html`, `application/pdf`, `audio/mpeg`
id-isbn = `{ $value }` is not a valid ISBN-10/ISBN-13 (check digit or length)
id-issn = `{ $value }` is not a valid ISSN (`NNNN-NNNC` with check digit)
id-ean = `{ $value }` is not a valid EAN-13 (check digit or length)
id-upc = `{ $value }` is not a valid UPC-A (12 digits with check digit)
id-ismn = `{ $value }` is not a valid ISMN (`979-0…` with check digit)
id-isrc = `{ $value }` is not a valid ISRC (`CCXXXYYNNNNN`)
id-doi = `{ $value }` is not a DOI (`10.prefix/suffix`)
id-urn = `{ $value }` is not a URN (`urn:NID:NSS`)

## pubDate (R103, src/profile/date.rs)

date-example = { $what }; write e.g. `Sun, 22 Nov 2026 09:30:00 +0100`
date-empty = pubDate is empty
date-iso = `{ $value }` is ISO 8601 / RFC 3339, but RSS pubDate must be RFC 2822
date-after-zone = unexpected `{ $rest }` after the time zone
date-not-in-calendar = { $day } { $month } { $year } is not a date in the calendar
date-time-range = time { $time } is out of range
date-day-name = `{ $value }` is not a day name (Mon … Sun)
date-day-comma = the day name must be followed by a comma
date-day = expected a day of the month (1 or 2 digits) at `{ $rest }`
date-space-after-day = expected a space after the day of the month
date-month = `{ $value }` is not an English month abbreviation (Jan … Dec)
date-space-after-month = expected a space after the month
date-four-digit-year = two-digit year `{ $year }`: profile 2.4 requires four digits (`20{ $year }`)
date-year = year `{ $year }` must have exactly four digits
date-space-after-year = expected a space between the year and the time
date-time = expected the time as `hh:mm` or `hh:mm:ss` (two digits each) at `{ $rest }`
date-minutes = minutes must have two digits
date-seconds = seconds must have two digits
date-space-after-time = expected a space and a time zone after the time, e.g. `+0100`
date-zone-colon = numeric time zone must be `+hhmm` or `-hhmm` (no colon: `+0100`, not `+01:00`)
date-zone = numeric time zone must be `+hhmm` or `-hhmm`
date-zone-minutes = time zone minutes `{ $minutes }` out of range
date-zone-name = time zone `{ $zone }` is not RFC 2822 (only `+hhmm`/`-hhmm`, UT, GMT, EST … PDT); write the offset, e.g. `+0100` for CET, `+0200` for CEST
date-no-zone = missing time zone, e.g. `+0100`
date-comment = unclosed comment `(` in pubDate

## Item rules R101–R118 (src/profile/kb24/item.rs)

example-code = { $code }
item-missing = the item has no `<{ $name }>`, which the profile requires; add e.g. { $example }
item-repeated = a second `<{ $name }>` in this item; it may occur only once
item-children = `<{ $name }>` contains child elements; it must hold text only (escape markup or wrap it in CDATA)
example-guid = `<guid isPermaLink="false">urn:uuid:…</guid>` that never changes
r101-empty = `<guid>` is empty; give each item a unique, persistent identifier
r101-perma-link = guid { $value } is not an http(s) URL, but `isPermaLink` is not `false` (RSS 2.0 default true); add `isPermaLink="false"`
r101a-none = no typed identifier; KB wants one for duplicate control, e.g. `<dcterms:identifier xsi:type="dcterms:isbn">978…</dcterms:identifier>` (or `dcterms:uri` with the item's URL)
type-unbound = the prefix `{ $prefix }` in xsi:type { $value } is not declared; use the prefix you bound to `{ $ns }`, e.g. `dcterms:isbn`
type-not-qname = xsi:type { $value } is not a qualified name; write e.g. `dcterms:isbn`
type-namespace = xsi:type { $value } is not in the DCMI Terms namespace; its prefix must be the one bound to `{ $ns }`, e.g. `dcterms:isbn`
type-unknown = `{ $kind }` is not an identifier type of the profile; use one of { $types } (lower case, e.g. `dcterms:{ $lower }`)
type-typo = `{ $kind }` is probably a typo in the profile's R101a table; write `{ $fix }`
r101a-issn = an ISSN identifies a serial, not this item; put it in `dcterms:isPartOf xsi:type="dcterms:issn"`
type-empty = `dcterms:{ $name }` with xsi:type `{ $kind }` is empty; write the identifier
s201-references-outside = { $value } is delivered outside the feed ({ $scheme }:); the harvester does not fetch it
uri-not-http = URI { $value } is not http or https (profile §2: all URLs are http or https)
type-missing = `dcterms:{ $name }` has no xsi:type (the form before profile 2.2); write e.g. `<dcterms:{ $name } xsi:type="dcterms:issn">…`
example-link = `<link>https://…/article</link>` where the item was first published
r102-non-ascii = link { $value } contains non-ASCII characters; it works, but percent-encoding is safer
r102-invalid = `<link>`: { $error }
r103-weekday = pubDate says `{ $given }` but that date is a { $actual }; write `{ $actual }` or correct the date
r103-comment = pubDate ends with a comment such as `(CET)`; legal RFC 2822, but the numeric zone alone is clearer
r103-military = military time zone `{ $zone }` is read as -0000 (RFC 2822 §4.3); write a numeric zone such as `+0100`
r103-date = pubDate { $value }: { $error }
r104-invalid = publisher { $value } is not a KB organisation identifier; write `{ $prefix }` + the 10-digit organisation number without hyphen + an optional `-suffix` agreed with KB (2 or more letters/digits), e.g. `{ $prefix }5560041815`
r104-space = white space around the publisher identifier was ignored; write it without
r104-check-digit = organisation number { $orgnr } fails its check digit; check it against the Swedish companies register
r105-empty = `<title>` is empty; give the item its title
r107-space = white space around accessRights was ignored; write it without
r107-invalid-gratis = accessRights must be exactly `gratis` or `restricted`; found { $value } (`gratis`: free to read when published)
r107-invalid-restricted = accessRights must be exactly `gratis` or `restricted`; found { $value } (`restricted`: payment, subscription or other conditions)
r107-invalid = accessRights must be exactly `gratis` or `restricted`; found { $value }
r108-none = no `<dcterms:license>`; KB wants a licence URI for rights handling, e.g. `https://creativecommons.org/licenses/by/4.0/`
r108-invalid = dcterms:license must be a URI since profile 2.3: { $error }
r108-not-http = licence URI { $value } is not http or https (profile §2)
r115-empty = `dcterms:{ $name }` is empty; write `Efternamn, Förnamn` for a person or the name of the institution, or leave the element out
example-format = `<dcterms:format>text/html</dcterms:format>`, the MIME type of the file at `link`
mime-top-level = { $what } { $value }: `{ $top }` is not a registered top-level media type (application, audio, font, image, message, model, multipart, text, video …)
keywords-empty = `media:keywords` is empty; leave it out or list keywords separated by commas

## Files of an item: S201-content, F302–F311, MARKER-isFormatOf (src/profile/kb24/media.rs)

named-error = { $what }: { $error }
s201-group-nested = `media:group` inside another `media:group`; MediaRSS groups do not nest — flatten them
s201-group-empty = `media:group` without `media:content`; remove it or put the files in it
s201-enclosure = `<enclosure>` { $url } has no `media:content` with the same URL; KB reads only media:content — add `<media:content url="…" type="…"/>`
f302-missing = `media:content` has no `url`; KB downloads every media:content, so give the file's absolute http(s) URL
f302-non-ascii = the url contains non-ASCII characters; it works, but percent-encoding is safer
f303-missing = `media:content` has no `type`; add the file's MIME type, e.g. `type="application/pdf"`
marker-repeated = a second `dcterms:isFormatOf` marker in this media:content; at most one
marker-no-link = the alternative-form marker must repeat the item's `<link>`, but the item has none
marker-differs = the alternative-form marker { $value } differs from the item's link { $link }; it must be the same URL
f307-no-href = `media:license` has no `href`; KB reads only href: write `href="https://creativecommons.org/licenses/by/4.0/"`
f307-type = media:license type { $value } is not a MIME type; write e.g. `text/html`
f308-scheme = media:credit scheme { $value } is not `urn:ebu` or `urn:yvs`; leave it out for EBU roles
f308-role-case = media:credit role { $value } must be lower case (MediaRSS): `{ $lower }`
f308-role-ebu = role { $value } is not one of the EBU roles MediaRSS names (author, editor, photographer, …)
f305-algo = media:hash algo { $value } is not one of { $known }; KB wants `algo="md5"`
f305-length = { $algo } hash { $value } must be exactly { $len } hexadecimal digits (found { $count })
f305-two = two different { $algo } hashes for the same file; give one per algorithm
f305-no-md5 = no MD5 among the hashes; KB verifies files with MD5: add `<media:hash algo="md5">…</media:hash>`
f305-scoped = this media:hash applies to all { $files } files below it, which can't all have the same digest; put a media:hash in each media:content

## Namespaces: G-NS-* (src/profile/kb24/namespace.rs)

ns-dc-elements = `{ $name }` is in the Dublin Core 1.1 namespace `http://purl.org/dc/elements/1.1/`, which the profile forbids; bind its prefix to `{ $ns }` (DCMI Terms) instead
ns-mrss = { $decl }="{ $uri }" is not the MediaRSS namespace; write exactly `{ $ns }` (with the trailing slash) — elements in this namespace are not read as MediaRSS
ns-dcterms = { $decl }="{ $uri }" is not the DCMI Terms namespace; write exactly `{ $ns }` — elements in this namespace are not read as DCMI Terms
ns-xsi = { $decl }="{ $uri }" is not the XML Schema instance namespace; write exactly `{ $ns }` (http, not https) — `type` attributes in this namespace are not xsi:type
ns-prefix-other = DCMI Terms are bound to the prefix `{ $prefix }`; this is allowed, but the profile recommends `dcterms`
ns-prefix-two = DCMI Terms are bound to both `{ $first }` and `{ $prefix }`; use one prefix consistently (profile §2)
ns-prefix-elsewhere = the prefix `{ $prefix }` is bound to DCMI Terms here and to `{ $other }` elsewhere; use the DCMI Terms prefix only for DCMI Terms (profile §2)
ns-prefix-here = the prefix `{ $prefix }` is used for DCMI Terms and here for `{ $uri }`; use the DCMI Terms prefix only for DCMI Terms (profile §2)

## The root and the channel: G-RSS, G-RSS-CHANNEL (src/profile/kb24/channel.rs)

g-rss-root-atom = the root element is `{ $name }` (an Atom feed); the profile requires RSS 2.0: `<rss version="2.0">` (no namespace) with one `<channel>`
g-rss-root-rdf = the root element is `{ $name }` (RSS 1.0 / RDF); the profile requires RSS 2.0: `<rss version="2.0">` (no namespace) with one `<channel>`
g-rss-root = the root element is `{ $name }`; the profile requires RSS 2.0: `<rss version="2.0">` (no namespace) with one `<channel>`
g-rss-no-version = `<rss>` has no `version`; write `<rss version="2.0">`
g-rss-version = RSS version is { $value }; write exactly `version="2.0"`
g-rss-two-channels = a second `<channel>`; an RSS 2.0 feed has exactly one channel — put all items in the first
g-rss-no-channel = `<rss>` has no `<channel>`; items go in `<rss version="2.0"><channel>…</channel></rss>`
g-rss-channel-missing = the channel has no `<{ $name }>`; RSS 2.0 requires channel title, link and description
g-rss-channel-repeated = a second channel `<{ $name }>`; the channel has exactly one
s201-channel-content = `media:content` directly under `<channel>` belongs to no item and is not harvested; move it into the item it belongs to

## Across items: R101 uniqueness, G-ORDER, R112 required (src/profile/kb24/mod.rs)

r112-required = this feed's host publication is deposit-liable, so each item needs `<dcterms:isPartOf xsi:type="dcterms:issn">` (or isbn) naming it
r101-duplicate = guid { $value } is already used by item { $first }; every item needs its own guid (a new version keeps its guid and gets a newer pubDate)
g-order = items must be sorted by pubDate, newest first: this item is newer than item { $previous } before it (compared as instants, zones applied); move it up

## G-XML: well-formedness and limits (src/xml/)

xml-syntax = the feed is not well-formed XML: { $detail }
xml-mismatched-end = end tag `</{ $found }>` does not close the open element `<{ $expected }>`; write `</{ $expected }>`
xml-unclosed = the feed ends inside `<{ $name }>`: it is truncated or the element is never closed; deliver the whole document
xml-empty = the input holds no XML element at all (empty or only whitespace/comments); deliver an RSS 2.0 document
xml-after-root = { $what } after the end of the root element; a feed has exactly one root `<rss>` and nothing but comments after it
xml-what-text = text
xml-what-reference = a reference
xml-what-stray-end = end tag `</{ $name }>` without a start tag
xml-what-cdata = a CDATA section
xml-what-second-root = a second root element `<{ $name }>`
xml-before-root = text before the root element; the document must start with `<?xml …?>` or `<rss>`
xml-unbound-prefix = namespace prefix `{ $prefix }` is not declared; add `xmlns:{ $prefix }="…"` on this element or on `<rss>`
xml-empty-prefix-binding = `xmlns:{ $prefix }=""` un-declares a prefix, which XML 1.0 namespaces forbid; remove it
xml-reserved-prefix = reserved prefix or namespace misused: { $detail }
xml-bad-name = `{ $name }` is not a valid XML name: a name starts with a letter or `_`, goes on with letters, digits, `-`, `.` or `_`, and has at most one `:` between two non-empty parts
xml-duplicate-attribute = attribute `{ $name }` occurs twice on this element (after namespace resolution); keep one
xml-undefined-entity = undefined entity `&{ $name };`; XML knows only &lt; &gt; &amp; &apos; &quot; and what the DOCTYPE declares — write the character itself (UTF-8), a character reference such as `&#160;`, or wrap HTML in CDATA
xml-external-entity = `&{ $name };` refers to the external entity "{ $system }", which plikt never fetches (protection against external-entity attacks), so this text is not in the feed; write the text itself instead of the reference
xml-undeclared-entity-dtd = entity `&{ $name };` is not declared in the feed; it may be declared in the external DTD "{ $dtd }", which plikt never fetches — write the character itself (UTF-8) or a character reference such as `&#160;`, or declare it in the DOCTYPE's internal subset
xml-undeclared-entity = entity `&{ $name };` is declared nowhere plikt reads (in a DTD with parameter-entity references XML makes that a validity error, not a well-formedness error), so its text is unknown; write the character itself (UTF-8) or a character reference such as `&#160;`, or declare the entity in the DOCTYPE
xml-in-entity = in the replacement text of entity `{ $name }`, referenced here: { $error }
xml-amplification = entity references expand to more than { $factor } times the text of the feed (an entity-expansion or "billion laughs" attack, or a DOCTYPE that should not be there); write the text directly
xml-entities-too-deep = entity references are nested more than { $depth } levels deep; write the text directly
xml-bad-char-ref = character reference `&{ $reference };` does not name a character XML allows
xml-invalid-utf8 = bytes that are not valid UTF-8; save the feed as UTF-8, or declare its real encoding, e.g. `<?xml version="1.0" encoding="ISO-8859-1"?>`
xml-invalid-utf16 = invalid UTF-16 (an unpaired surrogate or an odd number of bytes)
xml-forbidden-char = character U+{ $code } is not allowed in XML 1.0; remove it (control characters often come from copy-paste)
xml-unsupported-encoding = encoding `{ $encoding }` is not supported; deliver UTF-8 (or ISO-8859-1, windows-1252, UTF-16)
xml-too-deep = elements are nested more than { $depth } levels deep; an RSS feed needs fewer than 10
xml-too-large = the feed is larger than the limit of { $bytes } bytes
xml-event-too-large = a single tag or text is larger than the limit of { $bytes } bytes; deliver large files through media:content, not inline
xml-bad-character-data = { $what } is not allowed in character data; escape it
xml-what-cdata-end = `]]>`
xml-what-lt-in-value = `<` in an attribute value
xml-too-many-namespaces = more than { $max } distinct namespaces
xml-bare-amp = a bare `&` that starts no reference; write `&amp;` (in URLs too: `?id=1&amp;sektion=2`) or wrap the text in CDATA
xml-truncated-reference = the input ends inside a reference `&…;`; the feed is truncated
xml-bad-reference = `&{ $name };` is no reference: an entity's name starts with a letter or `_`; write `&amp;` for a plain `&`
xml-end-outside-entity = an end tag that closes an element opened outside the entity: an element starts and ends in the same entity
xml-comment-dashes = `--` inside a comment, which XML forbids; write `- -` or remove it
xml-bang = `{ $what }` starts no markup XML knows: `<!` begins a comment `<!--…-->`, a CDATA section `<![CDATA[…]]>` or a DOCTYPE
xml-truncated = the input ends inside { $what }; the feed is truncated or { $what } is never closed
xml-encoding-name = `encoding="{ $label }"`: the encoding's name must start with a letter and go on with letters, digits, `.`, `_` or `-`, such as `UTF-8` or `ISO-8859-1`
xml-amp-in-value = `&` in an attribute value must be written `&amp;`
xml-entity-recursion = the entity refers to itself (XML §4.1, WFC: No Recursion)
xml-entity-recursion-parameter = the parameter entity refers to itself (XML §4.1, WFC: No Recursion)
xml-entity-lt = `<`, which an attribute value cannot hold, not even through an entity (XML §3.1, WFC: No < in Attribute Values); write `&lt;` in the entity's value as `&#38;lt;`
xml-external-in-value = `&{ $name };` refers to the external entity "{ $system }", which an attribute value cannot (XML §3.1, WFC: No External Entity References); write the value itself
xml-unparsed-entity = `&{ $name };` refers to an unparsed (NDATA) entity, which is named in an ENTITY attribute, never referenced (XML §4.1, WFC: Parsed Entity)
xml-entity-self = entity `{ $name }` refers to itself (XML §4.1, WFC: No Recursion)
xml-entity-open-element = it opens `<{ $name }>` and does not close it: an element starts and ends in the same entity
xml-bare-lt = a `<` that starts no tag; write `&lt;` for a `<` in text
xml-attribute-space = no white space between an attribute's value and what follows; separate attributes with a space
xml-attribute-unexpected = `{ $what }` where an attribute name, `>` or `/>` should come
xml-attribute-quotes = the value of attribute `{ $key }` must be in quotes: { $key }="…"
xml-slash = `/` in a start tag must be followed by `>`
xml-attribute-unclosed = an attribute value in this start tag opens with `{ $quote }` and is never closed; add the closing `{ $quote }`
xml-attribute-no-value = attribute `{ $key }` has no value; write { $key }="…"
xml-encoding-utf16-bom = the XML declaration says encoding="{ $label }" but the document is UTF-16 (by its byte-order mark); declare the encoding the document is saved in, or save it in the one declared
xml-encoding-not-utf16 = the XML declaration says encoding="{ $label }" but the document is not UTF-16 (it has no byte-order mark and reads as ASCII); declare the encoding the document is saved in, or save it in the one declared
xml-encoding-utf8-bom = the XML declaration says encoding="{ $label }" but the document is UTF-8 (by its byte-order mark); declare the encoding the document is saved in, or save it in the one declared
xml-decl = { $what }; an XML declaration reads `<?xml version="1.0" encoding="UTF-8"?>` (pseudo-attributes in lower case, in the order version, encoding, standalone)
xml-decl-no-version = the XML declaration has no version
xml-decl-space = white space is needed before each pseudo-attribute
xml-decl-before-version = `{ $key }` comes before `version`, which is required and comes first
xml-decl-order = `{ $key }` is out of order or repeated
xml-decl-unknown = `{ $key }` is no pseudo-attribute of the XML declaration
xml-decl-eq = `{ $key }` must be followed by `=`
xml-decl-quotes = the value of `{ $key }` must be in quotes
xml-decl-unclosed = the value of `{ $key }` is never closed
xml-decl-version = `version="{ $value }"`: the value must be `1.0`
xml-decl-encoding = `encoding="{ $value }"`: the value must be a name such as `UTF-8` or `ISO-8859-1`
xml-decl-standalone = `standalone="{ $value }"`: the value must be `yes` or `no`
xml-decl-first = the XML declaration `<?xml …?>` must come first, before anything else, even whitespace
xml-pi-target = `<?{ $target }` does not start a processing instruction: `<?` must be followed by a name, as in `<?xml-stylesheet …?>`
xml-pi-colon = processing instruction target `{ $target }` contains a colon, which Namespaces in XML forbids
xml-pi-unclosed = a processing instruction is never closed with `?>`
xml-doctype-comment = a comment in the DOCTYPE is never closed with `-->`
xml-doctype-after-root = DOCTYPE after the root element
xml-doctype-second = a second DOCTYPE; a document has at most one
xml-doctype = { $detail }
xml-markup-start-tag = a start tag
xml-markup-end-tag = an end tag
xml-markup-comment = a comment
xml-markup-instruction = a processing instruction
xml-markup-doctype = a DOCTYPE
xml-markup-declaration = markup `<!…`

## The text report (src/report/text.rs)

text-item-guid = item { $item }, guid { $guid }
text-item = item { $item }
text-help = help
text-omitted = … and { $n } more { $severity }[{ $rule }] not shown (raise --max-findings)
text-valid = valid
text-not-valid = not valid
text-summary = { $verdict } for KB profile 2.4 — { $errors }, { $warnings }, { $infos } { $items }
