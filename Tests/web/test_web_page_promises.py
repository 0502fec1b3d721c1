#!/usr/bin/env python3
"""What `countries web` promises a person and refuses an attacker, in headless Chromium
(docs/SECURITY.md, "The web page"; README, "The table in a browser"):

- a page on another origin (a hidden form, fetch in no-cors mode, a fetch that needs CORS, an
  iframe, a read of /events) changes and reads nothing;
- DNS rebinding (a name resolved to 127.0.0.1 with --host-resolver-rules) gets 403 and no rows;
- a list of 10,000 names of 100 characters (4-byte scalars) shows in full and stays live;
- a token typed in the address becomes an HttpOnly cookie and leaves the address; when the web
  process restarts with a new token the page says so, and comes back once the new one is given;
- the page: a summary line whose age ticks, a header that stays in view, a filter box, rows that
  are switches, one Tab stop for the table with arrow keys inside, and no axe-core violation of
  serious or critical impact (axe-selenium-python, when installed).

Usage: test_web_page_promises.py COUNTRIES_BINARY. Every process it starts is stopped by pid.
"""
import http.server
import json
import os
import socketserver
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from webharness import Harness, eventually, free_port, require_browser, rows, state  # noqa: E402

BINARY = sys.argv[1]
require_browser("web page promises")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

try:
    from axe_selenium_python import Axe
except ImportError:
    Axe = None

harness = Harness(BINARY, "web page promises")
check = harness.check


def listed():
    return json.loads(harness.run("list", "--json", "--command", harness.command).stdout)


def attack_page(target):
    """Another site's page: every way a page can reach the table without being it."""
    return f"""<!doctype html><html><body>
<form id="f" method="POST" action="{target}/toggle?name=France" target="sink"></form>
<iframe name="sink"></iframe>
<iframe id="framed" src="{target}/"></iframe>
<script>
window.results = {{}};
document.getElementById("f").submit();
fetch("{target}/toggle?name=Italy", {{method: "POST", mode: "no-cors"}})
  .then(() => window.results.nocors = "sent", e => window.results.nocors = "error " + e);
fetch("{target}/toggle?name=Spain", {{method: "POST", headers: {{"X-Countries-Change": "guess"}}}})
  .then(r => window.results.cors = "status " + r.status, e => window.results.cors = "blocked");
fetch("{target}/events").then(r => r.text()).then(t => window.results.read = t.slice(0, 80),
  e => window.results.read = "blocked");
</script></body></html>"""


class AttackServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def serve_attack(port, body):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            data = body.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = AttackServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


