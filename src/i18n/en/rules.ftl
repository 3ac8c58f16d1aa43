# The rules of KB's delivery profile 2.4, in English: for each rule its one-line summary
# (rule-<ID>, the CLI's help line) and what each of its severities means (rule-<ID>-<severity>,
# shown on the rule pages). Every ID is also in ../sv/rules.ftl.

rule-G-XML = the feed must be well-formed, namespace-well-formed XML 1.0 (UTF-8 or a declared encoding), all of its text in the feed (no external entities)
rule-G-XML-error = the feed is not well-formed, namespace-well-formed XML (an unclosed or misspelt tag, an undeclared prefix, an HTML entity such as &nbsp;, a DTD entity); fatal: reported alone

rule-G-RSS = the root is `<rss version="2.0">` in no namespace with exactly one `<channel>`
rule-G-RSS-error = the root is not `rss` in no namespace, `version` is not exactly `2.0`, or there is not exactly one `channel`; a root other than `rss` stops validation

rule-G-RSS-CHANNEL = the channel has exactly one `title`, `link` and `description`
rule-G-RSS-CHANNEL-error = `title`, `link` or `description` of the channel is missing or repeated

rule-G-NS-MRSS = MediaRSS elements are in exactly `http://search.yahoo.com/mrss/`
rule-G-NS-MRSS-error = a namespace that is almost MediaRSS's (no trailing slash, https, www.), or the prefix `media` bound to another namespace

rule-G-NS-DCTERMS = Dublin Core elements are in exactly `http://purl.org/dc/terms/` (any prefix)
rule-G-NS-DCTERMS-error = a namespace that is almost DCMI Terms (https, no trailing slash, upper case), or `dcterms`/`dct` bound to another namespace; the Dublin Core elements are then missing for KB

