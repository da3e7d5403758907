"""Scoring speed: the platform's scorer against the official AVeriTeC ``eval.py``, side by side.

Run from the project root:

    .venv/bin/python benchmarks/scoring.py --official /tmp/averitec_official/eval.py \
        [--official-pythonpath /tmp/averitec_official/site] [--repeat 3]

The official script is not part of this repository: give the path of its ``eval.py`` (with
its ``utils.py`` beside it, and scikit-learn importable; ``--official-pythonpath`` adds a
folder to its ``PYTHONPATH``). Without ``--official`` the comparison is skipped and only the
platform's scorer and its scaling are measured.

Both scorers run as separate processes from start to exit (imports included), with the same
interpreter and the same NLTK data, on two inputs built from dev.json (500 claims):

* ``self``: dev.json scored against itself (the test suite's check: every score is 1.0);
* ``shifted``: each claim predicted with the next claim's questions, answers and
  justification and another claim's label, so that scores are low and METEOR has to try
  stems and WordNet synonyms, as with a real system's output.

Every number of the platform's output must equal the official one to 1e-9; the benchmark
says so or fails.

The shared tasks' scorers are compared the same way with ``--forms 2024 2025``:
``--official-2024`` is the 2024 ``evaluate_veracity.py`` (run as a script, scikit-learn
from ``--official-pythonpath``) and ``--official-2025`` the 2025 ``averitec_evaluate.py``,
of which the METEOR half is run (its ``AVeriTeCEvaluator`` on the files read and ordered as
its ``compute`` does; the Ev2R half needs an LLM and is not timed). Modules that script imports
but the METEOR half never calls (``openai``, ``google.generativeai``, ``huggingface_hub``) are
replaced by empty stand-ins, so nothing reaches the network. Inputs: dev.json in each form
against itself, and the shifted predictions in each form.

Scaling (2023): the platform's scorer on the ``shifted`` input at 500, 2,500 and 5,000
claims (dev.json five and ten times over; every sentence of each copy carries its copy
number, so no METEOR pair and no sentence repeats between copies, and the caches cannot make
the larger runs cheap; only words recur, as in real data).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = Path(
    os.environ.get("AVERITEC_DATA_DIR") or PROJECT_ROOT.parent / "shared" / "data" / "averitec"
)
sys.path.insert(0, str(PROJECT_ROOT))

TOLERANCE = 1e-9
LEVELS = ("0.1", "0.2", "0.25", "0.3", "0.4", "0.5")


# --- Inputs ----------------------------------------------------------------------------


def shifted_predictions(records: list[dict]) -> list[dict]:
    """Claim i gets claim i+1's evidence and justification and claim i+7's label."""
    n = len(records)
    return [
        {
            "questions": copy.deepcopy(records[(i + 1) % n]["questions"]),
            "label": records[(i + 7) % n]["label"],
            "justification": records[(i + 3) % n]["justification"],
        }
        for i in range(n)
    ]


def _tagged(text: str, tag: int) -> str:
    """Every sentence of the text marked, so that no sentence repeats between copies."""
    return text.replace(". ", f" (copy {tag}). ") + f" (copy {tag})"


def replicated(records: list[dict], times: int) -> list[dict]:
    """``times`` copies, every question, answer and justification marked with its copy."""
    out = []
    for k in range(times):
        for record in records:
            record = copy.deepcopy(record)
            for question in record.get("questions", []):
                question["question"] = _tagged(question["question"], k)
                for answer in question["answers"]:
                    answer["answer"] = _tagged(answer["answer"], k)
            if isinstance(record.get("justification"), str):
                record["justification"] = _tagged(record["justification"], k)
            out.append(record)
    return out


# --- Running ---------------------------------------------------------------------------


def _nltk_env(cache_dir: Path | None = None) -> dict[str, str]:
    from pipeline.nltk_data import default_target

    env = {**os.environ, "NLTK_DATA": str(default_target())}
    if cache_dir is not None:
        env["SCORING_CACHE_DIR"] = str(cache_dir)
    return env


def fresh_cache(folder: Path) -> Path:
    """A cache folder that knows no reference file yet: only the installation's synonym
    table (built once per installation) is copied in."""
    from pipeline.meteor_engine import SynonymTable

    cache = Path(tempfile.mkdtemp(prefix="cache-", dir=folder))
    table = SynonymTable.cache_path()
    if table.is_file():
        shutil.copy2(table, cache / table.name)
    return cache


@dataclass
class Run:
    wall: float  # seconds from start to exit
    cpu: float  # user + system seconds of the process and its workers
    result: dict


def _timed(command: list[str], cwd: Path, env: dict[str, str], who: str) -> tuple[Run, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"{who} failed:\n{done.stderr[-3000:]}")
    return Run(wall, cpu, {}), done.stdout


def run_ours(
    predictions: Path, references: Path, processes: int | None, cache_dir: Path | None = None
) -> Run:
    command = [sys.executable, "-m", "pipeline.scoring"]
    command += ["--predictions", str(predictions), "--references", str(references)]
    if processes:
        command += ["--processes", str(processes)]
    run, output = _timed(command, PROJECT_ROOT, _nltk_env(cache_dir), "the platform's scorer")
    run.result = json.loads(output)
    return run


def run_official(eval_py: Path, extra_path: str | None, predictions: Path, references: Path) -> Run:
    env = _nltk_env()
    paths = [str(eval_py.parent), *([extra_path] if extra_path else [])]
    env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    command = [sys.executable, str(eval_py), "--predictions", str(predictions)]
    command += ["--references", str(references)]
    run, output = _timed(command, eval_py.parent, env, "the official script")
    run.result = parse_official(output)
    return run


_LINE = re.compile(r"^(?P<left>.*?):\s*(?P<value>[-+0-9.eEnaif]+)$")


def parse_official(output: str) -> dict[str, Any]:
    """The numbers the official script prints, keyed as ``score --json`` keys them."""
    result: dict[str, Any] = {"veracity": {}, "averitec": {}, "averitec_justification": {}}
    type_blocks: list[dict[str, float]] = []
    section = None
    for line in output.splitlines():
        if line.startswith("Printing"):
            break
        if line.startswith("Veracity F1"):
            section = "veracity"
            continue
        if line.startswith("--------------------"):
            section = "types" if section in ("averitec", "types") else "averitec"
            if section == "types":
                type_blocks.append({})
            continue
        match = _LINE.match(line)
        if not match:
            continue
        left, value = match["left"].strip(), float(match["value"])
        if left.startswith("Question-only"):
            result["q_only"] = value
        elif left.startswith("Question-answer"):
            result["q_and_a"] = value
        elif left.startswith("Justification score"):
            result["justification"] = value
            section = None
        elif m := re.match(r"\* Veracity scores \(meteor @ (.+)\)", left):
            result["averitec"][m[1]] = value
        elif m := re.match(r"\* Justification scores \(meteor @ (.+)\)", left):
            result["averitec_justification"][m[1]] = value
        elif section == "types" and (m := re.match(r"\* Veracity scores \((.+)\)", left)):
            type_blocks[-1][m[1]] = value
        elif section == "veracity" and left.startswith("* "):
            result["veracity"][left[2:]] = value
    if len(type_blocks) >= 2:
        result["by_type_0.2"], result["by_type_0.3"] = type_blocks[0], type_blocks[1]
    return result


def differences(ours: dict, official: dict, prefix: str = "") -> list[tuple[str, float]]:
    """Every (key, |difference|) over the official figures; a missing key is infinite."""
    out = []
    for key, value in official.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out += differences(ours.get(key) or {}, value, f"{name}.")
        elif key in ours:
            out.append((name, abs(float(ours[key]) - float(value))))
        else:
            out.append((name, float("inf")))
    return out


# --- The shared tasks' forms -----------------------------------------------------------

# Runs the METEOR half of the official 2025 script on two CSV files: the files are read,
# filtered and ordered as its compute() does, then its own evaluator methods are called.
_OFFICIAL_2025_DRIVER = """
import json, sys, types
official_dir, predictions, references = sys.argv[1:4]
sys.path.insert(0, official_dir)
for name in ("openai", "google", "google.generativeai", "huggingface_hub"):
    sys.modules[name] = types.ModuleType(name)
