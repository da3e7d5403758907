"""The one settings module, configured from environment variables (see README).

Defaults are safe for development and the demo: SQLite in var/, an embedded Celery broker,
DEBUG off unless asked for. Production sets DATABASE_URL, CELERY_BROKER_URL, SECRET_KEY and
ALLOWED_HOSTS.
"""

from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from config.env import (
    env_bool,
    env_float,
    env_int,
    env_list,
    env_str,
    generated_secret_key,
)

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("VAR_DIR", str(BASE_DIR / "var")))

DEBUG = env_bool("DEBUG", False)
# PRODUCTION=1 turns on every deployment safeguard (`manage.py check --deploy` is clean) and
# refuses to start on a setting that only suits a developer's machine.
PRODUCTION = env_bool("PRODUCTION", False)
if PRODUCTION and DEBUG:
    raise ImproperlyConfigured("DEBUG must be off when PRODUCTION=1")
SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if PRODUCTION:
        raise ImproperlyConfigured("SECRET_KEY must be set when PRODUCTION=1")
    # The demo and development machines make a random key once and keep it in VAR_DIR, so
    # sessions survive restarts and no key is shared through the source.
    SECRET_KEY = generated_secret_key(VAR_DIR / "secret_key")

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "knox",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "csp",
    "django_htmx",
    "template_partials",
    "django_celery_results",
    "axes",
    "annotation",
    "review",
    "search_proxy",
    "exports",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "annotation.middleware.SessionIdleTimeout",
    "config.middleware.NoStore",
    "django.contrib.messages.middleware.MessageMiddleware",
    # Text no field takes (NUL, control and direction-override characters...) stops here.
    "config.middleware.InputBoundary",
    "annotation.middleware.PasswordChangeRequired",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "config.middleware.MethodNotAllowedPage",
    # Last, so that it sees (and answers) a sign-in that django-axes locked out.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database ---------------------------------------------------------------------------
# PostgreSQL in production and CI (DATABASE_URL=postgres://...); a SQLite file otherwise.
DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'db.sqlite3'}"),
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60, minimum=0),
        # A kept connection the server dropped (restart, failover, pg_terminate_backend) is
        # replaced when the next request starts, instead of failing that request with a 500.
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL and a busy timeout let the demo's web server and worker share one file.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_USER_MODEL = "annotation.User"
AUTHENTICATION_BACKENDS = [
    # First: refuses a locked-out username and address before any password is checked.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "signed-in"
LOGOUT_REDIRECT_URL = "login"
# Annotators: at least 8 characters; managers, researchers and admin staff at least
# STAFF_PASSWORD_MIN_LENGTH. Never only digits, never a common password or one like the name.
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
    {
        "NAME": "annotation.accounts.StaffPasswordLength",
        "OPTIONS": {"min_length": env_int("STAFF_PASSWORD_MIN_LENGTH", 12, minimum=8)},
    },
]

LANGUAGE_CODE = "en-gb"
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(VAR_DIR / "staticfiles")))
# Serve files straight from static/ until collectstatic has run (development and tests).
WHITENOISE_USE_FINDERS = DEBUG or not STATIC_ROOT.is_dir()
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(VAR_DIR / "media")))
MEDIA_URL = "media/"

# Largest request body apart from uploaded files (Django's default, 2.5 MB); more is a 413.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 2_621_440, minimum=1024)

# --- Shared cache -----------------------------------------------------------------------
# Throttles, search results and fetched pages are counted and kept here, so every web process
# and machine sees the same numbers. Default: a table in the database (made by a migration);
# CACHE_URL=redis://host:6379/1 for Redis; CACHE_URL=locmem:// for one process only.
CACHE_URL = env_str("CACHE_URL", "db://")
if CACHE_URL.startswith(("redis://", "rediss://", "unix://")):
    _cache = {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL}
elif CACHE_URL == "db://":
    _cache = {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "django_cache"}
