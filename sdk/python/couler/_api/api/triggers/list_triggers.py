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
) -> dict[str, Any]:
    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/workflows/{workflow}/triggers".format(
            workflow=quote(str(workflow), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | list[WebhookView] | None:
    if response.status_code == 200:
        response_200 = []
        _response_200 = response.json()
        for response_200_item_data in _response_200:
            response_200_item = WebhookView.from_dict(response_200_item_data)

            response_200.append(response_200_item)

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
) -> Response[Problem | list[WebhookView]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    workflow: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[Problem | list[WebhookView]]:
    """List a workflow's webhook triggers, by name (secrets are never shown
    again).

    Args:
        workflow (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | list[WebhookView]]
    """

    kwargs = _get_kwargs(
        workflow=workflow,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    workflow: str,
    *,
    client: AuthenticatedClient | Client,
) -> Problem | list[WebhookView] | None:
    """List a workflow's webhook triggers, by name (secrets are never shown
    again).

    Args:
        workflow (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | list[WebhookView]
    """

    return sync_detailed(
        workflow=workflow,
        client=client,
    ).parsed


async def asyncio_detailed(
    workflow: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[Problem | list[WebhookView]]:
    """List a workflow's webhook triggers, by name (secrets are never shown
    again).

    Args:
        workflow (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | list[WebhookView]]
    """

    kwargs = _get_kwargs(
        workflow=workflow,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    workflow: str,
    *,
    client: AuthenticatedClient | Client,
) -> Problem | list[WebhookView] | None:
    """List a workflow's webhook triggers, by name (secrets are never shown
    again).

    Args:
        workflow (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | list[WebhookView]
    """

    return (
        await asyncio_detailed(
            workflow=workflow,
            client=client,
        )
    ).parsed
