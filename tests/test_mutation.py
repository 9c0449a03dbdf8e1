"""Mutation campaigns (fixturegen.mutation): the kill rule (verdict, then reason), unviable and
equivalent mutants, the upstream tests, shards and merge, resuming, an interrupt that leaves no
mutated file behind. The implementation is a stand-in verifier with a real mutation setup
(tests/adapters/mutable: its own listing tool, build script and tests); the shipped adapters'
campaigns run under make mutation."""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fixturegen.builds.build import Wanted
from fixturegen.builds.cache import cache_root
from fixturegen.harness.adapters import Adapter
from fixturegen.harness.reasons import ReasonTableError, load_table
from fixturegen.harness.session import read_corpus
from fixturegen.mutation.campaign import (
    MIN_CASE_TIMEOUT,
    Campaign,
    CampaignError,
    Seen,
    Settings,
    case_limit,
    compare,
    shard_of,
)
from fixturegen.mutation.model import MutationFile
from fixturegen.mutation.report import MergeError, dumps, load, merge, review
from fixturegen.mutation.setup import load_setup
from fixturegen.owned import NotOwned
from tests.signals import default_signals

TESTS = Path(__file__).resolve().parent
ADAPTER = Adapter("test-mutable", "a stand-in verifier", "1.0.0", "mutable", ("./artefact",),
                  verifier="testimpl.verify.check", marker="artefact", ecosystem="pypi",
                  registry_name="test-mutable", since="1.0.0")
FILE = "testimpl/verify.py"


def campaign(adapters: Path, corpus: Path, out: Path, cache: Path, *,
             shard: tuple[int, int] = (0, 1), limit: int | None = None,
             said: list[str] | None = None, only: tuple[str, ...] = (),
             bugs: bool = False, timeout: float = 10.0,
             case_timeout: float | None = None, upstream: bool = True,
             source: Path | None = None) -> Campaign:
    """A campaign over the stand-in implementation (version 1.0.0, or the tree ``source``)."""
    setup = load_setup(adapters, "mutable", "test-mutable")
    loaded = read_corpus(corpus, transcripts=False, handshakes=False, timeout=10.0)
    settings = Settings("api", shard, upstream, timeout, 30.0, 120.0, 60.0, limit, only, bugs,
                        case_timeout)
    wanted = Wanted(source=source) if source is not None else Wanted(version="1.0.0")
    return Campaign(ADAPTER, setup, wanted, loaded, out, base=adapters,
                    cache=cache, peer_argv=[], settings=settings,
                    say=(said.append if said is not None else lambda _: None))


def by_operator(report: MutationFile) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for r in report.mutants:
        out.setdefault(r.mutant.operator, []).append(r.category)
    return out


def builds(cache: Path) -> int:
    log = cache / "shared" / "mutable" / "builds.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


