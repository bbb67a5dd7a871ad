"""Settings come from the environment; the defaults run on a bare laptop (SQLite, a worker on an embedded broker).

A git-ignored `.env` beside manage.py (written by `make install` with DEBUG=1 and a generated SECRET_KEY) fills in
what the environment does not set, so the README's commands work as written on a developer's machine. Without it,
and without DEBUG, SECRET_KEY must be given.
"""

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from dotenv import load_dotenv

BASE_DIR = Path(__file__).resolve().parent.parent
load_dotenv(BASE_DIR / ".env", override=False)
VAR_DIR = Path(os.environ.get("VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = env_bool("DEBUG")
TESTING = "PYTEST_VERSION" in os.environ

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if DEBUG or TESTING:
        SECRET_KEY = "insecure-development-key-never-use-in-production"
    else:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost" if not DEBUG else "*")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "core",
    "verifybench",
    "annotation",
    "grading",
    "reports",
    "webhooks",
    "frontend",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "core.middleware.ApiErrorsAsJsonMiddleware",
    "core.middleware.UnstorableQueryMiddleware",
    "core.middleware.DatabaseOutageMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "frontend.middleware.ContentSecurityPolicyMiddleware",
    "core.middleware.LoginRateLimitMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "frontend.context_processors.roles",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'db.sqlite3'}",
        conn_max_age=int(os.environ.get("CONN_MAX_AGE", "60")),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 30
IS_POSTGRES = DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"
# The label path's fixed statements are prepared once per connection on PostgreSQL (core.rows.prepared_cursor).
# Set DATABASE_PREPARED_STATEMENTS=0 behind a pooler in transaction mode that cannot keep prepared statements.
DATABASE_PREPARED_STATEMENTS = os.environ.get("DATABASE_PREPARED_STATEMENTS", "1") != "0"
if IS_POSTGRES and DATABASE_PREPARED_STATEMENTS:
    # psycopg prepares a statement only when a cursor asks (Django's own cursors bind on the client and never do);
    # the threshold is for statements executed often without asking, which no cursor here does
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("prepare_threshold", 2**31 - 1)
# While the database cannot be reached, requests answer 503 with this Retry-After (core.middleware).
DATABASE_RETRY_AFTER_SECONDS = int(os.environ.get("DATABASE_RETRY_AFTER_SECONDS", "10"))

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Every account (add_user, invitations, the admin, every role) gets Django's full set of validators.
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 8}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
if TESTING:
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast hashing in tests only
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "frontend" / "static"]
MEDIA_URL = "media/"
MEDIA_ROOT = VAR_DIR / "media"
EXPORT_ROOT = Path(os.environ.get("EXPORT_ROOT", VAR_DIR / "exports"))
# Key of the annotator pseudonyms in exported files; when empty, one derived from SECRET_KEY. Keep it stable: the same
# person gets the same pseudonym across exports only while the key stays the same.
EXPORT_PSEUDONYM_KEY = os.environ.get("EXPORT_PSEUDONYM_KEY", "")
WHITENOISE_USE_FINDERS = DEBUG or TESTING

# Outside DEBUG, cookies are sent over HTTPS only and browsers are told to use HTTPS for a year (HSTS);
# SECURE_COOKIES=0 turns both off for a server reached over plain HTTP (a laptop, a private network).
SECURE_COOKIES = env_bool("SECURE_COOKIES", not DEBUG)
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = SECURE_COOKIES
CSRF_COOKIE_SECURE = SECURE_COOKIES
SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", str(365 * 24 * 3600))) if SECURE_COOKIES else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS")
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD")
# Behind a reverse proxy that terminates TLS and says so in X-Forwarded-Proto (docs/deployment.md): the requests it
# forwards are HTTPS (so HSTS is sent), anything else is redirected there, except the load balancer's probes.
TLS_PROXY = env_bool("TLS_PROXY")
if TLS_PROXY:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = True
    SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "core.authentication.ExpiringTokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_FILTER_BACKENDS": [
        "django_filters.rest_framework.DjangoFilterBackend",
        "rest_framework.filters.OrderingFilter",
        "rest_framework.filters.SearchFilter",
    ],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_METADATA_CLASS": "core.metadata.SafeMetadata",
    # JSON bodies nested deeper than JSON_MAX_DEPTH are a 400, never a RecursionError.
    "DEFAULT_PARSER_CLASSES": [
        "core.parsers.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
}
JSON_MAX_DEPTH = int(os.environ.get("JSON_MAX_DEPTH", "100"))

