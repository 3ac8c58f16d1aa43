# Reglerna i KB:s leveransprofil 2.4, på svenska: för varje regel en sammanfattning på en rad
# (rule-<ID>, kommandoradens hjälptext) och vad var och en av dess allvarlighetsgrader betyder
# (rule-<ID>-<allvarlighet>, på regelsidorna). Varje ID finns också i ../en/rules.ftl.

rule-G-XML = flödet ska vara välformad XML 1.0, även vad gäller namnrymder (UTF-8 eller en deklarerad teckenkodning), med all text i själva flödet (inga externa entiteter)
rule-G-XML-error = flödet är inte välformad XML, även vad gäller namnrymder (en tagg som inte stängs eller är felstavad, ett odeklarerat prefix, en HTML-entitet som &nbsp;, en DTD-entitet); kritiskt: rapporteras som enda fynd

rule-G-RSS = rotelementet är `<rss version="2.0">` utan namnrymd, med exakt ett `<channel>`
rule-G-RSS-error = rotelementet är inte `rss` utan namnrymd, `version` är inte exakt `2.0`, eller det finns inte exakt ett `channel`; ett annat rotelement än `rss` avbryter valideringen

rule-G-RSS-CHANNEL = kanalen har exakt ett vardera av `title`, `link` och `description`
rule-G-RSS-CHANNEL-error = kanalens `title`, `link` eller `description` saknas eller förekommer mer än en gång

rule-G-NS-MRSS = MediaRSS-element har exakt namnrymden `http://search.yahoo.com/mrss/`
rule-G-NS-MRSS-error = en namnrymd som nästan är MediaRSS (utan avslutande snedstreck, med https, med www.), eller prefixet `media` bundet till en annan namnrymd

rule-G-NS-DCTERMS = Dublin Core-element har exakt namnrymden `http://purl.org/dc/terms/` (oavsett prefix)
rule-G-NS-DCTERMS-error = en namnrymd som nästan är DCMI Terms (med https, utan avslutande snedstreck, med versaler), eller `dcterms`/`dct` bundet till en annan namnrymd; KB ser då inga Dublin Core-element

rule-G-NS-DCELEMENTS = inget element får ha DC 1.1-namnrymden `http://purl.org/dc/elements/1.1/`
rule-G-NS-DCELEMENTS-error = ett element i DC 1.1-namnrymden (något som publiceringssystemet skriver som standard, till exempel `dc:creator` i WordPress)

rule-G-NS-PREFIX = DCMI Terms har ett enda prefix, helst `dcterms`, som inte används för något annat
rule-G-NS-PREFIX-warning = DCMI Terms är bundet till mer än ett prefix, eller dess prefix är på annat ställe bundet till en annan namnrymd
rule-G-NS-PREFIX-info = ett annat prefix än det rekommenderade `dcterms`

rule-G-NS-XSI = xsi är exakt `http://www.w3.org/2001/XMLSchema-instance`
rule-G-NS-XSI-error = prefixet i ett `type`-attribut är bundet till något som nästan är namnrymden för XML Schema instance (särskilt `https://`), eller `xsi` är på annat ställe bundet till något annat

rule-G-ORDER = items är sorterade på pubDate, med senast publicerade item först (jämförda som tidpunkter)
rule-G-ORDER-error = ett item är nyare än itemet före det (jämförda som tidpunkter, med hänsyn till tidszonerna)

rule-R101 = `guid`: obligatoriskt, en gång, inte tomt, unikt i flödet, ändras aldrig
rule-R101-error = saknas, är tomt, förekommer mer än en gång i itemet eller har samma värde som ett annat items guid
rule-R101-info = inte en URL, men utan isPermaLink="false" (RSS antar då att det är en permalänk)

rule-R101a = `dcterms:identifier xsi:type="dcterms:isbn|issn|doi|uri|…"`: önskvärt för dubblettkontroll
rule-R101a-error = en typ som inte finns i KB:s lista, ett prefix som inte är bundet till http://purl.org/dc/terms/, eller ett tomt värde
rule-R101a-warning = inget dcterms:identifier med typvärde i itemet (önskvärt för dubblettkontroll), eller `matrixnumber`
rule-R101a-info = ett värde vars syntax eller kontrollsiffra ser fel ut för typen

