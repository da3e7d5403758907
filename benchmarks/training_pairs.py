"""Training: how real and junk QA pairs score against a claim's gold pairs (dev.json).

Run from the project root (NLTK data as for the tests):

    NLTK_DATA=/work/main/var/nltk_data .venv/bin/python benchmarks/training_pairs.py \
        [--data $AVERITEC_DATA_DIR/dev.json] [--claims 500] [--seed 7]

For every dev.json claim with at least two gold pairs, pairs of each kind below are scored
the way training scores a trainee's pair (pipeline/qa_pairs.py: METEOR of
``question + " " + answer`` against the claim's gold pairs, best match), and the script prints
each kind's distribution and the share that each candidate threshold lets through:

* ``real (another gold pair)``: each gold pair scored against the claim's *other* gold pairs
  (leave one out). It is a real pair the gold annotator also thought of, worded as a
  different question: a lower bound for what an honest trainee types;
* ``junk letters``: "x? → y" (the reported case);
* ``junk filler``: a generic question and answer that fit any claim;
* ``junk claim echo``: "Is it true that <claim>? → Yes";
* ``off-topic``: a real gold pair of another claim.

The length rule and the claim-echo rule are reported separately (the share of each kind that
passes them); the METEOR columns ignore them, so they show what the threshold alone does.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_ROOT))

from pipeline import qa_pairs  # noqa: E402
from pipeline.scoring import evidence_strings  # noqa: E402
from pipeline.text import meteor  # noqa: E402

DEFAULT_DATA = (
    Path(os.environ.get("AVERITEC_DATA_DIR", PROJECT_ROOT.parent / "shared" / "data" / "averitec"))
    / "dev.json"
)
THRESHOLDS = (0.1, 0.15, 0.2, 0.25, 0.3, 0.35)
FILLER = [
    ("What is the answer to this question?", "Yes it is"),
    ("Where can I find more about this?", "On the internet"),
    ("Is this information correct or not?", "No"),
    ("What does the source say about it?", "It says so"),
]


def best(given: str, gold: list[str]) -> float:
    return max(meteor(given, ref) for ref in gold) if gold else 0.0


def pairs_of(record: dict) -> list[tuple[str, str]]:
    return [
        (q["question"], q["answers"][0]["answer"] if q["answers"] else "")
        for q in record["questions"]
    ]


Entry = tuple[float, bool, bool]  # best METEOR, passes the length rule, not an echo


def measure(records: list[dict], seed: int) -> dict[str, list[Entry]]:
    """Per kind, one entry per pair."""
    rng = random.Random(seed)
    kinds: dict[str, list[Entry]] = {
        "real (another gold pair)": [],
        "junk letters": [],
        "junk filler": [],
        "junk claim echo": [],
        "off-topic": [],
    }
    usable = [r for r in records if len(r["questions"]) >= 2]
    for n, record in enumerate(usable):
        gold, claim = evidence_strings(record), record["claim"]

        def entry(question: str, answer: str, against: list[str], claim: str = claim) -> Entry:
            return (
                best(qa_pairs.pair_string(question, answer), against),
                not qa_pairs.length_problem(question, answer),
                not qa_pairs.echoes_claim(question, claim, meteor),
            )

        for i, (question, answer) in enumerate(pairs_of(record)):
            own = pair_strings_without(record, i)
            kinds["real (another gold pair)"].append(entry(question, answer, own))
        for question, answer in (("x?", "y"), ("z?", "w")):
            kinds["junk letters"].append(entry(question, answer, gold))
        kinds["junk filler"].append(entry(*rng.choice(FILLER), gold))
        echo = f"Is it true that {claim.rstrip('.')}?"
        kinds["junk claim echo"].append(entry(echo, "Yes", gold))
        other = usable[(n + 1 + rng.randrange(len(usable) - 1)) % len(usable)]
        kinds["off-topic"].append(entry(*rng.choice(pairs_of(other)), gold))
    return kinds


def pair_strings_without(record: dict, skip: int) -> list[str]:
    kept = {**record, "questions": [q for j, q in enumerate(record["questions"]) if j != skip]}
    return evidence_strings(kept)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--claims", type=int, default=500)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    records = json.loads(args.data.read_text())[: args.claims]
    kinds = measure(records, args.seed)
    header = ["kind", "pairs", "pass length", "not an echo", "p10", "median", "p90"]
    header += [f"≥ {t}" for t in THRESHOLDS]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for kind, values in kinds.items():
        scores = sorted(v for v, _, _ in values)
        deciles = statistics.quantiles(scores, n=10) if len(scores) > 1 else scores * 9
        row = [
            kind,
            str(len(values)),
            f"{sum(1 for _, good, _ in values if good) / len(values):.0%}",
            f"{sum(1 for _, _, fresh in values if fresh) / len(values):.0%}",
            f"{deciles[0]:.3f}",
            f"{statistics.median(scores):.3f}",
            f"{deciles[-1]:.3f}",
        ]
        row += [f"{sum(1 for v in scores if v >= t) / len(scores):.0%}" for t in THRESHOLDS]
        print("| " + " | ".join(row) + " |")
    chosen = qa_pairs.METEOR_THRESHOLD
    print(f"\nchosen: METEOR >= {chosen}, echo below {qa_pairs.ECHO_THRESHOLD}; pairs counted:")
    for kind, values in kinds.items():
        counted = sum(1 for v, good, fresh in values if good and fresh and v >= chosen)
        print(f"  {kind}: {counted / len(values):.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
