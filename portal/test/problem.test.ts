import { test } from "node:test";
import assert from "node:assert/strict";
import { problemFrom } from "../src/api/problem.js";

test("a problem document keeps its code, detail and field problems", () => {
  const body = JSON.stringify({
    type: "https://couler.dev/problems/validation_failed",
    title: "Unprocessable Entity",
    status: 422,
    detail: "the workflow is invalid",
    code: "validation_failed",
    problems: [{ path: "/steps/0/name", code: "invalid_name", message: "\"A\" is not a valid step name" }],
  });
  const e = problemFrom(422, "Unprocessable Entity", "application/problem+json", body);
  assert.equal(e.code, "validation_failed");
  assert.equal(e.status, 422);
  assert.equal(e.describe(), "the workflow is invalid\n/steps/0/name: \"A\" is not a valid step name");
});

test("an HTML error page becomes a plain description", () => {
  const e = problemFrom(502, "Bad Gateway", "text/html", "<html><body>nginx</body></html>");
  assert.equal(e.code, "http_502");
  assert.equal(e.message, "the server answered 502 Bad Gateway");
});
