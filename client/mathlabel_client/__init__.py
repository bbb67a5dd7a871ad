"""A Python client for mathlabel: drive datasets, verifier runs, annotation projects, items, exports, evaluation and
webhooks from a notebook or a pipeline.

    from mathlabel_client import Client
    client = Client("https://mathlabel.example.org")       # the token from MATHLABEL_TOKEN
    job = client.datasets.import_dataframe(frame, dataset="lab-run-7")
"""

from .client import Client
from .errors import (
    ApiError,
    AuthenticationFailed,
    BadRequest,
    Conflict,
    JobFailed,
    MathlabelError,
    NotFound,
    PayloadTooLarge,
    PermissionDenied,
    RateLimited,
    ServerError,
    ServiceUnavailable,
    WaitTimeout,
)
from .version import __version__
from .webhooks import WebhookSignatureError, verify_webhook

__all__ = [
    "ApiError",
    "AuthenticationFailed",
    "BadRequest",
    "Client",
    "Conflict",
    "JobFailed",
    "MathlabelError",
    "NotFound",
    "PayloadTooLarge",
    "PermissionDenied",
    "RateLimited",
    "ServerError",
    "ServiceUnavailable",
    "WaitTimeout",
    "WebhookSignatureError",
    "__version__",
    "verify_webhook",
]
