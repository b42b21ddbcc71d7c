from http import HTTPStatus
from typing import Any

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.create_run import CreateRun
from ...models.problem import Problem
from ...models.run_view import RunView
from ...types import Unset


def _get_kwargs(
    *,
    body: CreateRun,
    idempotency_key: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/runs",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | RunView | None:
    if response.status_code == 200:
        response_200 = RunView.from_dict(response.json())

        return response_200

    if response.status_code == 201:
        response_201 = RunView.from_dict(response.json())

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
) -> Response[Problem | RunView]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: CreateRun,
    idempotency_key: None | str | Unset = UNSET,
) -> Response[Problem | RunView]:
    """Create a run and queue it.

     With an `Idempotency-Key` header, repeating the same request returns the
    same run (200); the same key with a different body is a 409. A workflow
    whose steps read a secret (`env[].secret`) the tenant does not have, or
    a key the secret does not hold, is refused: 422 with an `unknown_secret`
    or `unknown_secret_key` problem per read, naming the step (at the
    reference in `ir`, or at `/workflow` for a stored workflow).

    Args:
        idempotency_key (None | str | Unset):
        body (CreateRun):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RunView]
    """

    kwargs = _get_kwargs(
        body=body,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    body: CreateRun,
    idempotency_key: None | str | Unset = UNSET,
) -> Problem | RunView | None:
    """Create a run and queue it.

     With an `Idempotency-Key` header, repeating the same request returns the
    same run (200); the same key with a different body is a 409. A workflow
    whose steps read a secret (`env[].secret`) the tenant does not have, or
    a key the secret does not hold, is refused: 422 with an `unknown_secret`
    or `unknown_secret_key` problem per read, naming the step (at the
    reference in `ir`, or at `/workflow` for a stored workflow).

    Args:
        idempotency_key (None | str | Unset):
        body (CreateRun):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RunView
    """

    return sync_detailed(
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: CreateRun,
    idempotency_key: None | str | Unset = UNSET,
) -> Response[Problem | RunView]:
    """Create a run and queue it.

     With an `Idempotency-Key` header, repeating the same request returns the
    same run (200); the same key with a different body is a 409. A workflow
    whose steps read a secret (`env[].secret`) the tenant does not have, or
    a key the secret does not hold, is refused: 422 with an `unknown_secret`
    or `unknown_secret_key` problem per read, naming the step (at the
    reference in `ir`, or at `/workflow` for a stored workflow).

    Args:
        idempotency_key (None | str | Unset):
        body (CreateRun):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RunView]
    """

    kwargs = _get_kwargs(
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: CreateRun,
    idempotency_key: None | str | Unset = UNSET,
) -> Problem | RunView | None:
    """Create a run and queue it.

     With an `Idempotency-Key` header, repeating the same request returns the
    same run (200); the same key with a different body is a 409. A workflow
    whose steps read a secret (`env[].secret`) the tenant does not have, or
    a key the secret does not hold, is refused: 422 with an `unknown_secret`
    or `unknown_secret_key` problem per read, naming the step (at the
    reference in `ir`, or at `/workflow` for a stored workflow).

    Args:
        idempotency_key (None | str | Unset):
        body (CreateRun):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RunView
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
