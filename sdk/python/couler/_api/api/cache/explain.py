from http import HTTPStatus
from typing import Any

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response
from ... import errors

from ...models.explain_request import ExplainRequest
from ...models.explanation import Explanation
from ...models.problem import Problem


def _get_kwargs(
    *,
    body: ExplainRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/cache/explain",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Explanation | Problem | None:
    if response.status_code == 200:
        response_200 = Explanation.from_dict(response.json())

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
) -> Response[Explanation | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: ExplainRequest,
) -> Response[Explanation | Problem]:
    """Explain which steps of a workflow would come from the cache.

     Plans the workflow with the given parameters, then computes each step's
    cache key in depth order: a step that reads another step's outputs has a
    key only when that step is a hit or was computed before (the index keeps
    a record of what it produced after its bytes go; such a step is
    `not_needed` when every step reading it is a hit). A hit on an entry the
    tenant's own runs produced shows when it was computed and how often runs
    reused it. Nothing is recorded (no hit is counted); only an entry whose
    artifacts are gone from their store is removed, as by every lookup.

    Args:
        body (ExplainRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Explanation | Problem]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    body: ExplainRequest,
) -> Explanation | Problem | None:
    """Explain which steps of a workflow would come from the cache.

     Plans the workflow with the given parameters, then computes each step's
    cache key in depth order: a step that reads another step's outputs has a
    key only when that step is a hit or was computed before (the index keeps
    a record of what it produced after its bytes go; such a step is
    `not_needed` when every step reading it is a hit). A hit on an entry the
    tenant's own runs produced shows when it was computed and how often runs
    reused it. Nothing is recorded (no hit is counted); only an entry whose
    artifacts are gone from their store is removed, as by every lookup.

    Args:
        body (ExplainRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Explanation | Problem
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: ExplainRequest,
) -> Response[Explanation | Problem]:
    """Explain which steps of a workflow would come from the cache.

     Plans the workflow with the given parameters, then computes each step's
    cache key in depth order: a step that reads another step's outputs has a
    key only when that step is a hit or was computed before (the index keeps
    a record of what it produced after its bytes go; such a step is
    `not_needed` when every step reading it is a hit). A hit on an entry the
    tenant's own runs produced shows when it was computed and how often runs
    reused it. Nothing is recorded (no hit is counted); only an entry whose
    artifacts are gone from their store is removed, as by every lookup.

    Args:
        body (ExplainRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Explanation | Problem]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: ExplainRequest,
) -> Explanation | Problem | None:
    """Explain which steps of a workflow would come from the cache.

     Plans the workflow with the given parameters, then computes each step's
    cache key in depth order: a step that reads another step's outputs has a
    key only when that step is a hit or was computed before (the index keeps
    a record of what it produced after its bytes go; such a step is
    `not_needed` when every step reading it is a hit). A hit on an entry the
    tenant's own runs produced shows when it was computed and how often runs
    reused it. Nothing is recorded (no hit is counted); only an entry whose
    artifacts are gone from their store is removed, as by every lookup.

    Args:
        body (ExplainRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Explanation | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
