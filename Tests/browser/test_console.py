"""The operator console in a real browser (headless Chromium through Selenium): the
pages as an operator meets them, the live view of a running run, untrusted text shown
as text, the Content-Security-Policy, and an action by a signed-in Hub user.

Run by scripts/test-browser (which installs Chromium, chromedriver and Selenium)."""

import json
import os
import unittest
import urllib.parse

from selenium.webdriver.common.by import By

from console_support import (BIDI, IMG_TAG, OUT, SCRIPT_TAG, ConsoleUnderTest, alert_text, chromium,
                             injected_elements, texts, wait_until)

HOSTILE = SCRIPT_TAG + " " + IMG_TAG + " " + BIDI
HOSTILE_RUN = "h" + IMG_TAG


class ConsoleInBrowserTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.console = ConsoleUnderTest()
        ok = cls.console.hubscript("slow.lua", "--run-id", "settled", "--param", "n=1")
        assert ok.returncode == 0, ok.stderr
        hostile = cls.console.hubscript("hostile.lua", "--run-id", HOSTILE_RUN, "--param", "label=" + HOSTILE)
        assert hostile.returncode == 0, hostile.stderr
        cls.console.start()
        cls.driver = chromium()
        cls.driver.get(cls.console.url)

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.console.stop()

    def setUp(self):
        self.driver.get_log("browser")  # starts each test with no console messages

    def tearDown(self):
        self.assertIsNone(alert_text(self.driver))

    def open(self, path):
        self.driver.get(self.console.base + path)

    def csp_violations(self):
        return [entry["message"] for entry in self.driver.get_log("browser")
                if "Content Security Policy" in entry["message"] or "Refused to" in entry["message"]]

    def test_runs_page_lists_the_runs_behind_the_printed_link(self):
        # The token URL opened in setUpClass set the cookie and dropped the token.
        self.open("/")
        self.assertNotIn("token=", self.driver.current_url)
        self.assertEqual(self.driver.find_element(By.ID, "nav-runs").get_attribute("aria-current"), "page")
        ids = [row.get_attribute("data-run-id") for row in self.driver.find_elements(By.CSS_SELECTOR, "tr.run")]
        self.assertIn("settled", ids)
        self.assertIn(HOSTILE_RUN, ids)
        os.makedirs(OUT, exist_ok=True)
        self.driver.save_screenshot(os.path.join(OUT, "console-runs.png"))
        self.assertEqual(self.csp_violations(), [])

    def test_a_run_opened_from_the_list_shows_its_details(self):
        self.open("/runs?status=succeeded")
        link = [a for a in self.driver.find_elements(By.CSS_SELECTOR, "tr.run[data-run-id=settled] a.run-link")]
        self.assertEqual(len(link), 1)
        link[0].click()
        self.assertEqual(self.driver.find_element(By.ID, "run-id").text, "settled")
        recipe = self.driver.find_element(By.ID, "run-recipe").text
        self.assertRegex(recipe, r"^/.*/slow\.lua sha256 [0-9a-f]{16}…$")
        # As journalled: a number parameter (the exact spelling of 1 is the JSON writer's).
        self.assertRegex(self.driver.find_element(By.ID, "run-params").text, r'^\{"gap":1(\.0)?,"n":1(\.0)?\}$')
        self.assertEqual(self.driver.find_element(By.ID, "run-status").text, "succeeded (exit 0)")
        self.assertEqual(self.driver.find_element(By.ID, "run-counts").text,
                         "0 reads, 1 writes, 0 replayed, 0 planned, 0 failed (every pass)")
        writes = self.driver.find_elements(By.CSS_SELECTOR, "#writes-table tr.write")
        self.assertEqual(len(writes), 1)
        self.assertRegex(writes[0].text, r"^1 done 1 PATCH /users/usr_ada \S+ hs1-[0-9a-f]{40}$")
        self.assertTrue(self.driver.find_element(By.ID, "run-output").is_displayed())
        self.assertEqual(self.driver.find_elements(By.ID, "resume-command"), [])
        self.assertEqual(self.csp_violations(), [])

    def test_a_running_run_updates_live_without_a_reload(self):
        # Five writes two seconds apart: the page, opened while the run is in progress,
        # must show later writes as they are journalled, without a reload. How far the
        # page lags behind the journal is a figure of scripts/bench-console, not a bound
        # asserted here (a loaded machine would make such a test flake).
        writes = 5
        run = self.console.hubscript("slow.lua", "--run-id", "live", "--param", "n=%d" % writes, "--param", "gap=2",
                                     wait=False)
        try:
            self.assertTrue(wait_until(lambda: "data-run-id=\"live\"" in self.console.raw_get(
                "/runs?status=running", self.cookie())[2], 30), "the run never showed as running")
            self.open("/runs/live")
            self.driver.execute_script("window.loadedOnce = true;")
            self.assertTrue(wait_until(lambda: self.driver.find_element(By.ID, "live-state").get_attribute("data-live") == "on", 20),
                            "the live view never started")
            seen = [len(self.driver.find_elements(By.CSS_SELECTOR, "tr.write"))]
            # Each new write appears without a reload (the marker set above survives).
            while seen[-1] < writes and run.poll() is None:
                count = wait_until(lambda: (lambda n: n if n > seen[-1] else None)(
                    len(self.driver.find_elements(By.CSS_SELECTOR, "tr.write"))), 20)
                self.assertIsNotNone(count, "no new write shown within 20 s (seen %s)" % seen)
                seen.append(count)
            self.assertEqual(run.wait(timeout=60), 0)
            self.assertTrue(wait_until(lambda: self.driver.find_element(By.ID, "run-status").text == "succeeded (exit 0)", 20),
                            "the page never showed the run's end: " + self.driver.find_element(By.ID, "run-status").text)
            self.assertTrue(self.driver.execute_script("return window.loadedOnce === true;"))
            self.assertGreater(len(seen), 1, "no write appeared after the page was opened: %s" % seen)
            self.assertEqual(len(self.driver.find_elements(By.CSS_SELECTOR, "tr.write")), writes)
            self.assertEqual(self.driver.find_element(By.ID, "live-state").get_attribute("data-live"), "off")
            self.assertEqual(self.csp_violations(), [])
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()

    def test_hostile_text_from_parameters_and_the_hub_is_shown_as_text(self):
        self.open("/runs")
        row = self.driver.find_element(By.CSS_SELECTOR, "tr.run a.run-link[href*='img']")
        self.assertEqual(row.text, HOSTILE_RUN)
        self.assertEqual(injected_elements(self.driver), [])
        row.click()
        self.assertIsNone(alert_text(self.driver))
        self.assertEqual(self.driver.find_element(By.ID, "run-id").text, HOSTILE_RUN)
        # The parameters as journalled (JSON), every character visible; the bidi
        # override is shown by its code point, not obeyed.
        params = self.driver.find_element(By.ID, "run-params").text
        self.assertIn(SCRIPT_TAG, params)
        self.assertIn("<img src=x onerror=alert(1)>", params)
        self.assertIn("U+202E", params)
        self.assertNotIn("\u202e", params)
        self.assertEqual(injected_elements(self.driver), [])
        self.assertEqual(self.csp_violations(), [])

    def test_hostile_text_in_a_runs_output_from_a_hub_users_name_is_shown_as_text(self):
        self.open("/runs/" + urllib.parse.quote(HOSTILE_RUN, safe=""))
        output = self.driver.find_element(By.ID, "run-output").text
        self.assertIn("display name: " + SCRIPT_TAG + " " + IMG_TAG, output)
        self.assertIn("U+202E", output)
        self.assertNotIn("\u202e", output)
        self.assertEqual(injected_elements(self.driver), [])
        self.assertEqual(self.csp_violations(), [])

    def test_every_page_sends_the_strict_policy_and_breaks_none_of_it(self):
        cookie = self.cookie()
        for path in ("/", "/runs/settled", "/jobs", "/jobs/nightly", "/triggers", "/plans", "/signin",
                     "/static/console.js", "/static/console.css"):
            status, headers, _ = self.console.raw_get(path, cookie)
            self.assertEqual(status, 200, path)
            policy = headers.get("Content-Security-Policy", "")
            self.assertTrue(policy.startswith("default-src 'none'; script-src 'self'; style-src 'self';"), (path, policy))
            self.assertIn("frame-ancestors 'none'", policy)
            self.assertEqual(headers.get("X-Content-Type-Options"), "nosniff")
        for path in ("/", "/runs/settled", "/jobs", "/jobs/nightly", "/triggers", "/plans", "/signin"):
            self.open(path)
            # The console's own style sheet applied (a policy that refused it would leave the default font).
            self.assertNotEqual(self.driver.execute_script(
                "return getComputedStyle(document.body).fontFamily;"), "")
            self.assertEqual(self.csp_violations(), [], path)
        # And a script of another origin is refused by the browser, as the policy says.
        self.open("/runs")
        self.driver.execute_script("var s = document.createElement('script'); s.src = 'http://example.invalid/x.js';"
                                   "document.head.appendChild(s);")
        self.assertTrue(wait_until(lambda: self.csp_violations(), 5), "no CSP refusal reported")

    def test_signed_in_user_fires_a_job_now_and_one_without_the_permission_is_refused(self):
        self.sign_in("support@example.com")
        self.assertEqual(self.driver.find_element(By.ID, "who-email").text, "support@example.com")
        self.open("/jobs/nightly")
        self.fire()
        problem = self.driver.find_element(By.ID, "problem")
        self.assertEqual(problem.get_attribute("data-status"), "403")
        self.assertIn("users.manage", problem.text)
        self.driver.find_element(By.ID, "signout").click()
        self.assertEqual(self.driver.find_elements(By.ID, "who-email"), [])

        self.sign_in("admin@example.com", mfa="123456")
        self.assertEqual(self.driver.find_element(By.ID, "who-email").text, "admin@example.com")
        self.open("/jobs/nightly")
        self.fire()
        fired = self.driver.find_element(By.ID, "fired-run").text
        self.assertTrue(fired.startswith("nightly@manual-"), fired)
        self.open("/runs?job=nightly")
        self.assertTrue(wait_until(lambda: self.console.raw_get("/runs?job=nightly&status=succeeded", self.cookie())[2]
                                   .count("class=\"run\"") == 1, 30), "the fired run never succeeded")
        self.open("/runs?job=nightly")
        self.assertEqual([r.get_attribute("data-run-id") for r in self.driver.find_elements(By.CSS_SELECTOR, "tr.run")], [fired])
        self.driver.find_element(By.ID, "signout").click()
        self.assertEqual(self.csp_violations(), [])

    def test_second_user_approves_a_plan_and_apply_succeeds_and_a_changed_plan_is_refused(self):
        # A plan made with the sandbox's API key (its maker: this machine's user) waits
        # for one approval: apply refuses it before sending anything.
        plan, plan_id = self.make_plan("approved-plan.json")
        refused = self.console.hubscript("apply", plan)
        self.assertEqual(refused.returncode, 3, refused.stderr)
        self.assertIn("approval", refused.stderr)

        # Another person, signed in through the console with the Hub's login, approves it.
        self.sign_in("admin@example.com", mfa="123456")
        self.approve(plan_id)
        self.assertEqual(self.driver.find_element(By.ID, "plan-status").text, "approved")
        applied = self.console.hubscript("apply", plan)
        self.assertEqual(applied.returncode, 0, applied.stderr)

        # A second plan approved, then changed on disk: apply refuses it (exit 3).
        changed, changed_id = self.make_plan("changed-plan.json")
        self.approve(changed_id)
        with open(changed, encoding="utf-8") as f:
            document = json.load(f)
        document["writes"][0]["body"]["display_name"] = "Mallory"
        with open(changed, "w", encoding="utf-8") as f:
            json.dump(document, f, indent=2, sort_keys=True)
        refused = self.console.hubscript("apply", changed)
        self.assertEqual(refused.returncode, 3, refused.stderr)
        self.driver.find_element(By.ID, "signout").click()
        self.assertEqual(self.csp_violations(), [])

    # Helpers

    def make_plan(self, name):
        """Plans recipes/sync.lua into `name` in the test's folder: (its path, its plan id)."""
        path = os.path.join(self.console.folder, name)
        made = self.console.hubscript("plan", "recipes/sync.lua", "--out", path)
        self.assertEqual(made.returncode, 0, made.stderr)
        with open(path, encoding="utf-8") as f:
            return path, json.load(f)["run_id"]

    def approve(self, plan_id):
        """Clicks Approve on the plan's page, accepts the confirmation, waits for the answer."""
        self.open("/plans/" + urllib.parse.quote(plan_id, safe=""))
        self.driver.find_element(By.ID, "approve-button").click()
        alert = wait_until(lambda: self._alert(), 5)
        if alert is not None:
            alert.accept()
        self.assertTrue(wait_until(lambda: self.driver.find_element(By.ID, "plan-status").text == "approved", 10),
                        "not approved: " + self.driver.find_element(By.ID, "main").text)

    def cookie(self):
        value = self.driver.get_cookie("hubscript_console_" + self.console.base.rsplit(":", 1)[1])
        return "%s=%s" % (value["name"], value["value"])

    def sign_in(self, email, mfa=""):
        self.open("/signin")
        self.driver.find_element(By.ID, "signin-email").send_keys(email)
        self.driver.find_element(By.ID, "signin-password").send_keys("any password")
        if mfa:
            self.driver.find_element(By.ID, "signin-mfa").send_keys(mfa)
        self.driver.find_element(By.ID, "signin-submit").click()
        self.assertTrue(wait_until(lambda: self.driver.find_elements(By.ID, "who-email"), 10),
                        "not signed in: " + self.driver.find_element(By.ID, "main").text)

    def fire(self):
        """Clicks "Fire now" and accepts the console's confirmation."""
        self.driver.find_element(By.ID, "fire-now").click()
        alert = wait_until(lambda: self._alert(), 5)
        self.assertIsNotNone(alert, "no confirmation before firing")
        alert.accept()
        wait_until(lambda: self.driver.find_elements(By.ID, "problem") or self.driver.find_elements(By.ID, "fired-run"), 10)

    def _alert(self):
        try:
            return self.driver.switch_to.alert
        except Exception:
            return None


if __name__ == "__main__":
    unittest.main()
