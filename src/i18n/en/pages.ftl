# Page texts of plikt's validation service, English. Every ID is also in sv/pages.ftl
# (a test checks). The findings' messages are in findings.ftl, the rules in rules.ftl.

skip-to-content = Skip to content
site-tagline = KB e-plikt: RSS delivery profile 2.4
nav-label = Main
nav-validate = Validate a feed
nav-rules = Rules
footer-text = plikt checks RSS feeds against the National Library of Sweden's (KB) delivery profile 2.4 for legal deposit (e-plikt). Nothing you send is kept.

home-title = Legal deposit of RSS feeds
home-intro = Check that your feed can be harvested by the National Library of Sweden before KB harvests it, and see what to write instead where it cannot.
home-validate-link = Validate a feed
home-validate-text = Give the feed's address, upload a file or paste the XML. You get every finding with its line, the rule and what to write instead.
home-resourcesync-link = The collection (ResourceSync)
home-resourcesync-text = For libraries that sync the harvested collection: the Source Description.
home-rules-link = The rules
home-rules-text = { $n } rules of KB's delivery profile 2.4, each with the clause it comes from and a correct and an incorrect example.

validate-title = Validate a feed
validate-intro = Check a feed against KB's delivery profile 2.4 for e-plikt. Choose one of the three ways below.
validate-how = Three ways to validate
validate-again = Validate again
validate-limits = Feeds up to { $size }.
validate-time = { $n ->
    [one] A validation may take at most one second.
   *[other] A validation may take at most { $n } seconds.
}
validate-nothing-kept = Nothing you send is kept: the feed is deleted as soon as it has been validated.

form-url-title = The feed's address
form-url-label = Feed URL (http or https)
form-url-help = KB fetches the feed from this address, as the harvester does. Only public addresses can be fetched.
form-file-title = Upload a file
form-file-label = Feed file (.xml)
form-file-help = The feed exactly as your publishing system writes it.
form-xml-title = Paste the XML
form-xml-label = The feed's XML
form-xml-help = Paste the whole feed, from <?xml … to </rss>.
form-require-is-part-of = The host publication is subject to legal deposit (every item needs dcterms:isPartOf, R112)
form-format = Show the report as
form-format-html = a web page
form-format-json = JSON (download)
form-format-junit = JUnit XML (download)
form-submit = Validate

report-valid = The feed is valid for KB profile 2.4
report-invalid = The feed is not valid for KB profile 2.4
report-source = Validated:
report-download = Download the report:
report-download-json = JSON
report-download-junit = JUnit XML
report-download-too-large = (too large to link here: choose JSON or JUnit XML in the form, or use the API)
report-by-rule = Findings by rule
report-by-item = Findings by item
report-no-findings = No findings: nothing to fix.
report-channel = The feed and its channel
report-untitled = (item without a title)
report-item = Item { $n }
report-line = line { $n }
report-column = column { $n }
report-hint = The rule:
report-hidden = { $n ->
    [one] One more finding is not shown on this page: download the report to see it.
   *[other] { $n } more findings are not shown on this page: download the report to see them all.
}
report-omitted = { $n ->
    [one] One more finding was counted but not kept (more than 1,000 of one rule).
   *[other] { $n } more findings were counted but not kept (more than 1,000 of one rule): the JUnit report has them all.
}

count-errors = { $n ->
    [one] 1 error
   *[other] { $n } errors
}
count-warnings = { $n ->
    [one] 1 warning
   *[other] { $n } warnings
}
count-infos = { $n ->
    [one] 1 info
   *[other] { $n } infos
}
count-items = { $n ->
    [one] in 1 item
   *[other] in { $n } items
}

severity-error = error
severity-warning = warning
severity-info = info

col-rule = Rule
col-severity = Severity
col-count = Findings
col-requires = What the rule requires
col-clause = Clause of the profile

