"""The secret key and production mode: no key in the source, a random one per machine, and a
production start that refuses to run without one and passes Django's deployment check."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from django.conf import settings

from config.env import generated_secret_key

PRINT_KEY = "from django.conf import settings; print(settings.SECRET_KEY)"


def _run(args: list[str], tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    # The browser tests allow Django's sync calls from async code in this process
    # (DJANGO_ALLOW_ASYNC_UNSAFE); a deployment never has it, so the child starts without it.
    left_out = ("SECRET_KEY", "PRODUCTION", "DJANGO_ALLOW_ASYNC_UNSAFE")
    environment = {k: v for k, v in os.environ.items() if k not in left_out}
    environment.update(DJANGO_SETTINGS_MODULE="config.settings", VAR_DIR=str(tmp_path), **env)
    return subprocess.run(
        [sys.executable, *args],
        cwd=settings.BASE_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _key_of_a_fresh_start(tmp_path: Path, **env: str) -> str:
    started = _run(["-c", f"import django; django.setup(); {PRINT_KEY}"], tmp_path, **env)
    assert started.returncode == 0, started.stderr
    return started.stdout.strip()


def test_a_development_start_makes_a_random_key_once_and_keeps_it_private(tmp_path):
    first = _key_of_a_fresh_start(tmp_path)
    again = _key_of_a_fresh_start(tmp_path)
    elsewhere = _key_of_a_fresh_start(tmp_path / "other-machine")

    assert first == again
    assert elsewhere != first
    assert len(first) >= 50
    key_file = tmp_path / "secret_key"
    assert key_file.read_text() == first
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600


def test_the_settings_hold_no_fallback_key():
    source = (Path(settings.BASE_DIR) / "config" / "settings.py").read_text()
    assert 'SECRET_KEY = "' not in source and "SECRET_KEY = '" not in source


def test_an_empty_key_file_left_by_a_crash_is_reported_not_used(tmp_path, monkeypatch):
    monkeypatch.setattr("config.env.time.sleep", lambda seconds: None)
    (tmp_path / "secret_key").write_text("")
    try:
        generated_secret_key(tmp_path / "secret_key")
    except Exception as exc:  # ImproperlyConfigured, raised before Django is set up
        assert "delete it" in str(exc)
    else:
        raise AssertionError("an empty key file was accepted")


def test_production_refuses_to_start_without_a_secret_key(tmp_path):
    started = _run(["-c", "import django; django.setup()"], tmp_path, PRODUCTION="1")

    assert started.returncode != 0
    assert "SECRET_KEY must be set when PRODUCTION=1" in started.stderr
    assert not (tmp_path / "secret_key").exists()


def test_production_refuses_debug(tmp_path):
    started = _run(
        ["-c", "import django; django.setup()"], tmp_path, PRODUCTION="1", DEBUG="1", SECRET_KEY="x"
    )
    assert "DEBUG must be off" in started.stderr


def test_the_deployment_check_is_clean_in_production_mode(tmp_path):
    key = generated_secret_key(tmp_path / "production_key")
    checked = _run(
        ["manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        tmp_path,
        PRODUCTION="1",
        SECRET_KEY=key,
        SECURE_PROXY_SSL_HEADER="HTTP_X_FORWARDED_PROTO,https",
    )

    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "no issues" in checked.stdout


def test_the_deployment_check_finds_the_development_defaults(tmp_path):
    # Proves the check above can fail: the same check without production mode complains.
    checked = _run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], tmp_path)

    assert checked.returncode != 0
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert warning in checked.stdout + checked.stderr
