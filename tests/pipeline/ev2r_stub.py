"""A chat-completions API on 127.0.0.1 that judges Ev2R prompts by a fixed rule.

The rule, so that tests can compute the expected recall: the reference and predicted texts
of the prompt (after its last "Claim:") are cut into facts at every "?" and line break; a
fact is supported when the other side holds it word for word. The reply is the JSON the
official prompts ask for, wrapped in some chatter as a model writes it.

Prompts can steer the stub: "FLAKY" answers 503 the first time it is seen, "GARBLED" gets a
reply without any JSON, "SLOW" is answered after `slow_seconds`.
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_SIDES = re.compile(
    r"Reference (?P<kind>evidence|questions): (?P<reference>.*)\n"
    r"Predicted (?P=kind): (?P<predicted>.*)\nOutput:",
    re.DOTALL,
)


def facts(text: str) -> list[str]:
    return [piece.strip() for piece in re.split(r"[?\n]", text) if piece.strip()]


def judged(prompt: str) -> dict:
    """The stub's verdict on one prompt (the JSON object of its reply)."""
    tail = prompt[prompt.rindex("Claim:") :]
    match = _SIDES.search(tail)
    assert match, f"not an Ev2R prompt: {tail[:200]!r}"
    kind, reference, predicted = match["kind"], match["reference"], match["predicted"]
    ref_facts, pred_facts = facts(reference), facts(predicted)
    return {
        f"facts count predicted {kind}": len(pred_facts),
        f"support predicted {kind}": sum(f in reference for f in pred_facts),
        f"facts count reference {kind}": len(ref_facts),
        f"support reference {kind}": sum(f in predicted for f in ref_facts),
    }


class StubLLM:
    def __init__(self, slow_seconds: float = 1.0):
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.slow_seconds = slow_seconds
        self._seen_flaky: set[str] = set()
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length))
                with stub._lock:
                    stub.requests.append(body)
                    stub.headers.append(dict(self.headers))
                status, reply = stub.answer(self.path, body)
                data = json.dumps(reply).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (the time-limit test)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_port}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def answer(self, path: str, body: dict) -> tuple[int, dict]:
        if path != "/v1/chat/completions":
            return 404, {"error": "no such endpoint"}
        prompt = body["messages"][0]["content"]
        if "FLAKY" in prompt:
            with self._lock:
                first = prompt not in self._seen_flaky
                self._seen_flaky.add(prompt)
            if first:
                return 503, {"error": "busy"}
        if "SLOW" in prompt:
            time.sleep(self.slow_seconds)
        if "GARBLED" in prompt:
            text = "I am not able to judge this evidence."
        else:
            text = "Here is my judgement.\nOutput: " + json.dumps(judged(prompt)) + "\nDone."
        return 200, {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}

    def __enter__(self) -> StubLLM:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=5)


# Stand-in templates, in our own words, shaped as the official ones: three {} at the end.
STAND_IN_PROPERTIES = '''
import torch  # the official file imports heavy modules: it must be read, never run

ATOMIC_QUESTION_REFERENCE_PROMPT_PREC_RECALL = """Compare the questions; answer in JSON {{"a": 1}}.
Input:

Claim: {}
Reference questions: {}
Predicted questions: {}
Output:
"""

ATOMIC_REFERENCE_PROMPT_PREC_RECALL = """Compare the evidence; answer in JSON {{"a": 1}}.
Input:

Claim: {}
Reference evidence: {}
Predicted evidence: {}
Output:
"""
'''
