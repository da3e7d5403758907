"""Pre-suggestion quality and latency, on dev.json with the issue's fixed split.

Run from the project root:

    .venv/bin/python benchmarks/suggest.py [--data DIR] [--skip-scale] [--scale-docs 200000]

Split: the 400 earliest claims of dev.json by claim date are the pool, the last 100 are
held out (ties keep file order, as `make demo` does). Quality, on the held-out claims:

* candidate questions: Hungarian METEOR of the suggested questions against the gold
  questions (questions only, as the AVeriTeC scorer computes it), for the first 10 and the
  first 3 suggestions; the paper's "no search" baseline is 0.19;
* claim types and strategies: macro-F1 of the classifier trained on the pool;
* duplicates: precision@1 of our own rewordings of 50 dev.json claims
  (tests/pipeline/fixtures/reworded_claims.json), each of which should retrieve its original
  from a pool of all 500 claims;
* evidence sentences: recall@5 of the gold extractive answers, where the page text is known.
  dev.json carries no page text, so each held-out claim's "page" is made of the sentences of
  all its extractive answers plus 40 sentences of other claims' answers; a question is a hit
  when its own gold answer is among the 5 sentences ranked first.

Latency: each suggestion kind over a pool of 5,000 claims (dev.json's pool, each claim
repeated with a copy number so no two documents are equal), p50/p95 over the held-out
claims; build time and peak memory growth at 5,000 and 50,000 claims.
Search at scale: BM25 full ranking over N documents with a date mask vs ranking only the
first 5,000 candidates (the local backend's cut-off), p95 and top-10 overlap.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import resource
import statistics
import sys
import tempfile
import time
from datetime import date, datetime
from functools import partial
from pathlib import Path

import numpy as np

PROJECT_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_ROOT))

from pipeline import text as text_module  # noqa: E402
from pipeline.classify import macro_f1  # noqa: E402
from pipeline.retrieval import BM25Index, fast_analyse  # noqa: E402
from pipeline.scoring import hungarian_meteor  # noqa: E402
from pipeline.suggest import ClaimPool, PoolClaim, rank_sentences, search_query  # noqa: E402
from pipeline.text import meteor  # noqa: E402

DEFAULT_DATA = PROJECT_ROOT.parent / "shared" / "data" / "averitec"
REWORDED = PROJECT_ROOT / "tests" / "pipeline" / "fixtures" / "reworded_claims.json"


def claim_date(record: dict) -> date | None:
    try:
        return datetime.strptime(record["claim_date"], "%d-%m-%Y").date()
    except (TypeError, ValueError, KeyError):
        return None


def to_pool_claim(i: int, record: dict, suffix: str = "") -> PoolClaim:
    slug = (record.get("fact_checking_article") or "").rstrip("/").rsplit("/", 1)[-1]
    return PoolClaim(
        id=i,
        text=record["claim"] + suffix,
        claim_date=claim_date(record),
        speaker=record.get("speaker") or "",
        label=record.get("label") or "",
        claim_types=tuple(record.get("claim_types") or ()),
        strategies=tuple(record.get("fact_checking_strategies") or ()),
        questions=tuple(q["question"] for q in record.get("questions") or ()),
        fact_check_text=f"{slug.replace('-', ' ')} {record.get('justification') or ''}",
    )


def split(records: list[dict]) -> tuple[list[int], list[int]]:
    order = sorted(range(len(records)), key=lambda i: (claim_date(records[i]) or date.max, i))
    return order[:400], order[400:]


def p(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def quality(records: list[dict]) -> dict:
    pool_ids, held_ids = split(records)
    pool = ClaimPool.build(to_pool_claim(i, records[i]) for i in pool_ids)
    out: dict = {}

    for limit in (10, 3):
        utilities = []
        for i in held_ids:
            gold = [q["question"] for q in records[i]["questions"]]
            suggested = [
                c.text
                for c in pool.candidate_questions(
                    records[i]["claim"], records[i].get("speaker") or "", limit=limit
                )
            ] or [""]
            matrix = np.array([[meteor(s, g) for g in gold] for s in suggested])
            utilities.append(hungarian_meteor(matrix, len(gold)))
        out[f"question_meteor_top{limit}"] = float(np.mean(utilities))

    held = [records[i] for i in held_ids]
    for name, model, key in (
        ("types", pool.types_model, "claim_types"),
        ("strategies", pool.strategies_model, "fact_checking_strategies"),
    ):
        predicted = [model.predict(pool.row(r["claim"]))[0] for r in held]
        out[f"{name}_macro_f1"] = macro_f1([r.get(key) or [] for r in held], predicted)
        # A trivial reference: always the pool's most frequent label.
        pool_labels = [records[j].get(key) or [] for j in pool_ids]
        frequent = max(model.labels, key=lambda lab: sum(lab in row for row in pool_labels))
        out[f"{name}_macro_f1_most_frequent"] = macro_f1(
            [r.get(key) or [] for r in held], [[frequent]] * len(held)
        )

    full = ClaimPool.build(to_pool_claim(i, r) for i, r in enumerate(records))
    reworded = json.loads(REWORDED.read_text())
    hits = 0
    for item in reworded:
        found = full.duplicates(item["reworded"], k=1)
        hits += bool(found) and found[0].claim_id == item["index"]
    out["duplicate_precision_at_1"] = hits / len(reworded)
    out["duplicate_claims"] = len(reworded)

    rng = random.Random(15)
    extractive = [
        (ci, a["answer"])
        for ci, r in enumerate(records)
        for q in r["questions"]
        for a in q.get("answers") or []
        if a.get("answer_type") == "Extractive" and a.get("answer")
    ]
    found = total = 0
    for i in held_ids:
        record = records[i]
        own = [
            (q["question"], a["answer"])
            for q in record["questions"]
            for a in q.get("answers") or []
            if a.get("answer_type") == "Extractive" and a.get("answer")
        ]
        if not own:
            continue
        others = [text for ci, text in rng.sample(extractive, 60) if ci != i][:40]
        page = [a for _, a in own] + others
        rng.shuffle(page)
        for question, answer in own:
            top = rank_sentences(question, page, claim=record["claim"], k=5)
            total += 1
            found += any(page[t] == answer for t in top)
    out["sentence_recall_at_5"] = found / total if total else float("nan")
    out["sentence_questions"] = total
    return out


def scaled_pool(records: list[dict], size: int) -> list[PoolClaim]:
    pool_ids, _ = split(records)
    claims = []
    for n in range(size):
        i = pool_ids[n % len(pool_ids)]
        claims.append(to_pool_claim(n, records[i], suffix=f" copy{n // len(pool_ids)}"))
    return claims


def _high_water_mb() -> float:
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over exec from the parent that forked the
    # worker, while VmHWM belongs to this process's own memory map.
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _build_peak(data: Path, size: int) -> float:
    records = json.loads((data / "dev.json").read_text())
    claims = scaled_pool(records, size)
    before = _high_water_mb()
    ClaimPool.build(claims)
    return _high_water_mb() - before


def build_memory(data: Path, size: int) -> float:
    """Peak resident memory growth (MB) of one build, in a fresh process of its own."""
    # A fresh process: this one's peak already includes earlier work and cannot go down.
    with multiprocessing.get_context("spawn").Pool(1) as worker:
        return round(worker.apply(_build_peak, (data, size)), 1)


def latency(records: list[dict], sizes: tuple[int, ...], data: Path) -> dict:
    _, held_ids = split(records)
    out: dict = {}
    for size in sizes:
        claims = scaled_pool(records, size)
        started = time.perf_counter()
        pool = ClaimPool.build(claims)
        build = time.perf_counter() - started
        peak_growth = build_memory(data, size)
        with tempfile.TemporaryDirectory() as folder:
            pool.save(Path(folder))
            on_disk = sum(f.stat().st_size for f in Path(folder).iterdir()) / 2**20
            started = time.perf_counter()
            ClaimPool.load(Path(folder))
            load = time.perf_counter() - started
        row = {
            "build_seconds": round(build, 1),
            "peak_rss_growth_mb": round(peak_growth, 1),
            "saved_mb": round(on_disk, 1),
            "load_seconds": round(load, 2),
        }
        timings: dict[str, list[float]] = {
            "duplicates": [],
            "types_strategies": [],
            "questions": [],
            "search_query": [],
            "sentences": [],
        }
        pages = [
            [a["answer"] for q in records[i]["questions"] for a in q.get("answers") or []] * 10
            for i in held_ids
        ]
        # Cold tokens: the held-out texts must not be served from an earlier size's cache.
        text_module._tokens.cache_clear()
        for i, page in zip(held_ids, pages, strict=True):
            r = records[i]
            text, speaker = r["claim"], r.get("speaker") or ""
            question = r["questions"][0]["question"]
            calls = {
                "duplicates": partial(pool.duplicates, text),
                "types_strategies": partial(pool.classify, text),
                "questions": partial(pool.candidate_questions, text, speaker),
                "search_query": partial(search_query, text, speaker),
                "sentences": partial(rank_sentences, question, page, claim=text),
            }
            for kind, call in calls.items():
                started = time.perf_counter()
                call()
                timings[kind].append((time.perf_counter() - started) * 1000)
        for kind, values in timings.items():
            row[f"{kind}_p50_ms"] = round(p(values, 50), 2)
            row[f"{kind}_p95_ms"] = round(p(values, 95), 2)
        out[size] = row
    return out


def scale(records: list[dict], n_docs: int, queries: int = 100) -> dict:
    """BM25 over n_docs synthetic documents: full ranking vs the first 5,000 candidates."""
    rng = random.Random(7)
    words = [
        a["answer"]
        for r in records
        for q in r["questions"]
        for a in q.get("answers") or []
        if a.get("answer")
    ]
    vocabulary = " ".join(words).split()
    index = BM25Index(analyser=fast_analyse)
    started = time.perf_counter()
    step = 50_000
    day0 = date(2015, 1, 1).toordinal()
    for start in range(0, n_docs, step):
        size = min(step, n_docs - start)
        texts = [" ".join(rng.choices(vocabulary, k=rng.randint(20, 60))) for _ in range(size)]
        dates = [date.fromordinal(day0 + rng.randint(0, 2500)) for _ in texts]
        index.add(texts, dates=dates)
    index.weights  # noqa: B018 - derive the weights inside the build time
    build = time.perf_counter() - started
    full_ms, cut_ms, differ = [], [], []
    for n in range(queries):
        r = records[n % len(records)]
        query = search_query(r["claim"], r.get("speaker") or "")
        before = claim_date(r) or date(2021, 1, 1)
        started = time.perf_counter()
        full = [h.position for h in index.search(query, 10, before=before)]
        full_ms.append((time.perf_counter() - started) * 1000)
        # The local backend's way: a database reads up to 5,000 matching rows in its own
        # order, then only those are ranked. Row order stands in for the database's order.
        started = time.perf_counter()
        scores = index.scores(query)
        matching = np.flatnonzero((scores > 0) & (index.days < before.toordinal()))[:5000]
        cut = matching[np.argsort(-scores[matching], kind="stable")[:10]]
        cut_ms.append((time.perf_counter() - started) * 1000)
        differ.append(len(set(full) - set(int(c) for c in cut)))
    return {
        "documents": n_docs,
        "build_seconds": round(build, 1),
        "full_p50_ms": round(p(full_ms, 50), 1),
        "full_p95_ms": round(p(full_ms, 95), 1),
        "first5000_p95_ms": round(p(cut_ms, 95), 1),
        "first5000_top10_differ_mean": round(statistics.mean(differ), 2),
        "full_top10_differ_mean": 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--skip-latency", action="store_true")
    parser.add_argument("--skip-scale", action="store_true")
    parser.add_argument("--sizes", default="5000,50000")
    parser.add_argument("--scale-docs", type=int, default=1_000_000)
    args = parser.parse_args()
    records = json.loads((args.data / "dev.json").read_text())
    results: dict = {}
    if not args.skip_quality:
        results["quality"] = quality(records)
        print(json.dumps(results["quality"], indent=1), flush=True)
    if not args.skip_latency:
        sizes = tuple(int(s) for s in args.sizes.split(","))
        results["latency"] = latency(records, sizes, args.data)
        print(json.dumps(results["latency"], indent=1), flush=True)
    if not args.skip_scale:
        results["scale"] = scale(records, args.scale_docs)
        print(json.dumps(results["scale"], indent=1), flush=True)
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
