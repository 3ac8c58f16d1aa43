# Sidtexter för plikts valideringstjänst, svenska. Varje ID finns också i en/pages.ftl
# (ett test kontrollerar det). Fyndens meddelanden finns i findings.ftl, reglerna i rules.ftl.

skip-to-content = Hoppa till innehållet
site-tagline = KB e-plikt: leveransprofil för RSS 2.4
nav-label = Huvudmeny
nav-validate = Validera ett flöde
nav-rules = Regler
footer-text = plikt kontrollerar RSS-flöden mot Kungliga bibliotekets (KB) leveransprofil 2.4 för e-plikt. Inget av det ni skickar sparas.

home-title = E-pliktleverans via RSS
home-intro = Kontrollera att KB kan hämta ert flöde innan KB hämtar det, och se vad ni ska skriva i stället där det inte går.
home-validate-link = Validera ett flöde
home-validate-text = Ange flödets adress, ladda upp en fil eller klistra in XML-koden. Ni får varje fel med radnummer, regel och vad ni ska skriva i stället.
home-resourcesync-link = Samlingen (ResourceSync)
home-resourcesync-text = För bibliotek som synkroniserar den insamlade samlingen: Source Description.
home-rules-link = Reglerna
home-rules-text = Leveransprofilens { $n } regler, var och en med det avsnitt i profilen den kommer från och ett rätt och ett felaktigt exempel.

validate-title = Validera ett flöde
validate-intro = Kontrollera ett flöde mot KB:s leveransprofil 2.4 för e-plikt. Välj ett av de tre sätten nedan.
validate-how = Tre sätt att validera
validate-again = Validera igen
validate-limits = Flöden på högst { $size }.
validate-time = { $n ->
    [one] En validering får ta högst en sekund.
   *[other] En validering får ta högst { $n } sekunder.
}
validate-nothing-kept = Inget av det ni skickar sparas: flödet raderas så snart det har validerats.

form-url-title = Flödets adress
form-url-label = Flödets URL (http eller https)
form-url-help = Flödet hämtas från adressen, på samma sätt som KB:s insamling gör. Bara publika adresser kan hämtas.
form-file-title = Ladda upp en fil
form-file-label = Flödesfil (.xml)
form-file-help = Flödet precis som ert publiceringssystem skriver det.
form-xml-title = Klistra in XML-koden
form-xml-label = Flödets XML-kod
form-xml-help = Klistra in hela flödet, från <?xml … till </rss>.
form-require-is-part-of = Värdpublikationen är leveranspliktig (varje item behöver dcterms:isPartOf, R112)
form-format = Visa rapporten som
form-format-html = en webbsida
form-format-json = JSON (nedladdning)
form-format-junit = JUnit XML (nedladdning)
form-submit = Validera

report-valid = Flödet är giltigt enligt KB:s profil 2.4
report-invalid = Flödet är inte giltigt enligt KB:s profil 2.4
report-source = Validerat:
report-download = Ladda ner rapporten:
report-download-json = JSON
report-download-junit = JUnit XML
report-download-too-large = (för stor för att länkas här: välj JSON eller JUnit XML i formuläret, eller använd API:t)
report-by-rule = Fynd per regel
report-by-item = Fynd per item
report-no-findings = Inga fynd: inget att rätta.
report-channel = Flödet och dess kanal
report-untitled = (item utan titel)
report-item = Item { $n }
report-line = rad { $n }
report-column = kolumn { $n }
report-hint = Regeln:
report-hidden = { $n ->
    [one] Ytterligare ett fynd visas inte på sidan: ladda ner rapporten för att se det.
   *[other] Ytterligare { $n } fynd visas inte på sidan: ladda ner rapporten för att se alla.
}
report-omitted = { $n ->
    [one] Ytterligare ett fynd räknades men sparades inte (fler än 1 000 av samma regel).
   *[other] Ytterligare { $n } fynd räknades men sparades inte (fler än 1 000 av samma regel): JUnit-rapporten har alla.
}

count-errors = { $n ->
    [one] 1 fel
   *[other] { $n } fel
}
count-warnings = { $n ->
    [one] 1 varning
   *[other] { $n } varningar
}
count-infos = { $n ->
    [one] 1 upplysning
   *[other] { $n } upplysningar
}
count-items = { $n ->
    [one] i 1 item
   *[other] i { $n } items
}

severity-error = fel
severity-warning = varning
severity-info = upplysning

col-rule = Regel
col-severity = Allvarlighet
col-count = Fynd
col-requires = Vad regeln kräver
col-clause = Avsnitt i profilen

