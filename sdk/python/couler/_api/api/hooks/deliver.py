from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.webhook_accepted import WebhookAccepted
from ...types import Unset


def _get_kwargs(
    public_id: str,
    *,
    body: Any | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/hooks/{public_id}".format(
            public_id=quote(str(public_id), safe=""),
        ),
    }

    if not isinstance(body, Unset):
        _kwargs["json"] = body

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | WebhookAccepted | None:
    if response.status_code == 202:
        response_202 = WebhookAccepted.from_dict(response.json())

        return response_202

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())

        return response_503

    if 400 <= response.status_code <= 499:
        response_4xx = Problem.from_dict(response.json())

        return response_4xx

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Problem | WebhookAccepted]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    public_id: str,
    *,
    client: AuthenticatedClient,
    body: Any | Unset = UNSET,
) -> Response[Problem | WebhookAccepted]:
    """Deliver a webhook: start a run of the trigger's workflow.

     Needs no API key: the delivery authenticates with the trigger's scheme
    over the raw body: `hmac_github` (`X-Hub-Signature-256: sha256=<hex>`;
    delivery id `X-GitHub-Delivery`), `standard_webhooks` (`webhook-id`,
    `webhook-timestamp` within the trigger's replay window,
    `webhook-signature: v1,<base64>`), or `bearer` (`Authorization: Bearer
    <token>`; delivery id `Idempotency-Key`). A delivery id seen before
    answers with the run it started (`duplicate`). 202 also when the
    trigger's filter does not match (`ignored`, no run). 401
    `invalid_signature` when it does not authenticate (nothing is stored);
    404 for an unknown or disabled trigger; 413 over its body limit; 422
    when a mapped parameter is missing from the payload or not valid for
    the workflow (at the payload's pointer); 429 over its rate.

    Args:
        public_id (str):
        body (Any | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | WebhookAccepted]
    """

    kwargs = _get_kwargs(
        public_id=public_id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    public_id: str,
    *,
    client: AuthenticatedClient,
    body: Any | Unset = UNSET,
) -> Problem | WebhookAccepted | None:
    """Deliver a webhook: start a run of the trigger's workflow.

     Needs no API key: the delivery authenticates with the trigger's scheme
    over the raw body: `hmac_github` (`X-Hub-Signature-256: sha256=<hex>`;
    delivery id `X-GitHub-Delivery`), `standard_webhooks` (`webhook-id`,
    `webhook-timestamp` within the trigger's replay window,
    `webhook-signature: v1,<base64>`), or `bearer` (`Authorization: Bearer
    <token>`; delivery id `Idempotency-Key`). A delivery id seen before
    answers with the run it started (`duplicate`). 202 also when the
    trigger's filter does not match (`ignored`, no run). 401
    `invalid_signature` when it does not authenticate (nothing is stored);
    404 for an unknown or disabled trigger; 413 over its body limit; 422
    when a mapped parameter is missing from the payload or not valid for
    the workflow (at the payload's pointer); 429 over its rate.

    Args:
        public_id (str):
        body (Any | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | WebhookAccepted
    """

    return sync_detailed(
        public_id=public_id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    public_id: str,
    *,
    client: AuthenticatedClient,
    body: Any | Unset = UNSET,
) -> Response[Problem | WebhookAccepted]:
    """Deliver a webhook: start a run of the trigger's workflow.

     Needs no API key: the delivery authenticates with the trigger's scheme
    over the raw body: `hmac_github` (`X-Hub-Signature-256: sha256=<hex>`;
    delivery id `X-GitHub-Delivery`), `standard_webhooks` (`webhook-id`,
    `webhook-timestamp` within the trigger's replay window,
    `webhook-signature: v1,<base64>`), or `bearer` (`Authorization: Bearer
    <token>`; delivery id `Idempotency-Key`). A delivery id seen before
    answers with the run it started (`duplicate`). 202 also when the
    trigger's filter does not match (`ignored`, no run). 401
    `invalid_signature` when it does not authenticate (nothing is stored);
    404 for an unknown or disabled trigger; 413 over its body limit; 422
    when a mapped parameter is missing from the payload or not valid for
    the workflow (at the payload's pointer); 429 over its rate.

    Args:
        public_id (str):
        body (Any | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | WebhookAccepted]
    """

    kwargs = _get_kwargs(
        public_id=public_id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    public_id: str,
    *,
    client: AuthenticatedClient,
    body: Any | Unset = UNSET,
) -> Problem | WebhookAccepted | None:
    """Deliver a webhook: start a run of the trigger's workflow.

     Needs no API key: the delivery authenticates with the trigger's scheme
    over the raw body: `hmac_github` (`X-Hub-Signature-256: sha256=<hex>`;
    delivery id `X-GitHub-Delivery`), `standard_webhooks` (`webhook-id`,
    `webhook-timestamp` within the trigger's replay window,
    `webhook-signature: v1,<base64>`), or `bearer` (`Authorization: Bearer
    <token>`; delivery id `Idempotency-Key`). A delivery id seen before
    answers with the run it started (`duplicate`). 202 also when the
    trigger's filter does not match (`ignored`, no run). 401
    `invalid_signature` when it does not authenticate (nothing is stored);
    404 for an unknown or disabled trigger; 413 over its body limit; 422
    when a mapped parameter is missing from the payload or not valid for
    the workflow (at the payload's pointer); 429 over its rate.

    Args:
        public_id (str):
        body (Any | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | WebhookAccepted
    """

    return (
        await asyncio_detailed(
            public_id=public_id,
            client=client,
            body=body,
        )
    ).parsed
