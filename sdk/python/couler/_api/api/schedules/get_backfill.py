from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response
from ... import errors

from ...models.backfill_view import BackfillView
from ...models.problem import Problem


def _get_kwargs(
    workflow: str,
    slug: str,
    id: str,
) -> dict[str, Any]:
    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/workflows/{workflow}/schedules/{slug}/backfills/{id}".format(
            workflow=quote(str(workflow), safe=""),
            slug=quote(str(slug), safe=""),
            id=quote(str(id), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> BackfillView | Problem | None:
    if response.status_code == 200:
        response_200 = BackfillView.from_dict(response.json())

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
) -> Response[BackfillView | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    workflow: str,
    slug: str,
    id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[BackfillView | Problem]:
    """Read a backfill and how far it got.

    Args:
        workflow (str):
        slug (str):
        id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[BackfillView | Problem]
    """

    kwargs = _get_kwargs(
        workflow=workflow,
        slug=slug,
        id=id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    workflow: str,
    slug: str,
    id: str,
    *,
    client: AuthenticatedClient | Client,
) -> BackfillView | Problem | None:
    """Read a backfill and how far it got.

    Args:
        workflow (str):
        slug (str):
        id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        BackfillView | Problem
    """

    return sync_detailed(
        workflow=workflow,
        slug=slug,
        id=id,
        client=client,
    ).parsed


async def asyncio_detailed(
    workflow: str,
    slug: str,
    id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[BackfillView | Problem]:
    """Read a backfill and how far it got.

    Args:
        workflow (str):
        slug (str):
        id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[BackfillView | Problem]
    """

    kwargs = _get_kwargs(
        workflow=workflow,
        slug=slug,
        id=id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    workflow: str,
    slug: str,
    id: str,
    *,
    client: AuthenticatedClient | Client,
) -> BackfillView | Problem | None:
    """Read a backfill and how far it got.

    Args:
        workflow (str):
        slug (str):
        id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        BackfillView | Problem
    """

    return (
        await asyncio_detailed(
            workflow=workflow,
            slug=slug,
            id=id,
            client=client,
        )
    ).parsed
