"""Couler's Python SDK.

`import couler` (or `import couler.argo as couler`) gives the Couler DSL, so
programs written for the open-source Couler SDK run unchanged; `couler.Client`
is the typed client of the control plane's REST API.
"""

from couler.argo import *  # noqa: F401,F403
from couler.argo import __all__ as _dsl_names

# The typed REST client for the control plane.
from couler.client import Client  # noqa: E402
from couler.errors import CoulerAPIError  # noqa: E402

__all__ = [*_dsl_names, "Client", "CoulerAPIError"]
