"""The corpus a command reads when it is given no ``--corpus``.

``./out`` when it holds a corpus (a fixturegen checkout after ``make fixtures``, as the guides
run); otherwise the corpus this fixturegen generates itself, with the default seed, in the
build cache: ``CACHE/corpus/VERSION-CATALOGUE/`` (VERSION the package's, CATALOGUE the
catalogue version), generated and checked by the reference verifier the first time, exactly as
``fixturegen generate`` does, and installed whole (a run killed half way leaves none). So an
installed fixturegen, run from inside an implementation's checkout, needs no corpus of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fixturegen import __version__
from fixturegen.builds.cache import Hold, cache_root
from fixturegen.cases.model import catalogue_version
from fixturegen.output.writer import DEFAULT_SEED, CheckFailed, OutputError, generate
from fixturegen.verify.corpus_check import check_corpus
from fixturegen.verify.manifest_check import ManifestError

#: The folder ``make fixtures`` writes, read when it holds a corpus.
LOCAL = Path("out")


class CorpusUnavailable(Exception):
    """The generated corpus could not be made (one line)."""


def default_corpus(cache: Path | None = None,
                   say: Callable[[str], None] | None = None) -> Path:
    """``./out`` when it holds a manifest, else :func:`generated_corpus`."""
    if (LOCAL / "manifest.json").is_file():
        return LOCAL
    return generated_corpus(cache, say)


def generated_corpus(cache: Path | None = None,
                     say: Callable[[str], None] | None = None) -> Path:
    """The default-seed corpus of this fixturegen in the cache, generated when missing (under
    a lock: two runs at once generate it once). Raises ``CorpusUnavailable``."""
    root = cache_root(cache) / "corpus"
    root.mkdir(parents=True, exist_ok=True)
    dest = root / f"{__version__}-{catalogue_version()}"
    if (dest / "manifest.json").is_file():
        return dest
    with Hold(root / f"{dest.name}.lock", exclusive=True):
        if (dest / "manifest.json").is_file():
            return dest
        if say is not None:
            say(f"harness: no --corpus: generating fixturegen {__version__}'s corpus (seed "
                f"{DEFAULT_SEED!r}) into {dest}")
        try:
            generate(dest, seed=DEFAULT_SEED, check=check_corpus)
        except (CheckFailed, ManifestError) as exc:
            raise CorpusUnavailable(f"the generated corpus failed its check: {exc}") from None
        except (OutputError, OSError) as exc:
            raise CorpusUnavailable(f"cannot generate the corpus into {dest}: {exc}") from None
    return dest