elif CACHE_URL == "locmem://":
    _cache = {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
else:
    raise ImproperlyConfigured(
        f"CACHE_URL must be db://, locmem:// or a redis:// address, not {CACHE_URL!r}"
    )
CACHES = {"default": _cache}

# --- Sign-in protection (django-axes) ---------------------------------------------------
# After LOGIN_FAILURE_LIMIT wrong passwords for one username from one address, that pair is
# locked out for LOGIN_LOCKOUT_MINUTES (managers can unlock it sooner in the admin, under
# Axes > Access attempts). The site, the admin and the API token endpoint share the count.
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_LOCKOUT_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
# Password spraying (a guess or two on many usernames) from one address: after this many
# wrong passwords from it, across usernames, the address itself is locked out for the same
# time (annotation/signin.py). Higher than the per-account limit: offices share addresses.
LOGIN_ADDRESS_FAILURE_LIMIT = env_int("LOGIN_ADDRESS_FAILURE_LIMIT", 20, minimum=1)
AXES_HANDLER = "annotation.signin.SignInLimits"
AXES_RESET_ON_SUCCESS = True
# Lockouts are still logged as warnings; every successful sign-in is not worth a log line.
AXES_VERBOSE = False
AXES_HTTP_RESPONSE_CODE = 429
AXES_LOCKOUT_CALLABLE = "annotation.views.site.locked_out"
AXES_CLIENT_IP_CALLABLE = "annotation.middleware.client_address"
# Reverse proxies in front of the app that append to X-Forwarded-For. 0: the header is not
# trusted at all (anyone can send it); the client is the connection's address.
NUM_PROXIES = env_int("NUM_PROXIES", 0, minimum=0)

# --- Sessions ------------------------------------------------------------------------------
# A signed-in session ends after this long without a request (SessionIdleTimeout in
# annotation/middleware.py), instead of Django's two weeks from sign-in.
SESSION_IDLE_TIMEOUT = timedelta(hours=env_float("SESSION_IDLE_HOURS", 8.0))
if SESSION_IDLE_TIMEOUT.total_seconds() < 60:
    raise ImproperlyConfigured("SESSION_IDLE_HOURS must be at least a minute")
SESSION_COOKIE_AGE = int(SESSION_IDLE_TIMEOUT.total_seconds())

# --- HTTPS and browser protections (all on with PRODUCTION=1) -----------------------------
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", PRODUCTION)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", PRODUCTION)
# A load balancer's health check may speak plain HTTP.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000 if PRODUCTION else 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", PRODUCTION)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", PRODUCTION)
# Behind a reverse proxy that terminates TLS: "HTTP_X_FORWARDED_PROTO,https". Only set it when
# the proxy always overwrites that header, or clients could claim HTTPS.
_proxy_ssl_header = env_list("SECURE_PROXY_SSL_HEADER", [])
if _proxy_ssl_header and len(_proxy_ssl_header) != 2:
    raise ImproperlyConfigured(
        "SECURE_PROXY_SSL_HEADER must be a header and a value, e.g. HTTP_X_FORWARDED_PROTO,https"
    )
SECURE_PROXY_SSL_HEADER = tuple(_proxy_ssl_header) or None
# No page of ours is ever shown in a frame, ours or anyone else's (clickjacking).
X_FRAME_OPTIONS = "DENY"

# --- Content-Security-Policy (django-csp) -----------------------------------------------
# Only our own scripts and styles run: no inline <script>, no on* attributes, no eval (htmx
# runs with allowEval off, see base.html). Style attributes are refused too: the few bars
# that need a computed width are drawn as SVG, so a page that injected markup still cannot
# restyle the screen. Frames show archived articles from the Wayback Machine only.
CSP_FRAME_SOURCES = env_list("CSP_FRAME_SOURCES", ["https://web.archive.org"])
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "frame-src": ["'self'", *CSP_FRAME_SOURCES],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'"],
        "base-uri": ["'none'"],
        "object-src": ["'none'"],
    },
}

