#!/usr/bin/env python3
"""The validation service in a real browser: Debian's chromium, driven by selenium through
chromium-driver, for tests/it/web.rs (which starts `plikt serve` and a loopback publisher,
runs this script, and checks what it prints).

It submits each of the three forms (URL, file, pasted XML), reads the findings, follows a
rule link, switches the language, loads the dashboard when the server has one, runs
axe-core on every page it visits, and saves a screenshot of each page.

Prints one JSON document on standard output; exits non-zero only when the browser
cannot be driven at all (every check's outcome is in the JSON, for the Rust test).
"""

import argparse
import base64
import json
import os
import sys
import tempfile
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait


def driver(profile):
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for a in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--disable-background-networking", "--disable-component-update",
              "--disable-sync", "--no-first-run", "--window-size=1280,1000",
              f"--user-data-dir={profile}"):
        opts.add_argument(a)
    # A Swedish browser: the pages must come in Swedish from Accept-Language alone.
    opts.add_experimental_option("prefs", {"intl.accept_languages": "sv-SE,sv"})
    opts.add_argument("--lang=sv-SE")
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)


class Run:
    def __init__(self, args, d):
        self.args = args
        self.d = d
        self.axe_source = open(args.axe, encoding="utf-8").read()
        self.out = {"pages": [], "axe": {}, "checks": {}}
        os.makedirs(args.screenshots, exist_ok=True)

    def wait(self, css, timeout=30):
        return WebDriverWait(self.d, timeout).until(
            ec.presence_of_element_located((By.CSS_SELECTOR, css)))

    def page(self, name):
        """Runs axe-core on the current page and saves a screenshot."""
        self.d.execute_script(self.axe_source)
        violations = self.d.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "axe.run(document, {resultTypes: ['violations']})"
            ".then(r => done(r.violations.map(v => ({id: v.id, impact: v.impact,"
            " help: v.help, nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))))"
            ".catch(e => done([{id: 'axe-error', impact: 'critical', help: String(e), nodes: []}]));")
        self.out["axe"][name] = violations
        path = os.path.join(self.args.screenshots, f"{name}.png")
        # The whole page, not just the window.
        height = self.d.execute_script("return document.documentElement.scrollHeight")
        self.d.set_window_size(1280, max(1000, min(int(height) + 50, 12000)))
        self.d.save_screenshot(path)
        self.d.set_window_size(1280, 1000)
        self.out["pages"].append({"name": name, "url": self.d.current_url,
                                  "lang": self.d.find_element(By.TAG_NAME, "html").get_attribute("lang"),
                                  "title": self.d.title, "screenshot": path})

    def paste(self, screenshot):
        """Submits the feed through the paste form (the value set as a paste would;
        typing it is slow) and reads the report."""
        self.d.get(self.args.base + "validate")
        area = self.wait("#xml")
        self.d.execute_script("arguments[0].value = arguments[1];", area,
                              open(self.args.feed_file, encoding="utf-8").read())
        self.submit("form-xml")
        report = self.report()
        self.page(screenshot)
        return report

    def report(self):
        """The report on the page: verdict, counts, groups and findings."""
        self.wait("#verdict")
        findings = []
        for li in self.d.find_elements(By.CSS_SELECTOR, "li.finding"):
            rule = li.find_element(By.CSS_SELECTOR, "a.rule")
            findings.append({
                "rule": rule.get_attribute("textContent").strip(),
                "href": rule.get_attribute("href"),
                "severity": [c for c in li.get_attribute("class").split() if c != "finding"][0],
                "message": li.find_element(By.CSS_SELECTOR, ".msg").get_attribute("textContent"),
                "marked": [m.get_attribute("textContent") for m in li.find_elements(By.TAG_NAME, "mark")],
            })
        groups = [g.find_element(By.CSS_SELECTOR, ".gtitle").get_attribute("textContent").strip()
                  for g in self.d.find_elements(By.CSS_SELECTOR, "details.group")]
        links = {}
        for fmt in ("json", "junit"):
            a = self.d.find_elements(By.ID, f"download-{fmt}")
            if a:
                href = a[0].get_attribute("href")
                links[fmt] = base64.b64decode(href.split(",", 1)[1]).decode("utf-8")
        return {
            "verdict": self.d.find_element(By.ID, "verdict").text,
            "source": self.d.find_element(By.ID, "report-source").text,
            "counts": self.d.find_element(By.ID, "counts").text,
            "groups": groups,
            "findings": findings,
            "downloads": links,
        }

    def submit(self, form):
        self.d.find_element(By.CSS_SELECTOR, f"#{form} button[type=submit]").click()

    def run(self):
        a, d, o = self.args, self.d, self.out
        # The start page, in Swedish from Accept-Language, with a link to /validate.
        d.get(a.base)
        self.wait("main")
        o["checks"]["start_lang"] = d.find_element(By.TAG_NAME, "html").get_attribute("lang")
        o["checks"]["start_links_validate"] = bool(
            d.find_elements(By.CSS_SELECTOR, "main a[href='/validate']"))
        # The skip link is the first thing a keyboard reaches.
        d.find_element(By.TAG_NAME, "body").send_keys(Keys.TAB)
        o["checks"]["first_tab"] = d.switch_to.active_element.get_attribute("class")
        self.page("start-sv")

        # Switch to English with the visible link; the cookie keeps it.
        d.get(a.base + "validate")
        self.wait("#lang-switch").click()
        self.wait("html[lang=en]")
        o["checks"]["switched_lang"] = d.find_element(By.TAG_NAME, "html").get_attribute("lang")
        o["checks"]["switched_url"] = d.current_url
        o["checks"]["switched_h1"] = d.find_element(By.TAG_NAME, "h1").text
        self.page("validate-en")

        # 1. The URL form.
        d.find_element(By.ID, "url").send_keys(a.feed_url)
        self.submit("form-url")
        o["url"] = self.report()
        self.page("report-url")

        # Follow a rule link from the report.
        first = d.find_element(By.CSS_SELECTOR, "li.finding a.rule")
        rule = first.text
        first.click()
        self.wait("#rule-summary")
        o["rule_page"] = {
            "rule": rule,
            "url": d.current_url,
            "h1": d.find_element(By.TAG_NAME, "h1").text,
            "summary": d.find_element(By.ID, "rule-summary").text,
            "clause": d.find_element(By.ID, "rule-clause").text,
            "correct": d.find_element(By.CSS_SELECTOR, "#example-correct pre").text,
            "incorrect": d.find_element(By.CSS_SELECTOR, "#example-incorrect pre").text,
        }
        self.page("rule")
        d.get(a.base + "rules")
        self.wait("table.rules")
        o["rules_listed"] = [x.text for x in d.find_elements(By.CSS_SELECTOR, "table.rules td:first-child a")]
        self.page("rules")

        # 2. The file form.
        d.get(a.base + "validate")
        self.wait("#file").send_keys(os.path.abspath(a.feed_file))
        self.submit("form-file")
        o["file"] = self.report()
        self.page("report-file")

        # 3. The paste form.
        o["xml"] = self.paste("report-xml")

        # A refusal: a private address is refused even here (the test server allows
        # loopback, so ask for a name that does not resolve instead).
        d.get(a.base + "validate")
        self.wait("#url").send_keys("https://feed.invalid/eplikt.xml")
        self.submit("form-url")
        self.wait("#error")
        o["error"] = d.find_element(By.ID, "error").text
        self.page("error")

        # Back to Swedish.
        self.wait("#lang-switch").click()
        self.wait("html[lang=sv]")
        o["checks"]["switched_back"] = d.find_element(By.TAG_NAME, "html").get_attribute("lang")

        # The same paste in Swedish: the findings' messages follow the page's language.
        o["xml_sv"] = self.paste("report-xml-sv")

        # The operators' dashboard: 401 without the token; with it (sent by the
        # browser on every request through the DevTools protocol), the page.
        o["dashboard"] = None
        for path in a.dashboard:
            url = a.base + path.lstrip("/")
            try:
                urllib.request.urlopen(url)
                o["checks"]["dashboard_without_token"] = 200
            except urllib.error.HTTPError as e:
                o["checks"]["dashboard_without_token"] = e.code
            if not a.operator_token:
                continue
            d.execute_cdp_cmd("Network.enable", {})
            d.execute_cdp_cmd("Network.setExtraHTTPHeaders",
                              {"headers": {"Authorization": "Bearer " + a.operator_token}})
            d.get(url)
            self.wait("main h1")
            o["dashboard"] = path
            o["checks"]["dashboard_h1"] = d.find_element(By.TAG_NAME, "h1").text
            o["checks"]["dashboard_publishers"] = [
                e.text for e in d.find_elements(By.CSS_SELECTOR, "tbody th[scope=row] code")]
            self.page("dashboard")
            d.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": {}})
            break
        return o


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--base", required=True)
    p.add_argument("--feed-url", required=True)
    p.add_argument("--feed-file", required=True)
    p.add_argument("--axe", required=True)
    p.add_argument("--screenshots", required=True)
    p.add_argument("--operator-token", default="")
    p.add_argument("--dashboard", action="append", default=[])
    a = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="plikt-chromium-") as profile:
        d = driver(profile)
        try:
            d.set_page_load_timeout(60)
            d.set_script_timeout(60)
            out = Run(a, d).run()
        except Exception as e:  # report where it stopped, with a screenshot
            path = os.path.join(a.screenshots, "failure.png")
            try:
                d.save_screenshot(path)
            except Exception:
                pass
            print(json.dumps({"failure": f"{type(e).__name__}: {e}", "at": d.current_url,
                              "screenshot": path}))
            return 1
        finally:
            d.quit()
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
