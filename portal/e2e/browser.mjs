// What every browser flow shares: Debian's chromium through playwright-core
// (no browser download), the server and tokens the Rust test harness
// (tests/portal.rs) started and minted, API calls, and screenshots.

import { chromium } from "playwright-core";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";

export const URL_ = process.env.COULER_URL ?? "http://127.0.0.1:8080";
export const TOKENS = {
  admin: process.env.COULER_TOKEN_ADMIN,
  editor: process.env.COULER_TOKEN_EDITOR,
  viewer: process.env.COULER_TOKEN_VIEWER,
  other: process.env.COULER_TOKEN_OTHER,
};
const SHOTS = process.env.COULER_SHOTS ?? join(process.cwd(), "..", "target", "e2e-shots");
mkdirSync(SHOTS, { recursive: true });

export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    // CI runs as root, where Chromium's own sandbox cannot start.
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
}

/** A page signed in with `token` (through the login form). */
export async function signedIn(browser, token) {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e.message));
  await page.goto(`${URL_}/ui/login`);
  await page.getByLabel("API key or token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Runs" }).waitFor();
  return page;
}

export async function shot(page, name) {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: false });
}

/** Calls the API as `token`; returns the parsed JSON body. */
export async function api(token, method, path, body, headers = {}) {
  const response = await fetch(URL_ + path, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** Polls a run until it is finished. */
export async function finished(token, id, limitMs = 60_000) {
  const end = Date.now() + limitMs;
  for (;;) {
    const run = await api(token, "GET", `/v1/runs/${id}`);
    if (["succeeded", "failed", "cancelled"].includes(run.status)) return run;
    if (Date.now() > end) throw new Error(`run ${id} still ${run.status}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** axe-core's serious and critical violations on the page. */
export async function axe(page) {
  const require = createRequire(import.meta.url);
  const source = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
  // Through DevTools, not a <script> tag: the page's CSP forbids inline scripts.
  await page.evaluate(source);
  const result = await page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const r = await axe.run(document, { runOnly: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 5) }));
  });
  return result.filter((v) => v.impact === "serious" || v.impact === "critical");
}