rule-R102 = `link`: obligatoriskt, en gång, absolut http(s)-URL där itemet först publicerades
rule-R102-error = saknas, förekommer mer än en gång, är en relativ adress eller är inte http(s)

rule-R103 = `pubDate`: obligatoriskt, en gång, RFC 2822 med året i fyra siffror, t.ex. `Sun, 22 Nov 2026 09:30:00 +0100`
rule-R103-error = saknas, förekommer mer än en gång, följer inte RFC 2822, har året i två siffror, ett omöjligt datum eller en tidszon som CET, CEST eller UTC
rule-R103-warning = veckodagen stämmer inte med datumet
rule-R103-info = en kommentar efter tidszonen, eller en militär tidszon

rule-R104 = `dcterms:publisher`: obligatoriskt, en gång, `http://id.kb.se/organisations/SE<orgnr>[-suffix]`
rule-R104-error = saknas, förekommer mer än en gång eller är inte http://id.kb.se/organisations/SE + det tiosiffriga organisationsnumret utan bindestreck + ett eventuellt -suffix på minst 2 bokstäver eller siffror
rule-R104-info = organisationsnumrets kontrollsiffra är fel, eller blanktecken före eller efter värdet

rule-R105 = `title`: obligatoriskt, en gång, inte tomt
rule-R105-error = saknas, är tomt eller förekommer mer än en gång

rule-R106 = `description`: frivilligt, högst en gång
rule-R106-error = mer än ett description-element i itemet

rule-R107 = `dcterms:accessRights`: obligatoriskt, en gång, `gratis` eller `restricted`
rule-R107-error = saknas, förekommer mer än en gång eller är inte exakt `gratis` eller `restricted`
rule-R107-info = blanktecken före eller efter värdet

rule-R108 = `dcterms:license`: önskvärt, högst en gång, en URI
rule-R108-error = inte en URI (vanlig text är inte längre tillåten sedan version 2.3 av profilen), eller förekommer mer än en gång
rule-R108-warning = ingen licens (önskvärt för rättighetsbehandling), eller en URI vars schema inte är http(s)

rule-R112 = `dcterms:isPartOf xsi:type="dcterms:issn|isbn|…"`: värdpublikationen
rule-R112-error = en typ som inte finns i KB:s lista, fel prefix eller ett tomt värde; saknas fast värdpublikationen är leveranspliktig (`--require-is-part-of`)
rule-R112-warning = inget xsi:type (formen från version 2.1 av profilen)
rule-R112-info = ett värde vars syntax eller kontrollsiffra ser fel ut för typen

rule-R113 = `dcterms:isFormatOf xsi:type="dcterms:isbn|…"`: samma innehåll i ett annat format
rule-R113-error = en typ som inte finns i KB:s lista, fel prefix eller ett tomt värde
rule-R113-warning = inget xsi:type
rule-R113-info = ett värde vars syntax eller kontrollsiffra ser fel ut för typen

rule-R115-creator = `dcterms:creator`: `Efternamn, Förnamn (roll)` eller en institutions namn
rule-R115-creator-warning = ett tomt creator-element

rule-R115-contributor = `dcterms:contributor`: `Efternamn, Förnamn (roll)` eller en institutions namn
rule-R115-contributor-warning = ett tomt contributor-element

rule-R117 = `dcterms:format`: obligatoriskt, en gång, MIME-typen för den fil som `link` pekar ut
rule-R117-error = saknas, förekommer mer än en gång eller är inte en MIME-typ (förled/efterled)
rule-R117-warning = ett förled (en toppnivåtyp) som inte finns hos IANA

rule-S201-content = `media:content` (även i `media:group`): varje fil som hör till itemet; KB hämtar alla
rule-S201-content-warning = ett `enclosure` utan en media:content för samma URL (KB läser bara media:content), media:content direkt i kanalen, eller en media:group som är nästlad eller tom

rule-F302 = `media:content/@url`: obligatoriskt, absolut http(s)-URL
rule-F302-error = saknas, är en relativ adress eller är inte http(s) (filer som levereras på annat sätt pekas ut med dcterms:references)

rule-MARKER-isFormatOf = `media:content/dcterms:isFormatOf`: högst en gång, exakt samma som itemets `link`
rule-MARKER-isFormatOf-error = inte samma URL som itemets link, eller mer än en markör i samma media:content

