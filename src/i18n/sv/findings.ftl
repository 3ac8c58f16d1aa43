# Fyndens meddelanden på svenska: mallar med namngivna argument ({ $name }), ett per
# ID. Varje ID finns också i en/findings.ftl (ett test kontrollerar det, och att båda
# språken använder samma argument). Det som står inom `…` är kod och skrivs likadant på
# båda språken. Termerna är leveransprofilens (kb-eplikt-rss-2.4.sv.txt): item, flöde,
# checksumma, obligatoriskt, önskvärt.

## URLs, URIs, MIME types, typed identifiers (src/profile/syntax.rs)

url-empty = adressen (URL:en) är tom
url-space = URL:en innehåller ett mellanslag; procentkoda det (ett mellanslag skrivs `%20`)
url-control = URL:en innehåller styrtecknet U+{ $code }; procentkoda det (ett mellanslag skrivs `%20`)
url-relative = `{ $value }` är en relativ URL; skriv den absoluta URL:en, som börjar med `https://`
url-invalid = `{ $value }` är inte en giltig URL ({ $error })
url-error-empty-host = värdnamnet är tomt
url-error-idna = ogiltigt internationellt domännamn
url-error-port = ogiltigt portnummer
url-error-ipv4 = ogiltig IPv4-adress
url-error-ipv6 = ogiltig IPv6-adress
url-error-domain-character = otillåtet tecken i domännamnet
url-error-overflow = URL:er större än 4 GB stöds inte
url-error-other = { $detail }
url-scheme = `{ $value }` använder schemat `{ $scheme }:`; alla URL:er ska vara http eller https (profilen §2) — filer som levereras på annat sätt (FTP) anges i `dcterms:references`
url-no-host = `{ $value }` saknar värdnamn
uri-empty = URI:n är tom
uri-space = `{ $value }` är ingen URI: den innehåller blanktecken; skriv en URI som `https://creativecommons.org/licenses/by/4.0/`
uri-no-scheme = `{ $value }` är ingen absolut URI (schema saknas); skriv t.ex. `https://creativecommons.org/licenses/by/4.0/`
uri-not-absolute = `{ $value }` är ingen absolut URI
mime-invalid = `{ $value }` är ingen MIME-typ; skriv `typ/undertyp` enligt IANA:s register, t.ex. `text/html`, `application/pdf`, `audio/mpeg`
id-isbn = `{ $value }` är inget giltigt ISBN-10/ISBN-13 (kontrollsiffra eller längd)
id-issn = `{ $value }` är inget giltigt ISSN (`NNNN-NNNC` med kontrollsiffra)
id-ean = `{ $value }` är inget giltigt EAN-13 (kontrollsiffra eller längd)
id-upc = `{ $value }` är inget giltigt UPC-A (12 siffror med kontrollsiffra)
id-ismn = `{ $value }` är inget giltigt ISMN (`979-0…` med kontrollsiffra)
id-isrc = `{ $value }` är ingen giltig ISRC (`CCXXXYYNNNNN`)
id-doi = `{ $value }` är ingen DOI (`10.prefix/suffix`)
id-urn = `{ $value }` är ingen URN (`urn:NID:NSS`)

## pubDate (R103, src/profile/date.rs)