@pytest.mark.slow
def test_a_campaign_kills_by_verdict_then_by_reason(corpus: Path, adapters: Path,
                                                   tmp_path: Path) -> None:
    cache = cache_root(tmp_path / "cache")
    report = campaign(adapters, corpus, tmp_path / "m", cache).run()
    seen = {r.mutant.id: r for r in report.mutants}
    # A changed verdict (an id test turned around): killed by the corpus and the tests.
    first = seen[f"{FILE}:6:15:startswith-to-endswith"]
    assert first.status == "killed" and first.category == "both"
    # Every case runs (not only up to the first kill): each self-signature case the baseline
    # rejected is now accepted, and each is listed, and counted as a killing case.
    baseline = json.loads((tmp_path / "m" / "baseline.json").read_text())["cases"]
    turned = sorted(name for name, (verdict, _, _, _) in baseline.items()
                    if name.startswith("test-mutable:invalid.self-signature") and
                    verdict == "reject")
    assert first.corpus is not None and len(turned) > 1
    assert sorted(first.corpus.verdict) == turned and not first.corpus.reason
    assert first.killing_cases == len(turned) and first.corpus.stopped is None
    # Same verdicts, another reason (an extension-signature case now says self-signature):
    # a kill by reason only, which the upstream tests miss.
    swap = seen[f"{FILE}:9:26:reason-swap"]
    assert swap.category == "corpus_only" and swap.corpus is not None
    assert not swap.corpus.verdict and swap.corpus.reason
    assert all(name.startswith("test-mutable:invalid.extension") for name in swap.corpus.reason)
    # Reviewed as equivalent: not run, not scored.
    same = seen[f"{FILE}:11:26:reason-punctuation"]
    assert (same.status, same.corpus) == ("equivalent", None) and "same code" in same.note
    # A mutant that does not build.
    garble = seen[f"{FILE}:14:5:garble"]
    assert garble.status == "unviable" and "does not compile" in garble.note
    # Code only the upstream tests reach.
    assert seen[f"{FILE}:19:12:arithmetic"].category == "upstream_only"
    # A survivor of both, reviewed as a gap with the input that would kill it.
    gap = seen[f"{FILE}:12:15:startswith-to-endswith"]
    assert (gap.status, gap.category, gap.survivor) == ("survived", "survived", "gap")
    assert "nonexistent." in gap.note
    # The generate check ran (the stand-in's generator makes certificates the reference accepts
    # for three host key types), and these mutants of the verifier leave the generator alone:
    # none is killed by a generate request, their kill lists are the corpus's.
    made = json.loads((tmp_path / "m" / "baseline.json").read_text())["generate"]
    assert sum(accepted for accepted, _ in made.values()) == 6 and len(made) == 8
    assert not [name for r in report.mutants if r.corpus is not None
                for name in r.corpus.verdict if ":generate:" in name]
    c = report.counts
    assert (c.generated, c.unviable, c.equivalent) == (8, 1, 1)
    assert (c.killed_by_corpus, c.killed_by_verdict, c.killed_by_reason_only) == (4, 3, 1)
    assert c.killed_by_upstream == 2 and (c.both, c.corpus_only, c.upstream_only) == (1, 3, 1)
    assert c.survived == 1 and c.corpus_score == round(4 / 6, 4)
    assert c.upstream_score == round(2 / 6, 4)
    # Robust kills: each of the four killed by the corpus is killed by many cases.
    assert (c.killed_by_one_case, c.killed_by_several_cases) == (0, 4)
    assert all(r.killing_cases > 1 for r in report.mutants if r.category in ("both",
                                                                            "corpus_only"))
    # Every mutant was built (the unviable one too), once each, plus the baseline.
    assert builds(cache) == 1 + 7
    # The written report is the returned one, valid against its schema; the tree is pristine.
    assert load(tmp_path / "m" / "mutation.json") == report
    assert "| 8 | 1 | 1 | 6 | 4 (66.7%) |" in (tmp_path / "m" / "mutation.md").read_text()
    work = tmp_path / "m" / "work"
    assert not filecmp.dircmp(work / "pristine", work / "tree").diff_files


