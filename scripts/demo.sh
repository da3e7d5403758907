#!/usr/bin/env bash
# Runs the demo: database, demo data and accounts, then a Celery worker and the web server on
# http://127.0.0.1:8000. Ctrl-C stops both.
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
host=${DEMO_HOST:-127.0.0.1}
port=${DEMO_PORT:-8000}

$py manage.py migrate --no-input -v0
$py manage.py collectstatic --no-input -v0
$py manage.py seed_demo
# The search panel's flags and its local index: the dev set's evidence pages, searchable by
# the demo's Phase 2 annotators (all idempotent).
$py manage.py load_misinformation_domains -v0
$py manage.py sync_fact_checking_domains -v0
$py manage.py index_documents --from-dataset -v0
# Scoring's WordNet synonym table (about 20 s, once), so the first score is quick.
$py -c "from pipeline.meteor_engine import SynonymTable; SynonymTable.load_or_build()"

mkdir -p var/log
# One worker with the one beat (--beat). The beat holds a lease in the shared cache and ends
# itself if this worker dies, so a killed and restarted worker never leaves two beats
# (config/beat.py, docs/deploy.md).
.venv/bin/celery -A config worker --beat --schedule var/celerybeat-schedule --loglevel=INFO --concurrency=2 >var/log/worker.log 2>&1 &
worker=$!
trap 'kill $worker 2>/dev/null; wait $worker 2>/dev/null' EXIT INT TERM

echo
echo "Worker log: var/log/worker.log"
echo "Open http://$host:$port/ and sign in with an account above (admin: /admin/)."
exec_args=(--bind "$host:$port" --workers 2 --threads 4 --access-logfile - config.wsgi)
.venv/bin/gunicorn "${exec_args[@]}"
