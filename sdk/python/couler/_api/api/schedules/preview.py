from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.preview_view import PreviewView
from ...models.problem import Problem
from ...types import Unset
import datetime


def _get_kwargs(
    workflow: str,
    slug: str,
    *,
    count: int | Unset = UNSET,
    from_: datetime.datetime | Unset = UNSET,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    params["count"] = count

    json_from_: str | Unset = UNSET
    if not isinstance(from_, Unset):
        json_from_ = from_.isoformat()
    params["from"] = json_from_

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/workflows/{workflow}/schedules/{slug}/preview".format(
            workflow=quote(str(workflow), safe=""),
            slug=quote(str(slug), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> PreviewView | Problem | None:
    if response.status_code == 200:
        response_200 = PreviewView.from_dict(response.json())

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
) -> Response[PreviewView | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    workflow: str,
    slug: str,
    *,
    client: AuthenticatedClient | Client,
    count: int | Unset = UNSET,
    from_: datetime.datetime | Unset = UNSET,
) -> Response[PreviewView | Problem]:
    """The next instants a schedule fires at, with their UTC offsets (check
    DST changes here before relying on a schedule).

    Args:
        workflow (str):
        slug (str):
        count (int | Unset):
        from_ (datetime.datetime | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PreviewView | Problem]
    """

    kwargs = _get_kwargs(
        workflow=workflow,
        slug=slug,
        count=count,
        from_=from_,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    workflow: str,
    slug: str,
    *,
    client: AuthenticatedClient | Client,
    count: int | Unset = UNSET,
    from_: datetime.datetime | Unset = UNSET,
) -> PreviewView | Problem | None:
    """The next instants a schedule fires at, with their UTC offsets (check
    DST changes here before relying on a schedule).

    Args:
        workflow (str):
        slug (str):
        count (int | Unset):
        from_ (datetime.datetime | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PreviewView | Problem
    """

    return sync_detailed(
        workflow=workflow,
        slug=slug,
        client=client,
        count=count,
        from_=from_,
    ).parsed


async def asyncio_detailed(
    workflow: str,
    slug: str,
    *,
    client: AuthenticatedClient | Client,
    count: int | Unset = UNSET,
    from_: datetime.datetime | Unset = UNSET,
) -> Response[PreviewView | Problem]:
    """The next instants a schedule fires at, with their UTC offsets (check
    DST changes here before relying on a schedule).

    Args:
        workflow (str):
        slug (str):
        count (int | Unset):
        from_ (datetime.datetime | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PreviewView | Problem]
    """

    kwargs = _get_kwargs(
        workflow=workflow,
        slug=slug,
        count=count,
        from_=from_,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    workflow: str,
    slug: str,
    *,
    client: AuthenticatedClient | Client,
    count: int | Unset = UNSET,
    from_: datetime.datetime | Unset = UNSET,
) -> PreviewView | Problem | None:
    """The next instants a schedule fires at, with their UTC offsets (check
    DST changes here before relying on a schedule).

    Args:
        workflow (str):
        slug (str):
        count (int | Unset):
        from_ (datetime.datetime | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PreviewView | Problem
    """

    return (
        await asyncio_detailed(
            workflow=workflow,
            slug=slug,
            client=client,
            count=count,
            from_=from_,
        )
    ).parsed