date-example = { $what }; skriv t.ex. `Sun, 22 Nov 2026 09:30:00 +0100`
date-empty = pubDate är tomt
date-iso = `{ $value }` är ISO 8601 / RFC 3339, men pubDate i RSS ska vara RFC 2822
date-after-zone = oväntat `{ $rest }` efter tidszonen
date-not-in-calendar = { $day } { $month } { $year } är inget datum i kalendern
date-time-range = klockslaget { $time } är utanför det tillåtna intervallet
date-day-name = `{ $value }` är inget veckodagsnamn (Mon … Sun)
date-day-comma = veckodagsnamnet ska följas av ett kommatecken
date-day = en dag i månaden (1 eller 2 siffror) väntades vid `{ $rest }`
date-space-after-day = ett mellanslag väntades efter dagen i månaden
date-month = `{ $value }` är ingen engelsk månadsförkortning (Jan … Dec)
date-space-after-month = ett mellanslag väntades efter månaden
date-four-digit-year = tvåsiffrigt år `{ $year }`: profil 2.4 kräver fyra siffror (`20{ $year }`)
date-year = året `{ $year }` ska ha exakt fyra siffror
date-space-after-year = ett mellanslag väntades mellan året och klockslaget
date-time = klockslaget väntades som `hh:mm` eller `hh:mm:ss` (två siffror vardera) vid `{ $rest }`
date-minutes = minuterna ska ha två siffror
date-seconds = sekunderna ska ha två siffror
date-space-after-time = ett mellanslag och en tidszon väntades efter klockslaget, t.ex. `+0100`
date-zone-colon = en numerisk tidszon skrivs `+hhmm` eller `-hhmm` (utan kolon: `+0100`, inte `+01:00`)
date-zone = en numerisk tidszon skrivs `+hhmm` eller `-hhmm`
date-zone-minutes = tidszonens minuter `{ $minutes }` är utanför det tillåtna intervallet
date-zone-name = tidszonen `{ $zone }` följer inte RFC 2822 (bara `+hhmm`/`-hhmm`, UT, GMT, EST … PDT); skriv förskjutningen, t.ex. `+0100` för CET, `+0200` för CEST
date-no-zone = tidszon saknas, t.ex. `+0100`
date-comment = en kommentar `(` i pubDate avslutas aldrig

## Item rules R101–R118 (src/profile/kb24/item.rs)

example-code = { $code }
item-missing = itemet saknar `<{ $name }>`, som profilen kräver; lägg till t.ex. { $example }
item-repeated = ett andra `<{ $name }>` i det här itemet; elementet får förekomma bara en gång
item-children = `<{ $name }>` innehåller underelement; det får bara innehålla text (koda märkningen eller lägg den i CDATA)
example-guid = `<guid isPermaLink="false">urn:uuid:…</guid>` som aldrig ändras
r101-empty = `<guid>` är tomt; ge varje item en unik, beständig identifierare
r101-perma-link = guid { $value } är ingen http(s)-URL, men `isPermaLink` är inte `false` (i RSS 2.0 är standardvärdet true); lägg till `isPermaLink="false"`
r101a-none = ingen typad identifierare; KB önskar en för dubblettkontroll, t.ex. `<dcterms:identifier xsi:type="dcterms:isbn">978…</dcterms:identifier>` (eller `dcterms:uri` med itemets URL)
type-unbound = prefixet `{ $prefix }` i xsi:type { $value } är inte deklarerat; använd det prefix ni har bundit till `{ $ns }`, t.ex. `dcterms:isbn`
type-not-qname = xsi:type { $value } är inget kvalificerat namn; skriv t.ex. `dcterms:isbn`
type-namespace = xsi:type { $value } ligger inte i DCMI Terms namnrymd; prefixet ska vara det som är bundet till `{ $ns }`, t.ex. `dcterms:isbn`
type-unknown = `{ $kind }` är ingen identifierartyp i profilen; använd någon av { $types } (gemener, t.ex. `dcterms:{ $lower }`)
type-typo = `{ $kind }` är troligen ett skrivfel i profilens tabell för R101a; skriv `{ $fix }`
r101a-issn = ett ISSN identifierar en seriell publikation, inte det här itemet; ange det i `dcterms:isPartOf xsi:type="dcterms:issn"`
type-empty = `dcterms:{ $name }` med xsi:type `{ $kind }` är tomt; skriv identifieraren
s201-references-outside = { $value } levereras utanför flödet ({ $scheme }:); insamlingen hämtar den inte
uri-not-http = URI:n { $value } är inte http eller https (profilen §2: alla URL:er ska vara http eller https)
type-missing = `dcterms:{ $name }` saknar xsi:type (formen före profil 2.2); skriv t.ex. `<dcterms:{ $name } xsi:type="dcterms:issn">…`
example-link = `<link>https://…/artikel</link>` där itemet först publicerades
r102-non-ascii = länken { $value } innehåller tecken utanför ASCII; det fungerar, men procentkodning är säkrare
r102-invalid = `<link>`: { $error }
r103-weekday = pubDate anger `{ $given }`, men det datumet är en { $actual }; skriv `{ $actual }` eller rätta datumet
r103-comment = pubDate slutar med en kommentar som `(CET)`; tillåtet i RFC 2822, men den numeriska zonen ensam är tydligare
r103-military = den militära tidszonen `{ $zone }` läses som -0000 (RFC 2822 §4.3); skriv en numerisk zon som `+0100`
r103-date = pubDate { $value }: { $error }
r104-invalid = utgivaren { $value } är ingen organisationsidentifierare från KB; skriv `{ $prefix }` + det tiosiffriga organisationsnumret utan bindestreck + ett eventuellt `-suffix` som avtalats med KB (2 eller fler bokstäver/siffror), t.ex. `{ $prefix }5560041815`
r104-space = blanktecken runt utgivaridentifieraren ignorerades; skriv den utan
r104-check-digit = organisationsnumret { $orgnr } har fel kontrollsiffra; jämför med Bolagsverkets register
r105-empty = `<title>` är tomt; ange itemets titel
r107-space = blanktecken runt accessRights ignorerades; skriv värdet utan
r107-invalid-gratis = accessRights ska vara exakt `gratis` eller `restricted`; här står { $value } (`gratis`: fritt att läsa vid publiceringen)
r107-invalid-restricted = accessRights ska vara exakt `gratis` eller `restricted`; här står { $value } (`restricted`: betalning, prenumeration eller andra villkor)
r107-invalid = accessRights ska vara exakt `gratis` eller `restricted`; här står { $value }
r108-none = ingen `<dcterms:license>`; KB önskar en licens-URI för rättighetshanteringen, t.ex. `https://creativecommons.org/licenses/by/4.0/`
r108-invalid = dcterms:license ska vara en URI sedan profil 2.3: { $error }
r108-not-http = licens-URI:n { $value } är inte http eller https (profilen §2)
r115-empty = `dcterms:{ $name }` är tomt; skriv `Efternamn, Förnamn` för en person eller institutionens namn, eller utelämna elementet
example-format = `<dcterms:format>text/html</dcterms:format>`, MIME-typen för filen på `link`
mime-top-level = { $what } { $value }: `{ $top }` är ingen registrerad medietyp på översta nivån (application, audio, font, image, message, model, multipart, text, video …)
keywords-empty = `media:keywords` är tomt; utelämna det eller ange nyckelord åtskilda med kommatecken

