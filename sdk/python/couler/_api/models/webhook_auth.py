from typing import Literal

WebhookAuth = Literal["bearer", "hmac_github", "standard_webhooks"]

WEBHOOK_AUTH_VALUES: set[WebhookAuth] = {
    "bearer",
    "hmac_github",
    "standard_webhooks",
}


def check_webhook_auth(value: str) -> WebhookAuth:
    if value in WEBHOOK_AUTH_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {WEBHOOK_AUTH_VALUES!r}"
    )
