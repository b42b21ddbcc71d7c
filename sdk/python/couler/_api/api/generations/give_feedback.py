from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response
from ... import errors

from ...models.feedback_body import FeedbackBody
from ...models.generation_detail import GenerationDetail
from ...models.problem import Problem


def _get_kwargs(
    id: str,
    *,
    body: FeedbackBody,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/generations/{id}/feedback".format(
            id=quote(str(id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> GenerationDetail | Problem | None:
    if response.status_code == 201:
        response_201 = GenerationDetail.from_dict(response.json())

        return response_201

    if 400 <= response.status_code <= 499:
        response_4xx = Problem.from_dict(response.json())

        return response_4xx

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[GenerationDetail | Problem]:
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
    body: FeedbackBody,
) -> Response[GenerationDetail | Problem]:
    """Revise the latest draft with feedback ("use 4 GPUs for training").

     The new draft becomes the latest; earlier ones stay in the history.
    Earlier feedback stays in force: the generator sees the description
    amended by every earlier round. 409 `draft_superseded` when another
    revision landed first.

    Args:
        id (str):
        body (FeedbackBody): How to revise the latest draft.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[GenerationDetail | Problem]
    """

    kwargs = _get_kwargs(
        id=id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    id: str,
    *,
    client: AuthenticatedClient | Client,
    body: FeedbackBody,
) -> GenerationDetail | Problem | None:
    """Revise the latest draft with feedback ("use 4 GPUs for training").

     The new draft becomes the latest; earlier ones stay in the history.
    Earlier feedback stays in force: the generator sees the description
    amended by every earlier round. 409 `draft_superseded` when another
    revision landed first.

    Args:
        id (str):
        body (FeedbackBody): How to revise the latest draft.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        GenerationDetail | Problem
    """

    return sync_detailed(
        id=id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    id: str,
    *,
    client: AuthenticatedClient | Client,
    body: FeedbackBody,
) -> Response[GenerationDetail | Problem]:
    """Revise the latest draft with feedback ("use 4 GPUs for training").

     The new draft becomes the latest; earlier ones stay in the history.
    Earlier feedback stays in force: the generator sees the description
    amended by every earlier round. 409 `draft_superseded` when another
    revision landed first.

    Args:
        id (str):
        body (FeedbackBody): How to revise the latest draft.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[GenerationDetail | Problem]
    """

    kwargs = _get_kwargs(
        id=id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: str,
    *,
    client: AuthenticatedClient | Client,
    body: FeedbackBody,
) -> GenerationDetail | Problem | None:
    """Revise the latest draft with feedback ("use 4 GPUs for training").

     The new draft becomes the latest; earlier ones stay in the history.
    Earlier feedback stays in force: the generator sees the description
    amended by every earlier round. 409 `draft_superseded` when another
    revision landed first.

    Args:
        id (str):
        body (FeedbackBody): How to revise the latest draft.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        GenerationDetail | Problem
    """

    return (
        await asyncio_detailed(
            id=id,
            client=client,
            body=body,
        )
    ).parsed
