from http import HTTPStatus
from typing import Any

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response
from ... import errors

from ...models.explain_request import ExplainRequest
from ...models.plan_view import PlanView
from ...models.problem import Problem


def _get_kwargs(
    *,
    body: ExplainRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/plans",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> PlanView | Problem | None:
    if response.status_code == 200:
        response_200 = PlanView.from_dict(response.json())

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
) -> Response[PlanView | Problem]:
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
) -> Response[PlanView | Problem]:
    """Plan a stored workflow (or an inline document) without running it.

     Runs every optimizer pass as a run would — parameters, cache lookups
    (read-only: nothing is counted), trial expansion, resource advice from
    history, the split under the tenant's budget — and says why.

    Args:
        body (ExplainRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PlanView | Problem]
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
) -> PlanView | Problem | None:
    """Plan a stored workflow (or an inline document) without running it.

     Runs every optimizer pass as a run would — parameters, cache lookups
    (read-only: nothing is counted), trial expansion, resource advice from
    history, the split under the tenant's budget — and says why.

    Args:
        body (ExplainRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PlanView | Problem
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: ExplainRequest,
) -> Response[PlanView | Problem]:
    """Plan a stored workflow (or an inline document) without running it.

     Runs every optimizer pass as a run would — parameters, cache lookups
    (read-only: nothing is counted), trial expansion, resource advice from
    history, the split under the tenant's budget — and says why.

    Args:
        body (ExplainRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PlanView | Problem]
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
) -> PlanView | Problem | None:
    """Plan a stored workflow (or an inline document) without running it.

     Runs every optimizer pass as a run would — parameters, cache lookups
    (read-only: nothing is counted), trial expansion, resource advice from
    history, the split under the tenant's budget — and says why.

    Args:
        body (ExplainRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PlanView | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
