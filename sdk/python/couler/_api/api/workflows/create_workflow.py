from http import HTTPStatus
from typing import Any

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response
from ... import errors

from ...models.couler_workflow import CoulerWorkflow
from ...models.problem import Problem
from ...models.workflow_detail import WorkflowDetail


def _get_kwargs(
    *,
    body: CoulerWorkflow,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/workflows",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | WorkflowDetail | None:
    if response.status_code == 201:
        response_201 = WorkflowDetail.from_dict(response.json())

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
) -> Response[Problem | WorkflowDetail]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: CoulerWorkflow,
) -> Response[Problem | WorkflowDetail]:
    """Create a workflow from IR.

     The body is the workflow document, as JSON (`application/json`) or YAML
    (`application/yaml`). Invalid documents get 422 with every problem.

    Args:
        body (CoulerWorkflow): A machine-learning workflow: a DAG of steps.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | WorkflowDetail]
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
    body: CoulerWorkflow,
) -> Problem | WorkflowDetail | None:
    """Create a workflow from IR.

     The body is the workflow document, as JSON (`application/json`) or YAML
    (`application/yaml`). Invalid documents get 422 with every problem.

    Args:
        body (CoulerWorkflow): A machine-learning workflow: a DAG of steps.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | WorkflowDetail
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: CoulerWorkflow,
) -> Response[Problem | WorkflowDetail]:
    """Create a workflow from IR.

     The body is the workflow document, as JSON (`application/json`) or YAML
    (`application/yaml`). Invalid documents get 422 with every problem.

    Args:
        body (CoulerWorkflow): A machine-learning workflow: a DAG of steps.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | WorkflowDetail]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: CoulerWorkflow,
) -> Problem | WorkflowDetail | None:
    """Create a workflow from IR.

     The body is the workflow document, as JSON (`application/json`) or YAML
    (`application/yaml`). Invalid documents get 422 with every problem.

    Args:
        body (CoulerWorkflow): A machine-learning workflow: a DAG of steps.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | WorkflowDetail
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