attacker = None
try:
    harness.serve()
    port = free_port()
    target = f"http://127.0.0.1:{port}"
    web = harness.web(port)
    page = harness.browser(f"--host-resolver-rules=MAP rebind.example 127.0.0.1", size="900,700")

    # -- another origin ------------------------------------------------------------------
    attack_port = free_port()
    attacker = serve_attack(attack_port, attack_page(target))
    page.get(f"http://127.0.0.1:{attack_port}/")
    results = eventually(lambda: page.execute_script(
        "return Object.keys(window.results).length === 3 ? window.results : null"), within=10)
    time.sleep(1)  # what the form and the no-cors fetch did has reached the service by now
    after = listed()
    check("another origin's form, no-cors fetch and CORS fetch change nothing", after["seq"] == 0,
          json.dumps(after)[:200])
    check("another origin cannot read the events", results and results.get("read") == "blocked", results)
    check("a CORS fetch with the change header is blocked", results and results.get("cors") == "blocked", results)
    framed = page.execute_script(
        "try { return document.getElementById('framed').contentDocument === null ||"
        " document.getElementById('framed').contentDocument.querySelector('#rows') === null }"
        " catch (e) { return true }")
    check("the page refuses to be framed", framed)

    # -- DNS rebinding -------------------------------------------------------------------
    page.get(f"http://rebind.example:{port}/")
    body = page.find_element(By.TAG_NAME, "body").text
    check("a rebinding name gets 403 and no rows", "France" not in body and "not" in body.lower(), body[:200])
    page.get(f"http://rebind.example:{port}/events")
    check("and no events", "France" not in page.find_element(By.TAG_NAME, "body").text)

    # -- the page a person keeps open ----------------------------------------------------
    page.get(target + "/")
    check("the page says live", eventually(lambda: state(page) == "live", within=10), state(page))
    summary = page.find_element(By.ID, "summary").text
    check("a summary line: visited, total, seq, age", summary.startswith("· 1 of 8 visited · seq 0 · updated"),
          summary)
    harness.run("toggle", "France", "--command", harness.command)
    check("it counts a toggle", eventually(lambda: "2 of 8 visited · seq 1" in page.find_element(By.ID, "summary")
                                                   .text, within=3), page.find_element(By.ID, "summary").text)
    first_age = page.find_element(By.ID, "summary").text
    time.sleep(2.2)
    check("the age ticks", page.find_element(By.ID, "summary").text != first_age,
          page.find_element(By.ID, "summary").text)
    sticky = page.execute_script("return getComputedStyle(document.querySelector('header')).position")
    check("the header stays in view", sticky == "sticky", sticky)
    switches = page.execute_script(
        "return [...document.querySelectorAll('#rows button')].map(b => [b.getAttribute('role'),"
        " b.getAttribute('aria-checked'), b.tabIndex])")
    check("rows are switches that say whether they are on",
          all(s[0] == "switch" for s in switches) and switches[2][1] == "true" and switches[3][1] == "false",
          switches[:4])
    check("the table is one Tab stop", [s[2] for s in switches].count(0) == 1, [s[2] for s in switches])
    page.find_element(By.ID, "filter").click()
    page.switch_to.active_element.send_keys(Keys.TAB)
    focused = page.switch_to.active_element
    check("Tab from the filter lands in the table", focused.get_attribute("role") == "switch",
          focused.get_attribute("outerHTML")[:120])
    focused.send_keys(Keys.ARROW_DOWN)
    check("an arrow moves inside it", page.switch_to.active_element.find_element(By.XPATH, "./ancestor::tr")
          .get_attribute("data-index") == "1")
    page.switch_to.active_element.send_keys(Keys.TAB)
    check("the next Tab leaves the table", page.switch_to.active_element.get_attribute("role") != "switch")
    box = page.find_element(By.ID, "filter")
    box.send_keys("an")
    shown = [r[1] for r, visible in zip(rows(page), page.execute_script(
        "return [...document.querySelectorAll('#rows tr')].map(r => !r.hidden)")) if visible]
    check("the filter narrows the rows", 0 < len(shown) < 8 and all("an" in n.lower() for n in shown), shown)
    box.send_keys(Keys.BACKSPACE, Keys.BACKSPACE)
    check("an empty filter shows every row", eventually(lambda: page.execute_script(
        "return [...document.querySelectorAll('#rows tr')].every(r => !r.hidden)"), within=2))

    # Focus stays on its row across stale and back (the rows are skeletons meanwhile).
    page.find_element(By.CSS_SELECTOR, '#rows tr[data-index="3"] button').click()
    for process in list(harness.processes):
        if "serve" in process.args:
            process.kill()
            process.wait(5)
    check("the page turns stale", eventually(lambda: state(page).startswith("stale"), within=10), state(page))
    harness.serve()
    check("and live again", eventually(lambda: state(page) == "live", within=20), state(page))
    check("with the focus back on the row it was on", eventually(lambda: page.execute_script(
        "const tr = document.activeElement.closest('tr'); return tr ? tr.dataset.index : null") == "3", within=3),
        page.execute_script("return document.activeElement.outerHTML.slice(0, 100)"))

    if Axe is not None:
        axe = Axe(page)
        axe.inject()
        found = axe.run()
        serious = [v for v in found["violations"] if v.get("impact") in ("serious", "critical")]
        check("axe-core finds no serious or critical violation", not serious,
              [(v["id"], v["impact"], v["help"]) for v in serious])
    else:
        print("skip axe-core check: python3 -m pip install axe-selenium-python")

    # -- a list of 10,000 long names -------------------------------------------------------
    harness.stop(web)
    for process in harness.processes:
        harness.stop(process)
    seed = os.path.join(harness.scratch, "long.txt")
    with open(seed, "w", encoding="utf-8") as out:
        for n in range(10_000):
            out.write(f"{n:05d}" + "\U0001D504" * 95 + "\n")
    harness.serve("--seed", seed)
    web = harness.web(port)
    started = time.monotonic()
    page.get(target + "/")
    shown = eventually(lambda: state(page) == "live" and page.execute_script(
        "return document.querySelectorAll('#rows tr[data-name]').length") == 10_000, within=60)
    check("10,000 names of 100 four-byte characters show, live", shown,
          f"{state(page)}; {len(rows(page))} rows")
    print(f"10,000 long rows live in the browser after {time.monotonic() - started:.1f} s")
    harness.run("toggle", "9999", "--command", harness.command)
    check("and a toggle of the last row reaches it",
          eventually(lambda: page.execute_script(
              "return document.querySelector('#rows tr[data-index=\"9999\"]').dataset.visited") == "true", within=5))
    # A removal is a new snapshot (4 MB, far over the 256 KiB a page may have queued): the
    # page takes it and stays open.
    harness.run("remove", "0", "--command", harness.command)
    check("a snapshot over the per-page bound reaches the page",
          eventually(lambda: state(page) == "live" and len(rows(page)) == 9_999, within=30),
          f"{state(page)}; {len(rows(page))} rows")
    wraps = page.execute_script(
        "const cell = document.querySelector('#rows tr[data-index=\"0\"] td.name');"
        " return cell.scrollWidth <= cell.clientWidth + 1")
    check("a long name wraps inside its cell", wraps)

    # -- a token typed in the address, then a new token --------------------------------------
    harness.stop(web)
    token_file = os.path.join(harness.scratch, "token")
    with open(token_file, "w") as out:
        out.write("first-token-0123456\n")
    os.chmod(token_file, 0o600)
    web = harness.web(port, "--token", token_file)
    page.get(target + "/?token=first-token-0123456")
    check("the token leaves the address", eventually(lambda: page.current_url == target + "/", within=5),
          page.current_url)
    check("and the page is live on its cookie", eventually(lambda: state(page) == "live", within=30), state(page))
    cookie = page.get_cookie(f"countries-token-{port}")
    check("an HttpOnly, SameSite=Strict cookie", cookie and cookie.get("httpOnly") and cookie.get("sameSite") ==
          "Strict", cookie)
    check("the script cannot read it", "first-token" not in page.execute_script("return document.cookie"))
    harness.stop(web)
    with open(token_file, "w") as out:
        out.write("second-token-0123456\n")
    web = harness.web(port, "--token", token_file)
    check("a page whose token is no longer accepted says so",
          eventually(lambda: "token" in state(page) and state(page).startswith("stale"), within=15), state(page))
    page.execute_script("window.open(arguments[0])", target + "/?token=second-token-0123456")
    check("once the new token is given, the first page comes back by itself",
          eventually(lambda: state(page) == "live", within=40), state(page))
finally:
    if attacker:
        attacker.shutdown()
    harness.close()
harness.finish()
