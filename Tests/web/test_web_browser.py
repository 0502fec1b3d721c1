#!/usr/bin/env python3
"""`countries web` in a real headless browser (Debian's chromium and chromium-driver, driven by
selenium): the page shows the list; a toggle from the CLI appears within a second; a click
toggles and the status line says so; killing the service turns the page stale with skeleton
rows and it comes back live by itself; two pages converge after 1,000 toggles.

Usage: test_web_browser.py COUNTRIES_BINARY [--screenshot PNG]
Skips (exit 0, saying why) when chromium, chromedriver or selenium is missing; scripts/bootstrap
installs the first two and scripts/test the third. Every process it starts is stopped by pid.
"""
import json
import os
import signal
import subprocess
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from webharness import Harness, eventually, free_port, require_browser, rows, state  # noqa: E402

BINARY = sys.argv[1]
SCREENSHOT = sys.argv[sys.argv.index("--screenshot") + 1] if "--screenshot" in sys.argv else None
require_browser("web browser test")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
import zmq  # noqa: E402  (scripts/test installs pyzmq)

harness = Harness(BINARY, "web browser test")
check = harness.check
command = harness.command
port = free_port()
address = f"http://127.0.0.1:{port}/"


def serve(*extra):
    return harness.serve(*extra)


def stop(process):
    harness.stop(process)


def browser():
    return harness.browser()


def start_web():
    return harness.web(port)


service = None
try:
    service = serve()
    web = start_web()
    page = browser()
    page.get(address)

    check("the page says live", eventually(lambda: state(page) == "live", within=10), state(page))
    listed = rows(page)
    check("the page shows the list as real rows", len(listed) >= 8 and listed[2] == ["2", "France", "false"],
          listed[:3])

    started = time.monotonic()
    subprocess.run([BINARY, "toggle", "France", "--command", command], check=True, capture_output=True)
    seen = eventually(lambda: rows(page)[2][2] == "true", within=1.0, every=0.01)
    check("a toggle from the CLI appears within a second", seen, f"{time.monotonic() - started:.3f} s")

    page.find_element(By.CSS_SELECTOR, '#rows tr[data-index="3"] button').click()
    check("a click toggles", eventually(lambda: rows(page)[3][2] == "true", within=3), rows(page)[3])
    check("the status line says so",
          eventually(lambda: page.find_element(By.ID, "status").text == "Selected country: Italy (now visited)", within=3),
          page.find_element(By.ID, "status").text)

    focused = page.find_element(By.CSS_SELECTOR, '#rows tr[data-index="3"] button')
    focused.send_keys(Keys.ARROW_DOWN)
    page.switch_to.active_element.send_keys(Keys.SPACE)
    check("Arrow Down then Space toggles the next row",
          eventually(lambda: rows(page)[4] == ["4", "Spain", "true"], within=3), rows(page)[4])

    if SCREENSHOT:
        page.save_screenshot(SCREENSHOT)
        print(f"screenshot: {SCREENSHOT}")

    service.send_signal(signal.SIGKILL)
    service.wait(5)
    check("the page turns stale when the service is gone",
          eventually(lambda: state(page).startswith("stale: "), within=5), state(page))
    check("stale rows are skeletons with no name",
          eventually(lambda: all(r[1] is None for r in rows(page)), within=2), rows(page)[:2])
    service = serve()
    check("it comes back live by itself", eventually(lambda: state(page) == "live", within=15), state(page))
    check("with the new service's list", eventually(lambda: rows(page)[2] == ["2", "France", "false"], within=3),
          rows(page)[2])

    # The web process restarts while the service moves to another store at the same seq (0, a
    # new in-memory store seeded with the world list): the page resumes with Last-Event-ID 0,
    # which names a seq of the old store, and must not keep the old rows as live.
    stop(web)
    service.send_signal(signal.SIGKILL)
    service.wait(5)
    service = serve("--seed", "world")
    web = start_web()
    world_first = json.loads(subprocess.run([BINARY, "list", "--json", "--command", command], capture_output=True,
                                            check=True).stdout)["countries"][0]["name"]
    check("a page resumed onto another store at the same seq takes its list",
          eventually(lambda: state(page) == "live" and len(rows(page)) > 200 and rows(page)[0][1] == world_first,
                     within=15), f"{state(page)}; {len(rows(page))} rows; {rows(page)[:1]}")

    second = browser()
    second.get(address)
    eventually(lambda: state(second) == "live", within=10)
    context = zmq.Context()
    requester = context.socket(zmq.REQ)
    requester.setsockopt(zmq.LINGER, 0)
    requester.connect(command)
    started = time.monotonic()
    for n in range(1000):
        requester.send(json.dumps({"op": "toggle", "index": n % 7, "id": str(uuid.uuid4())}).encode())
        reply = json.loads(requester.recv())
        assert reply["ok"], reply
    requester.close()
    context.term()
    final = subprocess.run([BINARY, "list", "--json", "--command", command], capture_output=True, check=True)
    expected = [[str(c["index"]), c["name"], "true" if c["visited"] else "false"]
                for c in json.loads(final.stdout)["countries"]]
    converged = eventually(lambda: rows(page) == expected and rows(second) == expected, within=10)
    check("two pages converge after 1,000 toggles", converged,
          f"{time.monotonic() - started:.1f} s; {rows(page)[:7]} vs {expected[:7]}")
    print(f"1,000 toggles and both pages equal to the service's list after {time.monotonic() - started:.1f} s")
finally:
    harness.close()
harness.finish()
