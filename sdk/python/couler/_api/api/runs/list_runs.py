from http import HTTPStatus
from typing import Any

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.list_run_view import ListRunView
from ...models.problem import Problem
from ...models.run_status import RunStatus
from ...types import Unset
import datetime


def _get_kwargs(
    *,
    status: RunStatus | Unset = UNSET,
    workflow: str | Unset = UNSET,
    label: str | Unset = UNSET,
    created_after: datetime.datetime | Unset = UNSET,
    created_before: datetime.datetime | Unset = UNSET,
    cursor: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    json_status: str | Unset = UNSET
    if not isinstance(status, Unset):
        json_status = status

    params["status"] = json_status

    params["workflow"] = workflow

    params["label"] = label

    json_created_after: str | Unset = UNSET
    if not isinstance(created_after, Unset):
        json_created_after = created_after.isoformat()
    params["created_after"] = json_created_after

    json_created_before: str | Unset = UNSET
    if not isinstance(created_before, Unset):
        json_created_before = created_before.isoformat()
    params["created_before"] = json_created_before

    params["cursor"] = cursor

    params["limit"] = limit

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/runs",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ListRunView | Problem | None:
    if response.status_code == 200:
        response_200 = ListRunView.from_dict(response.json())

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
) -> Response[ListRunView | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    status: RunStatus | Unset = UNSET,
    workflow: str | Unset = UNSET,
    label: str | Unset = UNSET,
    created_after: datetime.datetime | Unset = UNSET,
    created_before: datetime.datetime | Unset = UNSET,
    cursor: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> Response[ListRunView | Problem]:
    """List runs, newest first.

    Args:
        status (RunStatus | Unset): `queued → planning → running → succeeded | failed | cancelled`
        workflow (str | Unset):
        label (str | Unset):
        created_after (datetime.datetime | Unset):
        created_before (datetime.datetime | Unset):
        cursor (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListRunView | Problem]
    """

    kwargs = _get_kwargs(
        status=status,
        workflow=workflow,
        label=label,
        created_after=created_after,
        created_before=created_before,
        cursor=cursor,
        limit=limit,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    status: RunStatus | Unset = UNSET,
    workflow: str | Unset = UNSET,
    label: str | Unset = UNSET,
    created_after: datetime.datetime | Unset = UNSET,
    created_before: datetime.datetime | Unset = UNSET,
    cursor: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> ListRunView | Problem | None:
    """List runs, newest first.

    Args:
        status (RunStatus | Unset): `queued → planning → running → succeeded | failed | cancelled`
        workflow (str | Unset):
        label (str | Unset):
        created_after (datetime.datetime | Unset):
        created_before (datetime.datetime | Unset):
        cursor (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListRunView | Problem
    """

    return sync_detailed(
        client=client,
        status=status,
        workflow=workflow,
        label=label,
        created_after=created_after,
        created_before=created_before,
        cursor=cursor,
        limit=limit,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    status: RunStatus | Unset = UNSET,
    workflow: str | Unset = UNSET,
    label: str | Unset = UNSET,
    created_after: datetime.datetime | Unset = UNSET,
    created_before: datetime.datetime | Unset = UNSET,
    cursor: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> Response[ListRunView | Problem]:
    """List runs, newest first.

    Args:
        status (RunStatus | Unset): `queued → planning → running → succeeded | failed | cancelled`
        workflow (str | Unset):
        label (str | Unset):
        created_after (datetime.datetime | Unset):
        created_before (datetime.datetime | Unset):
        cursor (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListRunView | Problem]
    """

    kwargs = _get_kwargs(
        status=status,
        workflow=workflow,
        label=label,
        created_after=created_after,
        created_before=created_before,
        cursor=cursor,
        limit=limit,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    status: RunStatus | Unset = UNSET,
    workflow: str | Unset = UNSET,
    label: str | Unset = UNSET,
    created_after: datetime.datetime | Unset = UNSET,
    created_before: datetime.datetime | Unset = UNSET,
    cursor: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> ListRunView | Problem | None:
    """List runs, newest first.

    Args:
        status (RunStatus | Unset): `queued → planning → running → succeeded | failed | cancelled`
        workflow (str | Unset):
        label (str | Unset):
        created_after (datetime.datetime | Unset):
        created_before (datetime.datetime | Unset):
        cursor (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListRunView | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            status=status,
            workflow=workflow,
            label=label,
            created_after=created_after,
            created_before=created_before,
            cursor=cursor,
            limit=limit,
        )
    ).parsed
