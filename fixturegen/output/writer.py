"""Write a corpus: build every case, write into a temporary folder beside ``out``, check it
with the reference verifier, and only then replace ``out`` whole (renamed in, with the
stopping signals held: fixturegen/owned.py). A failed or interrupted run leaves the previous
corpus as it was; a reader never sees certificates of one run under another's manifest."""

from __future__ import annotations

import fnmatch
import functools
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from cryptography.hazmat.primitives import serialization

from fixturegen import __version__
from fixturegen.cases import CATALOGUE, Case
from fixturegen.cases.model import Rendered
from fixturegen.keys import KeyKind, KeyPair
from fixturegen.model.manifest import (
    SCHEMA_VERSION,
    Generator,
    Manifest,
    dumps,
    manifest_schema,
)
from fixturegen.model.transcripts import (
    TRANSCRIPTS_SCHEMA_VERSION,
    TranscriptsFile,
    transcripts_schema,
)
from fixturegen.output.render import render_readme
from fixturegen.owned import NotOwned, install, recover
from fixturegen.owned import check as may_write
from fixturegen.workers import CAN_FORK, WorkerDied, Workers

DEFAULT_SEED = "libp2p-fixturegen"


class OutputError(Exception):
    """The output folder cannot be written (a usage error: exit code 2)."""


class CheckFailed(Exception):
    """The reference verifier disagrees with the manifest (exit code 1)."""

    def __init__(self, message: str, report: str) -> None:
        super().__init__(message)
        self.report = report


def select(only: str | None, *, with_firsts: bool = False) -> list[Case]:
    """The cases whose id matches the glob ``only`` (all without one); ``with_firsts``: with
    each case that a chosen one is checked after (what a corpus needs to run it as declared)."""
    if not only:
        return list(CATALOGUE)
    matched = {c.id for c in CATALOGUE if fnmatch.fnmatchcase(c.id, only)}
    if not matched:
        raise OutputError(f"--only {only!r} matches no case (see `fixturegen list`)")
    wanted = matched | ({c.after for c in CATALOGUE if c.id in matched and c.after}
                        if with_firsts else set())
    return [c for c in CATALOGUE if c.id in wanted]


def case_by_id(case_id: str) -> Case:
    for c in CATALOGUE:
        if c.id == case_id:
            return c
    raise KeyError(case_id)


def render_case(case_id: str, seed: bytes, user_key: bytes | None = None) -> Rendered:
    """Build one case by its id (what a worker process is given; a user's key as PKCS#8 PEM)."""
    return case_by_id(case_id).render(seed, _user_keys(user_key))


@functools.cache
def _user_keys(pem: bytes | None) -> dict[KeyKind, KeyPair]:
    if pem is None:
        return {}
    private = serialization.load_pem_private_key(pem, None)
    kind = KeyKind.of(private)
    return {kind: KeyPair.of(kind, private, "user")}


