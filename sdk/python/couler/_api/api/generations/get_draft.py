from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response
from ... import errors

from ...models.draft_view import DraftView
from ...models.problem import Problem


def _get_kwargs(
    id: str,
    n: int,
) -> dict[str, Any]:
    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/generations/{id}/drafts/{n}".format(
            id=quote(str(id), safe=""),
            n=quote(str(n), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> DraftView | Problem | None:
    if response.status_code == 200:
        response_200 = DraftView.from_dict(response.json())

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
) -> Response[DraftView | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    id: str,
    n: int,
    *,
    client: AuthenticatedClient | Client,
) -> Response[DraftView | Problem]:
    """Read one draft of a generation (numbered from 1).

    Args:
        id (str):
        n (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DraftView | Problem]
    """

    kwargs = _get_kwargs(
        id=id,
        n=n,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    id: str,
    n: int,
    *,
    client: AuthenticatedClient | Client,
) -> DraftView | Problem | None:
    """Read one draft of a generation (numbered from 1).

    Args:
        id (str):
        n (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DraftView | Problem
    """

    return sync_detailed(
        id=id,
        n=n,
        client=client,
    ).parsed


async def asyncio_detailed(
    id: str,
    n: int,
    *,
    client: AuthenticatedClient | Client,
) -> Response[DraftView | Problem]:
    """Read one draft of a generation (numbered from 1).

    Args:
        id (str):
        n (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DraftView | Problem]
    """

    kwargs = _get_kwargs(
        id=id,
        n=n,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: str,
    n: int,
    *,
    client: AuthenticatedClient | Client,
) -> DraftView | Problem | None:
    """Read one draft of a generation (numbered from 1).

    Args:
        id (str):
        n (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DraftView | Problem
    """

    return (
        await asyncio_detailed(
            id=id,
            n=n,
            client=client,
        )
    ).parsed