@pytest.mark.slow  # a whole campaign or corpus: make test-slow (CI runs it)
def test_a_review_made_after_the_run_is_applied_to_the_report(corpus: Path, adapters: Path,
                                                              tmp_path: Path) -> None:
    """Survivors reviewed once the campaign has run: ``mutate review`` (and a resume) applies
    the file, recounts, and never overrides a kill."""
    tsv = adapters / "mutable" / "mutation" / "test-mutable.survivors.tsv"
    kept = tsv.read_text()
    tsv.write_text("")  # nothing reviewed while it runs
    cache = cache_root(tmp_path / "cache")
    report = campaign(adapters, corpus, tmp_path / "m", cache).run()
    gap_id = f"{FILE}:12:15:startswith-to-endswith"
    seen = {r.mutant.id: r for r in report.mutants}
    assert seen[gap_id].survivor == "unreviewed"
    assert report.counts.gap == 0 and report.counts.corpus_score_killable == round(4 / 7, 4)
    killed = f"{FILE}:6:15:startswith-to-endswith"
    tsv.write_text(kept + f"{killed}\tequivalent\ta wrong review: the corpus killed it\n"
                   + f"{gap_id}\tunkillable\tsay no certificate can\n")
    setup = load_setup(adapters, "mutable", "test-mutable")
    again = review(report, setup.survivors)
    now = {r.mutant.id: r for r in again.mutants}
    assert (now[gap_id].survivor, now[gap_id].note) == ("unkillable", "say no certificate can")
    assert now[killed] == seen[killed]  # a kill stands whatever the file says
    # the punctuation mutant, reviewed equivalent in the kept file, ran and survived: it
    # leaves the scores now
    same = now[f"{FILE}:11:26:reason-punctuation"]
    assert same.status == "equivalent" and "same code" in same.note
    c = again.counts
    assert (c.equivalent, c.unkillable, c.gap) == (1, 1, 0)
    assert c.corpus_score == round(4 / 6, 4) and c.corpus_score_killable == round(4 / 5, 4)
    # the command: a report of a shipped implementation and that implementation's file
    shipped = tmp_path / "shipped"
    shutil.copytree(TESTS.parent / "adapters" / "go-libp2p" / "mutation",
                    shipped / "go-libp2p" / "mutation", ignore=shutil.ignore_patterns("gomut"))
    (shipped / "build").write_text("#!/bin/sh\n")
    shutil.copy2(TESTS.parent / "adapters" / "go-libp2p" / "mutate", shipped / "go-libp2p")
    (shipped / "go-libp2p" / "mutation" / "go-libp2p.survivors.tsv").write_text(
        f"{gap_id}\tgap\ta case that would kill it\n")
    theirs = tmp_path / "theirs.json"
    theirs.write_text(dumps(report.model_copy(update={"implementation": "go-libp2p"})))
    before = theirs.read_bytes()

    def command(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "fixturegen", "mutate", "review", *args],
                              capture_output=True, text=True, check=False)

    done = command(str(theirs), "--out", str(tmp_path / "r"), "--adapters", str(shipped))
    assert done.returncode == 0, done.stderr
    assert "1 gap, 0 unkillable" in done.stdout and theirs.read_bytes() == before
    written = load(tmp_path / "r" / "mutation.json")
    assert {r.mutant.id: r.survivor for r in written.mutants}[gap_id] == "gap"
    assert written.counts.gap == 1
    # a report of an implementation without a shipped adapter: one line, exit 2
    bad = command(str(tmp_path / "m"), "--out", str(tmp_path / "r2"))
    assert bad.returncode == 2 and "test-mutable" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1 and not (tmp_path / "r2").exists()
    # a resume reports with the review applied too
    resumed = campaign(adapters, corpus, tmp_path / "m", cache).run()
    assert {r.mutant.id: r.survivor for r in resumed.mutants}[gap_id] == "unkillable"
    assert "1 unkillable" in (tmp_path / "m" / "mutation.md").read_text()


@pytest.mark.slow  # a whole campaign or corpus: make test-slow (CI runs it)
def test_shards_split_the_mutants_and_merge_into_the_whole(corpus: Path, adapters: Path,
                                                          tmp_path: Path) -> None:
    cache = cache_root(tmp_path / "cache")
    whole = campaign(adapters, corpus, tmp_path / "all", cache).run()
    parts = [campaign(adapters, corpus, tmp_path / f"s{k}", cache, shard=(k, 3)).run()
             for k in range(3)]
    ids = [{r.mutant.id for r in p.mutants} for p in parts]
    assert not (ids[0] & ids[1]) and not (ids[1] & ids[2]) and not (ids[0] & ids[2])
    assert ids[0] | ids[1] | ids[2] == {r.mutant.id for r in whole.mutants}
    assert all(p.shard == f"{k}/3" for k, p in enumerate(parts))
    joined = merge(parts)
    assert joined.counts == whole.counts and joined.shard is None
    assert [r.category for r in joined.mutants] == [r.category for r in whole.mutants]
    assert shard_of(list(range(0)), (0, 2)) == []  # type: ignore[arg-type]
    with pytest.raises(MergeError, match="shard 1/3 is missing"):
        merge([parts[0], parts[2]])
    with pytest.raises(MergeError, match="whole campaign"):
        merge([whole, parts[1]])
    # mutate merge --out: a folder holding a foreign mutation.json is refused, untouched.
    from fixturegen.cli import main

    shards = [str(tmp_path / f"s{k}") for k in range(3)]
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "mutation.json").write_text("theirs")
    assert main(["mutate", "merge", *shards, "--out", str(theirs)]) == 2
    assert [p.name for p in theirs.iterdir()] == ["mutation.json"]
    assert (theirs / "mutation.json").read_text() == "theirs"
    assert main(["mutate", "merge", *shards, "--out", str(tmp_path / "joined")]) == 0
    assert main(["mutate", "merge", *shards, "--out", str(tmp_path / "joined")]) == 0