sys.modules["openai"].OpenAI = lambda **kwargs: None
sys.modules["google"].generativeai = sys.modules["google.generativeai"]
sys.modules["huggingface_hub"].hf_hub_download = None
import pandas as pd
import averitec_evaluate as official
solution_df = pd.read_csv(references)
submission_df = pd.read_csv(predictions)
public_ids = solution_df[solution_df.split == "gold"]["id"].values
gold = solution_df[solution_df["id"].isin(public_ids)].sort_values("id").reset_index(drop=True)
pred = submission_df[submission_df["id"].isin(public_ids)].sort_values("id").reset_index(drop=True)
columns = [c for c in solution_df.columns if c not in ["split"]]
scorer = official.AVeriTeCEvaluator()
q_only, _ = scorer.evaluate_questions_only(pred[columns], gold[columns])
q_and_a, _ = scorer.evaluate_questions_and_answers(pred[columns], gold[columns])
averitec, _ = scorer.evaluate_averitec_score(pred[columns], gold[columns])
print(json.dumps({"q_only": float(q_only), "q_and_a": float(q_and_a),
                  "old_averitec_score": float(averitec[0])}))
"""


def form_inputs(records: list[dict], folder: Path, form: str) -> dict[str, tuple[Path, Path]]:
    """dev.json against itself and the shifted predictions, in ``form``."""
    from exports.shared_task import records_as_2024, rows_2025, write_csv_rows

    shifted = shifted_predictions(records)
    for record, original in zip(shifted, records, strict=True):
        record["claim"] = original["claim"]
    fresh = system_predictions(shifted)
    dev = folder / "dev.json"
    if form == "2024":
        paths = {}
        for case, predicted in (("self", records), ("shifted", shifted), ("fresh", fresh)):
            paths[case] = (folder / f"{case}-2024.json", dev)
            paths[case][0].write_text(json.dumps(list(records_as_2024(predicted))), "utf-8")
        return paths
    gold = folder / "gold.csv"
    with gold.open("w", encoding="utf-8", newline="") as stream:
        write_csv_rows(rows_2025(records), stream)
    paths = {}
    for case, predicted in (("self", records), ("shifted", shifted), ("fresh", fresh)):
        paths[case] = (folder / f"{case}-2025.csv", gold)
        with paths[case][0].open("w", encoding="utf-8", newline="") as stream:
            write_csv_rows(rows_2025(predicted, "pred"), stream)
    return paths


def system_predictions(shifted: list[dict]) -> list[dict]:
    """The shifted predictions with every question, answer and justification reworded, as a
    system's own output is: none of their strings is a reference string, so the references'
    cache cannot serve them and they are prepared on every run."""
    out = replicated(shifted, 1)
    for record, original in zip(out, shifted, strict=True):
        if "claim" in original:
            record["claim"] = original["claim"]
    return out


def run_ours_form(
    form: str, predictions: Path, references: Path, cache_dir: Path | None = None
) -> Run:
    command = [sys.executable, "-m", "pipeline.shared_tasks", "--form", form]
    command += ["--predictions", str(predictions), "--references", str(references)]
    run, output = _timed(command, PROJECT_ROOT, _nltk_env(cache_dir), "the platform's scorer")
    run.result = json.loads(output)
    return run


def run_official_form(
    form: str, script: Path, extra_path: str | None, predictions: Path, references: Path
) -> Run:
    env = _nltk_env()
    paths = [str(script.parent), *([extra_path] if extra_path else [])]
    env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    if form == "2024":
        command = [sys.executable, str(script), "-i", str(predictions)]
        command += ["--label_file", str(references)]
        run, output = _timed(command, script.parent, env, "the official 2024 script")
        run.result = parse_official_2024(output)
    else:
        command = [sys.executable, "-c", _OFFICIAL_2025_DRIVER, str(script.parent)]
        command += [str(predictions), str(references)]
        run, output = _timed(command, script.parent, env, "the official 2025 script")
        run.result = json.loads(output.strip().splitlines()[-1])
    return run


def parse_official_2024(output: str) -> dict[str, Any]:
    """The figures ``evaluate_veracity.py`` prints, keyed as the platform's 2024 scorer."""
    result: dict[str, Any] = {"veracity": {}, "averitec": {}, "by_type_0.25": {}}
    section = None
    for line in output.splitlines():
        if line.startswith("Veracity F1"):
            section = "veracity"
        elif line.startswith("AVeriTeC scores by type"):
            section = "by_type_0.25"
        elif line.startswith("AVeriTeC scores"):
            section = "averitec"
        match = _LINE.match(line)
        if not match:
            continue
        left, value = match["left"].strip(), float(match["value"])
        if left.startswith("Question-only"):
            result["q_only"] = value
        elif left.startswith("Question-answer"):
            result["q_and_a"] = value
        elif m := re.match(r"\* Veracity scores \(meteor @ (.+)\)", left):
            result["averitec"][m[1]] = value
        elif section == "by_type_0.25" and (m := re.match(r"\* Veracity scores \((.+)\)", left)):
            result["by_type_0.25"][m[1]] = value
        elif section == "veracity" and left.startswith("* "):
            result["veracity"][left[2:]] = value
    result["averitec_score"] = result["averitec"].get("0.25")
    return result


