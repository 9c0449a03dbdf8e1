"""The output of a fuzzing campaign: every cluster's representative as a corpus (DER and a
manifest in the usual schema, so ``fixturegen harness run --corpus DIR`` replays it),
``fuzz.json`` (its schema generated from :class:`FuzzReport`) and ``summary.md``."""

from __future__ import annotations

import hashlib
import os
import resource
import tempfile
from pathlib import Path
from typing import Literal

from pydantic import Field

from fixturegen import __version__
from fixturegen.fuzz.campaign import Campaign, Cluster, Mutant
from fixturegen.markdown import code, md
from fixturegen.model.manifest import (
    SCHEMA_VERSION,
    CertificateInfo,
    Expected,
    Fixture,
    FrozenModel,
    Generator,
    Manifest,
    dumps,
    json_schema,
    manifest_schema,
)
from fixturegen.owned import NotOwned, check, publish
from fixturegen.verify.codes import ERROR_CODES, NOTES, ErrorCode, Flag

FUZZ_SCHEMA_VERSION = 1


class ReferenceVerdict(FrozenModel):
    verdict: Literal["accept", "reject", "crash", "hang"]
    error: str | None


class StepInfo(FrozenModel):
    operator: str
    value: int
    resign: bool


class ClusterInfo(FrozenModel):
    id: str = Field(description="The representative's fixture id in manifest.json")
    implementation: str = Field(description="Who disagrees ('independent': the check of "
                                "fuzz/independent.py against the reference)")
    operator: str = Field(description="The minimised mutant's operators, '+'-joined")
    count: int = Field(description="Mutants in the cluster (all of them counted, whether or "
                       "not kept)")
    reference: ReferenceVerdict
    verdicts: dict[str, str] = Field(description="The representative's verdict from each "
                                     "implementation (accept, reject, skip, hang, crash, error)")
    status: Literal["covered", "new", "documented"]
    reason: str = Field(description="For a documented reference finding: why it is expected")
    parent: str = Field(description="The catalogue fixture the mutant was made from")
    steps: list[StepInfo]
    signed: bool = Field(description="False: a step kept the old self-signature on purpose")


class FuzzReport(FrozenModel):
    schema_version: int = Field(ge=1, le=FUZZ_SCHEMA_VERSION, description="The format's version: "
                                "a newer one is refused, not misread")
    generator: Generator
    seed: str
    mutants: int = Field(description="How many mutants were tried")
    seconds: float
    throughput: dict[str, float] = Field(description="Mutants per second: 'reference' (the "
                                         "reference verifier alone) and each implementation")
    reference_slowest_seconds: float
    answers: dict[str, dict[str, int]] = Field(
        default_factory=dict, description="Per implementation, its answers by kind: verdicts "
        "(accept or reject), skips, errors (protocol errors, no verdict), hangs, crashes. "
        "Disagreements are counted over verdicts, hangs and crashes only: an implementation "
        "with no verdicts was not compared")
    reference_crashes: int = Field(description="Mutants on which the reference verifier "
                                   "raised (each also a reference finding)")
    reference_hangs: int = Field(description="Mutants the reference verifier took more than "
                                 "its limit on (each also a reference finding)")
    max_rss_mib: float = Field(description="The fuzzing process's peak memory (the reference "
                               "verifier runs in it; adapters are separate processes)")
    clusters: list[ClusterInfo]
    reference_findings: list[ClusterInfo] = Field(
        description="Where the reference and the independent check differ")


def fuzz_schema() -> dict[str, object]:
    return json_schema(FuzzReport, "fuzz")


def _fixture(c: Campaign, m: Mutant, cluster: Cluster, path: str, key_path: str) -> Fixture:
    parent = c.by_id[m.parent].rendered.fixture
    ref = c.references[m.id]
    flags = [Flag(f) for f in ref.flags if f in Flag._value2member_map_]
    result: Literal["valid", "invalid", "acceptable"] = (
        "invalid" if ref.verdict != "accept" else "acceptable" if flags else "valid")
    steps = ", ".join(f"{s.operator}({s.value:x}{'' if s.resign else ', unsigned'})"
                      for s in m.steps)
    return Fixture(
        id=m.id, path=path, chain=[path], sha256=hashlib.sha256(m.der).hexdigest(),
        sha512=hashlib.sha512(m.der).hexdigest(),
        description=f"A mutant of {parent.id} ({steps}): {cluster.implementation} says "
                    f"{cluster.verdict}, the reference {cluster.reference_key}.",
        rule=f"found by fixturegen fuzz: {cluster.operator}", flags=flags, importance=None,
        certificate=CertificateInfo(
            signature_scheme=parent.certificate.signature_scheme,
            key=parent.certificate.key, not_before=parent.certificate.not_before,
            not_after=parent.certificate.not_after, serial=parent.certificate.serial,
            extension_critical=parent.certificate.extension_critical),
        certificate_key_path=key_path, host_key=parent.host_key, expect_peer_id=None,
        imported_from=None,
        expected=Expected(result=result,
                          error=ErrorCode(ref.error) if ref.error in ERROR_CODES else None,
                          peer_id=ref.peer_id if ref.verdict == "accept" else None))


def _info(c: Campaign, cluster: Cluster) -> ClusterInfo:
    m = cluster.representative
    assert m is not None
    ref = c.references[m.id]
    return ClusterInfo(
        id=m.id, implementation=cluster.implementation, operator=cluster.operator,
        count=cluster.count,
        reference=ReferenceVerdict(verdict=ref.verdict,  # type: ignore[arg-type]
                                   error=ref.error),
        verdicts=cluster.verdicts, status=cluster.status,  # type: ignore[arg-type]
        reason=cluster.reason, parent=m.parent,
        steps=[StepInfo(operator=s.operator, value=s.value, resign=s.resign) for s in m.steps],
        signed=m.signed)


