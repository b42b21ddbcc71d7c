from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response
from ... import errors

from ...models.problem import Problem
from ...models.webhook_created import WebhookCreated
from ...models.webhook_settings import WebhookSettings


def _get_kwargs(
    workflow: str,
    *,
    body: WebhookSettings,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/workflows/{workflow}/triggers".format(
            workflow=quote(str(workflow), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | WebhookCreated | None:
    if response.status_code == 201:
        response_201 = WebhookCreated.from_dict(response.json())

        return response_201

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())

        return response_503

    if 400 <= response.status_code <= 499:
        response_4xx = Problem.from_dict(response.json())

        return response_4xx

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Problem | WebhookCreated]:
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
    body: WebhookSettings,
) -> Response[Problem | WebhookCreated]:
    """Create a webhook trigger of a workflow.

     The answer holds its secret (HMAC schemes) or bearer token, shown only
    now. Parameters the workflow does not declare, required ones neither
    mapped nor given, and a body limit over the server's are 422 with every
    problem at its pointer; a name in use is 409; HMAC schemes on a server
    without platform keys are 503.

    Args:
        workflow (str):
        body (WebhookSettings): A webhook trigger: a new one (`name` and `auth` required), or the
            changes to one (absent fields keep their value; maps are replaced
            whole).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | WebhookCreated]
    """

    kwargs = _get_kwargs(
        workflow=workflow,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    workflow: str,
    *,
    client: AuthenticatedClient | Client,
    body: WebhookSettings,
) -> Problem | WebhookCreated | None:
    """Create a webhook trigger of a workflow.

     The answer holds its secret (HMAC schemes) or bearer token, shown only
    now. Parameters the workflow does not declare, required ones neither
    mapped nor given, and a body limit over the server's are 422 with every
    problem at its pointer; a name in use is 409; HMAC schemes on a server
    without platform keys are 503.

    Args:
        workflow (str):
        body (WebhookSettings): A webhook trigger: a new one (`name` and `auth` required), or the
            changes to one (absent fields keep their value; maps are replaced
            whole).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | WebhookCreated
    """

    return sync_detailed(
        workflow=workflow,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    workflow: str,
    *,
    client: AuthenticatedClient | Client,
    body: WebhookSettings,
) -> Response[Problem | WebhookCreated]:
    """Create a webhook trigger of a workflow.

     The answer holds its secret (HMAC schemes) or bearer token, shown only
    now. Parameters the workflow does not declare, required ones neither
    mapped nor given, and a body limit over the server's are 422 with every
    problem at its pointer; a name in use is 409; HMAC schemes on a server
    without platform keys are 503.

    Args:
        workflow (str):
        body (WebhookSettings): A webhook trigger: a new one (`name` and `auth` required), or the
            changes to one (absent fields keep their value; maps are replaced
            whole).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | WebhookCreated]
    """

    kwargs = _get_kwargs(
        workflow=workflow,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    workflow: str,
    *,
    client: AuthenticatedClient | Client,
    body: WebhookSettings,
) -> Problem | WebhookCreated | None:
    """Create a webhook trigger of a workflow.

     The answer holds its secret (HMAC schemes) or bearer token, shown only
    now. Parameters the workflow does not declare, required ones neither
    mapped nor given, and a body limit over the server's are 422 with every
    problem at its pointer; a name in use is 409; HMAC schemes on a server
    without platform keys are 503.

    Args:
        workflow (str):
        body (WebhookSettings): A webhook trigger: a new one (`name` and `auth` required), or the
            changes to one (absent fields keep their value; maps are replaced
            whole).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | WebhookCreated
    """

    return (
        await asyncio_detailed(
            workflow=workflow,
            client=client,
            body=body,
        )
    ).parsed
