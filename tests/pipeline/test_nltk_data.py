"""Where the pipeline finds its NLTK data (pipeline.nltk_data). No network, no DB."""

from __future__ import annotations

from pathlib import Path

import nltk.data
import pytest

from pipeline import nltk_data
from pipeline.nltk_data import configure


@pytest.fixture
def nltk_path(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A private copy of nltk.data.path, restored afterwards (configure() mutates it)."""
    path = list(nltk.data.path)
    monkeypatch.setattr(nltk.data, "path", path)
    return path


def test_configure_puts_the_target_first_exactly_once(tmp_path: Path, nltk_path: list[str]) -> None:
    configure(tmp_path)
    configure(tmp_path)
    configure(str(tmp_path) + "/.")
    assert nltk_path[0] == str(tmp_path.resolve())
    assert [p for p in nltk_path if Path(p).resolve() == tmp_path.resolve()] == [nltk_path[0]]


def test_default_target_honours_nltk_data_then_falls_back_to_var(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NLTK_DATA", f"{tmp_path}/first:{tmp_path}/second")
    assert nltk_data.default_target() == tmp_path / "first"
    monkeypatch.delenv("NLTK_DATA")
    assert nltk_data.default_target() == Path(__file__).resolve().parents[2] / "var/nltk_data"
