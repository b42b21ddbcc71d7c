"""Schemathesis hooks for scripts/check-api-contract.

The document states every rule the server enforces on a request that a
schema can state (patterns, lengths, enums, formats, which fields go
together). A few rules no schema can state; for those, and only those, a
schema-valid request may be refused. `rejected_only_for_unstatable_rules`
checks that every refusal of schema-valid data names one of them (by the
problem's stable `code`), operation by operation. The built-in
`positive_data_acceptance` check is told (schemathesis.toml) to let 400 and
422 through so that this check, which knows why, judges them.
"""

import json
from pathlib import Path

import jsonschema_rs
import schemathesis

_DOCUMENT = json.loads(
    (Path(__file__).resolve().parents[2] / "openapi" / "openapi.json").read_text()
)

# Why a schema-valid request may still be refused, per operation.
SEMANTIC_IR = {
    # A workflow must hold together: step names unique, dependencies and
    # references name existing steps, no cycles, parameters declared …
    "validation_failed",
}
CURSOR = {"invalid_cursor"}  # only a `next_cursor` this API returned
UNSTATABLE = {
    "GET /v1/runs": CURSOR,
    "GET /v1/workflows": CURSOR,
    "GET /v1/generations": CURSOR,
    "GET /v1/secrets:audit": CURSOR,
    # An expiry must be in the future.
    "POST /v1/api-keys": {"invalid_expiry"},
    # A description must be one the planner can read.
    "POST /v1/generations": {"validation_failed"},
    "POST /v1/workflows:generate": {"validation_failed"},
    "POST /v1/generations/{id}/feedback": {"validation_failed"},
    "POST /v1/workflows": SEMANTIC_IR,
    "POST /v1/workflows/{workflow}/versions": SEMANTIC_IR,
    # Parameters must be ones the workflow declares, of their kinds.
    "POST /v1/runs": SEMANTIC_IR,
    "POST /v1/plans": SEMANTIC_IR,
    "POST /v1/workflows/{workflow}/plan": SEMANTIC_IR,
    "POST /v1/graph": SEMANTIC_IR,
    "POST /v1/cache/explain": SEMANTIC_IR,
    # The tenant's engine (or the one asked for) must be able to run it.
    "GET /v1/workflows/{workflow}/compile": SEMANTIC_IR,
    # A step template's step must be valid as a step of a workflow.
    "POST /v1/step-library": SEMANTIC_IR,
    "PUT /v1/step-library/{name}": SEMANTIC_IR,
    # A cron must parse and fire (at most as often as the tenant allows), a
    # time zone must be in the bundled tz database, `end_at` after
    # `start_at`, parameters ones the workflow declares.
    "POST /v1/workflows/{workflow}/schedules": SEMANTIC_IR,
    "PATCH /v1/workflows/{workflow}/schedules/{slug}": SEMANTIC_IR,
    # `to` after `from`, and not too many instants between them.
    "POST /v1/workflows/{workflow}/schedules/{slug}/backfills": SEMANTIC_IR,
    # Mapped and given parameters must be ones the workflow declares (every
    # required one mapped or given, none both), the version must exist, and
    # the body limit within this server's (`hooks.max_body_bytes`).
    "POST /v1/workflows/{workflow}/triggers": SEMANTIC_IR,
    "PATCH /v1/workflows/{workflow}/triggers/{trigger}": SEMANTIC_IR,
    # A delivery to a trigger that exists (generated public ids name none
    # and answer 404, like a bad signature's 401): its payload must hold
    # what the trigger maps, valid for the workflow, and its delivery id
    # header must be visible ASCII.
    "POST /v1/hooks/{public_id}": SEMANTIC_IR
    | {"invalid_payload", "invalid_delivery_id"},
    # The source must be an Argo workflow whose meaning carries over.
    "POST /v1/workflows:import": SEMANTIC_IR
    | {"invalid_source", "not_a_workflow", "import_changes_run"},
}


def _valid_body(case):
    """Whether the case's JSON body satisfies its operation's schema.

    Generation does not always honour a `oneOf` beside `properties` (which
    says which fields go together), so a case generated as valid is checked
    against the document before its refusal is judged."""
    operation = _DOCUMENT["paths"][case.operation.path][case.method.lower()]
    body = operation.get("requestBody")
    if body is None or case.body is None:
        return True
    schema = body.get("content", {}).get("application/json", {}).get("schema")
    if schema is None:
        return True
    # The document as written: schemathesis's loaded copy is reshaped.
    root = dict(schema, components=_DOCUMENT["components"])
    validator = jsonschema_rs.Draft202012Validator(root, validate_formats=True)
    # A plain copy: generated bodies hold values only their JSON form shows.
    return validator.is_valid(json.loads(json.dumps(case.body)))


@schemathesis.check
def rejected_only_for_unstatable_rules(ctx, response, case):
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return None
    if response.status_code not in (400, 422) or not _valid_body(case):
        return None
    try:
        code = json.loads(response.content).get("code")
    except (ValueError, AttributeError):
        code = None
    allowed = UNSTATABLE.get(f"{case.method.upper()} {case.operation.path}", set())
    if code not in allowed:
        raise AssertionError(
            f"a schema-valid request was refused with {response.status_code} `{code}`, "
            "a rule the document does not state"
        )
    return None