## Files of an item: S201-content, F302–F311, MARKER-isFormatOf (src/profile/kb24/media.rs)

named-error = { $what }: { $error }
s201-group-nested = `media:group` inuti en annan `media:group`; grupper i MediaRSS kan inte nästlas — gör dem till en nivå
s201-group-empty = `media:group` utan `media:content`; ta bort den eller lägg filerna i den
s201-enclosure = `<enclosure>` { $url } har ingen `media:content` med samma URL; KB läser bara media:content — lägg till `<media:content url="…" type="…"/>`
f302-missing = `media:content` saknar `url`; KB hämtar varje media:content, så ange filens absoluta http(s)-URL
f302-non-ascii = url innehåller tecken utanför ASCII; det fungerar, men procentkodning är säkrare
f303-missing = `media:content` saknar `type`; lägg till filens MIME-typ, t.ex. `type="application/pdf"`
marker-repeated = en andra markör `dcterms:isFormatOf` i denna media:content; högst en är tillåten
marker-no-link = markören för alternativ form ska upprepa itemets `<link>`, men itemet har ingen
marker-differs = markören för alternativ form { $value } skiljer sig från itemets länk { $link }; den ska vara samma URL
f307-no-href = `media:license` saknar `href`; KB läser bara href: skriv `href="https://creativecommons.org/licenses/by/4.0/"`
f307-type = media:license type { $value } är ingen MIME-typ; skriv t.ex. `text/html`
f308-scheme = media:credit scheme { $value } är inte `urn:ebu` eller `urn:yvs`; utelämna det för EBU-roller
f308-role-case = media:credit role { $value } ska skrivas med gemener (MediaRSS): `{ $lower }`
f308-role-ebu = rollen { $value } är ingen av de EBU-roller som MediaRSS nämner (author, editor, photographer, …)
f305-algo = media:hash algo { $value } är ingen av { $known }; KB önskar `algo="md5"`
f305-length = { $algo }-checksumman { $value } ska vara exakt { $len } hexadecimala siffror (här { $count })
f305-two = två olika { $algo }-checksummor för samma fil; ange en per algoritm
f305-no-md5 = ingen MD5 bland checksummorna; KB kontrollerar filer med MD5: lägg till `<media:hash algo="md5">…</media:hash>`
f305-scoped = denna media:hash gäller alla { $files } filer under den, som inte alla kan ha samma checksumma; lägg en media:hash i varje media:content

