#!/usr/bin/env bash
# Rehearses docs/deploy.md on one machine: production settings, collectstatic and whitenoise,
# two web servers and two Celery workers (one with beat) over one PostgreSQL database and one
# Redis database with one shared MEDIA_ROOT, a backup and restore, and a migration upgrade.
#   tests/load/rehearse_deploy.sh [postgres://postgres@127.0.0.1:5432] [redis://127.0.0.1:6379/7]
# Uses two databases whose names contain "bench" (dropped and created again), and a folder in /tmp.
set -euo pipefail
cd "$(dirname "$0")/../.."
server=${1:-postgres://postgres@127.0.0.1:5432}
broker=${2:-redis://127.0.0.1:6379/7}
py=$PWD/.venv/bin/python
work=$(mktemp -d /tmp/averitec-deploy-XXXX)
db=averitec_deploy_bench
restored=averitec_restored_bench
pids=()
clean_up() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    psql "$server/postgres" -qc "DROP DATABASE IF EXISTS $restored" -c "DROP DATABASE IF EXISTS $db" || true
    rm -rf "$work"
}
trap clean_up EXIT

step() { printf '\n== %s\n' "$*"; }

step "production settings"
export DATABASE_URL=$server/$db CELERY_BROKER_URL=$broker DEBUG=false PRODUCTION=1 \
    ALLOWED_HOSTS=127.0.0.1,annotate.example.org CSRF_TRUSTED_ORIGINS=https://annotate.example.org \
    SECURE_PROXY_SSL_HEADER=HTTP_X_FORWARDED_PROTO,https VAR_DIR=$work/var MEDIA_ROOT=$work/shared/media \
    SUGGESTION_POOL_DIR=$work/shared/suggestions STATIC_ROOT=$work/var/staticfiles \
    ARCHIVE_ENABLED=false WEBHOOKS_ENABLED=false
if SECRET_KEY= $py manage.py check >/dev/null 2>"$work/nokey.txt"; then
    echo "FAIL: started without SECRET_KEY"; exit 1
fi
echo "without SECRET_KEY: $(grep -o 'SECRET_KEY must be set[^"]*' "$work/nokey.txt" | head -1)"
SECRET_KEY=$($py -c "import secrets; print(secrets.token_urlsafe(50))")
export SECRET_KEY
$py manage.py check --deploy 2>&1 | sed 's/^/  /' || true
# The rehearsal talks plain HTTP to gunicorn (no proxy with TLS here): cookies must not be
# HTTPS-only and plain HTTP must not be redirected for it to sign in.
export SECURE_COOKIES=false SECURE_SSL_REDIRECT=false

step "database, migrations, demo data"
psql "$server/postgres" -qc "DROP DATABASE IF EXISTS $db" -c "DROP DATABASE IF EXISTS $restored" -c "CREATE DATABASE $db"
$py manage.py migrate --no-input -v0
$py manage.py seed_demo --accounts-file "$work/accounts.txt" >/dev/null
$py manage.py shell -c "
from annotation.models import User
User.objects.create_user('rita', password='rehearsal-pass-1', role=User.Role.RESEARCHER)"

step "collectstatic"
$py manage.py collectstatic --no-input -v0
echo "$(find "$STATIC_ROOT" -type f | wc -l) files in STATIC_ROOT"

step "two web servers, two workers (one with beat)"
for port in 8701 8702; do
    .venv/bin/gunicorn config.wsgi --bind 127.0.0.1:$port --workers 1 --threads 4 \
        --pid "$work/web$port.pid" >"$work/web$port.log" 2>&1 &
    pids+=($!)
done
.venv/bin/celery -A config worker --concurrency=1 --beat --schedule "$work/beat" -n a@%h --loglevel=INFO >"$work/worker-a.log" 2>&1 &
pids+=($!)
.venv/bin/celery -A config worker --concurrency=1 -n b@%h --loglevel=INFO >"$work/worker-b.log" 2>&1 &
pids+=($!)
for _ in $(seq 60); do
    curl -fs http://127.0.0.1:8701/healthz >/dev/null && curl -fs http://127.0.0.1:8702/healthz >/dev/null && break
    sleep 1
