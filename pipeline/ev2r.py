"""Ev2R: the 2025 shared task's evidence recall, judged by an LLM, as ``averitec_evaluate.py``.

For each claim the official script sends two prompts to a chat-completions API (Llama 3.3
70B, temperature 0, at most 3,000 tokens): one with the reference and predicted *questions*
(each list joined with spaces), one with the reference and predicted *evidence* (the ``evi``
cells as they are). The model splits both sides into atomic facts, says how many of each are
supported by the other side, and answers with a JSON object somewhere in its text. Then:

* the reply is cut to its first ``{...}`` (non-greedy, across lines) and read as JSON; any
  failure there, a missing key or a zero count makes that claim's score "none";
* recall = "support reference …" / "facts count reference …"; a claim without a score
  counts 0;
* reported: the mean question recall ("Q only (Ev2R recall)"), the mean evidence recall
  ("Q + A (Ev2R recall)") and the new AVeriTeC score: the share of claims whose evidence
  recall is above 0.5 and whose label is right. As in the official ``extract_ev2r_score``,
  the evidence score of position i is the reply whose ``id`` equals i: with ids 0..n-1 (every
  export's) that is each claim's own.

The prompt texts are the organisers' (``ATOMIC_QUESTION_REFERENCE_PROMPT_PREC_RECALL`` and
``ATOMIC_REFERENCE_PROMPT_PREC_RECALL`` of their ``properties.py``). They are not copied into
this project: :func:`load_prompts` reads them from a copy of that file (``EV2R_PROMPTS_FILE``)
without running it, and says whether they are the versions pinned here by SHA-256.

The client (:class:`ChatClient`) is the one way out to the LLM: a bounded time per request,
a bounded number of retries with backoff on connection errors, timeouts, 429 and 5xx, and a
cache keyed by the whole request (model, parameters and prompt), so a rerun sends nothing.
No Django here.
"""

from __future__ import annotations

import ast
import hashlib
import ipaddress
import json
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import requests

__all__ = [
    "ChatClient",
    "Ev2RError",
    "Prompts",
    "ResponseCache",
    "check_base_url",
    "ev2r_scores",
    "load_prompts",
]

# The official request's parameters.
TEMPERATURE = 0
MAX_TOKENS = 3000
# The official reporting level: evidence recall above this, with the right label, counts.
RECALL_LEVEL = 0.5
PROMPT_NAMES = {
    "question": "ATOMIC_QUESTION_REFERENCE_PROMPT_PREC_RECALL",
    "qa_pair": "ATOMIC_REFERENCE_PROMPT_PREC_RECALL",
}
# SHA-256 of the two templates in properties.py of Raldir/FEVER-8-Shared-Task, commit
# 5bf344fc725ea0f32cd5e48504d5ae34af953bcf (26 April 2025).
PINNED_SHA256 = {
    "question": "10eb8bec3686c197ae145f1b4dfc374c3d4179581b70150269a2d94773d24e50",
    "qa_pair": "6b4296ad6422454e430b45caa74c2ad4595a08d192a883672531895fc2c45f88",
}
# The reply's keys per kind of prompt: (support, facts count) on the reference side.
RECALL_KEYS = {
    "question": ("support reference questions", "facts count reference questions"),
    "qa_pair": ("support reference evidence", "facts count reference evidence"),
}
PRECISION_KEYS = {
    "question": ("support predicted questions", "facts count predicted questions"),
    "qa_pair": ("support predicted evidence", "facts count predicted evidence"),
}
# HTTP answers worth asking again: rate limits and the server's own failures.
RETRY_STATUS = {429, 500, 502, 503, 504}
_QUESTION_END, _PAIR_END = "\t\t\n", "\t\t\n\n"

Progress = Callable[[int], None]


def _no_progress(_: int) -> None:
    pass


class Ev2RError(Exception):
    """Ev2R cannot run: its configuration, its prompts file or its endpoint."""


# --------------------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------------------