def measure(label: str, repeat: int, ours, official) -> None:
    """A first run on a new reference file (empty cache), then ``repeat`` runs with its
    cache, then the official script once; every figure of every run of ours compared."""
    first = ours()
    runs = [ours() for _ in range(repeat)]
    wall = statistics.median(r.wall for r in runs)
    cpu = statistics.median(r.cpu for r in runs)
    print(
        f"{label}: ours first run {first.wall:.2f}s wall, {first.cpu:.2f}s CPU; with the "
        f"references' cache {wall:.2f}s wall, {cpu:.2f}s CPU (medians of {repeat}; walls "
        f"{', '.join(f'{r.wall:.2f}' for r in runs)})",
        flush=True,
    )
    if official is None:
        print(f"{label}: official script not given, no comparison")
        return
    theirs = official()
    worst_overall = 0.0
    for run in (first, *runs):
        diffs = differences(run.result, theirs.result)
        worst = max(diffs, key=lambda d: d[1])
        if worst[1] > TOLERANCE:
            raise SystemExit(f"{label}: {worst[0]} differs from the official by {worst[1]}")
        worst_overall = max(worst_overall, worst[1])
    print(
        f"{label}: official {theirs.wall:.1f}s wall, {theirs.cpu:.1f}s CPU; ratio first run "
        f"{theirs.wall / first.wall:.1f}x wall ({theirs.cpu / first.cpu:.1f}x CPU), cached "
        f"{theirs.wall / wall:.1f}x wall ({theirs.cpu / cpu:.1f}x CPU); {len(diffs)} figures "
        f"of {repeat + 1} runs equal within {TOLERANCE:g} (largest difference "
        f"{worst_overall:.1e})",
        flush=True,
    )


