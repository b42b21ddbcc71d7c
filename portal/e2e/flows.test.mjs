// The portal in a real browser against a real Couler (started by
// tests/portal.rs): each flow asserts what the page shows and saves a
// screenshot under target/e2e-shots/ for a person to look at.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { URL_, TOKENS, api, axe, finished, launch, shot, signedIn } from "./browser.mjs";

const DIAMOND = {
  apiVersion: "couler.dev/v1alpha1",
  name: "portal-diamond",
  parameters: [{ name: "message", default: "hello" }],
  steps: [
    { name: "a", container: { image: "alpine", command: ["sh", "-c", "sleep 1; echo A {{workflow.parameters.message}}"] } },
    { name: "b", container: { image: "alpine", command: ["sh", "-c", "echo B got {{steps.a.outputs.result}}"] } },
    { name: "c", container: { image: "alpine", command: ["sh", "-c", "echo C got {{steps.a.outputs.result}}"] } },
    { name: "d", container: { image: "alpine", command: ["sh", "-c", "echo D {{steps.b.outputs.result}} {{steps.c.outputs.result}}"] } },
  ],
};

let browser;
const violations = [];
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

async function scan(page, where) {
  for (const v of await axe(page)) violations.push({ where, ...v });
}

test("a bad key shows the API's error; a good one signs in", async () => {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${URL_}/`);
  await page.waitForURL(/\/ui\/login/);
  await page.getByLabel("API key or token").fill("ck_not_a_real_key");
  await page.getByRole("button", { name: "Sign in" }).click();
  const alert = page.getByRole("alert");
  await alert.waitFor();
  assert.match(await alert.innerText(), /key|token|credential|auth/i);
  await shot(page, "01-login-refused");
  await scan(page, "login");
  await page.getByLabel("API key or token").fill(TOKENS.editor);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Runs" }).waitFor();
  assert.match(await page.locator("header.top").innerText(), /editor/);
  await context.close();
});

test("submit through the form, watch it live, then see the cache save time", async () => {
  await api(TOKENS.editor, "POST", "/v1/workflows", DIAMOND).catch(() => {});
  const page = await signedIn(browser, TOKENS.editor);
  await page.goto(`${URL_}/ui/submit?workflow=portal-diamond`);
  await page.getByLabel("message").fill("from-the-portal");
  await page.locator(".forecast").filter({ hasText: /of 4 steps/ }).waitFor();
  await shot(page, "02-submit-form");
  await scan(page, "submit");
  await page.getByRole("button", { name: "Submit run" }).click();
  await page.waitForURL(/\/ui\/runs\/run_/);
  const id = page.url().split("/runs/")[1].split("?")[0];
  // The graph paints, then statuses change without a reload.
  await page.locator("canvas[data-painted]").waitFor();
  await page.getByText("succeeded", { exact: false }).first().waitFor();
  const run = await finished(TOKENS.editor, id);
  assert.equal(run.status, "succeeded");
  await page.locator(".run-head .badge", { hasText: "succeeded" }).waitFor({ timeout: 30_000 });
  await shot(page, "03-run-succeeded");
  await scan(page, "run");
  // Steps table: the accessible twin of the graph.
  await page.getByRole("tab", { name: "Steps" }).click();
  await page.getByRole("cell", { name: "d", exact: true }).waitFor();
  await shot(page, "04-steps-table");
  // The same values again: everything comes from the cache.
  const again = await api(TOKENS.editor, "POST", "/v1/runs", {
    workflow: "portal-diamond",
    parameters: { message: "from-the-portal" },
  });
  await finished(TOKENS.editor, again.id);
  await page.goto(`${URL_}/ui/runs/${again.id}?tab=steps`);
  // Every step is a hit, and says what it saved: `a` slept a second.
  const rowA = page.getByRole("row").filter({ has: page.getByRole("cell", { name: "a", exact: true }) });
  await rowA.getByText(/hit, saved (1\.\d|\d+\.\d)s/).waitFor();
  assert.match(await page.locator(".run-head").innerText(), /the cache saved \d/);
  await shot(page, "05-run-cached");
  // The runs list shows the saving too.
  await page.goto(`${URL_}/ui/runs`);
  await page.getByRole("row").filter({ hasText: again.id.slice(0, 12) }).getByText(/saved/).waitFor();
  // The first run's timeline: `a` first, then `b` and `c`, then `d`.
  await page.goto(`${URL_}/ui/runs/${id}?tab=timeline`);
  await page.locator(".timeline-name").first().waitFor();
  const names = await page.locator(".timeline-name").allInnerTexts();
  assert.equal(names[0], "a");
  assert.equal(names[names.length - 1], "d");
  await shot(page, "05b-timeline");
  await scan(page, "timeline");
  await page.context().close();
});

test("a fan-out shows its instances counted, and each instance's log", async () => {
  const fan = {
    apiVersion: "couler.dev/v1alpha1",
    name: "portal-fan-out",
    steps: [
      {
        name: "shard",
        map: { items: ["x", "y", "z"] },
        container: { image: "alpine", command: ["sh", "-c", "echo shard {{item}}"] },
      },
    ],
  };
  const run = await api(TOKENS.editor, "POST", "/v1/runs", { ir: fan });
  await finished(TOKENS.editor, run.id);
  const page = await signedIn(browser, TOKENS.editor);
  await page.goto(`${URL_}/ui/runs/${run.id}?tab=steps`);
  await page.getByRole("cell", { name: "shard[2]", exact: true }).waitFor();
  await page.getByRole("button", { name: "shard[1]", exact: true }).click();
  await page.locator(".log-box").getByText("shard y").waitFor();
  // The fan-out itself expands into its instances; one opens from there.
  await page.goto(`${URL_}/ui/runs/${run.id}?step=shard`);
  const drawer = page.getByRole("complementary", { name: "Step shard" });
  await drawer.getByRole("heading", { name: "Instances (3)" }).waitFor();
  await page.locator("canvas[data-painted]").waitFor();
  await shot(page, "05c-fan-out");
  await scan(page, "fan-out");
  await drawer.getByRole("button", { name: "shard[2]" }).click();
  await page.locator(".log-box").getByText("shard z").waitFor();
  await page.context().close();
});

test("cancel a running run, with confirmation", async () => {
  const long = {
    apiVersion: "couler.dev/v1alpha1",
    name: "portal-long",
    steps: [{ name: "wait", container: { image: "alpine", command: ["sh", "-c", "sleep 120"] } }],
  };
  const run = await api(TOKENS.editor, "POST", "/v1/runs", { ir: long });
  const page = await signedIn(browser, TOKENS.editor);
  await page.goto(`${URL_}/ui/runs/${run.id}`);
  await page.locator(".run-head .badge", { hasText: "running" }).waitFor({ timeout: 30_000 });
  await page.getByRole("button", { name: "Cancel run" }).click();
  await page.getByRole("alertdialog").waitFor();
  await shot(page, "05e-cancel-confirm");
  await page.getByRole("button", { name: "Yes, cancel" }).click();
  await page.locator(".run-head .badge", { hasText: "cancelled" }).waitFor({ timeout: 60_000 });
  const ended = await finished(TOKENS.editor, run.id);
  assert.equal(ended.status, "cancelled");
  await page.context().close();
});

test("the plan view explains what the optimizer decided", async () => {
  const mine = await api(TOKENS.editor, "GET", "/v1/runs?workflow=portal-diamond");
  const cached = mine.items.find((r) => (r.cache_saved_ms ?? 0) > 0);
  assert.ok(cached, "a cached run of portal-diamond");
  const page = await signedIn(browser, TOKENS.editor);
  await page.goto(`${URL_}/ui/runs/${cached.id}?tab=plan`);
  await page.getByRole("heading", { name: "Steps" }).waitFor();
  assert.match(await page.locator(".plan").innerText(), /cache hit/);
  await shot(page, "05f-plan");
  await scan(page, "plan");
  await page.context().close();
});

test("a dropped event stream resumes where it left off", async () => {
  const slow = {
    apiVersion: "couler.dev/v1alpha1",
    name: "portal-slow",
    steps: [
      { name: "first", container: { image: "alpine", command: ["sh", "-c", "sleep 4; echo one"] } },
      { name: "second", container: { image: "alpine", command: ["sh", "-c", "sleep 4; echo two {{steps.first.outputs.result}}"] } },
    ],
  };
  const run = await api(TOKENS.editor, "POST", "/v1/runs", { ir: slow });
  const page = await signedIn(browser, TOKENS.editor);
  const seen = [];
  page.on("request", (r) => {
    if (r.url().includes(`/v1/runs/${run.id}/events`)) seen.push(r.headers()["last-event-id"] ?? null);
  });
  // The first connection drops; the page connects again, asking for what
  // came after the snapshot it drew (Last-Event-ID), and goes on live.
  let dropped = false;
  await page.route(`**/v1/runs/${run.id}/events`, (route) => {
    if (dropped) return route.continue();
    dropped = true;
    return route.abort("connectionreset");
  });
  await page.goto(`${URL_}/ui/runs/${run.id}`);
  await page.locator(".run-head .badge", { hasText: "succeeded" }).waitFor({ timeout: 60_000 });
  assert.ok(seen.length >= 2, `reconnected: ${JSON.stringify(seen)}`);
  assert.ok(seen[1] && seen[1] === seen[0], `resumed with the snapshot's Last-Event-ID: ${JSON.stringify(seen)}`);
  await page.getByRole("tab", { name: "Steps" }).click();
  await page.getByRole("row").filter({ has: page.getByRole("cell", { name: "second", exact: true }) }).getByText("succeeded").waitFor();
  await shot(page, "05d-resumed");
  await page.context().close();
});