def check_base_url(url: str) -> str:
    """``url`` as the base of an OpenAI-compatible API, or ValueError saying what is wrong.

    http(s) with a host and nothing after the path; plain http only to this machine, so that
    the API key never crosses a network in clear.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"must be an http(s) address such as https://host/v1, not {url!r}")
    if parts.username or parts.password:
        raise ValueError("must not hold a user name or password (use EV2R_API_KEY)")
    if parts.query or parts.fragment:
        raise ValueError("must not have a query (?) or fragment (#)")
    if parts.scheme == "http" and not _is_loopback(parts.hostname):
        raise ValueError("must use https unless the server is on this machine")
    return url.rstrip("/")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Prompts:
    """The two official templates, each with three ``{}``: claim, reference, prediction."""

    question: str
    qa_pair: str
    source: str
    pinned: bool

    def template(self, kind: str) -> str:
        return self.question if kind == "question" else self.qa_pair


def load_prompts(path: str | Path) -> Prompts:
    """The templates from a copy of the official ``properties.py``, read, never run."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError) as exc:
        raise Ev2RError(f"EV2R_PROMPTS_FILE {path}: cannot be read as Python ({exc})") from exc
    found: dict[str, str] = {}
    wanted = {name: kind for kind, name in PROMPT_NAMES.items()}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id in wanted
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            found[wanted[node.targets[0].id]] = node.value.value
    missing = [PROMPT_NAMES[kind] for kind in PROMPT_NAMES if kind not in found]
    if missing:
        raise Ev2RError(f"EV2R_PROMPTS_FILE {path}: no {' or '.join(missing)} in it")
    for kind, text in found.items():
        if text.count("{}") != 3:
            raise Ev2RError(
                f"EV2R_PROMPTS_FILE {path}: {PROMPT_NAMES[kind]} must have three {{}} "
                "(claim, reference, prediction)"
            )
    pinned = all(
        hashlib.sha256(found[kind].encode()).hexdigest() == PINNED_SHA256[kind]
        for kind in PROMPT_NAMES
    )
    return Prompts(found["question"], found["qa_pair"], str(path), pinned)


# --------------------------------------------------------------------------------------
# The client and its cache
# --------------------------------------------------------------------------------------


class ResponseCache:
    """Replies by request digest, in a SQLite file shared by processes (or in memory)."""

    def __init__(self, path: str | Path = ":memory:"):
        self._path = str(path)
        if self._path != ":memory:":
            Path(self._path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self._path, timeout=30, check_same_thread=False)
        with self._lock, self._db:
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, reply TEXT NOT NULL)"
            )

    def get(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def put(self, key: str, reply: str) -> None:
        with self._lock, self._db:
            self._db.execute("INSERT OR REPLACE INTO replies VALUES (?, ?)", (key, reply))


@dataclass
class ClientStats:
    sent: int = 0
    cached: int = 0
    retried: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)


class ChatClient:
    """POST ``{base_url}/chat/completions`` as the official ``openai`` client call does."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str = "",
        *,
        timeout: float = 120.0,
        retries: int = 3,
        backoff: float = 2.0,
        cache: ResponseCache | None = None,
        session: requests.Session | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if not model:
            raise Ev2RError("EV2R_MODEL is not set")
        try:
            self.base_url = check_base_url(base_url)
        except ValueError as exc:
            raise Ev2RError(f"EV2R_BASE_URL {exc}") from exc
        self.model, self.api_key = model, api_key
        self.timeout, self.retries, self.backoff = timeout, retries, backoff
        self.cache = cache if cache is not None else ResponseCache()
        self.session = session or requests.Session()
        self.sleep = sleep
        self.stats = ClientStats()
        self._stats_lock = threading.Lock()

    def body(self, prompt: str) -> dict[str, Any]:
        """The official request: one user message, temperature 0, at most 3,000 tokens."""
        return {
            "messages": [{"role": "user", "content": prompt}],
            "model": self.model,
            "temperature": TEMPERATURE,
            "max_tokens": MAX_TOKENS,
        }

    @staticmethod
    def key(body: dict[str, Any]) -> str:
        return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()

    def complete(self, prompt: str) -> str | None:
        """The model's reply text, from the cache if asked before; None if it never came."""
        body = self.body(prompt)
        key = self.key(body)
        cached = self.cache.get(key)
        if cached is not None:
            self._count(cached=1)
            return cached
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        error = ""
        for attempt in range(self.retries + 1):  # bounded: one try and `retries` more
            if attempt:
                self._count(retried=1)
                self.sleep(self.backoff * 2 ** (attempt - 1))
            self._count(sent=1)
            try:
                response = self.session.post(
                    f"{self.base_url}/chat/completions",
                    json=body,
                    headers=headers,
                    timeout=self.timeout,
                )
            except (requests.ConnectionError, requests.Timeout) as exc:
                error = f"{exc.__class__.__name__}: {exc}"
                continue
            except requests.RequestException as exc:
                error = f"{exc.__class__.__name__}: {exc}"
                break
            if response.status_code in RETRY_STATUS:
                error = f"HTTP {response.status_code}"
                continue
            if response.status_code != 200:
                error = f"HTTP {response.status_code}: {response.text[:200]}"
                break
            try:
                reply = response.json()["choices"][0]["message"]["content"]
            except (ValueError, KeyError, IndexError, TypeError):
                error = "the answer is not a chat completion"
                break
            if not isinstance(reply, str):
                error = "the answer's message has no text"
                break
            self.cache.put(key, reply)
            return reply
        self._count(failed=1, error=error)
        return None

    def _count(self, error: str = "", **counts: int) -> None:
        with self._stats_lock:
            for name, n in counts.items():
                setattr(self.stats, name, getattr(self.stats, name) + n)
            if error and len(self.stats.errors) < 10:
                self.stats.errors.append(error)


