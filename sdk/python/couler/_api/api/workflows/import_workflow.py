from http import HTTPStatus
from typing import Any

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response
from ... import errors

from ...models.import_request import ImportRequest
from ...models.import_result import ImportResult
from ...models.problem import Problem


def _get_kwargs(
    *,
    body: ImportRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/workflows:import",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ImportResult | Problem | None:
    if response.status_code == 200:
        response_200 = ImportResult.from_dict(response.json())

        return response_200

    if response.status_code == 201:
        response_201 = ImportResult.from_dict(response.json())

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
) -> Response[ImportResult | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: ImportRequest,
) -> Response[ImportResult | Problem]:
    """Import another engine's workflow.

     Returns the IR and one `unsupported` entry per feature that could not be
    carried over, each with its JSON pointer into the source. An import
    where an entry changes what runs is refused (422 `import_changes_run`,
    one problem per entry at `/source…`) unless `acceptChanges` is set.
    With `store` the workflow is saved (201 when a version was added); with
    `run` a run of it is queued (201).

    Args:
        body (ImportRequest): What to import, and what to do with the result.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ImportResult | Problem]
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
    body: ImportRequest,
) -> ImportResult | Problem | None:
    """Import another engine's workflow.

     Returns the IR and one `unsupported` entry per feature that could not be
    carried over, each with its JSON pointer into the source. An import
    where an entry changes what runs is refused (422 `import_changes_run`,
    one problem per entry at `/source…`) unless `acceptChanges` is set.
    With `store` the workflow is saved (201 when a version was added); with
    `run` a run of it is queued (201).

    Args:
        body (ImportRequest): What to import, and what to do with the result.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ImportResult | Problem
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: ImportRequest,
) -> Response[ImportResult | Problem]:
    """Import another engine's workflow.

     Returns the IR and one `unsupported` entry per feature that could not be
    carried over, each with its JSON pointer into the source. An import
    where an entry changes what runs is refused (422 `import_changes_run`,
    one problem per entry at `/source…`) unless `acceptChanges` is set.
    With `store` the workflow is saved (201 when a version was added); with
    `run` a run of it is queued (201).

    Args:
        body (ImportRequest): What to import, and what to do with the result.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ImportResult | Problem]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: ImportRequest,
) -> ImportResult | Problem | None:
    """Import another engine's workflow.

     Returns the IR and one `unsupported` entry per feature that could not be
    carried over, each with its JSON pointer into the source. An import
    where an entry changes what runs is refused (422 `import_changes_run`,
    one problem per entry at `/source…`) unless `acceptChanges` is set.
    With `store` the workflow is saved (201 when a version was added); with
    `run` a run of it is queued (201).

    Args:
        body (ImportRequest): What to import, and what to do with the result.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ImportResult | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