@pytest.mark.slow
def test_named_mutants_run_alone(corpus: Path, adapters: Path, tmp_path: Path) -> None:
    cache = cache_root(tmp_path / "cache")
    wanted = (f"{FILE}:12:15:startswith-to-endswith", f"{FILE}:9:26:reason-swap")
    report = campaign(adapters, corpus, tmp_path / "m", cache, only=wanted).run()
    assert sorted(r.mutant.id for r in report.mutants) == sorted(wanted)
    assert report.counts.generated == 2
    # Named again in the same folder, a mutant runs again (after a new case, say): its result
    # file is written anew, not taken from the earlier run.
    kept = tmp_path / "m" / "results"
    for f in kept.iterdir():
        f.write_text(f.read_text().replace('"seconds": ', '"seconds": 1000'))
    again = campaign(adapters, corpus, tmp_path / "m", cache, only=wanted[:1]).run()
    assert [r.mutant.id for r in again.mutants] == [wanted[0]]
    assert again.mutants[0].seconds < 1000
    with pytest.raises(CampaignError, match="no mutant 'nonesuch'"):
        campaign(adapters, corpus, tmp_path / "m", cache, only=("nonesuch",)).run()


@pytest.mark.slow  # a whole campaign or corpus: make test-slow (CI runs it)
def test_a_campaign_resumes_where_it_stopped(corpus: Path, adapters: Path,
                                            tmp_path: Path) -> None:
    cache = cache_root(tmp_path / "cache")
    said: list[str] = []
    first = campaign(adapters, corpus, tmp_path / "m", cache, limit=3).run()
    assert len(first.mutants) == 3
    before = builds(cache)
    second = campaign(adapters, corpus, tmp_path / "m", cache, said=said).run()
    assert len(second.mutants) == 8
    assert any("resuming" in line for line in said)
    # The three finished mutants were not built again: the baseline and the others were (but
    # the one reviewed as equivalent, which never runs).
    done = {r.mutant.id for r in first.mutants}
    rest = [r for r in second.mutants if r.mutant.id not in done]
    assert len(rest) == 5
    assert builds(cache) - before == 1 + sum(r.status != "equivalent" for r in rest)
    assert {r.mutant.id: r for r in second.mutants}[first.mutants[0].mutant.id] == \
        first.mutants[0]
    # Another campaign's options in the same folder: refused.
    with pytest.raises(CampaignError, match="holds another campaign"):
        campaign(adapters, corpus, tmp_path / "m", cache, shard=(1, 2)).run()


def test_a_campaign_writes_only_into_its_own_folder(corpus: Path, adapters: Path,
                                                   tmp_path: Path) -> None:
    mine = tmp_path / "project"
    mine.mkdir()
    (mine / "mutation.json").write_text("keep")  # a foreign file of the name it writes
    with pytest.raises(NotOwned):
        campaign(adapters, corpus, mine, cache_root(tmp_path / "cache"))
    assert [p.name for p in mine.iterdir()] == ["mutation.json"]
    assert (mine / "mutation.json").read_text() == "keep"


INTERRUPTED = """
import sys
from pathlib import Path
sys.path.insert(0, {tests!r})
from test_mutation import campaign
from fixturegen.builds.cache import cache_root
campaign(Path({adapters!r}), Path({corpus!r}), Path({out!r}), cache_root(Path({cache!r}))).run()
"""


