from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response
from ... import errors

from ...models.problem import Problem
from ...models.webhook_view import WebhookView


def _get_kwargs(
    workflow: str,
    trigger: str,
) -> dict[str, Any]:
    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/workflows/{workflow}/triggers/{trigger}".format(
            workflow=quote(str(workflow), safe=""),
            trigger=quote(str(trigger), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | WebhookView | None:
    if response.status_code == 200:
        response_200 = WebhookView.from_dict(response.json())

        return response_200

    if 400 <= response.status_code <= 499:
        response_4xx = Problem.from_dict(response.json())

        return response_4xx

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Problem | WebhookView]:
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
) -> Response[Problem | WebhookView]:
    """Read a webhook trigger.

    Args:
        workflow (str):
        trigger (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | WebhookView]
    """

    kwargs = _get_kwargs(
        workflow=workflow,
        trigger=trigger,
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
) -> Problem | WebhookView | None:
    """Read a webhook trigger.

    Args:
        workflow (str):
        trigger (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | WebhookView
    """

    return sync_detailed(
        workflow=workflow,
        trigger=trigger,
        client=client,
    ).parsed


async def asyncio_detailed(
    workflow: str,
    trigger: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[Problem | WebhookView]:
    """Read a webhook trigger.

    Args:
        workflow (str):
        trigger (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | WebhookView]
    """

    kwargs = _get_kwargs(
        workflow=workflow,
        trigger=trigger,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    workflow: str,
    trigger: str,
    *,
    client: AuthenticatedClient | Client,
) -> Problem | WebhookView | None:
    """Read a webhook trigger.

    Args:
        workflow (str):
        trigger (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | WebhookView
    """

    return (
        await asyncio_detailed(
            workflow=workflow,
            trigger=trigger,
            client=client,
        )
    ).parsed
