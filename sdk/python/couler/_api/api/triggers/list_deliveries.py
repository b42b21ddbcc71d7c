from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.webhook_delivery import WebhookDelivery
from ...types import Unset
import datetime


def _get_kwargs(
    workflow: str,
    trigger: str,
    *,
    before: datetime.datetime | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    json_before: str | Unset = UNSET
    if not isinstance(before, Unset):
        json_before = before.isoformat()
    params["before"] = json_before

    params["limit"] = limit

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/workflows/{workflow}/triggers/{trigger}/deliveries".format(
            workflow=quote(str(workflow), safe=""),
            trigger=quote(str(trigger), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | list[WebhookDelivery] | None:
    if response.status_code == 200:
        response_200 = []
        _response_200 = response.json()
        for response_200_item_data in _response_200:
            response_200_item = WebhookDelivery.from_dict(response_200_item_data)

            response_200.append(response_200_item)

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
) -> Response[Problem | list[WebhookDelivery]]:
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
    before: datetime.datetime | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> Response[Problem | list[WebhookDelivery]]:
    """A trigger's authenticated deliveries, most recently received first:
    the run each started, or why it was ignored or rejected. Deliveries
    that did not authenticate are not recorded (a metric counts them).

    Args:
        workflow (str):
        trigger (str):
        before (datetime.datetime | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | list[WebhookDelivery]]
    """

    kwargs = _get_kwargs(
        workflow=workflow,
        trigger=trigger,
        before=before,
        limit=limit,
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
    before: datetime.datetime | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> Problem | list[WebhookDelivery] | None:
    """A trigger's authenticated deliveries, most recently received first:
    the run each started, or why it was ignored or rejected. Deliveries
    that did not authenticate are not recorded (a metric counts them).

    Args:
        workflow (str):
        trigger (str):
        before (datetime.datetime | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | list[WebhookDelivery]
    """

    return sync_detailed(
        workflow=workflow,
        trigger=trigger,
        client=client,
        before=before,
        limit=limit,
    ).parsed


async def asyncio_detailed(
    workflow: str,
    trigger: str,
    *,
    client: AuthenticatedClient | Client,
    before: datetime.datetime | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> Response[Problem | list[WebhookDelivery]]:
    """A trigger's authenticated deliveries, most recently received first:
    the run each started, or why it was ignored or rejected. Deliveries
    that did not authenticate are not recorded (a metric counts them).

    Args:
        workflow (str):
        trigger (str):
        before (datetime.datetime | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | list[WebhookDelivery]]
    """

    kwargs = _get_kwargs(
        workflow=workflow,
        trigger=trigger,
        before=before,
        limit=limit,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    workflow: str,
    trigger: str,
    *,
    client: AuthenticatedClient | Client,
    before: datetime.datetime | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> Problem | list[WebhookDelivery] | None:
    """A trigger's authenticated deliveries, most recently received first:
    the run each started, or why it was ignored or rejected. Deliveries
    that did not authenticate are not recorded (a metric counts them).

    Args:
        workflow (str):
        trigger (str):
        before (datetime.datetime | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | list[WebhookDelivery]
    """

    return (
        await asyncio_detailed(
            workflow=workflow,
            trigger=trigger,
            client=client,
            before=before,
            limit=limit,
        )
    ).parsed