def compare_forms(args: argparse.Namespace, records: list[dict], folder: Path) -> None:
    officials = {"2024": args.official_2024, "2025": args.official_2025}
    for form in args.forms:
        if form == "2023":
            continue
        for case, (predictions, references) in form_inputs(records, folder, form).items():
            cache = fresh_cache(folder)
            script = officials[form]
            measure(
                f"{form} {case}",
                args.repeat,
                lambda f=form, p=predictions, r=references, c=cache: run_ours_form(f, p, r, c),
                (
                    lambda f=form, p=predictions, r=references, s=script: run_official_form(
                        f, s, args.official_pythonpath, p, r
                    )
                )
                if script
                else None,
            )


# --- Main ------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--official", type=Path, help="path of the official eval.py")
    parser.add_argument("--official-pythonpath", help="extra PYTHONPATH for the official script")
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--repeat", type=int, default=3, help="runs of ours per case (median)")
    parser.add_argument("--scale", type=int, default=10, help="copies of dev.json for scaling")
    parser.add_argument(
        "--forms",
        nargs="+",
        choices=["2023", "2024", "2025"],
        default=["2023"],
        help="which scorers to measure (2023 includes the scaling runs)",
    )
    parser.add_argument("--no-scaling", action="store_true", help="skip the 2023 scaling runs")
    parser.add_argument("--official-2024", type=Path, help="path of evaluate_veracity.py")
    parser.add_argument("--official-2025", type=Path, help="path of averitec_evaluate.py")
    args = parser.parse_args()

    dev = args.data_dir / "dev.json"
    if not dev.is_file():
        raise SystemExit(f"{dev} not found (use --data-dir)")
    if args.official and not args.official.is_file():
        raise SystemExit(f"{args.official} not found")
    records = json.loads(dev.read_text(encoding="utf-8"))

    print(f"python {platform.python_version()}, {os.cpu_count()} cores, {platform.platform()}")
    print(f"load average at start: {os.getloadavg()}")
    # The synonym table is built once per installation; build it before timing anything.
    from pipeline.meteor_engine import SynonymTable, fast_path_verified

    started = time.perf_counter()
    if fast_path_verified():
        SynonymTable.load_or_build()
    print(f"synonym table ready in {time.perf_counter() - started:.1f}s (built once, then cached)")

    with tempfile.TemporaryDirectory(prefix="scoring-bench-") as tmp:
        folder = Path(tmp)
        (folder / "dev.json").write_text(json.dumps(records), encoding="utf-8")
        compare_forms(args, records, folder)
        if "2023" in args.forms:
            compare_2023(args, records, dev, folder)
    print(f"load average at end: {os.getloadavg()}")