# --- API --------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Expiring tokens, stored as hashes (django-rest-knox); "Authorization: Token <key>".
        "knox.auth.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # JSON over DATA_UPLOAD_MAX_MEMORY_SIZE is a 413, nesting past 32 levels a 400.
    "DEFAULT_PARSER_CLASSES": [
        "config.parsers.LimitedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 100,
    "DEFAULT_SCHEMA_CLASS": "config.api.ApiSchema",
    # Every account's reads and writes are limited (429 with Retry-After), so one script
    # cannot starve the others; the token endpoint has its own, lower limit per address.
    "DEFAULT_THROTTLE_CLASSES": ["config.throttles.ReadThrottle", "config.throttles.WriteThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        "login": env_str("LOGIN_THROTTLE_RATE", "10/minute"),
        "api_read": env_str("API_READ_RATE", "240/minute"),
        "api_write": env_str("API_WRITE_RATE", "120/minute"),
    },
    "NUM_PROXIES": NUM_PROXIES,
}
REST_KNOX = {
    "TOKEN_TTL": timedelta(hours=env_int("API_TOKEN_TTL_HOURS", 10, minimum=1)),
    "AUTH_HEADER_PREFIX": "Token",
    # A script that keeps working keeps its token: each use pushes the expiry back, up to a cap.
    "AUTO_REFRESH": True,
    "AUTO_REFRESH_MAX_TTL": timedelta(days=env_int("API_TOKEN_MAX_DAYS", 30, minimum=1)),
}
SPECTACULAR_SETTINGS = {
    # Swagger UI from the vendored copy, so the docs page works offline and under the CSP.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "TITLE": "AVeriTeC annotation platform API",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Request bodies get components of their own, so that the input boundary's rules can be
    # stated on what clients send without touching what they receive (config/api.py).
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "config.api.boundary_in_schema",
    ],
    # JSON is the documented body; form posts still work but are not promised to clients.
    "PARSER_WHITELIST": ["rest_framework.parsers.JSONParser"],
    # Two choice lists are both called "verdict"; name them apart in the schema.
    "ENUM_NAME_OVERRIDES": {
        "VerdictEnum": "annotation.vocabulary.Verdict",
        "QualityVerdictEnum": "review.models.QUALITY_VERDICTS",
        "TaskStatusEnum": "annotation.models.Task.Status",
        "PhaseEnum": "annotation.vocabulary.Phase",
    },
}

# --- Background jobs --------------------------------------------------------------------
# Without CELERY_BROKER_URL the broker is kombu's filesystem transport in var/: a real worker
# process with no service to install. Production points this at Redis or RabbitMQ.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "filesystem://")
_queue_dir = VAR_DIR / "celery-queue"
if CELERY_BROKER_URL.startswith("filesystem"):
    # The transport polls these folders and fails if they are missing.
    for _folder in (_queue_dir, VAR_DIR / "celery-processed", VAR_DIR / "celery-control"):
        _folder.mkdir(parents=True, exist_ok=True)
CELERY_BROKER_TRANSPORT_OPTIONS = (
    {
        "data_folder_in": str(_queue_dir),
        "data_folder_out": str(_queue_dir),
        "processed_folder": str(VAR_DIR / "celery-processed"),
        "control_folder": str(VAR_DIR / "celery-control"),
        "store_processed": False,
    }
    if CELERY_BROKER_URL.startswith("filesystem")
    # Redis hands an unacknowledged job (its worker was killed) to another worker after the
    # visibility timeout. kombu 5.7 looks for such jobs only every interval x throttle seconds
    # (100 s by default); a throttle of 1 makes the interval alone decide.
    else {
        "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600, minimum=1),
        "unacked_restore_interval": env_int("CELERY_UNACKED_RESTORE_INTERVAL", 10, minimum=1),
        "unacked_restore_throttle": 1,
    }
)
CELERY_RESULT_BACKEND = "django-db"
CELERY_RESULT_EXTENDED = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TRACK_STARTED = True
CELERY_TIMEZONE = TIME_ZONE
CELERY_BEAT_SCHEDULE = {
    "expire-leases": {"task": "annotation.tasks.expire_leases", "schedule": 60.0},
}
# Exactly one beat may send the periodic jobs: every beat takes a lease in the shared cache
# first (config/beat.py), so a second one started by mistake waits instead of doubling them.
CELERY_BEAT_SCHEDULER = "config.beat:SingleBeatScheduler"