@pytest.mark.slow
def test_an_interrupt_leaves_no_mutated_file_behind(corpus: Path, adapters: Path,
                                                    tmp_path: Path) -> None:
    """A SIGINT while a mutant is being built: the build is killed, the scratch tree put
    back, the finished mutants kept. The signal is sent once the slow build has started (its
    marker file exists), whatever the machine's speed."""
    cache = cache_root(tmp_path / "cache")
    out = tmp_path / "m"
    script = INTERRUPTED.format(tests=str(TESTS), adapters=str(adapters), corpus=str(corpus),
                                out=str(out), cache=str(cache))
    env = {**os.environ, "MUTABLE_SLOW": "1"}
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=default_signals)
    marker = cache / "shared" / "mutable" / "building-slow"
    deadline = time.monotonic() + 600
    while not marker.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the slow build never started"
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode != 0 and b"KeyboardInterrupt" in err
    work = out / "work"
    assert not filecmp.dircmp(work / "pristine", work / "tree").diff_files
    assert "SLEEP_IN_BUILD" not in (work / "tree" / FILE).read_text()
    finished = list((out / "results").glob("*.json"))
    slow = [m for m in (out / "mutants.jsonl").read_text().splitlines() if "slow-build" in m]
    assert slow and len(finished) < 9
    ps = subprocess.run(["pgrep", "-f", "sleep 120"], capture_output=True, text=True)
    leftovers = [pid for pid in ps.stdout.split() if str(cache) in Path(
        f"/proc/{pid}/cmdline").read_text(errors="replace")] if ps.stdout else []
    assert not leftovers