done
curl -sI -H 'Accept-Encoding: gzip' http://127.0.0.1:8701/static/css/app.css | grep -i -E '^(HTTP|cache-control|content-encoding)' | sed 's/^/  /' || true
$py - <<'EOF'
import re, time, requests
def signed_in(port):
    web = requests.Session()
    base = f"http://127.0.0.1:{port}"
    web.get(base + "/login/", timeout=10)
    web.post(base + "/login/", data={"username": "rita", "password": "rehearsal-pass-1"},
             headers={"X-CSRFToken": web.cookies["csrftoken"], "Referer": base + "/login/"}, timeout=10)
    return web, base
web1, base1 = signed_in(8701)
web2, base2 = signed_in(8702)
started = web1.post(base1 + "/exports/new/", data={"csrfmiddlewaretoken": web1.cookies["csrftoken"], "fmt": "json"},
                    headers={"Referer": base1 + "/exports/"}, timeout=30, allow_redirects=False)
job = re.search(r"/exports/(\d+)/", started.headers["Location"]).group(1)
for _ in range(120):
    page = web2.get(f"{base2}/exports/{job}/", timeout=10).text
    if "Done:" in page or "failed" in page:
        break
    time.sleep(1)
download = web2.get(f"{base2}/exports/{job}/download/", timeout=60)
print(f"  export {job} started on web 1, downloaded from web 2: HTTP {download.status_code}, "
      f"{len(download.json())} claims")
EOF
grep -h "succeeded" "$work"/worker-*.log | grep -o "exports.tasks.run_export_job\[[^]]*\] succeeded" | sed 's/^/  worker: /' || true
grep -l "run_export_job.*succeeded" "$work"/worker-*.log | sed 's/^/  ran on: /' || true

step "backup and restore"
pg_dump --format=custom --no-owner --file="$work/backup.dump" "$DATABASE_URL"
tar -C "$work/shared" -czf "$work/media.tar.gz" media
ls -l "$work/backup.dump" "$work/media.tar.gz" | awk '{print "  " $5 " bytes " $9}'
psql "$server/postgres" -qc "CREATE DATABASE $restored"
pg_restore --no-owner --jobs=2 --dbname="$server/$restored" "$work/backup.dump"
count_rows() {
    psql "$1" -Atc "SELECT string_agg(format('SELECT %L, count(*) FROM %I', tablename, tablename), ' UNION ALL ' ORDER BY tablename) FROM pg_tables WHERE schemaname = 'public'" \
        | psql "$1" -At
}
if diff <(count_rows "$DATABASE_URL") <(count_rows "$server/$restored") >/dev/null; then
    echo "  row counts of all $(count_rows "$DATABASE_URL" | wc -l) tables equal after restore"
else
    echo "FAIL: row counts differ after restore"; exit 1
fi
DATABASE_URL=$server/$restored $py manage.py migrate --check && echo "  restored schema matches the code"

step "upgrade with migrations (both web servers serving the database meanwhile)"
$py manage.py migrate annotation 0005 --no-input -v0 && echo "  back to annotation 0005"
$py manage.py migrate --plan | sed 's/^/  /'
$py manage.py migrate --no-input -v0 && echo "  migrated forward"
$py manage.py showmigrations | grep -c '\[ \]' | sed 's/^/  unapplied migrations: /' || true
for port in 8701 8702; do kill -HUP "$(cat "$work/web$port.pid")"; done
sleep 3
for port in 8701 8702; do echo "  web $port after reload: $(curl -fs http://127.0.0.1:$port/healthz)"; done
grep -h -E "Error|Traceback" "$work"/web*.log | sed 's/^/  web log: /' | head -5 || true
echo "rehearsal done"
