from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...types import Unset


def _get_kwargs(
    id: str,
    *,
    step: str,
    attempt: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    follow: bool | Unset = UNSET,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    params["step"] = step

    params["attempt"] = attempt

    params["offset"] = offset

    params["follow"] = follow

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/runs/{id}/logs".format(
            id=quote(str(id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | str | None:
    if response.status_code == 200:
        response_200 = response.text
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
) -> Response[Problem | str]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    id: str,
    *,
    client: AuthenticatedClient | Client,
    step: str,
    attempt: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    follow: bool | Unset = UNSET,
) -> Response[Problem | str]:
    """The log of one step's latest attempt (standard output and error), from
    `offset` on, or followed.

     Headers: `Couler-Log-Offset` (the offset after this text) and
    `Couler-Log-Complete` (`false` while the step is pending or running).
    While the step runs its log is live: standard output and standard
    error interleaved as they grow, and only ever appended to. When the
    step ends its stored log (standard output, then standard error, as
    before) replaces the live one, so its order can differ; a follower then
    receives the rest of it, or, when it does not extend what was sent, a
    marker line and the whole stored log. A retry from failure keeps the
    logs of the run attempts before it (`attempt` reads them).

    Args:
        id (str):
        step (str):
        attempt (int | Unset):
        offset (int | Unset):
        follow (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
    """

    kwargs = _get_kwargs(
        id=id,
        step=step,
        attempt=attempt,
        offset=offset,
        follow=follow,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    id: str,
    *,
    client: AuthenticatedClient | Client,
    step: str,
    attempt: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    follow: bool | Unset = UNSET,
) -> Problem | str | None:
    """The log of one step's latest attempt (standard output and error), from
    `offset` on, or followed.

     Headers: `Couler-Log-Offset` (the offset after this text) and
    `Couler-Log-Complete` (`false` while the step is pending or running).
    While the step runs its log is live: standard output and standard
    error interleaved as they grow, and only ever appended to. When the
    step ends its stored log (standard output, then standard error, as
    before) replaces the live one, so its order can differ; a follower then
    receives the rest of it, or, when it does not extend what was sent, a
    marker line and the whole stored log. A retry from failure keeps the
    logs of the run attempts before it (`attempt` reads them).

    Args:
        id (str):
        step (str):
        attempt (int | Unset):
        offset (int | Unset):
        follow (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
    """

    return sync_detailed(
        id=id,
        client=client,
        step=step,
        attempt=attempt,
        offset=offset,
        follow=follow,
    ).parsed


async def asyncio_detailed(
    id: str,
    *,
    client: AuthenticatedClient | Client,
    step: str,
    attempt: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    follow: bool | Unset = UNSET,
) -> Response[Problem | str]:
    """The log of one step's latest attempt (standard output and error), from
    `offset` on, or followed.

     Headers: `Couler-Log-Offset` (the offset after this text) and
    `Couler-Log-Complete` (`false` while the step is pending or running).
    While the step runs its log is live: standard output and standard
    error interleaved as they grow, and only ever appended to. When the
    step ends its stored log (standard output, then standard error, as
    before) replaces the live one, so its order can differ; a follower then
    receives the rest of it, or, when it does not extend what was sent, a
    marker line and the whole stored log. A retry from failure keeps the
    logs of the run attempts before it (`attempt` reads them).

    Args:
        id (str):
        step (str):
        attempt (int | Unset):
        offset (int | Unset):
        follow (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
    """

    kwargs = _get_kwargs(
        id=id,
        step=step,
        attempt=attempt,
        offset=offset,
        follow=follow,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: str,
    *,
    client: AuthenticatedClient | Client,
    step: str,
    attempt: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    follow: bool | Unset = UNSET,
) -> Problem | str | None:
    """The log of one step's latest attempt (standard output and error), from
    `offset` on, or followed.

     Headers: `Couler-Log-Offset` (the offset after this text) and
    `Couler-Log-Complete` (`false` while the step is pending or running).
    While the step runs its log is live: standard output and standard
    error interleaved as they grow, and only ever appended to. When the
    step ends its stored log (standard output, then standard error, as
    before) replaces the live one, so its order can differ; a follower then
    receives the rest of it, or, when it does not extend what was sent, a
    marker line and the whole stored log. A retry from failure keeps the
    logs of the run attempts before it (`attempt` reads them).

    Args:
        id (str):
        step (str):
        attempt (int | Unset):
        offset (int | Unset):
        follow (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
    """

    return (
        await asyncio_detailed(
            id=id,
            client=client,
            step=step,
            attempt=attempt,
            offset=offset,
            follow=follow,
        )
    ).parsed