rules-title = The rules of KB's delivery profile 2.4
rules-intro = Every rule plikt checks, with the clause of KB's profile (in Swedish, as KB writes it) that it comes from. Rule IDs are the profile's own (R104, F305 …) or the catalogue's (G-…, H-…).
rules-all = All rules
rules-feed-time = Checked in the feed
rules-feed-time-caption = Rules checked when a feed is validated
rules-harvest-time = Checked when KB harvests
rules-harvest-time-text = These rules need the downloaded files or the previous harvest, so only the harvester applies them.
rules-harvest-time-caption = Rules checked when a feed is harvested

rule-clause = Clause of the profile
rule-where = Where in the feed
rule-checked = Checked
rule-checked-feed = when a feed is validated (and when KB harvests it)
rule-checked-harvest = when KB harvests the feed (needs the downloaded files or the previous harvest)
rule-severity = Severity
rule-examples = Examples
rule-in-item = In an item:
rule-in-item2 = In a second item, after the first:
rule-in-channel = In the channel:
rule-in-rss = The feed's root element:
rule-correct = Correct
rule-incorrect = Incorrect
rule-reports = What plikt reports for the incorrect example:
rule-pager = Other rules

not-found-title = Page not found
not-found-text = There is no such page or rule.

error-title = No report
error-rate-limited = { $n ->
    [one] Too many validations from your address. Try again in one second.
   *[other] Too many validations from your address. Try again in { $n } seconds.
}
error-busy = Too many validations are in progress. Try again in a little while.
error-too-large = The feed is larger than { $size }, the limit of this service. Validate it with the command-line tool plikt validate, which has no such limit.
error-timeout = { $n ->
    [one] The validation took longer than one second, the limit of this service.
   *[other] The validation took longer than { $n } seconds, the limit of this service.
}
error-fetch = The feed could not be fetched:
error-url = That is not a URL:
error-url-scheme = Only http and https addresses can be fetched.
error-url-credentials = The address contains a user name or password. Remove them: this service never sends credentials.
error-no-input = Give a feed: its address, a file or the XML.
error-two-inputs = Give one feed at a time.
error-upload = The upload could not be read:
error-field = A form field is too long.
error-format = Unknown report format:
error-query = Unknown or wrong parameter:
error-json = The JSON body must be {"{"}"url": "https://…"{"}"}:
error-unsupported = Send the feed as the request body, or JSON with its URL; the form sends multipart/form-data.
error-internal = Something went wrong on our side. Try again later.

# The operators' dashboard (/dashboard, behind [[operator]] credentials).
dashboard-title = Harvest dashboard
dashboard-intro = Every publisher's harvest, from the catalog, as plikt status shows it.
dashboard-publishers = Publishers
dashboard-col-publisher = Publisher
dashboard-col-last-run = Last run
dashboard-col-next-run = Next run
dashboard-col-deposits = Deposits
dashboard-col-failures = Failures
dashboard-col-findings = Open findings
dashboard-col-day = Day (UTC)
dashboard-col-value = Value
dashboard-never = not yet run
dashboard-versions = { $n ->
    [one] one version
   *[other] { $n } versions
}
dashboard-pending = { $n } pending
dashboard-failed = { $n } failed
dashboard-errors = { $n ->
    [one] one error
   *[other] { $n } errors
}
dashboard-warnings = { $n ->
    [one] one warning
   *[other] { $n } warnings
}
dashboard-counting = Deposits: items with a stored version. Pending: versions waiting for a retry; failed: versions that stay failed and items the last run rejected. Open findings: errors and warnings of the last run that read the feed.
dashboard-charts = { $n ->
    [one] The last day
   *[other] The last { $n } days
}
dashboard-chart-deposits = Versions deposited per day
dashboard-chart-bytes = Bytes deposited per day
dashboard-chart-findings = Findings per day (runs that started that day)
dashboard-chart-numbers = The numbers
home-dashboard = For the deposit team (sign-in required):
