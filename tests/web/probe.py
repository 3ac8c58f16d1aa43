#!/usr/bin/env python3
"""The attacker's probe in a real browser (Debian's chromium through chromium-driver), for
tests/it/probe.rs: opens deposited files as an operator's browser would (every request
carrying the operator's credentials) and records every request the browser makes; follows
the language switch with hostile `next` values and records where the browser ends up.

Prints one JSON document: {"opened": [{url, title, requests}], "control_ran": bool,
"redirects": [{next, final}]}.
"""

import argparse
import json
import sys
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.service import Service


def driver(profile):
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for a in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--disable-background-networking", "--disable-component-update",
              "--disable-sync", "--no-first-run", f"--user-data-dir={profile}"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    d.set_page_load_timeout(20)
    return d


def requests_since(d):
    """The URLs the browser asked for since the last call (CDP Network events)."""
    urls = []
    for entry in d.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg.get("method") == "Network.requestWillBeSent":
            url = msg["params"]["request"]["url"]
            if not url.startswith("data:") and not url.endswith("/favicon.ico"):
                urls.append(url)
    return urls


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--base", required=True)
    p.add_argument("--authorization", default="")
    p.add_argument("--open", action="append", default=[])
    p.add_argument("--redirect", action="append", default=[])
    a = p.parse_args()
    out = {"opened": [], "redirects": []}
    with tempfile.TemporaryDirectory() as profile:
        d = driver(profile)
        try:
            d.execute_cdp_cmd("Network.enable", {})
            # A download is refused, not saved: what matters is that nothing runs.
            d.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "deny"})
            if a.authorization:
                d.execute_cdp_cmd("Network.setExtraHTTPHeaders",
                                  {"headers": {"Authorization": a.authorization}})
            # The control: a page allowed to run script does change its title, so a
            # title left alone below means the script did not run.
            d.get("data:text/html,<title>x</title><script>document.title='ran'</script>")
            out["control_ran"] = d.title == "ran"
            requests_since(d)
            for url in a.open:
                d.get("about:blank")
                requests_since(d)
                try:
                    d.get(url)
                except Exception as e:  # a navigation turned download may time out
                    print(f"probe.py: {url}: {e}", file=sys.stderr)
                # Give a script that did run time to send its requests.
                d.execute_script("return new Promise(r => setTimeout(r, 1500))")
                out["opened"].append({"url": url, "title": d.title,
                                      "at": d.current_url, "requests": requests_since(d)})
            d.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": {}})
            for nxt in a.redirect:
                url = f"{a.base}lang/en?next={nxt}"
                try:
                    d.get(url)
                    final = d.current_url
                except Exception as e:
                    final = f"error: {e}"
                out["redirects"].append({"next": nxt, "final": final})
        finally:
            d.quit()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