def render_all(cases: list[Case], seed: bytes, progress: Callable[[], None] | None = None,
               workers: int | None = None, user_key: KeyPair | None = None) -> list[Rendered]:
    """Build the cases, on every core; the result is in catalogue order whatever the timing."""
    workers = min(workers or min(len(cases) // 16 + 1, 4), len(cases) // 4 + 1,
                  os.cpu_count() or 1)  # capped by the work and the machine: --jobs 1000 forks 2
    ids = [c.id for c in cases]
    pem = user_key.pkcs8_pem() if user_key is not None else None
    if workers <= 1 or not CAN_FORK:
        return _collect((render_case(i, seed, pem) for i in ids), progress)
    try:
        with Workers(workers) as pool:
            return _collect(pool.map(render_case, ids, [seed] * len(ids), [pem] * len(ids),
                                     chunksize=4), progress)
    except WorkerDied as exc:
        raise OutputError(f"a worker process died while building the corpus ({exc})") from None


def _collect(results: Iterable[Rendered], progress: Callable[[], None] | None
             ) -> list[Rendered]:
    out = []
    for r in results:
        out.append(r)
        if progress:
            progress()
    return out


def build_manifest(rendered: list[Rendered], seed_text: str | None) -> Manifest:
    from fixturegen.cases.model import catalogue_version
    from fixturegen.verify.codes import ERROR_CODES, NOTES

    used = sorted({f for r in rendered for f in r.fixture.flags})
    return Manifest(
        schema_version=SCHEMA_VERSION,
        generator=Generator(name="fixturegen", version=__version__),
        seed=seed_text,
        catalogue=catalogue_version(),
        reproducible=seed_text is not None,
        notes={f: NOTES[f] for f in used},
        error_codes=dict(ERROR_CODES),
        fixtures=[r.fixture for r in rendered],
    )


def build_transcripts(rendered: list[Rendered], seed: bytes, seed_text: str | None
                      ) -> TranscriptsFile:
    """CertificateVerify vectors and proof sets for the rendered certificates."""
    from fixturegen.cases import transcripts as tc
    from fixturegen.keys import KeyKind
    from fixturegen.keys.derive import derive_private_key
    from fixturegen.verify.codes import ERROR_CODES, NOTES

    needed = tc.needed_certificates()
    certs = [
        tc.CertificateInput(r.fixture, tc.load_key(r.key_pem))
        for r in rendered
        if r.fixture.expected.error is None or r.fixture.id in needed
    ]
    other = derive_private_key(KeyKind.P256, seed, "transcripts/other-key")
    vectors, proof_sets = tc.build_vectors(seed, certs, other)
    used = sorted({f for v in vectors for f in v.flags})
    return TranscriptsFile(
        schema_version=TRANSCRIPTS_SCHEMA_VERSION,
        generator=Generator(name="fixturegen", version=__version__),
        seed=seed_text, reproducible=seed_text is not None,
        notes={f: NOTES[f] for f in used}, error_codes=dict(ERROR_CODES),
        vectors=vectors, proof_sets=proof_sets,
    )


def write_tree(root: Path, rendered: list[Rendered], manifest: Manifest,
               transcripts: TranscriptsFile | None = None) -> None:
    (root / "certs").mkdir()
    (root / "keys").mkdir()
    for r in rendered:
        for rel, data in r.files:
            (root / rel).write_bytes(data)
    (root / "manifest.json").write_text(dumps(manifest.model_dump(mode="json")))
    (root / "manifest.schema.json").write_text(dumps(manifest_schema()))
    (root / "README.md").write_text(render_readme(manifest))
    if transcripts is not None:
        (root / "transcripts.json").write_text(dumps(transcripts.model_dump(mode="json")))
        (root / "transcripts.schema.json").write_text(dumps(transcripts_schema()))


def clean_stale(out: Path, where: Path | None = None) -> list[Path]:
    """Remove what an earlier, killed run left beside ``out`` (or in ``where``, inside a
    mount point); the paths it removed: :func:`fixturegen.owned.recover` (a staged
    ``.OUT.tmp-PID-*`` goes; an old corpus ``.OUT.old-PID`` is put back if ``out`` is
    missing)."""
    return recover(out, where)


COMMAND = "generate"


Check = Callable[[Path, Manifest], str | None]


def generate(
    out: Path,
    *,
    seed: str | None = DEFAULT_SEED,
    only: str | None = None,
    progress: Callable[[], None] | None = None,
    check: Check | None = None,
    workers: int | None = None,
    user_key: KeyPair | None = None,
) -> Manifest:
    """Build, write, check and install a corpus. ``seed=None`` means fresh randomness.

    ``check`` gets the staged folder and returns a disagreement report (or None when all
    agree); on a report nothing is installed and :class:`CheckFailed` is raised.
    """
    cases = select(only, with_firsts=True)
    if user_key is not None and not user_key.kind.fixed:
        raise OutputError(f"--certificate-key: a {user_key.kind} key stands in for the fixed key "
                          f"of its kind, and no fixture uses a fixed {user_key.kind} key (fixed "
                          f"kinds: {', '.join(k for k in KeyKind if k.fixed)})")
    try:
        out = may_write(out, COMMAND)
    except NotOwned as exc:
        raise OutputError(str(exc)) from None
    except OSError as exc:
        raise OutputError(f"cannot use {out}: {exc.strerror or exc}") from None
    # Staged beside OUT; inside it when it is a mount point (never renamed: written inside).
    parent = out if os.path.ismount(out) else out.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        clean_stale(out, parent)
        staged = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-{os.getpid()}-", dir=parent))
        os.chmod(staged, 0o755)  # a corpus is meant to be shared (mkdtemp makes it 0700)
    except OSError as exc:
        raise OutputError(f"cannot write to {parent}: {exc.strerror or exc}") from exc
    try:
        seed_bytes = seed.encode() if seed is not None else os.urandom(32)
        rendered = render_all(cases, seed_bytes, progress, workers, user_key)
        if user_key is not None and not any(r.fixture.certificate.key.source == "user"
                                            for r in rendered):
            raise OutputError(f"--certificate-key: no fixture here has a fixed {user_key.kind} "
                              "certificate key for it to stand in for (see `fixturegen list`)")
        manifest = build_manifest(rendered, seed)
        transcripts = build_transcripts(rendered, seed_bytes, seed)
        write_tree(staged, rendered, manifest, transcripts)
        if check is not None:
            report = check(staged, manifest)
            if report:
                raise CheckFailed("the reference verifier disagrees with the manifest", report)
        install(out, COMMAND, staged)  # swapped in whole (fixturegen/owned.py)
    except NotOwned as exc:
        raise OutputError(str(exc)) from None
    except OSError as exc:
        raise OutputError(f"cannot write the corpus: {exc}") from exc
    finally:
        if staged.exists():
            shutil.rmtree(staged, ignore_errors=True)
    return manifest
