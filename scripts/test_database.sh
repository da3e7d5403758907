#!/usr/bin/env bash
# Prints the DATABASE_URL the suite should use: the one given, else the local PostgreSQL when
# it answers, else SQLite (quick local loop; CI always runs on PostgreSQL).
set -euo pipefail
if [[ -n "${DATABASE_URL:-}" ]]; then
  echo "$DATABASE_URL"
  exit 0
fi
default="postgres://postgres@127.0.0.1:5432/averitec"
if .venv/bin/python - "$default" <<'PY' 2>/dev/null; then
import sys
import psycopg
psycopg.connect(sys.argv[1].replace("/averitec", "/postgres"), connect_timeout=2).close()
PY
  echo "$default"
else
  echo "PostgreSQL is not reachable at 127.0.0.1:5432; running the suite on SQLite." >&2
  echo "sqlite:///$(pwd)/var/test.sqlite3"
fi