# --- Domain settings --------------------------------------------------------------------
# Where the public AVeriTeC release files live (tests and the demo read them from there).
AVERITEC_DATA_DIR = Path(
    env_str("AVERITEC_DATA_DIR", str(BASE_DIR.parent / "shared" / "data" / "averitec"))
)
NLTK_DATA_DIR = Path(env_str("NLTK_DATA", str(VAR_DIR / "nltk_data")))
# How long a task stays with an annotator without any activity before it returns to the pool.
TASK_LEASE = timedelta(minutes=env_int("TASK_LEASE_MINUTES", 120, minimum=1))
# Share of claims that get an extra, independent P2 and P3 for agreement reporting.
AGREEMENT_SAMPLE_RATE = env_float("AGREEMENT_SAMPLE_RATE", 0.0)
if not 0.0 <= AGREEMENT_SAMPLE_RATE <= 1.0:
    raise ImproperlyConfigured("AGREEMENT_SAMPLE_RATE must be between 0 and 1")
# Cohen's kappa of two annotators means little on a handful of shared claims.
AGREEMENT_MIN_PAIR_OVERLAP = env_int("AGREEMENT_MIN_PAIR_OVERLAP", 10, minimum=1)
# A task handed in faster than this was hardly read: the dashboard counts it as a speed trap.
SPEED_TRAP_SECONDS = env_int("SPEED_TRAP_SECONDS", 24, minimum=1)
# The dashboard's stuck-work panel shows this many tasks per page (its CSV holds them all).
STUCK_PAGE_SIZE = env_int("STUCK_PAGE_SIZE", 50, minimum=1)
# The dashboard's progress figures are stored per filter and computed again (by a Celery job,
# the page showing the stored ones meanwhile) when older than this many seconds; 0 computes
# them on every request.
REPORT_PROGRESS_MAX_AGE = env_int("REPORT_PROGRESS_MAX_AGE", 60, minimum=0)
# Managers see articles, labels and verdicts while they manage: by default they take no
# blind (P3, P5) tasks, whatever phases their account lists.
MANAGERS_TAKE_BLIND_TASKS = env_bool("MANAGERS_TAKE_BLIND_TASKS", False)

# The embedded model pipeline's suggestion pool (indexes and classifiers), built by a Celery
# job or `manage.py build_suggestions`; web processes only read it.
SUGGESTION_POOL_DIR = Path(env_str("SUGGESTION_POOL_DIR", str(VAR_DIR / "suggestions")))

# Outside services (later issues): keys stay empty unless set; a backend without its key
# reports itself unavailable.
SEARCH_BACKEND = env_str("SEARCH_BACKEND", "local")
GOOGLE_SEARCH_API_KEY = env_str("GOOGLE_SEARCH_API_KEY")
GOOGLE_SEARCH_ENGINE_ID = env_str("GOOGLE_SEARCH_ENGINE_ID")
BRAVE_SEARCH_API_KEY = env_str("BRAVE_SEARCH_API_KEY")
WAYBACK_USER_AGENT = env_str("WAYBACK_USER_AGENT", "averitec-annotation-platform/0.1")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}

# --- Search proxy (search_proxy/: search backends, page viewer) -------------------------
if SEARCH_BACKEND not in ("local", "google", "brave"):
    raise ImproperlyConfigured("SEARCH_BACKEND must be one of local, google, brave")
# Base URLs of the search APIs; tests point them at a local server with recorded answers.
GOOGLE_SEARCH_URL = env_str("GOOGLE_SEARCH_URL", "https://www.googleapis.com/customsearch/v1")
BRAVE_SEARCH_URL = env_str("BRAVE_SEARCH_URL", "https://api.search.brave.com/res/v1/web/search")
SEARCH_HTTP_TIMEOUT = env_float("SEARCH_HTTP_TIMEOUT", 10.0)  # seconds per API call
# Results are cached per (backend, query, before date, country, page) in this cache
# (the shared cache above: the database by default, Redis with CACHE_URL).
SEARCH_CACHE_ALIAS = env_str("SEARCH_CACHE_ALIAS", "default")
SEARCH_CACHE_SECONDS = env_int("SEARCH_CACHE_SECONDS", 24 * 3600, minimum=0)
SEARCH_RATE_LIMIT = env_int("SEARCH_RATE_LIMIT", 30, minimum=0)  # per user a minute; 0 = none
# Local index on PostgreSQL: the most candidates one query ranks (0 = all); see
# search_proxy/backends/local.py and docs/benchmarks.md.
SEARCH_LOCAL_MAX_RANKED = env_int("SEARCH_LOCAL_MAX_RANKED", 5_000, minimum=0)
# How the local backend ranks: `bm25` ranks every matching document with the saved BM25
# index in SEARCH_INDEX_DIR (written by index_documents; the database ranks while none
# covers the documents), `database` ranks in the database as capped above.
LOCAL_SEARCH_RANKING = env_str("LOCAL_SEARCH_RANKING", "bm25")
if LOCAL_SEARCH_RANKING not in ("bm25", "database"):
    raise ImproperlyConfigured(
        f"LOCAL_SEARCH_RANKING must be bm25 or database, not {LOCAL_SEARCH_RANKING!r}"
    )
