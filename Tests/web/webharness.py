"""The one harness of the browser tests: a scratch directory, the processes a test starts
(stopped by pid, also when it fails), free ports, headless Chromium through selenium, and the
page's rows and state as the browser shows them.

Skips the calling test (exit 0, saying why) when chromium, chromedriver or selenium is missing;
scripts/bootstrap installs the first two and scripts/test the third.
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

CHROMIUM = shutil.which("chromium")
DRIVER = shutil.which("chromedriver")
try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service as DriverService
except ImportError:
    webdriver = None

# Every wait scales with the slowdown the Swift tests use.
SLOWDOWN = max(1, int(os.environ.get("COUNTRIES_TEST_SLOWDOWN", "1") or "1"))


def require_browser(name):
    if not (CHROMIUM and DRIVER and webdriver):
        print(f"{name}: SKIPPED: needs chromium and chromedriver (scripts/bootstrap) and selenium "
              "(python3 -m pip install selenium)")
        sys.exit(0)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def eventually(condition, within=5.0, every=0.05):
    deadline = time.monotonic() + within * SLOWDOWN
    while True:
        value = condition()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(every)


class Harness:
    """What one test script starts, and its checks."""

    def __init__(self, binary, name):
        self.binary = binary
        self.name = name
        self.scratch = tempfile.mkdtemp(prefix="cweb")
        self.command = f"ipc://{self.scratch}/cmd"
        self.events = f"ipc://{self.scratch}/ev"
        self.processes = []
        self.drivers = []
        self.failures = []

    def check(self, name, condition, detail=""):
        print(("ok   " if condition else "FAIL ") + name + ("" if condition else f": {detail}"))
        if not condition:
            self.failures.append(name)

    def start(self, *arguments):
        process = subprocess.Popen([self.binary, *arguments], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.processes.append(process)
        return process

    def run(self, *arguments, check=True):
        return subprocess.run([self.binary, *arguments], capture_output=True, check=check, text=True)

    def serve(self, *extra):
        service = self.start("serve", "--in-memory", "--command", self.command, "--events", self.events,
                             "--heartbeat-ms", "100", *extra)
        eventually(lambda: subprocess.run(
            [self.binary, "count", "--command", self.command, "--timeout", "200", "--retries", "1"],
            capture_output=True).returncode == 0, within=15)
        return service

    def web(self, port, *extra):
        process = self.start("web", "--listen", f"127.0.0.1:{port}", "--command", self.command, "--events",
                             self.events, "--heartbeat-ms", "100", "--timeout", "1000", "--retries", "2", *extra)
        eventually(lambda: socket.socket().connect_ex(("127.0.0.1", port)) == 0, within=10)
        return process

    @staticmethod
    def stop(process):
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)

    def browser(self, *flags, size="640,460"):
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--window-size={size}", *flags):
            options.add_argument(flag)
        driver = webdriver.Chrome(service=DriverService(DRIVER), options=options)
        self.drivers.append(driver)
        return driver

    def close(self):
        for driver in self.drivers:
            try:
                driver.quit()
            except Exception:
                pass
        for process in reversed(self.processes):
            self.stop(process)
        shutil.rmtree(self.scratch, ignore_errors=True)

    def finish(self):
        if self.failures:
            print(f"{self.name}: {len(self.failures)} failed: {', '.join(self.failures)}")
            sys.exit(1)
        print(f"{self.name}: all passed")


def rows(driver):
    return driver.execute_script(
        "return [...document.querySelectorAll('#rows tr')].map(r => [r.dataset.index, r.dataset.name ?? null, "
        "r.dataset.visited ?? null])")


def state(driver):
    return driver.find_element("id", "state").text