## Namespaces: G-NS-* (src/profile/kb24/namespace.rs)

ns-dc-elements = `{ $name }` ligger i namnrymden för Dublin Core 1.1, `http://purl.org/dc/elements/1.1/`, som profilen inte tillåter; bind prefixet till `{ $ns }` (DCMI Terms) i stället
ns-mrss = { $decl }="{ $uri }" är inte namnrymden för MediaRSS; skriv exakt `{ $ns }` (med det avslutande snedstrecket) — element i den här namnrymden läses inte som MediaRSS
ns-dcterms = { $decl }="{ $uri }" är inte namnrymden för DCMI Terms; skriv exakt `{ $ns }` — element i den här namnrymden läses inte som DCMI Terms
ns-xsi = { $decl }="{ $uri }" är inte namnrymden för XML Schema instance; skriv exakt `{ $ns }` (http, inte https) — attributet `type` i den här namnrymden är inte xsi:type
ns-prefix-other = DCMI Terms är bundet till prefixet `{ $prefix }`; det är tillåtet, men profilen rekommenderar `dcterms`
ns-prefix-two = DCMI Terms är bundet till både `{ $first }` och `{ $prefix }`; använd ett och samma prefix genomgående (profilen §2)
ns-prefix-elsewhere = prefixet `{ $prefix }` är bundet till DCMI Terms här och till `{ $other }` på annat ställe; använd prefixet för DCMI Terms bara till DCMI Terms (profilen §2)
ns-prefix-here = prefixet `{ $prefix }` används för DCMI Terms och här för `{ $uri }`; använd prefixet för DCMI Terms bara till DCMI Terms (profilen §2)

## The root and the channel: G-RSS, G-RSS-CHANNEL (src/profile/kb24/channel.rs)

g-rss-root-atom = rotelementet är `{ $name }` (ett Atom-flöde); profilen kräver RSS 2.0: `<rss version="2.0">` (utan namnrymd) med en `<channel>`
g-rss-root-rdf = rotelementet är `{ $name }` (RSS 1.0 / RDF); profilen kräver RSS 2.0: `<rss version="2.0">` (utan namnrymd) med en `<channel>`
g-rss-root = rotelementet är `{ $name }`; profilen kräver RSS 2.0: `<rss version="2.0">` (utan namnrymd) med en `<channel>`
g-rss-no-version = `<rss>` saknar `version`; skriv `<rss version="2.0">`
g-rss-version = RSS-versionen är { $value }; skriv exakt `version="2.0"`
g-rss-two-channels = en andra `<channel>`; ett RSS 2.0-flöde har exakt en kanal — lägg alla items i den första
g-rss-no-channel = `<rss>` saknar `<channel>`; items ska ligga i `<rss version="2.0"><channel>…</channel></rss>`
g-rss-channel-missing = kanalen saknar `<{ $name }>`; RSS 2.0 kräver kanalens title, link och description
g-rss-channel-repeated = ett andra `<{ $name }>` i kanalen; kanalen har exakt ett
s201-channel-content = `media:content` direkt under `<channel>` hör inte till något item och hämtas inte; flytta den till det item den hör till

## Across items: R101 uniqueness, G-ORDER, R112 required (src/profile/kb24/mod.rs)