@pytest.mark.slow
def test_an_answer_only_the_adapters_timer_gives_kills_like_a_hang(
        corpus: Path, adapters: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Same verdict, same reason, but answered after 80% of the case limit: killed at that
    case as a hang, and the run stops there, not left to cost the limit on every case. The
    test fixes the limit (``case_timeout``) and defines the delay from it: a limit derived from
    the baseline grows on a loaded machine, and a fixed delay is then no longer late. The
    margin above the delay (2 s) is far more than a busy machine adds to a Python adapter's
    answer."""
    limit = 10.0
    monkeypatch.setenv("MUTABLE_SLOW_ANSWER", repr(0.8 * limit))
    slow = f"{FILE}:11:9:slow-answer"
    report = campaign(adapters, corpus, tmp_path / "m", cache_root(tmp_path / "cache"),
                      only=(slow,), case_timeout=limit).run()
    (result,) = report.mutants
    assert result.status == "killed" and result.corpus is not None
    assert len(result.corpus.verdict) == 1 and "expired" in result.corpus.verdict[0]
    assert "answered after" in result.corpus.verdict[0]  # the report says why
    assert f"limit {limit:.1f} s" in result.corpus.verdict[0]
    assert result.corpus.stopped == result.corpus.verdict[0]
    # the first expired case an entry sends: the clock case made at its start
    assert result.corpus.cases == ["clock.expired-minutes-ago"] and result.killing_cases == 1
    # a run stopped at a hang is no known single-case kill: later cases were not run
    assert report.counts.killed_by_one_case == 0
    baseline = json.loads((tmp_path / "m" / "baseline.json").read_text())
    assert baseline["case_timeout"] == limit


def test_the_case_limit_is_ten_times_the_slowest_answer_within_its_bounds() -> None:
    """The derived limit, as a function of the measured slowest answer: what a loaded machine
    changes is the measurement, so the rule is checked on given numbers."""
    assert case_limit(0.05, cap=10.0) == MIN_CASE_TIMEOUT  # a fast baseline: the floor
    assert case_limit(0.5, cap=10.0) == 5.0  # ten times the slowest answer
    assert case_limit(3.0, cap=10.0) == 10.0  # never above --timeout
    assert case_limit(3.0, cap=10.0, fixed=4.0) == 4.0  # --case-timeout: the load is ignored
    assert case_limit(0.01, cap=10.0, fixed=30.0) == 10.0  # and --timeout still caps it


@pytest.mark.slow
def test_an_upstream_failure_counts_only_when_a_second_run_confirms_it(
        corpus: Path, adapters: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The implementation's tests fail the first time on every mutant (a flaky test): a mutant
    they do not fail on again is not killed by them; one they fail on twice is."""
    flaky = tmp_path / "flaky"
    flaky.mkdir()
    monkeypatch.setenv("MUTABLE_FLAKY_TESTS", str(flaky))
    caught = f"{FILE}:19:12:arithmetic"  # the tests catch it: they fail on both runs
    passed = f"{FILE}:9:26:reason-swap"  # the tests pass on it: only the first run fails
    report = campaign(adapters, corpus, tmp_path / "m", cache_root(tmp_path / "cache"),
                      only=(caught, passed)).run()
    seen = {r.mutant.id: r for r in report.mutants}
    assert seen[caught].upstream == "killed" and seen[caught].category == "upstream_only"
    assert seen[passed].upstream == "survived" and seen[passed].category == "corpus_only"
    assert int((flaky / "attempts").read_text()) == 4  # each mutant's tests ran twice


def test_the_reason_table_is_checked(tmp_path: Path) -> None:
    table = load_table(TESTS / "adapters" / "mutable" / "mutation" / "test-mutable.errors.json")
    assert table is not None
    codes = table.codes("the bad Self-Signature said")
    assert codes == frozenset({"certificate_signature_invalid"})
    assert table.codes("port 4711 refused") is None and table.codes(None) is None
    bad = tmp_path / "bad.errors.json"
    bad.write_text(json.dumps([{"pattern": "x", "codes": ["no_such_code"]}]))
    with pytest.raises(ReasonTableError, match="unknown error codes"):
        load_table(bad)
    bad.write_text(json.dumps([{"pattern": "(", "codes": ["expired"]}]))
    with pytest.raises(ReasonTableError, match="row 1"):
        load_table(bad)


def test_every_shipped_mutation_setup_loads() -> None:
    """Each shipped adapter's reviewed files parse: scope, error table, survivors (a
    survivor's verdict and reason are not optional)."""
    from fixturegen.harness.adapters import SHIPPED, adapters_dir
    from fixturegen.mutation.bugs import bugs_path
    from fixturegen.mutation.bugs import read as read_bugs

    base = adapters_dir(TESTS.parent / "adapters")
    found = reviewed = 0
    for adapter in SHIPPED:
        if (base / adapter.folder / "mutation" / f"{adapter.name}.json").is_file():
            setup = load_setup(base, adapter.folder, adapter.name)
            assert setup.files and setup.tool
            found += 1
            # every reviewed survivor names a mutant of a file in the reviewed scope, or one
            # of the adapter's bug models
            path = bugs_path(base, adapter.folder, adapter.name)
            models = {b.id for b in read_bugs(path).bugs} if path.is_file() else set()
            for mutant, (verdict, why) in setup.survivors.items():
                assert mutant.split(":")[0] in setup.files or mutant in models, (
                    adapter.name, mutant)
                assert verdict in ("equivalent", "gap", "unkillable") and why.strip()
            reviewed += bool(setup.survivors)
    assert found >= 6
    # every campaign at the pinned versions was reviewed (mutation guide, Results)
    assert reviewed == found


def test_an_accept_for_another_identity_kills_like_a_changed_verdict() -> None:
    """The kill rule: a mutant that still accepts a case but reports another PeerId than the
    baseline's accept (the identity of the peer changed) is killed by verdict; the same PeerId,
    or a reject with another text, is not; a reject whose mapped reason changed is killed by
    reason."""
    base = {("x", "valid.a"): Seen("accept", False, None, 0.1, "12D3KooWA"),
            ("x", "valid.b"): Seen("accept", False, None, 0.1, "12D3KooWB"),
            ("x", "invalid.c"): Seen("reject", False, frozenset({"expired"}), 0.1),
            ("x", "invalid.d"): Seen("reject", False, frozenset({"expired"}), 0.1)}
    mutant = {("x", "valid.a"): Seen("accept", False, None, 0.1, "12D3KooWZ"),
              ("x", "valid.b"): Seen("accept", False, None, 0.1, "12D3KooWB"),
              ("x", "invalid.c"): Seen("reject", False, frozenset({"expired"}), 0.1),
              ("x", "invalid.d"): Seen("reject", False, frozenset({"not_yet_valid"}), 0.1)}
    kill = compare(base, mutant, ["x"])
    assert kill.verdict == ["x:valid.a"] and kill.reason == ["x:invalid.d"]
    assert compare(base, base, ["x"]) == type(kill)(verdict=[], reason=[], entries=["x"])
