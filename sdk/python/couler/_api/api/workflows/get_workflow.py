from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.workflow_detail import WorkflowDetail
from ...types import Unset


def _get_kwargs(
    workflow: str,
    *,
    version: int | Unset = UNSET,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    params["version"] = version

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/workflows/{workflow}".format(
            workflow=quote(str(workflow), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | WorkflowDetail | None:
    if response.status_code == 200:
        response_200 = WorkflowDetail.from_dict(response.json())

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
) -> Response[Problem | WorkflowDetail]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    workflow: str,
    *,
    client: AuthenticatedClient | Client,
    version: int | Unset = UNSET,
) -> Response[Problem | WorkflowDetail]:
    """Read a workflow (by id or name) with one version's IR.

    Args:
        workflow (str):
        version (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | WorkflowDetail]
    """

    kwargs = _get_kwargs(
        workflow=workflow,
        version=version,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    workflow: str,
    *,
    client: AuthenticatedClient | Client,
    version: int | Unset = UNSET,
) -> Problem | WorkflowDetail | None:
    """Read a workflow (by id or name) with one version's IR.

    Args:
        workflow (str):
        version (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | WorkflowDetail
    """

    return sync_detailed(
        workflow=workflow,
        client=client,
        version=version,
    ).parsed


async def asyncio_detailed(
    workflow: str,
    *,
    client: AuthenticatedClient | Client,
    version: int | Unset = UNSET,
) -> Response[Problem | WorkflowDetail]:
    """Read a workflow (by id or name) with one version's IR.

    Args:
        workflow (str):
        version (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | WorkflowDetail]
    """

    kwargs = _get_kwargs(
        workflow=workflow,
        version=version,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    workflow: str,
    *,
    client: AuthenticatedClient | Client,
    version: int | Unset = UNSET,
) -> Problem | WorkflowDetail | None:
    """Read a workflow (by id or name) with one version's IR.

    Args:
        workflow (str):
        version (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | WorkflowDetail
    """

    return (
        await asyncio_detailed(
            workflow=workflow,
            client=client,
            version=version,
        )
    ).parsed
