"""One implementation's mutation campaign: list the mutants, run the unmutated build (the
baseline), then each mutant: apply it to the scratch tree, build, run the corpus, run the
implementation's own tests, compare, record. With ``--bugs`` the mutants are the
implementation's reviewed bug models (``adapters/FOLDER/mutation/NAME.bugs.json``, checked
against the pristine tree before anything runs) instead of the tool's listing, each applied
whole and put back whole, activated as the scope's ``bug_activation`` says (never by a switch:
an uninstrumented tree), in a campaign folder and report of their own.

The campaign folder (``--out``, owned by ``fixturegen mutate``)::

    campaign.json      what this campaign is (implementation, version, shard, mode); a folder
                       holding another campaign is refused, one holding this one is resumed
    mutants.jsonl      every mutant the tool listed (all shards), or every bug model
    baseline.json      the unmutated build's verdicts and reasons
    results/N.json     one finished mutant (written whole); a resumed campaign skips these
    work/pristine/     the implementation's source, untouched
    work/tree/         the scratch copy the mutants are written into (put back after each one,
                       and after an interrupt: no mutated file is left behind)
    logs/              build, corpus and upstream-test output of the last mutants
    mutation.json, mutation.md   the report (schema: mutation.schema.json)

The copies of --source (work/pristine) and of the pristine tree (work/tree) hold no link: one
to a file or folder inside the tree is copied as what it names, one that leaves the tree (or
dangles, or loops) is refused, and a mutant is never written through a link. Every file read
back on a resume is checked: a mutant's ``file`` must stay inside the source tree, and a
truncated ``mutants.jsonl`` or result is a one-line error (exit 3), not a traceback.

A mutant is killed by the corpus when a case's verdict differs from the baseline's (a crash or
a hang where the baseline answered counts too; so does an accept that reports another PeerId
than the baseline's accept: the same verdict for another identity), or, every verdict the same,
when a case's
reason changed (the implementation's error text, mapped by the adapter's reviewed table). Every
case runs, so the report can say how many cases kill each mutant (a mutant one case kills is
lost when that case is deleted). Each case gets a time limit derived from the baseline: ten
times the slowest baseline answer, at least two seconds (or the fixed ``--case-timeout``). An
answer that comes after more than 60% of that limit kills the mutant as a hang: the adapter's
own timer answered, not the implementation. A hang (that one, or the driver's) stops the
mutant's run there, as every later case would cost the limit too: its killing cases are those
seen until then (``stopped``).

Every campaign also checks what the implementation makes: the interop stage's ``generate``
requests (:func:`fixturegen.harness.interop.generate_requests`, ``PER_TYPE`` per host key type)
go to the baseline and to each mutant's build (even one the corpus killed), and the reference
verifier checks each certificate made against the PeerId its maker announced
(:func:`generate_check`). A request counts only when the baseline's certificate was accepted (a
host key type the implementation cannot make kills nothing); a mutant whose reply to it is not
a certificate, hangs or crashes, or makes one the reference rejects, is killed by verdict, the
request named ``generate:TYPE#N`` among its killing cases. The certificates are random: only the
reference's verdicts are compared, never bytes. The first hang stops the requests (bounded by
the case limit, as the corpus is).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from statistics import median

from pydantic import ValidationError

from fixturegen import __version__
from fixturegen.builds.build import BuildError, Wanted, ensure
from fixturegen.builds.cache import UNHASHED, tree_hash
from fixturegen.harness import driver, interop
from fixturegen.harness.adapters import Adapter
from fixturegen.harness.driver import Answer
from fixturegen.harness.results import Implementation
from fixturegen.harness.session import Corpus, Target, run_entries
from fixturegen.mutation import bugs as bug_models
from fixturegen.mutation.model import (
    SCHEMA_VERSION,
    CorpusKill,
    Kind,
    Mutant,
    MutantResult,
    MutationFile,
    category,
    count,
    with_cases,
)
from fixturegen.mutation.setup import Ran, Setup, run_script
from fixturegen.mutation.spans import SpanError, apply, original_text, restore
from fixturegen.owned import claim, mark, write_file
from fixturegen.verify.inputs import printable
from fixturegen.verify.verifier import Verifier

COMMAND = "mutate"
#: A mutant's answer that took more than this share of the case limit (itself ten times the
#: baseline's slowest answer) kills it as a hang: the adapter's timer answered, not the library.
SLOW = 0.6
SOURCE_TIMEOUT = 900.0
LIST_TIMEOUT = 1800.0
MIN_CASE_TIMEOUT = 2.0


def case_limit(slowest: float, cap: float, fixed: float | None = None) -> float:
    """A case's time limit: ``fixed`` when given (``--case-timeout``), else ten times the
    baseline's slowest answer, at least :data:`MIN_CASE_TIMEOUT`, at most ``cap``
    (``--timeout``). A limit measured on a loaded machine is larger; a fixed one is not."""
    if fixed is not None:
        return min(cap, fixed)
    return min(cap, max(MIN_CASE_TIMEOUT, 10 * slowest))


class CampaignError(Exception):
    """The campaign cannot run (one line): no source, no mutants, a broken baseline."""


@dataclass(frozen=True)
class Settings:
    mode: str  # api | all (all: handshake entries too, for the handshake-side files)
    shard: tuple[int, int]  # (k, n), 0 <= k < n
    upstream: bool
    timeout: float
    startup: float
    build_timeout: float
    upstream_timeout: float
    limit: int | None = None  # at most this many mutants of the shard (a smoke run)
    only: tuple[str, ...] = ()  # these mutants (by id) and no other
    bugs: bool = False  # the bug models (NAME.bugs.json) instead of the tool's mutants
    case_timeout: float | None = None  # a fixed case limit instead of the derived one


@dataclass(frozen=True)
class Seen:
    """One case of one entry as a build answered it."""

    verdict: str | None
    failure: bool  # hang, crash or error
    reasons: frozenset[str] | None
    seconds: float
    #: The PeerId an accept reported (None otherwise, or not reported).
    peer_id: str | None = None


Observed = dict[tuple[str, str], Seen]  # (entry label, case id) -> what was seen


def shard_of(mutants: Sequence[Mutant], shard: tuple[int, int]) -> list[Mutant]:
    """The cargo-mutants convention: mutant i (in id order) belongs to shard i mod n."""
    k, n = shard
    ordered = sorted(mutants, key=lambda m: m.id)
    return [m for i, m in enumerate(ordered) if i % n == k]


def observe(entries: Sequence[Implementation], setup: Setup) -> Observed:
    out: Observed = {}
    for impl in entries:
        for case in impl.cases:
            failure = case.outcome in ("hang", "crash", "error")
            reasons = None if failure or setup.reasons is None else setup.reasons.codes(
                case.error)
            out[(impl.label, case.id)] = Seen(case.verdict, failure, reasons, case.seconds,
                                              case.peer_id if case.verdict == "accept" else None)
    return out


def compare(base: Observed, mutant: Observed, labels: Sequence[str]) -> CorpusKill:
    """The kill rule: verdicts first, then reasons."""
    by_verdict: list[str] = []
    by_reason: list[str] = []
    for key, before in base.items():
        if key[0] not in labels:
            continue
        after = mutant.get(key)
        name = f"{key[0]}:{key[1]}"
        newly_failed = after is not None and after.failure and not before.failure
        answered = after is not None and not after.failure and not before.failure
        if after is None or newly_failed or (answered and after.verdict != before.verdict) or (
                answered and after.verdict == "accept" and after.peer_id != before.peer_id):
            by_verdict.append(name)
        elif (answered and after.verdict == before.verdict
              and after.reasons != before.reasons
              and (after.reasons is not None or before.reasons is not None)):
            by_reason.append(name)
    return CorpusKill(verdict=by_verdict, reason=by_reason, entries=list(labels))


@dataclass(frozen=True)
class Generated:
    """One ``generate`` request as a build answered it: did the reference verifier accept the
    certificate made (against the PeerId announced), else why not (its error code, or the
    attempt's outcome: skip, reject, error, hang, crash)."""

    accepted: bool
    why: str | None
    seconds: float


GENERATE = "generate"


def generate_name(kind: str, number: int) -> str:
    """A generate request's name among the killing cases: ``generate:ed25519#1``."""
    return f"{GENERATE}:{kind}#{number}"


def generate_check(target: Target, *, timeout: float, startup: float,
                   counted: Sequence[str] | None = None) -> dict[str, Generated]:
    """The interop stage's ``generate`` requests to ``target`` (only those named in ``counted``
    when given), each made certificate checked by the reference verifier; stops at the first
    hang (every later request could cost the limit too; the rest are absent)."""
    reference = Verifier()
    plan = [(kind, request, int(request.id.rsplit(".", 1)[1]))
            for kind, request in interop.generate_requests()]
    if counted is not None:
        plan = [p for p in plan if generate_name(p[0], p[2]) in counted]
    out: dict[str, Generated] = {}
    if not plan:
        return out

    answers: list[Answer] = []

    def told(answer: Answer) -> None:
        answers.append(answer)
        if answer.failure == "hang":
            raise _GenerateHung(answer.id)

    try:
        driver.run(target.argv, [r for _, r, _ in plan], timeout=timeout, startup=startup,
                   progress=told, env=dict(target.env))
    except driver.AdapterStartError as exc:
        return {generate_name(k, n): Generated(False, f"crash: {exc}", 0.0) for k, _, n in plan}
    except _GenerateHung:
        pass  # the answers until the hang, the hang included
    for (kind, _, number), answer in zip(plan, answers, strict=False):
        attempt, made = interop.made_from(target.name, kind, number, answer)
        if made is None:
            why = f"{attempt.outcome}: {attempt.error}" if attempt.error else attempt.outcome
            out[generate_name(kind, number)] = Generated(False, why, answer.seconds)
            continue
        verdict = reference.verify(list(made.chain), expect_peer_id=made.peer_id)
        out[generate_name(kind, number)] = Generated(verdict.accepted, verdict.error,
                                                     answer.seconds)
    return out


class _GenerateHung(Exception):
    """A generate request hung: the requests stop there."""


@dataclass(frozen=True)
class _MadeCheck:
    """The generate requests that count (the baseline's certificate accepted) and their limit
    (ten times the baseline's slowest, as a case's)."""

    counted: tuple[str, ...]
    timeout: float


class _Hung(Exception):
    """A case hung (or answered only when the adapter's timer ran out): the mutant is killed,
    and its run ends there (every later case would cost the limit too)."""

    def __init__(self, case: str, label: str) -> None:
        super().__init__(case)
        self.case, self.label = case, label


class Campaign:
    def __init__(self, adapter: Adapter, setup: Setup, wanted: Wanted, corpus: Corpus,
                 out: Path, *, base: Path, cache: Path, peer_argv: Sequence[str],
                 settings: Settings, say: Callable[[str], None]) -> None:
        self.adapter, self.setup, self.wanted, self.corpus = adapter, setup, wanted, corpus
        self.base, self.cache, self.peer_argv = base, cache, peer_argv
        self.settings, self.say = settings, say
        self.folder = claim(out, COMMAND)
        self.work = self.folder / "work"
        self.pristine, self.tree = self.work / "pristine", self.work / "tree"
        self.logs = self.folder / "logs"
        self.written: set[str] = set()
        self.times: dict[str, list[float]] = {"build": [], "corpus": [], "upstream": []}
        self.version = wanted.version or adapter.version
        self.kind: Kind = "bugs" if settings.bugs else "mutants"
        self.activation = setup.bug_activation if settings.bugs else setup.activation
        self.env_template = setup.bug_env if settings.bugs else setup.env
        self.tool = setup.tool

    def _script(self, args: list[str], *, timeout: float, log: Path,
                env: dict[str, str] | None = None) -> Ran:
        """The adapter's mutate script; its tools and shared targets go into this campaign's
        build cache ($FIXTUREGEN_CACHE), as --cache says."""
        return run_script(self.setup, args, timeout=timeout, log=log,
                          env={"FIXTUREGEN_CACHE": str(self.cache), **(env or {})})

    # -- files ------------------------------------------------------------------------------
    def _write(self, rel: str, text: str) -> None:
        write_file(self.folder, rel, text.encode("utf-8"))
        self.written.add(rel)

    def _identity(self) -> dict[str, object]:
        identity: dict[str, object] = {
            "implementation": self.adapter.name, "version": self.version,
            "source": str(self.wanted.source.resolve()) if self.wanted.source else None,
            "corpus_seed": self.corpus.seed, "mode": self.settings.mode,
            "shard": list(self.settings.shard), "generator": f"fixturegen {__version__}"}
        if self.settings.bugs:
            identity["kind"] = "bugs"
        return identity

    def _start(self) -> None:
        """A new campaign, or the resumption of this one (anything else: refused)."""
        identity = self._identity()
        path = self.folder / "campaign.json"
        if path.is_file():
            try:
                earlier = json.loads(path.read_text())
            except ValueError:
                earlier = None
            if earlier != identity:
                raise CampaignError(f"{self.folder} holds another campaign ({path}): give a "
                                    "new folder, or the same options to resume it")
            self.say(f"mutate: resuming the campaign in {self.folder}")
        self._write("campaign.json", json.dumps(identity, indent=1) + "\n")
        self.logs.mkdir(exist_ok=True)

    def _no_links(self) -> None:
        """The folders a resume writes into are this campaign's own, not links planted in its
        folder (a ``work/tree`` that leads elsewhere would take the mutants there)."""
        for path in (self.work, self.pristine, self.tree, self.logs, self.folder / "results",
                     self.logs / "run"):
            if path.is_symlink() or (path.exists() and not path.is_dir()):
                raise CampaignError(f"{printable(str(path))} is a link or not a folder: a "
                                    "campaign folder holds its own work folders; refused "
                                    "(start the campaign in a new folder)")

    def _source(self) -> None:
        """work/pristine: the source tree mutated (a copy of --source, or the release's)."""
        marker = self.work / "pristine.ok"
        if marker.is_file():
            return
        if self.pristine.exists():
            shutil.rmtree(self.pristine)
        self.work.mkdir(parents=True, exist_ok=True)
        if self.wanted.source is not None:
            copy_confined(self.wanted.source, self.pristine,
                          ignore=shutil.ignore_patterns(*UNHASHED))
        else:
            ran = self._script(["source", "--impl", self.adapter.name, "--version",
                               self.version, "--into", str(self.pristine)],
                               timeout=SOURCE_TIMEOUT, log=self.logs / "source.log")
            if ran.code != 0:
                raise CampaignError(f"{self.adapter.name} {self.version}: cannot get the "
                                    f"source: {ran.last}")
        marker.write_text(tree_hash(self.pristine) + "\n")

    def _tree(self) -> None:
        """work/tree: a fresh copy of the pristine tree (or the one a switch campaign
        instrumented, kept when it exists), with no link in it (copy_confined)."""
        if self.activation == "switch" and (self.work / "tree.instrumented").is_file():
            return
        if self.tree.exists():
            shutil.rmtree(self.tree)
        copy_confined(self.pristine, self.tree)

    def _bugs(self) -> list[Mutant]:
        """The bug models, checked against the pristine tree (on every start: a file changed
        since the campaign began is refused, its finished results would not be its bugs')."""
        path = bug_models.bugs_path(self.base, self.adapter.folder, self.adapter.name)
        if not path.is_file():
            raise CampaignError(f"{self.adapter.name} has no bug models ({path} is missing)")
        try:
            loaded, mutants = bug_models.load(
                path, name=self.adapter.name,
                version=None if self.wanted.source is not None else self.version,
                files=self.setup.bug_scope,
                tree=self.pristine)
        except bug_models.BugsError as exc:
            raise CampaignError(str(exc)) from None
        self.tool = f"bug models {path.name} ({loaded.author})"
        text = "".join(m.model_dump_json() + "\n" for m in mutants)
        listed = self.folder / "mutants.jsonl"
        if listed.is_file() and listed.read_text() != text:
            raise CampaignError(f"{path} changed since the campaign in {self.folder} began: "
                                "give a new folder")
        self._write("mutants.jsonl", text)
        return mutants

    def _mutants(self) -> list[Mutant]:
        if self.settings.bugs:
            return self._bugs()
        path = self.folder / "mutants.jsonl"
        if not path.is_file():
            ran = self._script(["list", "--impl", self.adapter.name, "--tree",
                               str(self.pristine)], timeout=LIST_TIMEOUT,
                               log=self.logs / "list.log")
            if ran.code != 0:
                raise CampaignError(f"{self.setup.tool} cannot list the mutants: {ran.last}")
            lines = [line for line in (self.logs / "list.log").read_text().splitlines()
                     if line.startswith("{")]
            mutants = []
            for m in confined(read_mutants(self.logs / "list.log", lines), self.pristine,
                              self.logs / "list.log"):
                if not m.original:
                    text = (self.pristine / m.file).read_text(encoding="utf-8")
                    try:
                        m = m.model_copy(update={"original": original_text(text, m)})
                    except SpanError as exc:
                        raise CampaignError(f"{m.id}: {exc}") from None
                mutants.append(m)
            if not mutants:
                raise CampaignError(f"{self.setup.tool} listed no mutant in "
                                    f"{', '.join(self.setup.files)}")
            ids = [m.id for m in mutants]
            if len(set(ids)) != len(ids):
                raise CampaignError("the listing names a mutant twice")
            self._write("mutants.jsonl", "".join(m.model_dump_json() + "\n" for m in mutants))
        return confined(read_mutants(path), self.pristine, path)

    # -- builds and runs -----------------------------------------------------------------------
    def _target(self, tree: Path, env: dict[str, str]) -> tuple[Target, float]:
        """The adapter built against ``tree`` (raises BuildError), and the build's seconds."""
        built = ensure(self.adapter.recipe, self.base, Wanted(source=tree), self.cache,
                       timeout=self.settings.build_timeout)
        built.hold.release()  # one campaign at a time uses its own scratch tree
        target = self.adapter.target(self.base, built)
        return replace(target, env=tuple(sorted(env.items()))), built.seconds

    def _env(self, mutant: str) -> dict[str, str]:
        """The adapter's environment for ``mutant`` ("": the baseline): {mutant} its id,
        {switch} the part after its last '#' (the tool's own id), {tree} the scratch tree."""
        switch = mutant.rsplit("#", 1)[-1] if mutant else ""
        return {k: v.replace("{mutant}", mutant).replace("{switch}", switch)
                .replace("{tree}", str(self.tree)) for k, v in self.env_template.items()}

    def _labels(self, mutant: Mutant | None) -> tuple[str, list[str]]:
        """The mode to run and the entries that count for ``mutant`` (None: the baseline)."""
        name = self.adapter.name
        handshake = self.settings.mode == "all" and (
            mutant is None or any(f in self.setup.reaches_handshakes for f in mutant.files))
        entries = [name]
        if handshake:
            chosen = self.setup.handshake_entries or tuple(
                f"{t}-{d}" for t in self.adapter.transports for d in ("dial", "listen"))
            entries += [f"{name}@{e}" for e in chosen]
        return ("all" if handshake else "api"), entries

    def _corpus(self, target: Target, mutant: Mutant | None, timeout: float
                ) -> tuple[Observed, list[str], float]:
        mode, labels = self._labels(mutant)
        start = time.perf_counter()
        scratch = self.logs / "run"
        scratch.mkdir(exist_ok=True)
        done, _ = run_entries(target, self._limited(labels), mode, scratch,
                              peer_argv=self.peer_argv, timeout=timeout,
                              startup=self.settings.startup)
        return observe(done, self.setup), labels, time.perf_counter() - start

    def _mutant_corpus(self, target: Target, mutant: Mutant, timeout: float,
                       baseline: Observed) -> tuple[CorpusKill, float]:
        """The corpus over ``mutant``'s build, every case (the killing cases are counted),
        stopped only at a hang where the baseline answered: killed there, and every later case
        would cost the limit too."""
        mode, labels = self._labels(mutant)
        start = time.perf_counter()
        scratch = self.logs / "run"
        scratch.mkdir(exist_ok=True)

        def told(label: str, answer: Answer) -> None:
            before = baseline.get((label, answer.id))
            if before is None or before.failure:
                return
            if answer.failure == "hang":
                raise _Hung(f"{label}:{answer.id}", label)
            if answer.failure is None and answer.seconds > SLOW * timeout:
                # Answered, but only when the adapter's own timer ran out (the limit is ten
                # times the baseline's slowest answer): the implementation never decided.
                # A hang in all but name, and left alone it costs the whole limit per case.
                raise _Hung(f"{label}:{answer.id} (answered after {answer.seconds:.1f} s, "
                            f"limit {timeout:.1f} s)", label)
            seen.append(f"{label}:{answer.id}" if answer.failure is not None
                        or answer.verdict != before.verdict
                        or (answer.verdict == "accept" and answer.peer_id != before.peer_id)
                        else "")

        seen: list[str] = []
        try:
            done, _ = run_entries(target, self._limited(labels), mode, scratch,
                                  peer_argv=self.peer_argv, timeout=timeout,
                                  startup=self.settings.startup, progress=told)
        except _Hung as hung:
            run = labels[:labels.index(hung.label) + 1]
            return (CorpusKill(verdict=[case for case in seen if case] + [hung.case],
                               reason=[], entries=run, stopped=hung.case),
                    time.perf_counter() - start)
        return (compare(baseline, observe(done, self.setup), labels),
                time.perf_counter() - start)

    def _made_kill(self, target: Target, kill: CorpusKill, check: _MadeCheck) -> CorpusKill:
        """``kill`` with the generate requests that kill the mutant added to its verdict kills
        (``NAME:generate:TYPE#N``): those whose baseline certificate the reference accepted and
        whose mutant's answer it does not."""
        if not check.counted:
            return kill
        made = generate_check(target, timeout=check.timeout, startup=self.settings.startup,
                              counted=check.counted)
        killing = [f"{self.adapter.name}:{name}" for name in check.counted
                   if name in made and not made[name].accepted]
        if not killing:
            return kill
        return kill.model_copy(update={"verdict": [*kill.verdict, *killing]})

    def _limited(self, labels: list[str]) -> Corpus:
        """The corpus with only the handshake entries ``labels`` names."""
        keep = {tuple(label.split("@", 1)[1].split("-")) for label in labels if "@" in label}
        plans = {way: plan for way, plan in self.corpus.plans.items() if way in keep}
        return Corpus(self.corpus.path, self.corpus.seed, self.corpus.api, plans)

    def _upstream(self, env: dict[str, str], files: list[str], log: str,
                  timed: bool = True) -> str:
        ran = self._script(["test", "--impl", self.adapter.name, "--tree",
                           str(self.tree), *[a for f in files for a in ("--file", f)]],
                           timeout=self.settings.upstream_timeout, env=env,
                           log=self.logs / log)
        if timed:  # a mutant's run (the baseline's is not one)
            self.times["upstream"].append(ran.seconds)
        if ran.code == 0:
            return "survived"
        if ran.code == 3:
            return "unviable"
        return "killed"

    # -- the campaign ---------------------------------------------------------------------------
    def run(self) -> MutationFile:
        self._start()
        self._no_links()
        self._source()
        all_mutants = self._mutants()
        chosen = shard_of(all_mutants, self.settings.shard)
        if self.settings.only:
            known = {m.id for m in all_mutants}
            unknown = [i for i in self.settings.only if i not in known]
            if unknown:
                raise CampaignError(f"no mutant {unknown[0]!r} in the listing "
                                    f"({self.folder / 'mutants.jsonl'})")
            chosen = [m for m in chosen if m.id in self.settings.only]
        if self.settings.limit is not None:
            chosen = chosen[:self.settings.limit]
        self.say(f"mutate: {self.adapter.name} {self.version}: {len(all_mutants)} "
                 f"{'bug models' if self.settings.bugs else 'mutants'} "
                 f"({self.tool}), {len(chosen)} in shard "
                 f"{self.settings.shard[0]}/{self.settings.shard[1]}")
        self._tree()
        touched = {f for m in all_mutants for f in m.files}
        try:
            return self._run(chosen, touched)
        finally:
            if self.activation != "switch":
                with contextlib.suppress(OSError):
                    restore(self.tree, self.pristine, touched)

    def _run(self, chosen: list[Mutant], touched: set[str]) -> MutationFile:
        switch = self.activation == "switch"
        once = self.activation in ("switch", "shadow")  # built once, the env picks
        if switch and not (self.work / "tree.instrumented").is_file():
            ran = self._script(["instrument", "--impl", self.adapter.name, "--tree",
                               str(self.tree)], timeout=LIST_TIMEOUT,
                               log=self.logs / "instrument.log")
            if ran.code != 0:
                raise CampaignError(f"cannot instrument {self.tree}: {ran.last}")
            (self.work / "tree.instrumented").write_text("yes\n")
        build_tree = self.pristine if self.activation == "shadow" else self.tree
        try:
            base_target, _ = self._target(build_tree, self._env(""))
        except BuildError as exc:
            raise CampaignError(f"the unmutated build fails: {exc}") from None
        if self.wanted.source is not None:  # VERSION+src.HASH of the unmutated tree
            self.version = base_target.version
        baseline, labels, _ = self._corpus(base_target, None, self.settings.timeout)
        slowest = max((s.seconds for s in baseline.values()), default=1.0)
        timeout = case_limit(slowest, self.settings.timeout, self.settings.case_timeout)
        made = generate_check(base_target, timeout=self.settings.timeout,
                              startup=self.settings.startup)
        counted = tuple(name for name, g in made.items() if g.accepted)
        made_limit = case_limit(max((made[n].seconds for n in counted), default=0.0),
                                self.settings.timeout, self.settings.case_timeout)
        upstream_ok, upstream_text = self._baseline_upstream()
        self._write("baseline.json", json.dumps(
            {"entries": labels, "case_timeout": timeout, "upstream": upstream_text,
             "cases": {f"{k[0]}:{k[1]}": [s.verdict, s.failure, sorted(s.reasons or []),
                                          s.peer_id]
                       for k, s in sorted(baseline.items())},
             "generate_timeout": made_limit,
             "generate": {name: [g.accepted, g.why] for name, g in made.items()}},
            indent=0) + "\n")
        self.say(f"mutate: baseline: {len(baseline)} case answers; case limit {timeout:.1f} s; "
                 f"generate: the reference accepts {len(counted)} of {len(made)} certificates "
                 f"made; upstream tests: {upstream_text}")
        check = _MadeCheck(counted, made_limit)
        for number, mutant in enumerate(chosen, 1):
            rel = f"results/{_slug(mutant.id)}.json"
            if (self.folder / rel).is_file() and not self.settings.only:
                self.written.add(rel)  # resumed; a mutant named by --mutant runs again
                continue
            result = self._one(mutant, base_target if once else None, baseline, timeout,
                               upstream_ok, touched, check)
            self._write(rel, result.model_dump_json(indent=1) + "\n")
            self.say(f"mutate: {number}/{len(chosen)} {mutant.id}: {result.status} "
                     f"({result.category}{'; ' + result.note if result.note else ''})")
            self._save_marker()
        return self._report(chosen, upstream_text)

    def _baseline_upstream(self) -> tuple[bool, str]:
        if not self.settings.upstream:
            return False, "not run (--no-upstream)"
        outcome = self._upstream(self._env(""), [], "upstream-baseline.log", timed=False)
        if outcome != "survived":
            tail = _last_line(self.logs / "upstream-baseline.log")
            why = "they cannot run" if outcome == "unviable" else "they do not pass"
            return False, f"not run: {why} on the unmutated tree ({tail})"
        return True, self.setup.upstream or "the implementation's own tests"

    def _one(self, mutant: Mutant, built_once: Target | None, baseline: Observed,
             timeout: float, upstream_ok: bool, touched: set[str], check: _MadeCheck
             ) -> MutantResult:
        start = time.perf_counter()
        reviewed = self.setup.survivors.get(mutant.id)
        if reviewed is not None and reviewed[0] == "equivalent":
            return MutantResult(mutant=mutant, status="equivalent", category="equivalent",
                                corpus=None, upstream="not_run", note=reviewed[1],
                                survivor="equivalent", seconds=0.0)
        env = self._env(mutant.id)
        try:
            if self.activation != "switch":
                restore(self.tree, self.pristine, touched)
                apply(self.tree, self.pristine, mutant)
            if built_once is not None:
                target = replace(built_once, env=tuple(sorted(env.items())))
            else:
                target, seconds = self._target(self.tree, env)
                self.times["build"].append(seconds)
        except (BuildError, SpanError) as exc:
            return MutantResult(mutant=mutant, status="unviable", category="unviable",
                                corpus=None, upstream="not_run", note=_short(str(exc)),
                                survivor="", seconds=round(time.perf_counter() - start, 2))
        kill, seconds = self._mutant_corpus(target, mutant, timeout, baseline)
        kill = self._made_kill(target, kill, check)
        self.times["corpus"].append(seconds)
        upstream = "not_run"
        if upstream_ok:
            upstream = self._upstream(env, mutant.files, "upstream-mutant.log")
            if upstream == "killed":
                # Confirmed before it counts: an implementation's own tests can fail once on
                # a busy machine (rust-libp2p's tests/smoke.rs did) and pass again.
                upstream = self._upstream(env, mutant.files, "upstream-mutant.again.log")
        killed = bool(kill.verdict or kill.reason)
        cat = category(killed, upstream)
        survivor: str = ""
        note = ""
        if not killed:
            verdict, note = reviewed if reviewed is not None else ("unreviewed", "")
            survivor = verdict
        return with_cases(MutantResult(
            mutant=mutant, status="killed" if cat != "survived" else "survived",
            category=cat, corpus=kill, upstream=upstream,  # type: ignore[arg-type]
            note=note, survivor=survivor,  # type: ignore[arg-type]
            seconds=round(time.perf_counter() - start, 2)))

    def _save_marker(self) -> None:
        mark(self.folder, COMMAND, self.written | {"work", "logs"})

    def _report(self, chosen: list[Mutant], upstream_text: str) -> MutationFile:
        from fixturegen.mutation.report import html, markdown, review

        results = [read_result(self.folder / f"results/{_slug(m.id)}.json", m) for m in chosen]
        report = build_file(self.adapter.name, self.version, self.setup, results,
                            f"{self.settings.shard[0]}/{self.settings.shard[1]}"
                            if self.settings.shard != (0, 1) else None,
                            self.corpus, self.settings.mode, upstream_text,
                            {k: round(median(v), 2) for k, v in self.times.items() if v},
                            kind=self.kind, tool=self.tool)
        report = review(report, self.setup.survivors)  # a review made since a mutant ran
        self._write("mutation.json", report.model_dump_json(indent=1) + "\n")
        self._write("mutation.md", markdown(report))
        self._write("mutation.html", html(report))
        self._save_marker()
        return report


# -- what a campaign folder holds is read back as untrusted --------------------------------------

MAX_CAMPAIGN_FILE = 64 * 1024 * 1024


def read_mutants(path: Path, lines: Sequence[str] | None = None) -> list[Mutant]:
    """The mutants of ``mutants.jsonl`` (or of a listing's ``lines``): a line that does not
    parse (a truncated file) is a CampaignError naming the file and line, not a traceback."""
    if lines is None:
        try:
            if path.stat().st_size > MAX_CAMPAIGN_FILE:
                raise CampaignError(f"{printable(str(path))}: larger than {MAX_CAMPAIGN_FILE} "
                                    "bytes")
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise CampaignError(f"cannot read {printable(str(path))}: {exc}") from None
    mutants = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            mutants.append(Mutant.model_validate_json(line))
        except ValidationError as exc:
            raise CampaignError(f"{printable(str(path))}: line {number} is not a mutant "
                                f"({_first_error(exc)}): a truncated or edited file; start "
                                "the campaign in a new folder") from None
    return mutants


def confined(mutants: list[Mutant], tree: Path, where: Path) -> list[Mutant]:
    """``mutants``, each ``file`` checked to name a file inside ``tree`` (relative, no ``..``,
    no link leaving it): a campaign folder's ``mutants.jsonl`` is read back on a resume, and a
    path out of the tree would have a mutant rewrite (and never restore) a file elsewhere."""
    root = Path(os.path.realpath(tree))
    for m in mutants:
        rel = Path(m.file)
        if (not m.file or "\x00" in m.file or rel.is_absolute() or ".." in rel.parts
                or not Path(os.path.realpath(root / rel)).is_relative_to(root)
                or Path(os.path.realpath(root / rel)) == root):
            raise CampaignError(f"{printable(str(where))}: mutant {printable(m.id)!r} names the "
                                f"file {printable(m.file)!r}, which is not inside the source "
                                "tree: refused (nothing was written)")
    return mutants


def read_result(path: Path, mutant: Mutant) -> MutantResult:
    """One finished mutant's ``results/N.json``, checked to be that mutant's."""
    try:
        if path.stat().st_size > MAX_CAMPAIGN_FILE:
            raise CampaignError(f"{printable(str(path))}: larger than {MAX_CAMPAIGN_FILE} bytes")
        result = MutantResult.model_validate_json(path.read_bytes())
    except OSError as exc:
        raise CampaignError(f"cannot read {printable(str(path))}: {exc.strerror or exc}"
                            ) from None
    except ValidationError as exc:
        raise CampaignError(f"{printable(str(path))}: not a mutant's result "
                            f"({_first_error(exc)}): delete it to run the mutant again"
                            ) from None
    if result.mutant != mutant:
        raise CampaignError(f"{printable(str(path))}: the result of another mutant than "
                            f"{printable(mutant.id)!r}: delete it to run the mutant again")
    return result


def _first_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "the line"
    return " ".join(f"{where}: {first['msg']}".split())[:200]


def copy_confined(source: Path, into: Path,
                  ignore: Callable[[str, list[str]], set[str]] | None = None) -> None:
    """Copy the tree ``source`` to ``into`` (new) with no link in the copy: a link to a file or
    folder inside ``source`` is copied as that file or folder, a link that leaves ``source``
    (or dangles, or loops) is refused with a CampaignError, and no copy is left. A mutant is
    written into the copy; a link there could carry the write to a file outside it."""
    root = Path(os.path.realpath(source))

    def copy(real: Path, target: Path, shown: Path, stack: frozenset[Path]) -> None:
        target.mkdir()
        names = sorted(os.listdir(real))
        skipped = ignore(str(real), names) if ignore is not None else set()
        for name in names:
            if name in skipped:
                continue
            entry, here = real / name, shown / name
            resolved = Path(os.path.realpath(entry))
            if entry.is_symlink() and (not resolved.is_relative_to(root)
                                       or not os.path.exists(resolved)):
                raise CampaignError(f"{printable(str(here))} is a link that leaves the source "
                                    f"tree {printable(str(source))} (or names nothing): a "
                                    "mutant could be written through it; refused")
            if resolved.is_dir():
                if resolved in stack:
                    raise CampaignError(f"{printable(str(here))} is a link that loops: refused")
                copy(resolved, target / name, here, stack | {resolved})
            elif resolved.is_file():
                shutil.copy2(resolved, target / name)
            # a FIFO, socket or device is not source: left out

    try:
        copy(root, into, source, frozenset({root}))
    except BaseException:
        shutil.rmtree(into, ignore_errors=True)  # no half copy left
        raise


def build_file(name: str, version: str, setup: Setup, results: list[MutantResult],
               shard: str | None, corpus: Corpus, mode: str, upstream: str,
               seconds: dict[str, float], *, kind: Kind = "mutants", tool: str | None = None
               ) -> MutationFile:
    upstream_ran = not upstream.startswith("not run")
    results = [with_cases(r) for r in results]
    return MutationFile(
        schema_version=SCHEMA_VERSION, generator=f"fixturegen {__version__}",
        implementation=name, version=version, tool=tool or setup.tool, kind=kind,
        scope=list(setup.files),
        shard=shard, corpus=str(corpus.path), seed=corpus.seed,
        catalogue_version=corpus.catalogue, mode=mode,  # type: ignore[arg-type]
        upstream=upstream, counts=count(results, upstream_ran), seconds_per_mutant=seconds,
        mutants=sorted(results, key=lambda r: r.mutant.id))


def _slug(mutant_id: str) -> str:
    import hashlib
    import re

    head = re.sub(r"[^A-Za-z0-9._-]+", "_", mutant_id)[:80]
    return f"{head}-{hashlib.sha256(mutant_id.encode()).hexdigest()[:8]}"


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297] + "..."


def _last_line(path: Path) -> str:
    try:
        lines = [line.strip() for line in path.read_text(errors="replace").splitlines()
                 if line.strip()]
    except OSError:
        return "no log"
    return _short(lines[-1]) if lines else "no output"
