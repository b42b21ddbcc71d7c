from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response
from ... import errors

from ...models.problem import Problem
from ...models.rotate_webhook import RotateWebhook
from ...models.webhook_created import WebhookCreated


def _get_kwargs(
    workflow: str,
    trigger: str,
    *,
    body: RotateWebhook,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/workflows/{workflow}/triggers/{trigger}/rotate".format(
            workflow=quote(str(workflow), safe=""),
            trigger=quote(str(trigger), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | WebhookCreated | None:
    if response.status_code == 200:
        response_200 = WebhookCreated.from_dict(response.json())

        return response_200

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
) -> Response[Problem | WebhookCreated]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    workflow: str,
    trigger: str,
    *,
    client: AuthenticatedClient | Client,
    body: RotateWebhook,
) -> Response[Problem | WebhookCreated]:
    """Rotate a webhook trigger's credential (and, if asked, its public id).

     The answer holds the new secret or token, shown only now. The replaced
    credential and public id keep working for `grace_secs` (default a
    day), so the sender can be updated without losing deliveries; with 0
    they stop at once.

    Args:
        workflow (str):
        trigger (str):
        body (RotateWebhook): A rotation of a trigger's credential.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | WebhookCreated]
    """

    kwargs = _get_kwargs(
        workflow=workflow,
        trigger=trigger,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    workflow: str,
    trigger: str,
    *,
    client: AuthenticatedClient | Client,
    body: RotateWebhook,
) -> Problem | WebhookCreated | None:
    """Rotate a webhook trigger's credential (and, if asked, its public id).

     The answer holds the new secret or token, shown only now. The replaced
    credential and public id keep working for `grace_secs` (default a
    day), so the sender can be updated without losing deliveries; with 0
    they stop at once.

    Args:
        workflow (str):
        trigger (str):
        body (RotateWebhook): A rotation of a trigger's credential.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | WebhookCreated
    """

    return sync_detailed(
        workflow=workflow,
        trigger=trigger,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    workflow: str,
    trigger: str,
    *,
    client: AuthenticatedClient | Client,
    body: RotateWebhook,
) -> Response[Problem | WebhookCreated]:
    """Rotate a webhook trigger's credential (and, if asked, its public id).

     The answer holds the new secret or token, shown only now. The replaced
    credential and public id keep working for `grace_secs` (default a
    day), so the sender can be updated without losing deliveries; with 0
    they stop at once.

    Args:
        workflow (str):
        trigger (str):
        body (RotateWebhook): A rotation of a trigger's credential.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | WebhookCreated]
    """

    kwargs = _get_kwargs(
        workflow=workflow,
        trigger=trigger,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    workflow: str,
    trigger: str,
    *,
    client: AuthenticatedClient | Client,
    body: RotateWebhook,
) -> Problem | WebhookCreated | None:
    """Rotate a webhook trigger's credential (and, if asked, its public id).

     The answer holds the new secret or token, shown only now. The replaced
    credential and public id keep working for `grace_secs` (default a
    day), so the sender can be updated without losing deliveries; with 0
    they stop at once.

    Args:
        workflow (str):
        trigger (str):
        body (RotateWebhook): A rotation of a trigger's credential.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | WebhookCreated
    """

    return (
        await asyncio_detailed(
            workflow=workflow,
            trigger=trigger,
            client=client,
            body=body,
        )
    ).parsed
