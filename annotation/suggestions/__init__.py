"""Pre-suggestions: which task may see which kind, the pool behind them, and their log.

The rules live here once, one module per concern: kinds.py (which kinds a task may see),
pool.py (the pool: records, build job, loading), context.py (what a suggestion knows of a
claim), generators.py (the suggestions themselves), log.py (the anchoring log), reports.py
(the managers' figures: acceptance, the A/B split). The P1 and P2/P4 screens, the log
endpoint, the manager page, the Celery job and the command all call them:

* **Which kinds a task may see** (``kinds.kinds_for``): P1 gets likely duplicates and claim
  types/strategies; P2 and P4 get question templates, a search query and ranked sentences;
  the blind phases P3 and P5 get nothing, ever. A manager can switch kinds off per batch,
  and while a batch runs an A/B split, each new task draws its arm once, at creation
  (``Task.suggestion_arm``); the "without" arm gets no suggestions at all.
* **Only the past** (``context.claim_context``): every suggestion for a claim reads only claims
  dated before it and never a claim of its article (the pipeline's one mask); the benchmark
  builds the same context from dev.json and calls the same methods.
* **No verdict outside P1**: only the duplicate list carries verdicts (a P1 annotator reads
  the fact-check's verdict in the article anyway); P2/P4 suggestions are question texts,
  words and sentence numbers. Even there, a duplicate shows its verdict only when the
  annotator can never be asked to judge it blind (annotation/visibility.py).
* **Anchoring log**: every suggestion shown is a ``Suggestion`` row, once per task
  however often it is asked for (a unique constraint on its fingerprint); accepting,
  editing or ignoring it stamps that row (``log.record_outcome``).

The pool (BM25 indexes and classifiers of :mod:`pipeline.suggest`) is built from accepted
claims by ``pool.build_pool`` into ``settings.SUGGESTION_POOL_DIR`` and read by the web
process once, again only when a newer build is written (``pool.current_pool``).
"""
