from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response
from ... import errors

from ...models.problem import Problem
from ...models.schedule_settings import ScheduleSettings
from ...models.schedule_view import ScheduleView


def _get_kwargs(
    workflow: str,
    slug: str,
    *,
    body: ScheduleSettings,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "patch",
        "url": "/v1/workflows/{workflow}/schedules/{slug}".format(
            workflow=quote(str(workflow), safe=""),
            slug=quote(str(slug), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | ScheduleView | None:
    if response.status_code == 200:
        response_200 = ScheduleView.from_dict(response.json())

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
) -> Response[Problem | ScheduleView]:
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
    body: ScheduleSettings,
) -> Response[Problem | ScheduleView]:
    """Change a schedule in place.

     Its id, slug and tick history stay. A change of its crons, time zone,
    jitter, start or end recomputes the next tick from now (the past is
    never filled in; use a backfill). The workflow's own schedule
    (`default`) takes its crons and time zone from the workflow: 409.

    Args:
        workflow (str):
        slug (str):
        body (ScheduleSettings): A schedule: a new one (`slug` and `crons` required), or the
            changes to
            one (absent fields keep their value).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ScheduleView]
    """

    kwargs = _get_kwargs(
        workflow=workflow,
        slug=slug,
        body=body,
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
    body: ScheduleSettings,
) -> Problem | ScheduleView | None:
    """Change a schedule in place.

     Its id, slug and tick history stay. A change of its crons, time zone,
    jitter, start or end recomputes the next tick from now (the past is
    never filled in; use a backfill). The workflow's own schedule
    (`default`) takes its crons and time zone from the workflow: 409.

    Args:
        workflow (str):
        slug (str):
        body (ScheduleSettings): A schedule: a new one (`slug` and `crons` required), or the
            changes to
            one (absent fields keep their value).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ScheduleView
    """

    return sync_detailed(
        workflow=workflow,
        slug=slug,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    workflow: str,
    slug: str,
    *,
    client: AuthenticatedClient | Client,
    body: ScheduleSettings,
) -> Response[Problem | ScheduleView]:
    """Change a schedule in place.

     Its id, slug and tick history stay. A change of its crons, time zone,
    jitter, start or end recomputes the next tick from now (the past is
    never filled in; use a backfill). The workflow's own schedule
    (`default`) takes its crons and time zone from the workflow: 409.

    Args:
        workflow (str):
        slug (str):
        body (ScheduleSettings): A schedule: a new one (`slug` and `crons` required), or the
            changes to
            one (absent fields keep their value).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ScheduleView]
    """

    kwargs = _get_kwargs(
        workflow=workflow,
        slug=slug,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    workflow: str,
    slug: str,
    *,
    client: AuthenticatedClient | Client,
    body: ScheduleSettings,
) -> Problem | ScheduleView | None:
    """Change a schedule in place.

     Its id, slug and tick history stay. A change of its crons, time zone,
    jitter, start or end recomputes the next tick from now (the past is
    never filled in; use a backfill). The workflow's own schedule
    (`default`) takes its crons and time zone from the workflow: 409.

    Args:
        workflow (str):
        slug (str):
        body (ScheduleSettings): A schedule: a new one (`slug` and `crons` required), or the
            changes to
            one (absent fields keep their value).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ScheduleView
    """

    return (
        await asyncio_detailed(
            workflow=workflow,
            slug=slug,
            client=client,
            body=body,
        )
    ).parsed