SEARCH_INDEX_DIR = Path(env_str("SEARCH_INDEX_DIR", str(VAR_DIR / "search-index")))
# The page viewer (search_proxy/fetch.py).
PAGE_FETCH_MAX_BYTES = env_int("PAGE_FETCH_MAX_BYTES", 3 * 1024 * 1024, minimum=1024)
PAGE_FETCH_TIMEOUT = env_float("PAGE_FETCH_TIMEOUT", 15.0)  # seconds for the whole fetch
PAGE_FETCH_MAX_REDIRECTS = env_int("PAGE_FETCH_MAX_REDIRECTS", 5, minimum=0)
PAGE_FETCH_CACHE_DAYS = env_int("PAGE_FETCH_CACHE_DAYS", 30, minimum=0)
PAGE_FETCH_RATE_LIMIT = env_int("PAGE_FETCH_RATE_LIMIT", 60, minimum=0)  # per user a minute
# Networks the page viewer may reach despite the SSRF guard. Keep empty in deployments: only
# the tests set it, to fetch from their own server on 127.0.0.1.
PAGE_FETCH_ALLOWED_NETWORKS = env_list("PAGE_FETCH_ALLOWED_NETWORKS", [])
# The Internet Archive (search_proxy/archive.py, archiving.py). Tests point the URLs at a stub.
ARCHIVE_ENABLED = env_bool("ARCHIVE_ENABLED", True)
ARCHIVE_BASE_URL = env_str("ARCHIVE_BASE_URL", "https://web.archive.org").rstrip("/")
ARCHIVE_AVAILABILITY_URL = env_str(
    "ARCHIVE_AVAILABILITY_URL", "https://archive.org/wayback/available"
)
# Seconds for one whole request: connection and the complete answer.
ARCHIVE_HTTP_TIMEOUT = env_float("ARCHIVE_HTTP_TIMEOUT", 20.0)
ARCHIVE_RECENT_DAYS = env_int("ARCHIVE_RECENT_DAYS", 7, minimum=0)  # a newer capture is reused
# The archive's S3-style keys (https://archive.org/account/s3.php): saves are authenticated,
# and Save Page Now allows an authenticated client 12 captures a minute, an anonymous one 4.
ARCHIVE_ACCESS_KEY = env_str("ARCHIVE_ACCESS_KEY")
ARCHIVE_SECRET_KEY = env_str("ARCHIVE_SECRET_KEY")
if bool(ARCHIVE_ACCESS_KEY) != bool(ARCHIVE_SECRET_KEY):
    raise ImproperlyConfigured("set both ARCHIVE_ACCESS_KEY and ARCHIVE_SECRET_KEY, or neither")
