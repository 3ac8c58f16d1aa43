#!/usr/bin/env python3
"""Write a deterministic, valid KB e-plikt 2.4 RSS feed with N items (for benchmarks).

Usage: python3 scripts/gen-feed.py N OUT

The feed models fixtures/feeds/valid-daily-newspaper.xml: a fictional daily newspaper whose
items each carry guid, link, pubDate, title, description (every fifth one escaped HTML),
dcterms:identifier (typed dcterms:uri = the link, so no check digits are involved),
dcterms:publisher, accessRights, license, format and one media:content with an MD5
media:hash: every third item a photo inside a media:group, the others an HTML version of the
article. Items are newest first with strictly decreasing pubDates (RFC 2822, weekday computed
by email.utils.format_datetime). Items average 814 bytes (100,000 items = 81.4 MB); plikt
reports no findings and schemas/kb-rss-2.4.xsd accepts the feed.

No randomness: the same N always gives the same bytes. Hashes are MD5 of the content URL.
The file is streamed to disk item by item; memory use does not grow with N.
"""

import hashlib
import sys
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

SITE = "https://www.nyp.se"
PUBLISHER = "http://id.kb.se/organisations/SE5560041815"
LICENSE = f"{SITE}/villkor"
CET = timezone(timedelta(hours=1))
START = datetime(2025, 3, 14, 9, 12, 0, tzinfo=CET)

# Title words (Swedish, with å/ä/ö so that the decoder sees multi-byte UTF-8).
PLACES = ["Västerås", "Köping", "Örebro", "Eskilstuna", "Sala", "Arboga", "Enköping",
          "Fagersta", "Norberg", "Kungsör", "Heby"]
SUBJECTS = ["Resecentrum", "Skolan", "Hamnen", "Budgeten", "Cykelbanan", "Vårdcentralen",
            "Simhallen", "Bygget", "Biblioteket", "Busslinjen", "Stadsparken"]
EVENTS = ["försenas", "får nytt beslut", "byggs om", "läggs ned", "öppnar igen",
          "blir dyrare", "får stöd", "utreds"]

# Indented with tabs, like WordPress's feeds.
HEADER = f"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"
\txmlns:media="http://search.yahoo.com/mrss/"
\txmlns:dcterms="http://purl.org/dc/terms/"
\txmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<channel>
\t<title>Nya Posten – Nyheter</title>
\t<link>{SITE}/</link>
\t<description>Senaste nytt från Västmanland – leveransflöde för e-plikt.</description>
\t<language>sv-SE</language>
\t<lastBuildDate>{format_datetime(START)}</lastBuildDate>
"""

FOOTER = """</channel>
</rss>
"""


def md5(text: str) -> str:
    return hashlib.md5(text.encode("utf-8")).hexdigest()


def item(i: int, when: datetime) -> str:
    place = PLACES[i % len(PLACES)]
    subject = SUBJECTS[(i // 3) % len(SUBJECTS)]
    event = EVENTS[(i // 7) % len(EVENTS)]
    link = f"{SITE}/a/{i:06d}"
    description = f"Beslut nr {i} i {place}."
    if i % 5 == 0:  # some publishers send HTML, escaped
        description = f"&lt;p&gt;{description}&lt;/p&gt;"
    if i % 3 == 2:
        url = f"{SITE}/bild/{i:06d}.jpg"
        content = f"""\t\t<media:group>
\t\t\t<media:content url="{url}" type="image/jpeg" medium="image" width="1600" height="1067">
\t\t\t\t<media:hash algo="md5">{md5(url)}</media:hash>
\t\t\t</media:content>
\t\t</media:group>
"""
    else:
        url = f"{SITE}/eplikt/{i:06d}.html"
        content = f"""\t\t<media:content url="{url}" type="text/html" medium="document">
\t\t\t<media:hash algo="md5">{md5(url)}</media:hash>
\t\t</media:content>
"""
    return f"""\t<item>
\t\t<title>{subject} i {place} {event}</title>
\t\t<link>{link}</link>
\t\t<description>{description}</description>
\t\t<guid>{link}</guid>
\t\t<pubDate>{format_datetime(when)}</pubDate>
\t\t<dcterms:identifier xsi:type="dcterms:uri">{link}</dcterms:identifier>
\t\t<dcterms:publisher>{PUBLISHER}</dcterms:publisher>
\t\t<dcterms:accessRights>{"gratis" if i % 4 else "restricted"}</dcterms:accessRights>
\t\t<dcterms:license>{LICENSE}</dcterms:license>
\t\t<dcterms:format>text/html</dcterms:format>
{content}\t</item>
"""


def main(argv: list) -> int:
    if len(argv) != 3 or not argv[1].isdigit():
        print("usage: python3 scripts/gen-feed.py N OUT", file=sys.stderr)
        return 2
    n = int(argv[1])
    when = START
    with open(argv[2], "w", encoding="utf-8", newline="\n", buffering=1 << 20) as out:
        out.write(HEADER)
        for i in range(n):
            out.write(item(i, when))
            # Strictly decreasing: 7 to 29 minutes (and a few seconds) between items.
            when -= timedelta(minutes=7 + (i * 13) % 23, seconds=(i * 7) % 60)
        out.write(FOOTER)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