# Signing in: /api/auth/token/ answers at most API_TOKEN_THROTTLE_RATE requests per client address; after
# LOGIN_MAX_FAILURES wrong passwords for one username (or five times as many from one address) within
# LOGIN_LOCKOUT_SECONDS, /login/, /admin/login/ and /api/auth/token/ answer 429 until the window has passed.
# A token expires API_TOKEN_TTL_HOURS after it was issued (0: never); DELETE /api/auth/token/ revokes one's own.
API_TOKEN_THROTTLE_RATE = os.environ.get("API_TOKEN_THROTTLE_RATE", "20/min")
LOGIN_MAX_FAILURES = int(os.environ.get("LOGIN_MAX_FAILURES", "10"))
LOGIN_LOCKOUT_SECONDS = int(os.environ.get("LOGIN_LOCKOUT_SECONDS", "900"))
API_TOKEN_TTL_HOURS = float(os.environ.get("API_TOKEN_TTL_HOURS", str(24 * 30)))

# Throttles and login failures are counted in the cache, shared by every web process: Redis with CACHE_URL,
# otherwise a table of the database (created by core's migration). Tests count in each process's memory.
CACHE_URL = os.environ.get("CACHE_URL", "")
if CACHE_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL}}
elif TESTING:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "mathlabel"}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "mathlabel_cache"}}
SPECTACULAR_SETTINGS = {
    "TITLE": "mathlabel API",
    "DESCRIPTION": "Import benchmark data, run the annotation workflow, verify, export and evaluate.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI and Redoc come from drf-spectacular-sidecar's static files, never a CDN (frontend.views_api_docs).
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # No badge from the public validator service: the docs call no host but this one.
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
    # The error answers of every operation (401, 403, 404, 409, 429, 503) are documented by core.schema.
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums", "core.schema.add_error_responses"],
    # One name for a choice set that several serializers use.
    "ENUM_NAME_OVERRIDES": {
        "JobStatusEnum": "core.jobs.models.BackgroundJob.Status",
        "WebhookDeliveryStatusEnum": "webhooks.models.WebhookDelivery.Status",
        "FileTypeEnum": ["jsonl", "csv", "parquet"],
    },
}

# Celery: jobs never run inside a request. With CELERY_BROKER_URL (Redis, RabbitMQ) a worker takes them from there;
# without it, from a broker that needs no server: message files under var/broker, shared by the web process and the
# worker that `make run` starts beside it. Tests run jobs in-process (eager) unless they start a worker.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")
if not CELERY_BROKER_URL:
    CELERY_BROKER_URL = "filesystem://"
    _BROKER_DIR = VAR_DIR / "broker"
    for _folder in ("queue", "processed", "control"):
        (_BROKER_DIR / _folder).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_BROKER_DIR / "queue"),
        "data_folder_out": str(_BROKER_DIR / "queue"),
        "processed_folder": str(_BROKER_DIR / "processed"),
        "control_folder": str(_BROKER_DIR / "control"),
        "store_processed": False,
    }
else:
    # Redis hands an unacknowledged message (its worker died) out again after this many seconds; the job sweep
    # takes the job over much sooner, and the late message then claims nothing.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": int(os.environ.get("CELERY_VISIBILITY_TIMEOUT", "3600"))}
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", TESTING)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
# A message is acknowledged only when its task has ended, and handed out again when the worker process running it
# dies; one message at a time per worker process. Duplicates are harmless: a job claims itself (core.jobs.protocol).
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_QUEUE", "celery")

