from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response
from ... import errors

from ...models.problem import Problem


def _get_kwargs(
    workflow: str,
    trigger: str,
) -> dict[str, Any]:
    _kwargs: dict[str, Any] = {
        "method": "delete",
        "url": "/v1/workflows/{workflow}/triggers/{trigger}".format(
            workflow=quote(str(workflow), safe=""),
            trigger=quote(str(trigger), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Any | Problem | None:
    if response.status_code == 204:
        response_204 = cast(Any, None)
        return response_204

    if 400 <= response.status_code <= 499:
        response_4xx = Problem.from_dict(response.json())

        return response_4xx

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Any | Problem]:
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
) -> Response[Any | Problem]:
    """Delete a webhook trigger and its delivery log; its public id answers
    404 from now on. Runs it started stay.

    Args:
        workflow (str):
        trigger (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Problem]
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
) -> Any | Problem | None:
    """Delete a webhook trigger and its delivery log; its public id answers
    404 from now on. Runs it started stay.

    Args:
        workflow (str):
        trigger (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Problem
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
) -> Response[Any | Problem]:
    """Delete a webhook trigger and its delivery log; its public id answers
    404 from now on. Runs it started stay.

    Args:
        workflow (str):
        trigger (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Problem]
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
) -> Any | Problem | None:
    """Delete a webhook trigger and its delivery log; its public id answers
    404 from now on. Runs it started stay.

    Args:
        workflow (str):
        trigger (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Problem
    """

    return (
        await asyncio_detailed(
            workflow=workflow,
            trigger=trigger,
            client=client,
        )
    ).parsed