ARCHIVE_SAVE_RATE_LIMIT = env_int(  # saves a minute, across all workers
    "ARCHIVE_SAVE_RATE_LIMIT", 12 if ARCHIVE_ACCESS_KEY else 4, minimum=1
)
# Failures of the look-ups and of the saves are counted apart; after this many of either
# the source is "archive failed". With the backoff below, the waits reach the ceiling.
ARCHIVE_MAX_ATTEMPTS = env_int("ARCHIVE_MAX_ATTEMPTS", 9, minimum=1)
ARCHIVE_RETRY_BACKOFF = env_float("ARCHIVE_RETRY_BACKOFF", 30.0)  # seconds, doubling
ARCHIVE_RETRY_BACKOFF_MAX = env_float("ARCHIVE_RETRY_BACKOFF_MAX", 3600.0)
# A job still "running" this long after it started lost its worker and is run again; a job
# sent this long ago and never taken (the broker lost it) is sent again.
ARCHIVE_JOB_LEASE = env_float("ARCHIVE_JOB_LEASE", 600.0)
# Failed sources are tried again by the beat schedule after this many hours (0 = never).
ARCHIVE_RETRY_FAILED_HOURS = env_int("ARCHIVE_RETRY_FAILED_HOURS", 6, minimum=0)
# How often the beat hands waiting sources to the workers (the submit only records them).
ARCHIVE_DISPATCH_SECONDS = env_float("ARCHIVE_DISPATCH_SECONDS", 30.0)
if SEARCH_HTTP_TIMEOUT <= 0 or PAGE_FETCH_TIMEOUT <= 0 or ARCHIVE_HTTP_TIMEOUT <= 0:
    raise ImproperlyConfigured("SEARCH_HTTP_TIMEOUT and PAGE_FETCH_TIMEOUT must be positive")
if ARCHIVE_DISPATCH_SECONDS <= 0:
    raise ImproperlyConfigured("ARCHIVE_DISPATCH_SECONDS must be positive")
# A job makes at most four requests, each waiting at most one request's turn on the line
# (search_proxy/archive.py) and then lasting at most ARCHIVE_HTTP_TIMEOUT: beyond that it is
# stuck. Celery raises in the job at the soft limit and ends its process at the hard one.
ARCHIVE_JOB_SOFT_TIME_LIMIT = 4 * (2 * ARCHIVE_HTTP_TIMEOUT + 6) + 30
ARCHIVE_JOB_TIME_LIMIT = ARCHIVE_JOB_SOFT_TIME_LIMIT + 30
if ARCHIVE_ENABLED:  # off, no archive job is sent at all
    CELERY_BEAT_SCHEDULE["queue-due-archive-jobs"] = {
        "task": "search_proxy.tasks.queue_due_archive_jobs",
        "schedule": ARCHIVE_DISPATCH_SECONDS,
    }
# --- end of search proxy settings --------------------------------------------------------


