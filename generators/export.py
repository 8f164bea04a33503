"""Draw a reproducible batch of cases and write them as a fixture corpus.

Hypothesis is built to run tests, not to hand out values; drawing through a
``@given`` function with a fixed ``@seed``, the generate phase only and no
example database is what makes the same seed give byte-identical cases.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from stella_conform._version import __version__
from stella_conform.errors import SetupError, read_json_file
from stella_conform.generators.cases import Case, cases
from stella_conform.oracle.corpus import EXPECT_SUFFIX, write_fixture
from stella_conform.safe_files import write_atomic
from stella_conform.schemas.vocabulary import Vocabulary

DRAW_SETTINGS = settings(
    database=None,
    phases=[Phase.generate],
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=False,
)


def draw_cases(
    count: int,
    seed: int,
    vocab: Vocabulary | None = None,
    *,
    mutations: Sequence[str] | None = None,
    max_mutations: int = 2,
) -> list[Case]:
    """``count`` cases, the same ones for the same seed (and kit and Hypothesis version)."""
    vocab = vocab or Vocabulary.default()
    valid = cases(vocab, max_mutations=0)
    mutated = cases(
        vocab, mutations=mutations, min_mutations=min(1, max_mutations), max_mutations=max_mutations
    )
    # about one case in five is an unmutated valid run; the rest carry mutations
    strategy = st.integers(0, 4).flatmap(lambda k: valid if k == 0 else mutated)
    out: list[Case] = []
    round_ = 0
    while len(out) < count:
        batch = _draw_batch(strategy, count - len(out), seed * 1_000 + round_)
        if not batch:
            break
        out.extend(batch[: count - len(out)])
        round_ += 1
    return out


def _draw_batch(strategy: st.SearchStrategy[Case], count: int, seed: int) -> list[Case]:
    batch: list[Case] = []

    @hypothesis_seed(seed)
    @settings(DRAW_SETTINGS, max_examples=count)
    @given(strategy)
    def collect(case: Case) -> None:
        batch.append(case)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        collect()
    return batch


def case_name(index: int, case: Case) -> str:
    label = "+".join(case.mutations) if case.mutations else "valid"
    return f"{index:04d}-{label}"


MANIFEST = "corpus.json"


def _remove_exported(directory: Path, existing: list[Path]) -> None:
    """Delete the files a previous export wrote, as its manifest lists them; nothing else.

    A folder with a ``*.jsonl`` the manifest does not list (someone's own fixtures, a
    journal) is refused as a whole: ``--force`` replaces a corpus, it does not clean up.
    """
    try:
        doc = read_json_file(directory / MANIFEST, "corpus manifest")
    except SetupError:
        doc = None
    files = doc.get("files") if isinstance(doc, dict) else None
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise SetupError(
            f"{directory} holds fixtures but no manifest ({MANIFEST} with 'files') of a corpus "
            "the kit exported: refusing to delete them"
        )
    listed = {f for f in files if f == Path(f).name}  # plain names only, never a path
    strangers = [p.name for p in existing if p.name not in listed]
    if strangers:
        raise SetupError(
            f"{directory} holds files the kit did not export ({strangers[0]}): refusing to "
            "replace it"
        )
    for name in sorted(listed):
        path = directory / name
        if path.is_symlink() or path.is_file():
            path.unlink()


def export_corpus(
    directory: Path,
    *,
    count: int,
    seed: int,
    vocab: Vocabulary | None = None,
    force: bool = False,
    max_mutations: int = 2,
) -> list[str]:
    """Write ``count`` generated cases to ``directory`` in the fixture format."""
    vocab = vocab or Vocabulary.default()
    if count < 1:
        raise SetupError("--count must be at least 1")
    if directory.exists() and not directory.is_dir():
        raise SetupError(f"not a directory: {directory}")
    if directory.is_dir():
        existing = sorted(directory.glob("*.jsonl")) + sorted(directory.glob("*" + EXPECT_SUFFIX))
        if existing and not force:
            raise SetupError(f"{directory} already holds a corpus; use --force to replace it")
        if existing:
            _remove_exported(directory, existing)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        names = []
        for index, case in enumerate(
            draw_cases(count, seed, vocab, max_mutations=max_mutations), 1
        ):
            name = case_name(index, case)
            description = "generated: " + (", ".join(case.mutations) or "unmutated valid run")
            write_fixture(
                directory,
                name,
                case.stream,
                case.expectation(description=description, seed=seed, vocab=vocab),
            )
            names.append(name)
        manifest = {
            "generator": f"stella-conform {__version__}",
            "seed": seed,
            "count": count,
            "vocabulary": vocab.ident,
            "max_mutations": max_mutations,
            # what --force may delete next time: exactly these files, nothing else
            "files": [f"{n}{suffix}" for n in names for suffix in (".jsonl", EXPECT_SUFFIX)],
        }
        write_atomic(directory / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    except OSError as exc:
        raise SetupError(f"cannot write corpus to {directory}: {exc.strerror or exc}") from None
    return names