def report(c: Campaign, clusters: list[Cluster], findings: list[Cluster], seed: str,
           seconds: float) -> FuzzReport:
    n = c.tried
    throughput = {"reference": round(n / c.reference_seconds, 1) if c.reference_seconds else 0.0}
    throughput |= {name: round(n / s, 1) for name, s in c.seconds.items() if s}
    return FuzzReport(
        schema_version=FUZZ_SCHEMA_VERSION,
        generator=Generator(name="fixturegen", version=__version__), seed=seed, mutants=n,
        seconds=round(seconds, 1), throughput=throughput,
        reference_slowest_seconds=round(c.reference_slowest, 4), answers=c.answers,
        reference_crashes=c.reference_crashes, reference_hangs=c.reference_hangs,
        max_rss_mib=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        clusters=[_info(c, x) for x in clusters],
        reference_findings=[_info(c, x) for x in findings])


def summary(r: FuzzReport) -> str:
    lines = [f"# fixturegen fuzz: {r.mutants} mutants in {r.seconds:.0f} s (seed "
             f"{code(r.seed)})", "", "| who | mutants/s |", "|---|---|"]
    lines += [f"| {md(k)} | {v:.0f} |" for k, v in r.throughput.items()]
    if r.answers:
        lines += ["", "| implementation | verdicts | skips | protocol errors | hangs | crashes |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {md(k)} | {a['verdicts']} | {a['skips']} | {a['errors']} | {a['hangs']} "
                  f"| {a['crashes']} |" for k, a in r.answers.items()]
    lines += ["", f"Reference verifier: {r.reference_crashes} tracebacks, "
              f"{r.reference_hangs} over its time limit, slowest mutant "
              f"{r.reference_slowest_seconds * 1000:.1f} ms; peak memory of the run "
              f"{r.max_rss_mib:.0f} MiB.", "",
              "## Clusters (implementation differs from the reference)", "",
              "| status | implementation | reference | says | operator | mutants | "
              "representative |", "|---|---|---|---|---|---|---|"]
    for x in r.clusters:
        ref = x.reference.error or x.reference.verdict
        lines.append(f"| {x.status} | {md(x.implementation)} | {md(ref)} | "
                     f"{md(x.verdicts[x.implementation])} | {md(x.operator)} | {x.count} | "
                     f"{code(x.id)} |")
    lines += ["", "## The reference against the independent check", "",
              "| status | reference | independent | operator | mutants | representative | "
              "why |", "|---|---|---|---|---|---|---|"]
    for x in r.reference_findings:
        ref = x.reference.error or x.reference.verdict
        lines.append(f"| {x.status} | {md(ref)} | {md(x.verdicts['independent'])} | "
                     f"{md(x.operator)} | {x.count} | {code(x.id)} | {md(x.reason)} |")
    lines += ["", "Replay: `fixturegen harness run --corpus THIS_FOLDER --impl NAME`; each "
              "representative is in manifest.json with the reference's verdict as expected."]
    return "\n".join(lines) + "\n"


class FuzzOutputError(Exception):
    """The output folder cannot be used (exit code 2)."""


COMMAND = "fuzz"


def check_out(out: Path) -> None:
    """A new or empty folder, or one an earlier ``fuzz`` wrote (its marker says so)."""
    try:
        check(out, COMMAND)
    except NotOwned as exc:
        raise FuzzOutputError(str(exc)) from None


def check_writable(out: Path) -> None:
    """Before a campaign: a file can be made where the report goes (in ``out`` when it exists,
    a mount point included, else in its nearest existing parent), so that a long run does not
    end unable to write."""
    base = out
    while not base.exists() and base != base.parent:
        base = base.parent
    try:
        os.rmdir(tempfile.mkdtemp(prefix=f".{out.name}.probe-", dir=base))
    except OSError as exc:
        raise FuzzOutputError(f"cannot write in {base}: {exc.strerror or exc}") from None


def write(c: Campaign, clusters: list[Cluster], findings: list[Cluster], r: FuzzReport,
          out: Path) -> None:
    """Write the report into ``out`` (inside it: a mount point is never renamed), replacing
    only what an earlier ``fuzz`` wrote there."""
    files: dict[str, bytes] = {}
    fixtures: dict[str, Fixture] = {}
    for cluster in [*clusters, *findings]:
        m = cluster.representative
        assert m is not None
        if m.id in fixtures:
            continue
        path, key_path = f"certs/{m.id}.der", f"keys/{m.parent}.pem"
        files[path] = m.der
        parent = c.by_id[m.parent].rendered
        files[key_path] = parent.key_pem
        fixtures[m.id] = _fixture(c, m, cluster, path, key_path)
    used = sorted({f for fx in fixtures.values() for f in fx.flags})
    manifest = Manifest(
        schema_version=SCHEMA_VERSION,
        generator=Generator(name="fixturegen", version=__version__), seed=r.seed,
        reproducible=True, notes={f: NOTES[f] for f in used},
        error_codes=dict(ERROR_CODES), fixtures=list(fixtures.values()))
    files["manifest.json"] = dumps(manifest.model_dump(mode="json")).encode()
    files["manifest.schema.json"] = dumps(manifest_schema()).encode()
    files["fuzz.json"] = dumps(r.model_dump(mode="json")).encode()
    files["fuzz.schema.json"] = dumps(fuzz_schema()).encode()
    files["summary.md"] = summary(r).encode()
    try:
        publish(out, COMMAND, files.items())
    except NotOwned as exc:
        raise FuzzOutputError(str(exc)) from None
