"""The check ``fixturegen generate`` runs on a staged corpus before it installs it."""

from __future__ import annotations

from pathlib import Path

from fixturegen.verify.manifest_check import check_manifest, format_table
from fixturegen.verify.transcript import TranscriptChecker, check_transcripts
from fixturegen.verify.verifier import Verifier


def check_corpus(staged: Path, manifest: object = None) -> str | None:
    """The check ``fixturegen generate`` runs before it installs a corpus: every fixture and
    every CertificateVerify vector as the reference verifier judges it; a disagreement table,
    or None when all agree."""
    verifier = Verifier()
    problems, _ = check_manifest(staged / "manifest.json", verifier)
    if (staged / "transcripts.json").exists():
        problems += check_transcripts(staged / "transcripts.json", TranscriptChecker(verifier))[0]
    return format_table(problems) if problems else None