# Background jobs (core.jobs.runner): a running job's heartbeat is renewed every sixth of its kind's limit; one whose
# heartbeat is older than the limit (its worker died) is taken over by the next sweep, which every worker runs when it
# starts and Celery beat runs every JOB_SWEEP_SECONDS: a dead worker's job is taken over within 40 s by default. The
# sweep also sends the messages of jobs stored while the broker could not be reached, and sends again those nobody
# started within JOB_REQUEUE_SECONDS (a broker that lost its queue).
JOB_STALE_SECONDS = float(os.environ.get("JOB_STALE_SECONDS", "30"))
EXPORT_STALE_SECONDS = float(os.environ.get("EXPORT_STALE_SECONDS", "30"))
# An import holds one transaction; on SQLite its heartbeat can only be written once it commits, so there it waits.
IMPORT_STALE_SECONDS = float(os.environ.get("IMPORT_STALE_SECONDS", "30" if IS_POSTGRES else "600"))
VERIFICATION_STALE_SECONDS = float(os.environ.get("VERIFICATION_STALE_SECONDS", "30"))
JOB_SWEEP_SECONDS = float(os.environ.get("JOB_SWEEP_SECONDS", "10"))
JOB_REQUEUE_SECONDS = float(os.environ.get("JOB_REQUEUE_SECONDS", "600"))
# A worker process's share of a judge's concurrency limit is forgotten this long (plus the judge's timeout) after it
# stopped renewing it (it died); a run asks this many other worker processes to help with its chunks.
JUDGE_LEASE_SECONDS = float(os.environ.get("JUDGE_LEASE_SECONDS", "15"))
VERIFICATION_HELPERS = int(os.environ.get("VERIFICATION_HELPERS", "32"))
# Search documents of texts imported or changed are computed after the import commits (a task it sends) and by a
# periodic task every SEARCH_INDEX_SECONDS for any left over; the item browser's search reads pending texts meanwhile.
SEARCH_INDEX_SECONDS = float(os.environ.get("SEARCH_INDEX_SECONDS", "60"))
CELERY_BEAT_SCHEDULE = {
    "sweep-stale-jobs": {"task": "core.sweep_stale_jobs", "schedule": JOB_SWEEP_SECONDS},
    "queue-overdue-webhook-deliveries": {"task": "webhooks.queue_overdue", "schedule": 60.0},
    # At most 20,000 texts a time (about 13 s of the import benchmark's texts), so it never holds every worker.
    "index-search-documents": {
        "task": "verifybench.index_search_documents",
        "schedule": SEARCH_INDEX_SECONDS,
        "kwargs": {"limit": 20_000},
    },
}

# Webhooks: each attempt waits at most WEBHOOK_TIMEOUT_SECONDS for an answer; a failed one is tried again after
# WEBHOOK_RETRY_BASE_SECONDS, doubled each time up to WEBHOOK_RETRY_MAX_SECONDS, WEBHOOK_MAX_ATTEMPTS times in all.
WEBHOOK_TIMEOUT_SECONDS = float(os.environ.get("WEBHOOK_TIMEOUT_SECONDS", "10"))
WEBHOOK_MAX_ATTEMPTS = int(os.environ.get("WEBHOOK_MAX_ATTEMPTS", "8"))
WEBHOOK_RETRY_BASE_SECONDS = float(os.environ.get("WEBHOOK_RETRY_BASE_SECONDS", "30"))
WEBHOOK_RETRY_MAX_SECONDS = float(os.environ.get("WEBHOOK_RETRY_MAX_SECONDS", "3600"))

# Imports: a file may be at most IMPORT_MAX_UPLOAD_BYTES when uploaded, and no line (or CSV row) longer than
# IMPORT_MAX_LINE_BYTES; both are enforced while streaming, so memory stays bounded by the line limit.
IMPORT_MAX_UPLOAD_BYTES = int(os.environ.get("IMPORT_MAX_UPLOAD_BYTES", str(1024 * 1024 * 1024)))
IMPORT_MAX_LINE_BYTES = int(os.environ.get("IMPORT_MAX_LINE_BYTES", str(16 * 1024 * 1024)))
IMPORT_UPLOAD_DIR = Path(os.environ.get("IMPORT_UPLOAD_DIR", VAR_DIR / "uploads"))

OPENAI_BASE_URL = os.environ.get("OPENAI_BASE_URL", "")
# Judge configurations name the environment variable that holds their key; only these names (and names starting with
# JUDGE_KEY_) are accepted, so a configuration can never make the server send one of its own secrets. The key is read
# at call time and never stored or logged. Endpoint hosts are allowed by admins (grading.AllowedJudgeHost).
JUDGE_API_KEY_ENVS = env_list("JUDGE_API_KEY_ENVS", "OPENAI_API_KEY")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
}