def compare_2023(args: argparse.Namespace, records: list[dict], dev: Path, folder: Path) -> None:
    files = {"self": (dev, dev)}
    shifted = folder / "shifted.json"
    shifted.write_text(json.dumps(shifted_predictions(records)), encoding="utf-8")
    files["shifted"] = (shifted, dev)

    fresh = folder / "fresh.json"
    fresh.write_text(json.dumps(system_predictions(shifted_predictions(records))), encoding="utf-8")
    files["fresh"] = (fresh, dev)
    for case, (predictions, references) in files.items():
        cache = fresh_cache(folder)
        measure(
            f"2023 {case}",
            args.repeat,
            lambda p=predictions, r=references, c=cache: run_ours(p, r, None, c),
            (
                lambda p=predictions, r=references: run_official(
                    args.official, args.official_pythonpath, p, r
                )
            )
            if args.official
            else None,
        )
    if args.no_scaling:
        return

    # Scaling on distinct copies of the shifted case.
    from pipeline.scoring import count_pairs

    base = len(records)
    sizes = sorted({1, max(1, args.scale // 2), args.scale})
    measured = []
    for copies in sizes:
        refs = folder / f"dev-x{copies}.json"
        preds = folder / f"shifted-x{copies}.json"
        reference_records = replicated(records, copies)
        predicted_records = replicated(shifted_predictions(records), copies)
        refs.write_text(json.dumps(reference_records), encoding="utf-8")
        preds.write_text(json.dumps(predicted_records), encoding="utf-8")
        pairs = count_pairs(predicted_records, reference_records)
        runs = [run_ours(preds, refs, None) for _ in range(args.repeat)]
        wall = statistics.median(r.wall for r in runs)
        inside = statistics.median(r.result["seconds"] for r in runs)
        measured.append((copies * base, pairs, wall, inside))
        print(
            f"scaling: {copies * base} claims, {pairs} distinct METEOR pairs: "
            f"{wall:.2f}s wall, {inside:.2f}s after start-up "
            f"({1e6 * inside / pairs:.0f} us per pair)",
            flush=True,
        )
    (n0, p0, w0, i0), (n1, p1, w1, i1) = measured[0], measured[-1]
    print(
        f"scaling: {n1 // n0}x the claims ({p1 / p0:.1f}x the pairs) took "
        f"{w1 / w0:.1f}x the wall time and {i1 / i0:.1f}x the time after start-up"
    )


if __name__ == "__main__":
    main()