r112-required = flödets värdpublikation är leveranspliktig, så varje item behöver en `<dcterms:isPartOf xsi:type="dcterms:issn">` (eller isbn) som anger den
r101-duplicate = guid { $value } används redan av item { $first }; varje item behöver ett eget guid (en ny version behåller sitt guid och får ett senare pubDate)
g-order = items ska sorteras efter pubDate, nyaste först: det här itemet är nyare än item { $previous } före det (jämförda som tidpunkter, med tidszonerna tillämpade); flytta upp det

## G-XML: well-formedness and limits (src/xml/)

xml-syntax = flödet är inte välformad XML: { $detail }
xml-mismatched-end = sluttaggen `</{ $found }>` avslutar inte det öppna elementet `<{ $expected }>`; skriv `</{ $expected }>`
xml-unclosed = flödet tar slut inuti `<{ $name }>`: det är avkortat eller elementet avslutas aldrig; leverera hela dokumentet
xml-empty = indata innehåller inget XML-element alls (tomt eller bara blanktecken/kommentarer); leverera ett RSS 2.0-dokument
xml-after-root = { $what } efter rotelementets slut; ett flöde har exakt en rot `<rss>` och inget annat än kommentarer efter den
xml-what-text = text
xml-what-reference = en referens
xml-what-stray-end = sluttaggen `</{ $name }>` utan starttagg
xml-what-cdata = ett CDATA-avsnitt
xml-what-second-root = ett andra rotelement `<{ $name }>`
xml-before-root = text före rotelementet; dokumentet ska börja med `<?xml …?>` eller `<rss>`
xml-unbound-prefix = namnrymdsprefixet `{ $prefix }` är inte deklarerat; lägg till `xmlns:{ $prefix }="…"` på det här elementet eller på `<rss>`
xml-empty-prefix-binding = `xmlns:{ $prefix }=""` avdeklarerar ett prefix, vilket namnrymder i XML 1.0 inte tillåter; ta bort det
xml-reserved-prefix = reserverat prefix eller reserverad namnrymd felaktigt använd: { $detail }
xml-bad-name = `{ $name }` är inget giltigt XML-namn: ett namn börjar med en bokstav eller `_`, fortsätter med bokstäver, siffror, `-`, `.` eller `_` och har högst ett `:` mellan två icke-tomma delar
xml-duplicate-attribute = attributet `{ $name }` förekommer två gånger på det här elementet (efter namnrymdsupplösning); behåll ett
xml-undefined-entity = odefinierad entitet `&{ $name };`; XML känner bara till &lt; &gt; &amp; &apos; &quot; och det som DOCTYPE deklarerar — skriv själva tecknet (UTF-8), en teckenreferens som `&#160;` eller lägg HTML-koden i CDATA
xml-external-entity = `&{ $name };` hänvisar till den externa entiteten "{ $system }", som plikt aldrig hämtar (skydd mot attacker med externa entiteter), så texten finns inte i flödet; skriv själva texten i stället för referensen
xml-undeclared-entity-dtd = entiteten `&{ $name };` är inte deklarerad i flödet; den kan vara deklarerad i den externa DTD:n "{ $dtd }", som plikt aldrig hämtar — skriv själva tecknet (UTF-8) eller en teckenreferens som `&#160;`, eller deklarera entiteten i DOCTYPE:ns interna del
xml-undeclared-entity = entiteten `&{ $name };` är inte deklarerad någonstans där plikt läser (i en DTD med parameterentitetsreferenser är det enligt XML ett giltighetsfel, inte ett välformningsfel), så dess text är okänd; skriv själva tecknet (UTF-8) eller en teckenreferens som `&#160;`, eller deklarera entiteten i DOCTYPE
xml-in-entity = i ersättningstexten för entiteten `{ $name }`, som refereras här: { $error }
xml-amplification = entitetsreferenserna expanderar till mer än { $factor } gånger flödets text (en attack med entitetsexpansion, ”billion laughs”, eller en DOCTYPE som inte borde finnas där); skriv texten direkt
xml-entities-too-deep = entitetsreferenserna är nästlade i mer än { $depth } nivåer; skriv texten direkt
xml-bad-char-ref = teckenreferensen `&{ $reference };` anger inget tecken som XML tillåter
xml-invalid-utf8 = byte som inte är giltig UTF-8; spara flödet som UTF-8 eller deklarera dess verkliga teckenkodning, t.ex. `<?xml version="1.0" encoding="ISO-8859-1"?>`
xml-invalid-utf16 = ogiltig UTF-16 (ett oparat surrogat eller ett udda antal byte)
xml-forbidden-char = tecknet U+{ $code } är inte tillåtet i XML 1.0; ta bort det (styrtecken kommer ofta från kopiering och inklistring)
xml-unsupported-encoding = teckenkodningen `{ $encoding }` stöds inte; leverera UTF-8 (eller ISO-8859-1, windows-1252, UTF-16)
xml-too-deep = elementen är nästlade i mer än { $depth } nivåer; ett RSS-flöde behöver färre än 10
xml-too-large = flödet är större än gränsen på { $bytes } byte
xml-event-too-large = en enskild tagg eller text är större än gränsen på { $bytes } byte; leverera stora filer genom media:content, inte i själva flödet
xml-bad-character-data = { $what } är inte tillåtet i teckendata; koda det
xml-what-cdata-end = `]]>`
xml-what-lt-in-value = `<` i ett attributvärde
xml-too-many-namespaces = fler än { $max } olika namnrymder
xml-bare-amp = ett ensamt `&` som inte inleder någon referens; skriv `&amp;` (också i URL:er: `?id=1&amp;sektion=2`) eller lägg texten i CDATA
xml-truncated-reference = indata tar slut inuti en referens `&…;`; flödet är avkortat
xml-bad-reference = `&{ $name };` är ingen referens: en entitets namn börjar med en bokstav eller `_`; skriv `&amp;` för ett vanligt `&`
xml-end-outside-entity = en sluttagg som avslutar ett element som öppnades utanför entiteten: ett element börjar och slutar i samma entitet
xml-comment-dashes = `--` inuti en kommentar, vilket XML inte tillåter; skriv `- -` eller ta bort det
xml-bang = `{ $what }` inleder ingen märkning som XML känner till: `<!` inleder en kommentar `<!--…-->`, ett CDATA-avsnitt `<![CDATA[…]]>` eller en DOCTYPE
xml-truncated = indata tar slut inuti { $what }; flödet är avkortat eller { $what } avslutas aldrig
xml-encoding-name = `encoding="{ $label }"`: teckenkodningens namn ska börja med en bokstav och fortsätta med bokstäver, siffror, `.`, `_` eller `-`, som `UTF-8` eller `ISO-8859-1`
xml-amp-in-value = `&` i ett attributvärde ska skrivas `&amp;`
xml-entity-recursion = entiteten hänvisar till sig själv (XML §4.1, WFC: No Recursion)
xml-entity-recursion-parameter = parameterentiteten hänvisar till sig själv (XML §4.1, WFC: No Recursion)
xml-entity-lt = `<`, som ett attributvärde inte får innehålla, inte ens genom en entitet (XML §3.1, WFC: No < in Attribute Values); skriv `&lt;` i entitetens värde som `&#38;lt;`
xml-external-in-value = `&{ $name };` hänvisar till den externa entiteten "{ $system }", vilket ett attributvärde inte får (XML §3.1, WFC: No External Entity References); skriv själva värdet
xml-unparsed-entity = `&{ $name };` hänvisar till en oparsad entitet (NDATA), som anges i ett ENTITY-attribut men aldrig refereras (XML §4.1, WFC: Parsed Entity)
xml-entity-self = entiteten `{ $name }` hänvisar till sig själv (XML §4.1, WFC: No Recursion)
xml-entity-open-element = den öppnar `<{ $name }>` utan att avsluta det: ett element börjar och slutar i samma entitet
xml-bare-lt = ett `<` som inte inleder någon tagg; skriv `&lt;` för ett `<` i text
xml-attribute-space = inget blanktecken mellan ett attributs värde och det som följer; skilj attributen åt med ett mellanslag
xml-attribute-unexpected = `{ $what }` där ett attributnamn, `>` eller `/>` skulle komma
xml-attribute-quotes = värdet på attributet `{ $key }` ska stå inom citattecken: { $key }="…"
xml-slash = `/` i en starttagg ska följas av `>`
xml-attribute-unclosed = ett attributvärde i den här starttaggen inleds med `{ $quote }` och avslutas aldrig; lägg till det avslutande `{ $quote }`
xml-attribute-no-value = attributet `{ $key }` saknar värde; skriv { $key }="…"
xml-encoding-utf16-bom = XML-deklarationen anger encoding="{ $label }", men dokumentet är UTF-16 (enligt dess byteordningsmarkering); deklarera den teckenkodning dokumentet är sparat i, eller spara det i den deklarerade
xml-encoding-not-utf16 = XML-deklarationen anger encoding="{ $label }", men dokumentet är inte UTF-16 (det saknar byteordningsmarkering och läses som ASCII); deklarera den teckenkodning dokumentet är sparat i, eller spara det i den deklarerade
xml-encoding-utf8-bom = XML-deklarationen anger encoding="{ $label }", men dokumentet är UTF-8 (enligt dess byteordningsmarkering); deklarera den teckenkodning dokumentet är sparat i, eller spara det i den deklarerade
xml-decl = { $what }; en XML-deklaration lyder `<?xml version="1.0" encoding="UTF-8"?>` (pseudoattribut med gemener, i ordningen version, encoding, standalone)
xml-decl-no-version = XML-deklarationen saknar version
xml-decl-space = ett blanktecken behövs före varje pseudoattribut
xml-decl-before-version = `{ $key }` kommer före `version`, som är obligatoriskt och kommer först
xml-decl-order = `{ $key }` står i fel ordning eller upprepas
xml-decl-unknown = `{ $key }` är inget pseudoattribut i XML-deklarationen
xml-decl-eq = `{ $key }` ska följas av `=`
xml-decl-quotes = värdet på `{ $key }` ska stå inom citattecken
xml-decl-unclosed = värdet på `{ $key }` avslutas aldrig
xml-decl-version = `version="{ $value }"`: värdet ska vara `1.0`
xml-decl-encoding = `encoding="{ $value }"`: värdet ska vara ett namn som `UTF-8` eller `ISO-8859-1`
xml-decl-standalone = `standalone="{ $value }"`: värdet ska vara `yes` eller `no`
xml-decl-first = XML-deklarationen `<?xml …?>` ska komma först, före allt annat, även blanktecken
xml-pi-target = `<?{ $target }` inleder ingen processinstruktion: `<?` ska följas av ett namn, som i `<?xml-stylesheet …?>`
xml-pi-colon = processinstruktionens mål `{ $target }` innehåller ett kolon, vilket Namespaces in XML inte tillåter
xml-pi-unclosed = en processinstruktion avslutas aldrig med `?>`
xml-doctype-comment = en kommentar i DOCTYPE avslutas aldrig med `-->`
xml-doctype-after-root = DOCTYPE efter rotelementet
xml-doctype-second = en andra DOCTYPE; ett dokument har högst en
xml-doctype = i dokumenttypsdeklarationen (DOCTYPE; beskrivningen av felet finns bara på engelska): { $detail }
xml-markup-start-tag = en starttagg
xml-markup-end-tag = en sluttagg
xml-markup-comment = en kommentar
xml-markup-instruction = en processinstruktion
xml-markup-doctype = en DOCTYPE
xml-markup-declaration = märkningen `<!…`

## The text report (src/report/text.rs)

text-item-guid = item { $item }, guid { $guid }
text-item = item { $item }
text-help = hjälp
text-omitted = … och { $n } till av { $severity }[{ $rule }] visas inte (höj --max-findings)
text-valid = giltigt
text-not-valid = inte giltigt
text-summary = { $verdict } enligt KB:s profil 2.4 — { $errors }, { $warnings }, { $infos } { $items }
