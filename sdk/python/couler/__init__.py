"""Couler's Python SDK.

`import couler` (or `import couler.argo as couler`) gives the Couler DSL, so
programs written for the open-source Couler SDK run unchanged.
"""

from couler.argo import *  # noqa: F401,F403
from couler.argo import __all__ as _dsl_names

# The typed REST client. Guarded until couler/client.py lands; then this
# becomes a plain import.
try:
    from couler.client import Client, CoulerAPIError  # noqa: F401
except ModuleNotFoundError as error:
    if error.name != "couler.client":
        raise
    __all__ = list(_dsl_names)
else:
    __all__ = [*_dsl_names, "Client", "CoulerAPIError"]