# --------------------------------------------------------------------------------------
# Scores
# --------------------------------------------------------------------------------------


def first_json_object(reply: str) -> str:
    """The official cut: the first ``{`` to the next ``}``, or "" when there is none."""
    matches = re.findall(r"\{(.*?)\}", reply, re.DOTALL)
    return "{" + matches[0] + "}" if matches else ""


def precision_recall(reply: str | None, kind: str) -> tuple[float, float] | None:
    """(precision, recall) from a reply, or None wherever the official reading fails."""
    try:
        data = json.loads(first_json_object(reply or ""))
        support, count = RECALL_KEYS[kind]
        p_support, p_count = PRECISION_KEYS[kind]
        return data[p_support] / data[p_count], data[support] / data[count]
    except (ValueError, KeyError, TypeError, ZeroDivisionError, AttributeError):
        return None


def question_evidence(evi: str) -> str:
    """The questions of an ``evi`` cell joined with spaces (official ``prepare_dataset``)."""
    questions = (chunk.split(_QUESTION_END)[0] for chunk in evi.split(_PAIR_END))
    return " ".join(q for q in questions if q)


def prompts_for(
    prompts: Prompts,
    kind: str,
    predictions: Sequence[dict[str, Any]],
    references: Sequence[dict[str, Any]],
) -> list[str]:
    """One prompt per claim: the reference's claim, reference evidence, predicted evidence."""
    template = prompts.template(kind)
    out = []
    for pred, ref in zip(predictions, references, strict=True):
        if kind == "question":
            out.append(
                template.format(
                    ref["claim"], question_evidence(ref["evi"]), question_evidence(pred["evi"])
                )
            )
        else:
            out.append(template.format(ref["claim"], ref["evi"], pred["evi"]))
    return out


@dataclass
class Ev2RResult:
    metrics: dict[str, float]
    notes: list[str]
    question_recall: list[float]
    evidence_recall: list[float]


def ev2r_scores(
    predictions: Sequence[dict[str, Any]],
    references: Sequence[dict[str, Any]],
    client: ChatClient,
    prompts: Prompts,
    *,
    workers: int = 4,
    progress: Progress = _no_progress,
) -> Ev2RResult:
    """Ev2R of rows already matched and ordered as the official script orders them (by id).

    ``progress`` counts prompts answered (two per claim).
    """
    replies: dict[str, list[str | None]] = {}
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for kind in ("question", "qa_pair"):
            texts = prompts_for(prompts, kind, predictions, references)

            def ask(prompt: str) -> str | None:
                reply = client.complete(prompt)
                progress(1)
                return reply

            replies[kind] = list(pool.map(ask, texts))

    q_scores = [precision_recall(r, "question") for r in replies["question"]]
    qa_scores = [precision_recall(r, "qa_pair") for r in replies["qa_pair"]]
    q_recall = [s[1] if s else 0.0 for s in q_scores]
    ids = [ref["id"] for ref in references]
    hits, qa_recall = [], []
    for i, (pred, ref) in enumerate(zip(predictions, references, strict=True)):
        # The official extract_ev2r_score: position i takes the reply whose id is i.
        found = None
        for reply_id, score in zip(ids, qa_scores, strict=True):
            if score is not None and reply_id == i:
                found = score
                break
            if score is not None and reply_id > i:
                break
        recall = found[1] if found else 0.0
        hit = 1.0 if found and recall > RECALL_LEVEL and pred["label"] == ref["label"] else 0.0
        hits.append([hit])
        qa_recall.append(recall)
    notes = []
    if ids != list(range(len(ids))):
        notes.append(
            "the reference ids are not 0..n-1: as in the official script, a claim's Ev2R "
            "evidence score is the one of the reply whose id equals its position"
        )
    unread = sum(s is None for s in q_scores + qa_scores)
    if client.stats.failed:
        notes.append(
            f"{client.stats.failed} Ev2R request(s) got no answer after retries "
            f"({'; '.join(client.stats.errors[:3])}); their claims count 0, as in the "
            "official script"
        )
    if unread:
        notes.append(f"{unread} Ev2R answer(s) could not be read; their claims count 0")
    if not prompts.pinned:
        notes.append(
            f"the Ev2R prompts in {prompts.source} are not the official versions pinned by "
            "this platform"
        )
    metrics = {
        "ev2r_q_recall": float(np.mean(np.array(q_recall), axis=0)),
        "ev2r_qa_recall": float(np.mean(np.array(qa_recall), axis=0)),
        "new_averitec_score": float(np.mean(np.array(hits), axis=0)[0]),
    }
    return Ev2RResult(metrics, notes, q_recall, qa_recall)