rule-F303 = `media:content/@type`: obligatoriskt, en MIME-typ
rule-F303-error = saknas eller är inte en MIME-typ (`medium` kan inte ersätta den)
rule-F303-warning = ett förled (en toppnivåtyp) som inte finns hos IANA

rule-S201-references = `dcterms:references xsi:type="dcterms:uri|…"`: filer som levereras på annat sätt (FTP)
rule-S201-references-error = en typ som inte finns i KB:s lista, fel prefix eller ett tomt värde
rule-S201-references-warning = inget xsi:type (formen från version 2.0 av profilen)
rule-S201-references-info = ett värde vars syntax ser fel ut för typen

rule-F305 = `media:hash algo="md5"`: 32 hexadecimala siffror, en per algoritm
rule-F305-error = en MD5-summa som inte är exakt 32 hexadecimala siffror (SHA-1: 40), en okänd algoritm (algo) eller två olika checksummor med samma algoritm
rule-F305-warning = en media:content där ingen av checksummorna är MD5
rule-F305-info = en checksumma på media:group- eller item-nivå, vilket är tvetydigt när det finns flera filer

rule-F307 = `media:license href="URI"`: filens licens
rule-F307-error = inget `href`, eller ett `href` som inte är en URI
rule-F307-warning = ett `type` som inte är en MIME-typ, eller ett `href` vars schema inte är http(s)

rule-R118 = `media:keywords` (item): kommaseparerade nyckelord
rule-R118-info = tomma nyckelord

rule-F311 = `media:keywords` (fil): kommaseparerade nyckelord
rule-F311-info = tomma nyckelord

rule-F308-credit = `media:credit role="…"`: roll med gemener, scheme `urn:ebu` (standard) eller `urn:yvs`
rule-F308-credit-error = ett annat `scheme` än urn:ebu eller urn:yvs
rule-F308-credit-warning = ett `role` med versaler (MediaRSS: gemener)
rule-F308-credit-info = en roll som inte finns i EBU:s lista

rule-F308-copyright = `media:copyright url="…"`: upphovsrättsinnehavaren, med en absolut http(s)-URL
rule-F308-copyright-error = ett `url` som inte är en absolut http(s)-URL

rule-H-FETCH = varje `link` och `media:content/@url` kan hämtas
rule-H-FETCH-error = en fil som inte kan hämtas (efter flera försök): ett 4xx- eller 5xx-svar, en överskriden tidsgräns, en bruten anslutning

rule-H-AUTH = inloggningsuppgifter skickas bara till flödets eget ursprung (origin)
rule-H-AUTH-error = flödets filer kräver inloggningsuppgifter som KB inte har fått, eller en omdirigering skulle skicka uppgifterna till ett annat ursprung (origin)

rule-H-MIME = den angivna MIME-typen stämmer med den som servern skickar
rule-H-MIME-warning = den angivna MIME-typen skiljer sig från den som servern skickar

rule-H-MD5 = MD5-summan av de hämtade byten är densamma som `media:hash`
rule-H-MD5-error = MD5-summan av de hämtade byten skiljer sig från media:hash (en skadad eller ändrad fil)

rule-H-SIZE = antalet byte är detsamma som `fileSize`
rule-H-SIZE-warning = antalet hämtade byte skiljer sig från fileSize

rule-H-DRM = filerna har inget DRM-skydd
rule-H-DRM-error = en fil med DRM-skydd: en PDF med /Encrypt, en EPUB med rights.xml eller med en encryption.xml som gör mer än att dölja typsnitt (font obfuscation), en mp4/m4a med pssh- eller sinf-boxar

rule-H-COVERAGE = inga items missades mellan två hämtningar
rule-H-COVERAGE-warning = det äldsta itemet är nyare än den förra hämtningen: items kan ha försvunnit ur flödet däremellan

rule-H-VERSION = ett ändrat item behåller samma guid och får ett senare datum i pubDate
rule-H-VERSION-warning = ett känt guid där innehållet har ändrats men inte pubDate (eller där pubDate har flyttats bakåt)

rule-H-PUBLISHER = utgivaridentifikatorn är en som har överenskommits för det här flödet
rule-H-PUBLISHER-warning = utgivaridentifikatorn är inte en som har överenskommits med KB för det här flödet

rule-H-PAGINATION = flödet är inte paginerat
rule-H-PAGINATION-warning = flödet länkar till en nästa sida (atom:link rel="next" eller liknande)