rule-G-NS-DCELEMENTS = no element may be in the DC 1.1 namespace `http://purl.org/dc/elements/1.1/`
rule-G-NS-DCELEMENTS-error = an element in the DC 1.1 namespace (a CMS default such as WordPress's `dc:creator`)

rule-G-NS-PREFIX = DCMI Terms use one prefix, `dcterms` recommended, bound to nothing else
rule-G-NS-PREFIX-warning = DCMI Terms bound to more than one prefix, or its prefix bound elsewhere to another namespace
rule-G-NS-PREFIX-info = a prefix other than the recommended `dcterms`

rule-G-NS-XSI = xsi is exactly `http://www.w3.org/2001/XMLSchema-instance`
rule-G-NS-XSI-error = the prefix of a `type` attribute is bound to something that is almost the XML Schema instance namespace (notably `https://`), or `xsi` is bound elsewhere

rule-G-ORDER = items are sorted by pubDate, newest first (compared as instants)
rule-G-ORDER-error = an item is newer than the item before it (compared as instants, time zones applied)

rule-R101 = `guid`: mandatory, once, non-empty, unique in the feed, never changed
rule-R101-error = missing, empty, repeated in the item, or the same value as another item's guid
rule-R101-info = not a URL, yet without isPermaLink="false" (RSS assumes a permalink)

rule-R101a = `dcterms:identifier xsi:type="dcterms:isbn|issn|doi|uri|…"`: desired for duplicate control
rule-R101a-error = a type not in KB's list, a prefix not bound to http://purl.org/dc/terms/, or an empty value
rule-R101a-warning = no typed dcterms:identifier in the item (desired for duplicate control), or `matrixnumber`
rule-R101a-info = a value whose syntax or check digit looks wrong for its type

rule-R102 = `link`: mandatory, once, absolute http(s) URL where the item was first published
rule-R102-error = missing, repeated, relative, or not http(s)

rule-R103 = `pubDate`: mandatory, once, RFC 2822 with a four-digit year, e.g. `Sun, 22 Nov 2026 09:30:00 +0100`
rule-R103-error = missing, repeated, not RFC 2822, a two-digit year, an impossible date, or a zone such as CET, CEST or UTC
rule-R103-warning = the day of the week does not match the date
rule-R103-info = a comment after the zone, or a military zone

rule-R104 = `dcterms:publisher`: mandatory, once, `http://id.kb.se/organisations/SE<orgnr>[-suffix]`
rule-R104-error = missing, repeated, or not http://id.kb.se/organisations/SE + the 10-digit organisation number without hyphen + an optional -suffix of 2 or more letters or digits
rule-R104-info = the organisation number's check digit is wrong, or white space around the value

rule-R105 = `title`: mandatory, once, non-empty
rule-R105-error = missing, empty, or repeated

rule-R106 = `description`: optional, at most once
rule-R106-error = more than one description in the item

rule-R107 = `dcterms:accessRights`: mandatory, once, `gratis` or `restricted`
rule-R107-error = missing, repeated, or not exactly `gratis` or `restricted`
rule-R107-info = white space around the value

rule-R108 = `dcterms:license`: desired, at most once, a URI
rule-R108-error = not a URI (free text is no longer allowed since profile 2.3), or repeated
rule-R108-warning = no licence (desired for rights handling), or a URI whose scheme is not http(s)

rule-R112 = `dcterms:isPartOf xsi:type="dcterms:issn|isbn|…"`: the host publication
rule-R112-error = a type not in KB's list, a wrong prefix or an empty value; missing when the host publication is deposit-liable (`--require-is-part-of`)
rule-R112-warning = no xsi:type (the form of profile 2.1)
rule-R112-info = a value whose syntax or check digit looks wrong for its type

rule-R113 = `dcterms:isFormatOf xsi:type="dcterms:isbn|…"`: the same content in another format
rule-R113-error = a type not in KB's list, a wrong prefix or an empty value
rule-R113-warning = no xsi:type
rule-R113-info = a value whose syntax or check digit looks wrong for its type

rule-R115-creator = `dcterms:creator`: `Efternamn, Förnamn (roll)` or an institution's name
rule-R115-creator-warning = an empty creator

rule-R115-contributor = `dcterms:contributor`: `Efternamn, Förnamn (roll)` or an institution's name
rule-R115-contributor-warning = an empty contributor

rule-R117 = `dcterms:format`: mandatory, once, the MIME type of the file at `link`
rule-R117-error = missing, repeated, or not a MIME type (type/subtype)
rule-R117-warning = a top-level type IANA does not have

rule-S201-content = `media:content` (also in `media:group`): every file of the item; KB downloads all of them
rule-S201-content-warning = an `enclosure` without a media:content for the same URL (KB reads only media:content), media:content directly in the channel, or a media:group that is nested or empty

rule-F302 = `media:content/@url`: mandatory, absolute http(s) URL
rule-F302-error = missing, relative, or not http(s) (files delivered another way are pointed out with dcterms:references)

rule-MARKER-isFormatOf = `media:content/dcterms:isFormatOf`: at most once, exactly the item's `link`
rule-MARKER-isFormatOf-error = not the same URL as the item's link, or more than one marker in a media:content

rule-F303 = `media:content/@type`: mandatory, a MIME type
rule-F303-error = missing or not a MIME type (`medium` is no substitute)
rule-F303-warning = a top-level type IANA does not have

rule-S201-references = `dcterms:references xsi:type="dcterms:uri|…"`: files delivered another way (FTP)
rule-S201-references-error = a type not in KB's list, a wrong prefix or an empty value
rule-S201-references-warning = no xsi:type (the form of profile 2.0)
rule-S201-references-info = a value whose syntax looks wrong for its type

rule-F305 = `media:hash algo="md5"`: 32 hexadecimal digits, one per algorithm
rule-F305-error = an MD5 that is not exactly 32 hexadecimal digits (SHA-1: 40), an unknown algo, or two different hashes of one algo
rule-F305-warning = a media:content whose hashes include no MD5
rule-F305-info = a hash on media:group or item level, which is ambiguous with several files

rule-F307 = `media:license href="URI"`: the file's licence
rule-F307-error = no `href`, or an `href` that is not a URI
rule-F307-warning = a `type` that is not a MIME type, or an `href` whose scheme is not http(s)

rule-R118 = `media:keywords` (item): comma-separated keywords
rule-R118-info = empty keywords

rule-F311 = `media:keywords` (file): comma-separated keywords
rule-F311-info = empty keywords

rule-F308-credit = `media:credit role="…"`: lower-case role, scheme `urn:ebu` (default) or `urn:yvs`
rule-F308-credit-error = a `scheme` other than urn:ebu or urn:yvs
rule-F308-credit-warning = a `role` with upper-case letters (MediaRSS: lower case)
rule-F308-credit-info = a role that is not in the EBU list

rule-F308-copyright = `media:copyright url="…"`: holder, with an absolute http(s) URL
rule-F308-copyright-error = a `url` that is not an absolute http(s) URL

rule-H-FETCH = every `link` and `media:content/@url` can be downloaded
rule-H-FETCH-error = a file that cannot be downloaded (after retries): a 4xx or 5xx answer, a timeout, a broken connection

rule-H-AUTH = credentials go only to the feed's own origin
rule-H-AUTH-error = the feed's files need credentials KB was not given, or a redirect would send them to another origin

rule-H-MIME = the declared MIME type matches what the server sends
rule-H-MIME-warning = the declared MIME type differs from what the server sends

rule-H-MD5 = the MD5 of the downloaded bytes equals `media:hash`
rule-H-MD5-error = the MD5 of the downloaded bytes differs from media:hash (a corrupt or changed file)

rule-H-SIZE = the byte count equals `fileSize`
rule-H-SIZE-warning = the number of bytes downloaded differs from fileSize

rule-H-DRM = files carry no DRM
rule-H-DRM-error = a file with DRM: a PDF with /Encrypt, an EPUB with rights.xml or an encryption.xml beyond font obfuscation, an mp4/m4a with pssh or sinf boxes

rule-H-COVERAGE = no items were missed between harvests
rule-H-COVERAGE-warning = the oldest item is newer than the previous harvest: items may have dropped off the feed in between

rule-H-VERSION = a changed item keeps its guid and gets a newer pubDate
rule-H-VERSION-warning = a known guid whose content changed but whose pubDate did not (or went back)

rule-H-PUBLISHER = the publisher identifier is one agreed for this feed
rule-H-PUBLISHER-warning = the publisher identifier is not one agreed with KB for this feed

rule-H-PAGINATION = the feed is not paginated
rule-H-PAGINATION-warning = the feed links to a next page (atom:link rel="next" and the like)