test("a failing step: its log shows stderr, and it can be retried", async () => {
  const failing = {
    apiVersion: "couler.dev/v1alpha1",
    name: "portal-failing",
    steps: [{ name: "boom", container: { image: "alpine", command: ["sh", "-c", "echo about to fail; echo broken pipe >&2; exit 3"] } }],
  };
  const run = await api(TOKENS.editor, "POST", "/v1/runs", { ir: failing });
  await finished(TOKENS.editor, run.id);
  const page = await signedIn(browser, TOKENS.editor);
  await page.goto(`${URL_}/ui/runs/${run.id}?step=boom`);
  await page.locator(".log-box").getByText("broken pipe").waitFor();
  await shot(page, "06-failed-step-log");
  await scan(page, "step drawer");
  await page.getByRole("button", { name: "Retry from failure" }).click();
  await page.getByRole("button", { name: "Yes, retry" }).click();
  await page.locator(".run-head").getByText("attempt 2").waitFor({ timeout: 30_000 });
  await page.context().close();
});

test("a viewer sees no actions it may not take", async () => {
  const page = await signedIn(browser, TOKENS.viewer);
  const nav = await page.locator("header.top nav").innerText();
  assert.ok(!nav.includes("Submit") && !nav.includes("Admin"), nav);
  await shot(page, "07-viewer-runs");
  await page.context().close();
});

