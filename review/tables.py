"""The dashboard's tables: each figure laid out as (header, rows), the same rows for the page
and for each CSV download, and the page's HTML of a table's body."""

from __future__ import annotations

from django.utils.html import escape
from django.utils.safestring import mark_safe

from review.templatetags.figures import figure, heading

TABLE_TITLES = {
    "agreement": "Verdict agreement",
    "per_label": "Agreement per label",
    "annotator_pairs": "Cohen's kappa per annotator pair",
    "confusion": "Confusion matrices (long form)",
    "evidence": "Evidence agreement (Hungarian METEOR)",
    "phases": "Per phase",
    "days": "Per day",
    "outcomes": "Skips, disputes, discards, re-annotation",
    "annotators": "Per annotator",
    "stuck": "Stuck work",
}
# Tables made from the progress figures alone: their CSV needs no agreement figure.
PROGRESS_TABLES = ("phases", "days", "outcomes", "annotators", "stuck")


def _interval(figures: dict, name: str) -> tuple:
    interval = figures["intervals"].get(name)
    return tuple(interval) if interval else (None, None)


def tables(agreement: dict, progress: dict) -> dict[str, tuple[list[str], list[list]]]:
    """Every dashboard table as (header, rows), keyed by its CSV name."""
    return {**agreement_tables(agreement), **progress_tables(progress)}


def agreement_tables(agreement: dict) -> dict[str, tuple[list[str], list[list]]]:
    verdicts = agreement["verdicts"]
    out: dict[str, tuple[list[str], list[list]]] = {}
    out["agreement"] = (
        [
            "comparison",
            "k",
            "items",
            "left_out_rated_once",
            "ratings",
            "resampled",
            "percent_agreement",
            "randolph_kappa",
            "randolph_low",
            "randolph_high",
            "fleiss_kappa",
            "fleiss_low",
            "fleiss_high",
        ],
        [
            [
                v["title"],
                v["k"],
                v["items"],
                v["left_out"],
                v["ratings"],
                f"{v['bootstrap']['units']} {v['bootstrap']['unit']}s",
                v["percent_agreement"],
                v["randolph_kappa"],
                *_interval(v, "randolph_kappa"),
                v["fleiss_kappa"],
                *_interval(v, "fleiss_kappa"),
            ]
            for v in verdicts.values()
        ],
    )
    out["per_label"] = (
        ["comparison", "label", "specific_agreement"],
        [
            [v["title"], label, share]
            for v in verdicts.values()
            for label, share in v["per_label"].items()
        ],
    )
    out["annotator_pairs"] = (
        ["comparison", "k", "first", "second", "items", "percent_agreement", "cohen_kappa"],
        [
            [
                v["title"],
                v["k"],
                p["first"],
                p["second"],
                p["items"],
                p["percent_agreement"],
                p["cohen_kappa"],
            ]
            for v in verdicts.values()
            for p in v["annotator_pairs"]
        ],
    )
    out["confusion"] = (
        ["comparison", "row", "column", "count"],
        [
            [f"{c['rows']} vs {c['columns']}", row_label, column_label, c["matrix"][i][j]]
            for c in agreement["confusion"]
            for i, row_label in enumerate(c["labels"])
            for j, column_label in enumerate(c["labels"])
        ],
    )
    out["evidence"] = evidence_table(agreement["evidence"])
    return out


def evidence_table(evidence: dict | None) -> tuple[list[str], list[list]]:
    evidence = evidence or {"claims": 0, "q_only": None, "q_and_a": None}
    return (
        ["claims", "q_only", "q_and_a", "pending"],
        [[evidence["claims"], evidence["q_only"], evidence["q_and_a"], evidence.get("pending")]],
    )


def progress_tables(progress: dict) -> dict[str, tuple[list[str], list[list]]]:
    out: dict[str, tuple[list[str], list[list]]] = {}
    out["phases"] = (
        ["phase", "done", "median_minutes", "speed_traps"],
        [
            [f"P{p['phase']}", p["done"], p["median_minutes"], p["speed_traps"]]
            for p in progress["phases"]
        ],
    )
    day_columns = list(progress["days"][0]) if progress["days"] else ["day"]
    out["days"] = (day_columns, [[d[c] for c in day_columns] for d in progress["days"]])
    outcomes = progress["outcomes"]
    out["outcomes"] = (
        ["measure", "value"],
        [[k, v] for k, v in outcomes.items() if k != "skip_reasons"]
        + [[f"skip reason: {k}", v] for k, v in outcomes["skip_reasons"].items()],
    )
    annotator_columns = [
        "annotator",
        "tasks_done",
        "done_p1",
        "done_p2",
        "done_p3",
        "done_p4",
        "done_p5",
        "median_minutes",
        "agreement_with_others",
        "p2_confirmed_in_p3",
        "flags_received",
        "speed_traps",
        "skips",
        "skips_before_article",
        "questions_per_claim",
    ]
    out["annotators"] = (
        annotator_columns,
        [[row[c] for c in annotator_columns] for row in progress["annotators"]],
    )
    out["stuck"] = (
        ["task", "phase", "claim", "what", "waiting_since", "reason", "could_qualify"],
        [
            [
                s["task"],
                f"P{s['phase']}",
                s["claim"],
                s["what"],
                s["waiting_since"],
                s["reason"],
                " ".join(s["could_qualify"]),
            ]
            for s in progress["stuck"]
        ],
    )
    return out


# Tables the page cuts to their weakest rows (the CSV and the printable report keep every
# row): a campaign of 200 annotators has a thousand and more annotator pairs.
PAGE_ROWS = {"annotator_pairs": 50}


def _weakest_first(row: list) -> tuple:
    kappa = row[-1]
    return (kappa is None, kappa if kappa is not None else 0.0)


def page_table(key: str, header: list[str], rows: list[list], *, whole: bool = False) -> dict:
    """A table for review/_table.html, its body rendered here: thousands of cells (per
    annotator, per day) cost a template loop most of a page's time. Unless `whole`, a table
    of PAGE_ROWS shows its weakest rows only, and says so."""
    note = ""
    limit = None if whole else PAGE_ROWS.get(key)
    if limit is not None and len(rows) > limit:
        note = f"The {limit} lowest of {len(rows)}; the CSV holds every row."
        rows = sorted(rows, key=_weakest_first)[:limit]
    starts = [f'<td data-label="{escape(heading(h))}">' for h in header]
    # Every cell is escaped here.
    body = mark_safe(
        "".join(
            "<tr>"
            + "".join(
                f"{start}{escape(figure(cell))}</td>"
                for start, cell in zip(starts, row, strict=True)
            )
            + "</tr>"
            for row in rows
        )
    )
    return {"title": TABLE_TITLES[key], "header": header, "rows": rows, "body": body, "note": note}
