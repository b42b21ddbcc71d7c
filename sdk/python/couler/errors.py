"""Errors the client raises: one per problem document (RFC 9457) the API
answers with, typed by status, carrying the stable `code`, the JSON pointer
`path` of what is wrong and every `problems` item."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ProblemItem:
    """One problem: where (a JSON pointer into the request), what, why."""

    path: str
    code: str
    message: str


@dataclass
class CoulerAPIError(Exception):
    """An error answer from the Couler API."""

    status: int
    code: str
    detail: str
    path: str | None = None
    problems: list[ProblemItem] = field(default_factory=list)
    request_id: str | None = None

    def __str__(self) -> str:
        where = f" at {self.path}" if self.path else ""
        lines = [f"{self.status} {self.code}{where}: {self.detail}"]
        lines += [f"  {p.path}: {p.message} ({p.code})" for p in self.problems]
        return "\n".join(lines)

    @classmethod
    def from_response(cls, status: int, body: Any, text: str = "") -> CoulerAPIError:
        """The error for an answer: its problem document when it has one."""
        if not isinstance(body, dict) or "code" not in body:
            return _typed(status)(status=status, code="http_error", detail=text or f"HTTP {status}")
        problems = [
            ProblemItem(path=p.get("path", ""), code=p.get("code", ""), message=p.get("message", ""))
            for p in body.get("problems") or []
        ]
        return _typed(status)(
            status=status,
            code=str(body["code"]),
            detail=str(body.get("detail", "")),
            path=body.get("path"),
            problems=problems,
            request_id=body.get("request_id"),
        )


class BadRequest(CoulerAPIError):
    """400: a malformed request."""


class Unauthorized(CoulerAPIError):
    """401: no credentials, or ones that prove nothing (set COULER_TOKEN)."""


class Forbidden(CoulerAPIError):
    """403: the caller's role does not allow this."""


class NotFound(CoulerAPIError):
    """404: no such thing in the caller's tenant."""


class Conflict(CoulerAPIError):
    """409: conflicts with the current state."""


class Invalid(CoulerAPIError):
    """422: validation failed, or the request was refused with reasons."""


class RateLimited(CoulerAPIError):
    """429: over a rate limit or quota."""


class Unavailable(CoulerAPIError):
    """503: a dependency is down or not configured."""


_BY_STATUS: dict[int, type[CoulerAPIError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    422: Invalid,
    429: RateLimited,
    503: Unavailable,
}


def _typed(status: int) -> type[CoulerAPIError]:
    return _BY_STATUS.get(status, CoulerAPIError)


class RunTimeout(TimeoutError):
    """`runs.wait` gave up before the run ended."""
