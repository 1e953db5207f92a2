"""What the console's browser tests share: a state folder with runs in its journal, a
`hubscript console` serving it, and a headless Chromium driven by Selenium.

Environment:
  HUBSCRIPT_TEST_BINARY   the hubscript binary (default: .build/debug/hubscript)
  HUBSCRIPT_BROWSER_OUT   where screenshots go (default: .build/browser)
"""

import http.client
import os
import shutil
import subprocess
import tempfile
import time
import urllib.parse

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BINARY = os.environ.get("HUBSCRIPT_TEST_BINARY") or os.path.join(REPO, ".build", "debug", "hubscript")
OUT = os.environ.get("HUBSCRIPT_BROWSER_OUT") or os.path.join(REPO, ".build", "browser")

# Text a recipe, its parameters or the Hub may hold, which a page must show as text.
SCRIPT_TAG = "<script>alert(1)</script>"
IMG_TAG = '"><img src=x onerror=alert(1)>'
BIDI = "\u202eevil"

RECIPES = {
    # Writes every `gap` seconds of the wall clock (recipes have no sleep), so a test
    # sees the run in progress and its writes arrive one by one, even on a slow machine.
    "slow.lua": """
recipe { name = "slow", params = { n = { type = "number", default = 4 }, gap = { type = "number", default = 1 } },
         needs = { "users.manage" } }
for i = 1, params.n do
  local t = os.time()
  while os.time() < t + params.gap do end
  hub.users.update("usr_ada", { display_name = "Ada " .. i })
end
""",
    # Hub data with markup: a user whose display name is hostile, read back from the
    # Hub and printed (the run's output).
    "hostile.lua": """
recipe { name = "hostile", params = { label = { type = "string", default = "x" } }, needs = { "users.list", "users.manage" } }
local made = hub.users.create({ email = "mallory@example.com", display_name = params.label })
print("display name: " .. hub.users.get(made.id).display_name)
""",
    "recipes/sync.lua": """
recipe { name = "sync", needs = { "users.manage" } }
hub.users.update("usr_ada", { display_name = "Ada Lovelace" })
""",
}

CONFIG = """
return { jobs = { nightly = { recipe = "recipes/sync.lua", schedule = "0 3 * * *", timezone = "Europe/Paris" } },
         approvals = { { required = 1 } } }
"""


class ConsoleUnderTest:
    """A state folder, its journal filled by real runs, and `hubscript console` over it."""

    def __init__(self):
        self.folder = tempfile.mkdtemp(prefix="hubscript-browser-")
        self.state = os.path.join(self.folder, "state")
        for name, text in RECIPES.items():
            path = os.path.join(self.folder, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text.lstrip())
        self.config = os.path.join(self.folder, "hubscript.config.lua")
        with open(self.config, "w", encoding="utf-8") as f:
            f.write(CONFIG.lstrip())
        self.console = None
        self.url = None
        self.base = None

    def hubscript(self, *args, wait=True):
        command = [BINARY, *args, "--state-dir", self.state, "--config", self.config]
        if not wait:
            return subprocess.Popen(command, cwd=self.folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return subprocess.run(command, cwd=self.folder, capture_output=True, text=True, timeout=120)

    def start(self):
        self.console = subprocess.Popen([BINARY, "console", "--port", "0", "--state-dir", self.state, "--config", self.config],
                                        cwd=self.folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.url = self.console.stdout.readline().strip()
        if "/?token=" not in self.url:
            raise RuntimeError("hubscript console printed no URL: %r (stderr: %s)" % (self.url, self.console.stderr.read()))
        self.base = self.url.split("/?token=")[0]

    def stop(self):
        if self.console is not None:
            self.console.terminate()
            try:
                self.console.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.console.kill()
                self.console.wait()
        shutil.rmtree(self.folder, ignore_errors=True)

    def raw_get(self, path, cookie=None):
        """(status, headers as a dict, body) of a GET, without a browser."""
        parts = urllib.parse.urlsplit(self.base)
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
        headers = {"Cookie": cookie} if cookie else {}
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        body = response.read().decode("utf-8", "replace")
        result = (response.status, dict(response.getheaders()), body)
        connection.close()
        return result


def chromium():
    """A headless Chromium from Debian's packages; its console messages are kept."""
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1280,900", "--no-first-run", "--disable-extensions"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # A browser's first start on a fresh machine (font caches, its profile) can outlast
    # chromedriver's wait; a second start is then quick.
    for attempt in (1, 2):
        service = Service(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver")
        try:
            driver = webdriver.Chrome(options=options, service=service)
            break
        except Exception:
            if attempt == 2:
                raise
            time.sleep(2)
    driver.set_page_load_timeout(30)
    return driver


def alert_text(driver):
    """The text of an open alert (and closes it), or None."""
    try:
        alert = driver.switch_to.alert
        text = alert.text
        alert.dismiss()
        return text
    except NoAlertPresentException:
        return None


def injected_elements(driver):
    """Elements no console page makes: an <img>, an inline <script>, or any on* handler."""
    return driver.execute_script("""
        var found = [];
        document.querySelectorAll('img').forEach(function (e) { found.push(e.outerHTML); });
        document.querySelectorAll('script').forEach(function (e) {
          if (e.getAttribute('src') !== '/static/console.js') found.push(e.outerHTML);
        });
        document.querySelectorAll('*').forEach(function (e) {
          for (var i = 0; i < e.attributes.length; i++) {
            if (e.attributes[i].name.indexOf('on') === 0) found.push(e.outerHTML.slice(0, 200));
          }
        });
        return found;
    """)


def wait_until(condition, timeout, step=0.05):
    """Polls `condition` until it returns a true value (returned) or `timeout` seconds pass (None)."""
    end = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > end:
            return None
        time.sleep(step)


def texts(driver, css):
    return [e.text for e in driver.find_elements(By.CSS_SELECTOR, css)]