# --- Exports (exports/: temporal splits, export jobs, scoring, webhooks) ----------------
# Temporal splits by claim date, as the AVeriTeC release orders them (Table 2 of the paper):
# train up to and including EXPORT_TRAIN_END, dev up to and including EXPORT_DEV_END, test after.
def _export_date(name: str, default: str):
    from datetime import date

    raw = env_str(name, default)
    try:
        return date.fromisoformat(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be a date like 2020-08-25, not {raw!r}") from exc


EXPORT_TRAIN_END = _export_date("EXPORT_TRAIN_END", "2020-08-25")
EXPORT_DEV_END = _export_date("EXPORT_DEV_END", "2020-10-31")
if EXPORT_DEV_END <= EXPORT_TRAIN_END:
    raise ImproperlyConfigured("EXPORT_DEV_END must be after EXPORT_TRAIN_END")
# Worker processes for METEOR when scoring from a command (0: one per usable core). Celery's
# prefork children cannot start processes, so scoring jobs there use one core each.
SCORING_PROCESSES = env_int("SCORING_PROCESSES", 0, minimum=0)
# Largest predictions/references file the scoring form accepts.
SCORING_MAX_UPLOAD_MB = env_int("SCORING_MAX_UPLOAD_MB", 100, minimum=1)
# Each account may have this many export jobs, and as many scoring jobs, waiting or running at
# once (more is a 429 in the API, a form error on the page): a loop of requests cannot fill
# the workers' queue or the disk.
JOBS_RUNNING_PER_USER = env_int("JOBS_RUNNING_PER_USER", 2, minimum=1)
# Export files kept: each account's newest EXPORT_FILES_PER_USER, none older than
# EXPORT_FILE_DAYS (0: no age limit); older files are deleted after each export and hourly.
EXPORT_FILES_PER_USER = env_int("EXPORT_FILES_PER_USER", 10, minimum=1)
EXPORT_FILE_DAYS = env_int("EXPORT_FILE_DAYS", 7, minimum=0)
CELERY_BEAT_SCHEDULE["remove-old-export-files"] = {
    "task": "exports.tasks.remove_old_export_files",
    "schedule": 3600.0,
}
# Webhooks ("claim accepted", "export finished"): HMAC-SHA256 signed POSTs, retried with
# exponential backoff (base * 2**attempt seconds, capped) up to WEBHOOK_MAX_RETRIES times.
WEBHOOKS_ENABLED = env_bool("WEBHOOKS_ENABLED", True)
WEBHOOK_TIMEOUT = env_float("WEBHOOK_TIMEOUT", 5.0)  # seconds per attempt
# Networks webhooks may reach although not public (tests' local receivers only; default none).
WEBHOOK_ALLOWED_NETWORKS = env_list("WEBHOOK_ALLOWED_NETWORKS", [])
# Ports webhooks may be sent to (default the web's own, 80 and 443): other ports of a public
# host are its SSH, mail or database, which a webhook must never be able to poke.
try:
    WEBHOOK_ALLOWED_PORTS = [int(p) for p in env_list("WEBHOOK_ALLOWED_PORTS", ["80", "443"])]
except ValueError as exc:
    raise ImproperlyConfigured("WEBHOOK_ALLOWED_PORTS must be port numbers, e.g. 80,443") from exc
WEBHOOK_MAX_RETRIES = env_int("WEBHOOK_MAX_RETRIES", 6, minimum=0)
WEBHOOK_RETRY_BACKOFF = env_int("WEBHOOK_RETRY_BACKOFF", 10, minimum=1)  # seconds, first retry
WEBHOOK_RETRY_BACKOFF_MAX = env_int("WEBHOOK_RETRY_BACKOFF_MAX", 3600, minimum=1)
if WEBHOOK_TIMEOUT <= 0:
    raise ImproperlyConfigured("WEBHOOK_TIMEOUT must be positive")
# Evidence pairs left unscored (the broker was down when their second round was handed in)
# are scored by a sweep; each pair's own job normally scores it within seconds.
CELERY_BEAT_SCHEDULE["score-pending-evidence"] = {
    "task": "review.tasks.score_pending_evidence",
    "schedule": 600.0,
}
# Deliveries left pending (e.g. the broker was down when a claim was accepted) are re-queued.
CELERY_BEAT_SCHEDULE["retry-pending-webhooks"] = {
    "task": "exports.tasks.requeue_pending_webhooks",
    "schedule": 600.0,
}
# Ev2R, the 2025 shared task's LLM-judged evidence recall (pipeline/ev2r.py): off unless
# EV2R_BASE_URL names an OpenAI-compatible API (https, or http on this machine). The prompts
# are read from a copy of the organisers' properties.py (EV2R_PROMPTS_FILE), never run.
EV2R_BASE_URL = env_str("EV2R_BASE_URL", "")
EV2R_MODEL = env_str("EV2R_MODEL", "")
EV2R_API_KEY = env_str("EV2R_API_KEY", "")
EV2R_PROMPTS_FILE = env_str("EV2R_PROMPTS_FILE", "")
EV2R_TIMEOUT = env_float("EV2R_TIMEOUT", 120.0)  # seconds per request, connection and answer
EV2R_RETRIES = env_int("EV2R_RETRIES", 3, minimum=0)  # more tries after a failed one
EV2R_CONCURRENCY = env_int("EV2R_CONCURRENCY", 4, minimum=1)  # requests under way at once
# Replies by request (model, parameters, prompt): a rerun asks the model nothing.
EV2R_CACHE_FILE = Path(env_str("EV2R_CACHE_FILE", str(VAR_DIR / "ev2r-cache.sqlite3")))
if EV2R_BASE_URL:
    from pipeline.ev2r import check_base_url

    try:
        EV2R_BASE_URL = check_base_url(EV2R_BASE_URL)
    except ValueError as exc:
        raise ImproperlyConfigured(f"EV2R_BASE_URL {exc}") from exc
    if not EV2R_MODEL or not EV2R_PROMPTS_FILE:
        raise ImproperlyConfigured("EV2R_BASE_URL needs EV2R_MODEL and EV2R_PROMPTS_FILE too")
if EV2R_TIMEOUT <= 0:
    raise ImproperlyConfigured("EV2R_TIMEOUT must be positive")
# --- end of exports settings --------------------------------------------------------------
