"""What the revision log (annotation/handin.py) costs for one 40-minute P2 task.

Replays a seeded 40-minute P2 session against PostgreSQL: the editor autosaves every 5 s
while something changed and when a field is left, so an active tick sends one save and an
idle one sends nothing; the draft grows to five questions with two answers each. Every save
goes through handin.save, as the editor's do. Side by side in the same run:

- the revision log as built (compressed content, identical autosaves of a tab counted);
- the same saves as plain JSON copies (what an uncompressed log would store);
- the time of a save through handin.save against the bare version-checked UPDATE
  (Task.save_draft) that saves did before the log existed.

Run from the project root:

    .venv/bin/python benchmarks/revision_log.py [--minutes 40] [--seed 1]

It works in its own database (averitec_bench by default, created when missing, emptied of
its tasks' revisions), so it refuses any database whose name does not say "bench".
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.bench_db import (
    database_name,
    ensure_database,
    refuse_unsafe_database,
    setup_django,
)

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/averitec_bench"
TICK_S = 5
# What the annotator types, a few words at a time.
WORDS = (
    "the council budget for parks in 2019 lists spending of 2.1 million pounds "
    "according to its published accounts while the claim says four million"
)


def session(minutes: int, rng: random.Random) -> list[dict]:
    """The drafts one tab saves over `minutes`: one per active tick (and per field left)."""
    draft: dict = {"questions": [], "verdict": "", "claim_correction": ""}
    saves = []
    for _tick in range(minutes * 60 // TICK_S):
        if rng.random() < 0.45:  # idle: reading, searching; nothing changed, nothing sent
            continue
        questions = draft["questions"]
        if not questions or (len(questions) < 5 and rng.random() < 0.06):
            questions.append({"text": "", "answers": []})
        question = rng.choice(questions)
        if not question["answers"] or (len(question["answers"]) < 2 and rng.random() < 0.1):
            question["answers"].append(
                {
                    "answer_type": "Extractive",
                    "text": "",
                    "source_url": f"https://example.org/page/{rng.randrange(10**6)}",
                    "source_medium": "Web text",
                    "boolean": "",
                    "boolean_explanation": "",
                }
            )
        target = question if rng.random() < 0.3 else rng.choice(question["answers"])
        target["text"] = (
            target["text"] + " " + " ".join(rng.choices(WORDS.split(" "), k=4))
        ).strip()
        saves.append(_copy(draft))
        if rng.random() < 0.25:  # leaving a field saves at once; often nothing new since
            saves.append(_copy(draft))
    draft["verdict"] = "Refuted"
    saves.append(_copy(draft))
    return saves


def _copy(draft: dict) -> dict:
    import json

    return json.loads(json.dumps(draft))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    url = os.environ.get("BENCH_DATABASE_URL", DEFAULT_DATABASE_URL)
    name = database_name(url)
    refuse_unsafe_database(name)
    ensure_database(url, name)
    setup_django(url)

    import json

    from django.db import connection

    from annotation import handin
    from annotation.models import DraftRevision, Task
    from annotation.vocabulary import Phase
    from tests import steps
    from tests.factories import AnnotatorFactory

    DraftRevision.objects.all().delete()
    saves = session(args.minutes, random.Random(args.seed))
    crew = AnnotatorFactory.create_batch(3)
    tasks = []
    for _ in range(2):
        steps.new_article()
        steps.normalise(crew[0])
    tasks = [steps.take(crew[1], Phase.QUESTIONS), steps.take(crew[2], Phase.QUESTIONS)]
    logged, bare = tasks

    def table_bytes() -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_total_relation_size('annotation_draftrevision')")
            return cursor.fetchone()[0]

    before = table_bytes()
    log_times, bare_times = [], []
    for draft in saves:
        logged.refresh_from_db(fields=["draft_version"])
        started = time.perf_counter()
        handin.save(logged, draft, version=logged.draft_version, author=crew[1], tab="bench")
        log_times.append(time.perf_counter() - started)
        bare.refresh_from_db(fields=["draft_version"])
        started = time.perf_counter()
        bare.save_draft(draft, version=bare.draft_version)
        bare_times.append(time.perf_counter() - started)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE annotation_draftrevision")
    after = table_bytes()

    rows = DraftRevision.objects.filter(task=logged)
    stored = sum(len(bytes(r.data)) for r in rows)
    started = time.perf_counter()
    contents = DraftRevision.contents(rows)
    read_all = time.perf_counter() - started
    assert contents[rows.first().pk] == saves[-1], "the newest revision reads back as saved"
    plain = sum(len(json.dumps(d).encode()) for d in saves)
    final = len(json.dumps(saves[-1]).encode())
    print(f"{args.minutes}-minute P2 task, seed {args.seed}: {len(saves)} saves reached the server")
    print(f"  revision rows:           {rows.count():>8}  (identical saves counted, not copied)")
    print(f"  content stored:          {stored:>8} bytes compressed")
    print(f"  same saves as plain JSON:{plain:>9} bytes  (ratio {stored / plain:.3f})")
    print(f"  table on disk (+index):  {after - before:>8} bytes growth")
    print(f"  final draft:             {final:>8} bytes of JSON")
    mean_log = statistics.mean(log_times) * 1000
    mean_bare = statistics.mean(bare_times) * 1000
    print(
        f"  time per save: handin.save {mean_log:.2f} ms, bare UPDATE {mean_bare:.2f} ms "
        f"(ratio {mean_log / mean_bare:.2f})"
    )
    print(f"  reading all revisions back: {read_all * 1000:.1f} ms")
    Task.objects.filter(pk__in=[t.pk for t in tasks]).update(status=Task.Status.CANCELLED)


if __name__ == "__main__":
    main()