test("another tenant never sees this tenant's runs", async () => {
  const mine = await api(TOKENS.editor, "GET", "/v1/runs");
  assert.ok(mine.items.length > 0);
  const page = await signedIn(browser, TOKENS.other);
  await page.getByText(/No runs match|run_/).first().waitFor();
  const text = await page.locator("main").innerText();
  for (const r of mine.items) assert.ok(!text.includes(r.id), `${r.id} leaked`);
  await page.goto(`${URL_}/ui/runs/${mine.items[0].id}`);
  await page.getByRole("alert").waitFor();
  await shot(page, "08-other-tenant-404");
  await page.context().close();
});

test("describe a workflow in words: draft, revise, save, run", async () => {
  const page = await signedIn(browser, TOKENS.editor);
  await page.goto(`${URL_}/ui/describe`);
  await page
    .getByLabel("What should it do?")
    .fill("Load the reviews from https://example.com/reviews.csv, clean them, then train an LSTM and a GRU in parallel, then pick the better model.");
  await page.getByRole("button", { name: "Draft it" }).click();
  await page.getByRole("heading", { name: /Draft 1/ }).waitFor({ timeout: 30_000 });
  await page.locator("canvas[data-painted]").waitFor();
  assert.match(await page.locator(".draft").innerText(), /offline planner/);
  await shot(page, "09-nl-draft");
  await scan(page, "describe");
  await page.getByLabel("Feedback for the next draft").fill("also evaluate the better model on the test set");
  await page.getByRole("button", { name: "Revise" }).click();
  await page.getByRole("heading", { name: /Draft 2/ }).waitFor({ timeout: 30_000 });
  await page.getByRole("heading", { name: "Changes from the previous draft" }).waitFor();
  await page.getByRole("button", { name: "Save and run" }).click();
  await page.waitForURL(/\/ui\/runs\/run_/, { timeout: 30_000 });
  await page.locator("canvas[data-painted]").waitFor();
  await shot(page, "10-nl-run");
  await page.context().close();
});

test("compare two runs: only what differs, unless asked", async () => {
  const one = await api(TOKENS.editor, "POST", "/v1/runs", { workflow: "portal-diamond", parameters: { message: "one" } });
  const two = await api(TOKENS.editor, "POST", "/v1/runs", { workflow: "portal-diamond", parameters: { message: "two" } });
  await finished(TOKENS.editor, one.id);
  await finished(TOKENS.editor, two.id);
  const page = await signedIn(browser, TOKENS.editor);
  await page.goto(`${URL_}/ui/compare?runs=${one.id},${two.id}`);
  await page.getByRole("rowheader", { name: "parameter message" }).waitFor();
  const table = await page.locator("table.grid").innerText();
  assert.match(table, /one/);
  assert.match(table, /two/);
  await shot(page, "11-compare");
  await scan(page, "compare");
  await page.getByLabel("Show everything, not only differences").check();
  await page.getByRole("rowheader", { name: "step a" }).waitFor();
  await page.context().close();
});

test("no serious accessibility violation on the pages visited", () => {
  assert.deepEqual(violations, []);
});
