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
    workflow: str,
    *,
    engine: str,
    version: int | Unset = UNSET,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    params["engine"] = engine

    params["version"] = version

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/workflows/{workflow}/compile".format(
            workflow=quote(str(workflow), safe=""),
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
    workflow: str,
    *,
    client: AuthenticatedClient | Client,
    engine: str,
    version: int | Unset = UNSET,
) -> Response[Problem | str]:
    """A stored workflow as an engine's own manifest (Argo `Workflow`, Tekton
    `Pipeline` + `PipelineRun`, Airflow DAG file, KFP `PipelineSpec`),
    planned as a run with the parameters' defaults would be.

    Args:
        workflow (str):
        engine (str):
        version (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
    """

    kwargs = _get_kwargs(
        workflow=workflow,
        engine=engine,
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
    engine: str,
    version: int | Unset = UNSET,
) -> Problem | str | None:
    """A stored workflow as an engine's own manifest (Argo `Workflow`, Tekton
    `Pipeline` + `PipelineRun`, Airflow DAG file, KFP `PipelineSpec`),
    planned as a run with the parameters' defaults would be.

    Args:
        workflow (str):
        engine (str):
        version (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
    """

    return sync_detailed(
        workflow=workflow,
        client=client,
        engine=engine,
        version=version,
    ).parsed


async def asyncio_detailed(
    workflow: str,
    *,
    client: AuthenticatedClient | Client,
    engine: str,
    version: int | Unset = UNSET,
) -> Response[Problem | str]:
    """A stored workflow as an engine's own manifest (Argo `Workflow`, Tekton
    `Pipeline` + `PipelineRun`, Airflow DAG file, KFP `PipelineSpec`),
    planned as a run with the parameters' defaults would be.

    Args:
        workflow (str):
        engine (str):
        version (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
    """

    kwargs = _get_kwargs(
        workflow=workflow,
        engine=engine,
        version=version,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    workflow: str,
    *,
    client: AuthenticatedClient | Client,
    engine: str,
    version: int | Unset = UNSET,
) -> Problem | str | None:
    """A stored workflow as an engine's own manifest (Argo `Workflow`, Tekton
    `Pipeline` + `PipelineRun`, Airflow DAG file, KFP `PipelineSpec`),
    planned as a run with the parameters' defaults would be.

    Args:
        workflow (str):
        engine (str):
        version (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
    """

    return (
        await asyncio_detailed(
            workflow=workflow,
            client=client,
            engine=engine,
            version=version,
        )
    ).parsed