rules-title = Reglerna i KB:s leveransprofil 2.4
rules-intro = Varje regel som plikt kontrollerar, med det avsnitt i KB:s profil som den kommer från. Regelnumren är profilens egna (R104, F305 …) eller regelkatalogens (G-…, H-…).
rules-all = Alla regler
rules-feed-time = Kontrolleras i flödet
rules-feed-time-caption = Regler som kontrolleras när ett flöde valideras
rules-harvest-time = Kontrolleras när KB hämtar
rules-harvest-time-text = De här reglerna kräver de hämtade filerna eller den förra hämtningen, så bara insamlingen tillämpar dem.
rules-harvest-time-caption = Regler som kontrolleras när ett flöde hämtas

rule-clause = Avsnitt i profilen
rule-where = Var i flödet
rule-checked = Kontrolleras
rule-checked-feed = när ett flöde valideras (och när KB hämtar det)
rule-checked-harvest = när KB hämtar flödet (kräver de hämtade filerna eller den förra hämtningen)
rule-severity = Allvarlighet
rule-examples = Exempel
rule-in-item = I ett item:
rule-in-item2 = I ett andra item, efter det första:
rule-in-channel = I kanalen (channel):
rule-in-rss = Flödets rotelement:
rule-correct = Rätt
rule-incorrect = Fel
rule-reports = Det här rapporterar plikt för det felaktiga exemplet:
rule-pager = Andra regler

not-found-title = Sidan finns inte
not-found-text = Det finns ingen sådan sida eller regel.

error-title = Ingen rapport
error-rate-limited = { $n ->
    [one] För många valideringar från er adress. Försök igen om en sekund.
   *[other] För många valideringar från er adress. Försök igen om { $n } sekunder.
}
error-busy = Just nu pågår för många valideringar. Försök igen om en liten stund.
error-too-large = Flödet är större än { $size }, tjänstens gräns. Validera det med kommandoradsverktyget plikt validate, som inte har någon sådan gräns.
error-timeout = { $n ->
    [one] Valideringen tog längre tid än en sekund, tjänstens gräns.
   *[other] Valideringen tog längre tid än { $n } sekunder, tjänstens gräns.
}
error-fetch = Flödet kunde inte hämtas:
error-url = Det är ingen URL:
error-url-scheme = Bara adresser med http och https kan hämtas.
error-url-credentials = Adressen innehåller användarnamn eller lösenord. Ta bort dem: tjänsten skickar aldrig inloggningsuppgifter.
error-no-input = Ange ett flöde: dess adress, en fil eller XML-koden.
error-two-inputs = Ange ett flöde i taget.
error-upload = Uppladdningen kunde inte läsas:
error-field = Ett fält i formuläret är för långt.
error-format = Okänt rapportformat:
error-query = Okänd eller felaktig parameter:
error-json = JSON-kroppen ska vara {"{"}"url": "https://…"{"}"}:
error-unsupported = Skicka flödet som anropets kropp, eller JSON med dess URL; formuläret skickar multipart/form-data.
error-internal = Något gick fel hos oss. Försök igen senare.

# Driftöversikten (/dashboard, bakom [[operator]]-uppgifter).
dashboard-title = Insamlingsöversikt
dashboard-intro = Varje utgivares insamling, ur katalogen, som plikt status visar den.
dashboard-publishers = Utgivare
dashboard-col-publisher = Utgivare
dashboard-col-last-run = Senaste körning
dashboard-col-next-run = Nästa körning
dashboard-col-deposits = Leveranser
dashboard-col-failures = Fel
dashboard-col-findings = Öppna anmärkningar
dashboard-col-day = Dag (UTC)
dashboard-col-value = Värde
dashboard-never = inte körd än
dashboard-versions = { $n ->
    [one] en version
   *[other] { $n } versioner
}
dashboard-pending = { $n } väntar
dashboard-failed = { $n } misslyckade
dashboard-errors = { $n ->
    [one] ett fel
   *[other] { $n } fel
}
dashboard-warnings = { $n ->
    [one] en varning
   *[other] { $n } varningar
}
dashboard-counting = Leveranser: poster med en lagrad version. Väntar: versioner som ska försökas igen; misslyckade: versioner som förblir misslyckade och poster som senaste körningen avvisade. Öppna anmärkningar: fel och varningar från den senaste körningen som läste flödet.
dashboard-charts = { $n ->
    [one] Det senaste dygnet
   *[other] De senaste { $n } dygnen
}
dashboard-chart-deposits = Levererade versioner per dag
dashboard-chart-bytes = Levererade byte per dag
dashboard-chart-findings = Anmärkningar per dag (körningar som började den dagen)
dashboard-chart-numbers = Siffrorna
home-dashboard = För insamlingsteamet (inloggning krävs):
