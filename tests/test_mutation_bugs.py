"""Bug models (fixturegen.mutation.bugs, ``fixturegen mutate --bugs``): the file checked before
anything runs, a campaign of hand-written bugs scored apart from the tool's mutants with the
cases that kill each, a bug of several edits in several files applied whole and put back whole
(after an interrupt too), single-case kills, shards merged. The implementation is the stand-in
verifier of tests/test_mutation.py, with its reviewed bug file
(tests/adapters/mutable/mutation/test-mutable.bugs.json)."""

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

from fixturegen.builds.cache import cache_root
from fixturegen.mutation.bugs import MAX_EDITS, BugsError, load, read
from fixturegen.mutation.campaign import CampaignError
from fixturegen.mutation.report import MergeError, merge, review
from fixturegen.mutation.report import load as load_report
from tests.signals import default_signals
from tests.test_mutation import FILE, TESTS, builds, campaign

IMPL = TESTS / "adapters" / "mutable" / "impl"
SHIPPED = TESTS / "adapters" / "mutable" / "mutation" / "test-mutable.bugs.json"
POLICY = "testimpl/policy.py"
SCOPE = (FILE, POLICY)


def bug_file(tmp_path: Path, bugs: list[dict[str, object]], **top: object) -> Path:
    path = tmp_path / "x.bugs.json"
    path.write_text(json.dumps({"implementation": "test-mutable", "version": "1.0.0",
                                "author": "a test", "bugs": bugs} | top))
    return path


def one(find: str = "def check(case_id):", file: str = FILE, bug_id: str = "b",
        replace: str = "def check(case_id):  # x") -> dict[str, object]:
    return {"id": bug_id, "description": "a bug", "kind": "k",
            "edits": [{"file": file, "find": find, "replace": replace}]}


def failure(path: Path, version: str | None = "1.0.0") -> str:
    with pytest.raises(BugsError) as caught:
        load(path, name="test-mutable", version=version, files=SCOPE, tree=IMPL)
    text = str(caught.value)
    assert "\n" not in text and str(path) in text
    return text


def test_the_shipped_bug_file_loads_as_mutants() -> None:
    bugs, mutants = load(SHIPPED, name="test-mutable", version="1.0.0", files=SCOPE, tree=IMPL)
    assert [m.id for m in mutants] == [b.id for b in bugs.bugs] == [
        "accepts-expired", "extension-reason-from-policy", "unknown-prefix-without-dot"]
    multi = mutants[1]
    assert multi.files == [POLICY, FILE] and multi.edits is not None and len(multi.edits) == 3
    assert multi.description is not None and "self-signature" in multi.description
    # the span names the first edit in the pristine file: line 5, column 1
    assert (multi.file, multi.line, multi.start, multi.original) == (
        FILE, 5, (5, 1), "def check(case_id):")
    assert mutants[0].operator == "validity-period" and mutants[0].start == (10, 8)
    # a mechanical mutant serialises as before (no bug fields), a bug with them
    assert "edits" in mutants[0].model_dump_json()


def test_each_problem_of_a_bug_file_is_one_line(tmp_path: Path) -> None:
    assert "is not in the mutation scope" in failure(bug_file(tmp_path, [one(
        file="testimpl/__init__.py")]))
    assert "is not in testimpl/verify.py" in failure(bug_file(tmp_path, [one(find="nowhere")]))
    assert "occurs 4 times in" in failure(bug_file(tmp_path, [one(find="return \"reject\"")]))
    # unique in the pristine file, but no longer once the bug's first edit made a second one
    twice = one(replace="def check(case_id):\n    pass\ndef check(case_id):")
    twice["edits"] = [*twice["edits"], {"file": FILE, "find": "def check(case_id):",  # type: ignore[list-item]
                                        "replace": "x"}]
    assert "edit 2" in failure(bug_file(tmp_path, [twice]))
    assert "appears twice" in failure(bug_file(tmp_path, [one(), one()]))
    assert "written against version 0.9.0" in failure(bug_file(tmp_path, [one()],
                                                               version="0.9.0"))
    assert "not 'test-mutable'" in failure(bug_file(tmp_path, [one()], implementation="other"))
    # sizes and shapes
    many = one()
    many["edits"] = many["edits"] * (MAX_EDITS + 1)  # type: ignore[operator]
    assert "bugs.0.edits" in failure(bug_file(tmp_path, [many]))
    long_line = one()
    long_line["description"] = "x" * 301
    assert "bugs.0.description" in failure(bug_file(tmp_path, [long_line]))
    assert "bugs.0.id" in failure(bug_file(tmp_path, [one(bug_id="Not Kebab")]))
    assert ": bugs: List should have at least 1 item" in failure(bug_file(tmp_path, []))
    unknown = one()
    unknown["severity"] = "high"
    assert "severity" in failure(bug_file(tmp_path, [unknown]))
    (tmp_path / "x.bugs.json").write_text("{not json")
    assert "Invalid JSON" in failure(tmp_path / "x.bugs.json")
    (tmp_path / "x.bugs.json").write_bytes(b" " * (3 * 1024 * 1024))
    assert "more than the" in failure(tmp_path / "x.bugs.json")
    assert "No such file" in failure(tmp_path / "none.bugs.json")
    # a --source tree has no released version to compare: the finds still are checked
    assert read(bug_file(tmp_path, [one()], version="0.9.0")).version == "0.9.0"
    load(bug_file(tmp_path, [one()], version="0.9.0"), name="test-mutable", version=None,
         files=SCOPE, tree=IMPL)


@pytest.mark.slow
def test_a_campaign_refuses_a_bad_bug_file_before_building(corpus: Path, adapters: Path,
                                                           tmp_path: Path) -> None:
    shipped = adapters / "mutable" / "mutation" / "test-mutable.bugs.json"
    data = json.loads(shipped.read_text())
    data["bugs"][0]["edits"][0]["find"] = "not in the file"
    shipped.write_text(json.dumps(data))
    cache = cache_root(tmp_path / "cache")
    with pytest.raises(CampaignError, match="bug 'accepts-expired' edit 1: find 'not in the"):
        campaign(adapters, corpus, tmp_path / "b", cache, bugs=True).run()
    assert builds(cache) == 0
    shipped.unlink()
    with pytest.raises(CampaignError, match="has no bug models"):
        campaign(adapters, corpus, tmp_path / "b", cache, bugs=True).run()


@pytest.mark.slow
def test_bug_models_are_run_and_scored_apart(corpus: Path, adapters: Path,
                                            tmp_path: Path) -> None:
    cache = cache_root(tmp_path / "cache")
    report = campaign(adapters, corpus, tmp_path / "b", cache, bugs=True).run()
    assert report.kind == "bugs" and "test-mutable.bugs.json" in report.tool
    assert "fixturegen's tests" in report.tool  # the author
    seen = {r.mutant.id: r for r in report.mutants}
    # Four cases kill the validity bug: the corpus's two expired certificates (under an ECDSA
    # and an Ed25519 certificate key), the one the run made that expired minutes before, and
    # the one made after the adapter first answered (fixturegen/harness/clock.py).
    expired = seen["accepts-expired"]
    assert (expired.status, expired.category) == ("killed", "corpus_only")
    assert expired.corpus is not None
    assert expired.corpus.cases == ["clock.expired-minutes-ago", "invalid.expired",
                                    "invalid.expired.ed25519-certificate",
                                    "clock.expired-since-start"]  # in the order they ran
    assert expired.corpus.verdict == ["test-mutable:clock.expired-minutes-ago",
                                      "test-mutable:invalid.expired",
                                      "test-mutable:invalid.expired.ed25519-certificate",
                                      "test-mutable:clock.expired-since-start"]
    assert expired.killing_cases == 4
    # Three edits in two files, applied whole: the extension cases keep their verdict but give
    # the self-signature reason (had one edit been left out, nothing would change, or the
    # import would fail and every verdict with it).
    baseline = json.loads((tmp_path / "b" / "baseline.json").read_text())["cases"]
    extension = sorted(name.split(":", 1)[1] for name, (verdict, _, reasons, _)
                       in baseline.items()
                       if name.startswith("test-mutable:invalid.extension") and
                       reasons == ["extension_signature_invalid"])
    multi = seen["extension-reason-from-policy"]
    assert multi.corpus is not None and not multi.corpus.verdict and len(extension) > 1
    assert sorted(multi.corpus.cases) == extension and multi.killing_cases == len(extension)
    # A bug no case kills (and the upstream tests do not either).
    missed = seen["unknown-prefix-without-dot"]
    assert (missed.status, missed.killing_cases, missed.upstream) == ("survived", 0, "survived")
    c = report.counts
    assert (c.generated, c.killed_by_corpus, c.survived) == (3, 2, 1)
    assert (c.killed_by_one_case, c.killed_by_several_cases) == (0, 2)
    assert c.corpus_score == round(2 / 3, 4)
    # The report: the bug table (description, killing cases, at most five named) and the
    # single-case kills.
    text = (tmp_path / "b" / "mutation.md").read_text()
    assert text.startswith("# Bug models: test-mutable 1.0.0")
    assert ("| `accepts-expired` | The validity check looks at the first bytes of the input "
            "only: an expired certificate is accepted | validity-period | corpus\\_only | "
            "survived | 4 | `clock.expired-minutes-ago`, `invalid.expired`, "
            "`invalid.expired.ed25519-certificate`, `clock.expired-since-start` |") in text
    assert f"| {len(extension)} | " + ", ".join(f"`{x}`" for x in multi.corpus.cases[:5]) + \
        f" and {len(extension) - 5} more |" in text
    single = text.split("## Kills that rest on one case")[1].split("## ")[0]
    assert "0 are killed by exactly one case and 2 by two or more" in single
    assert "None." in single and "extension-reason-from-policy" not in single
    assert load_report(tmp_path / "b" / "mutation.json") == report
    html = (tmp_path / "b" / "mutation.html").read_text()
    assert "Bug models: test-mutable" in html and "an expired certificate is accepted" in html
    # Every file of every bug is as the pristine tree has it.
    work = tmp_path / "b" / "work"
    assert not filecmp.dircmp(work / "pristine" / "testimpl",
                              work / "tree" / "testimpl").diff_files
    # One build per bug, plus the baseline; a resume runs nothing again.
    assert builds(cache) == 1 + 3
    again = campaign(adapters, corpus, tmp_path / "b", cache, bugs=True).run()
    assert again.mutants == report.mutants and again.counts == report.counts
    assert builds(cache) == 1 + 3 + 1  # the baseline only
    # One bug by its id runs again alone; a review applies to a bug report as to any.
    alone = campaign(adapters, corpus, tmp_path / "b", cache, bugs=True,
                     only=("accepts-expired",)).run()
    assert [r.mutant.id for r in alone.mutants] == ["accepts-expired"]
    assert alone.mutants[0].killing_cases == 4 and alone.kind == "bugs"
    reviewed = review(report, {"unknown-prefix-without-dot": ("gap", "an id 'nonexistent'")})
    assert reviewed.kind == "bugs" and reviewed.counts.gap == 1
    assert {r.mutant.id: r.survivor for r in reviewed.mutants}[
        "unknown-prefix-without-dot"] == "gap"
    # The bug file changed since: refused, the folder's results kept.
    shipped = adapters / "mutable" / "mutation" / "test-mutable.bugs.json"
    shipped.write_text(shipped.read_text().replace("matched without its dot", "dotless"))
    with pytest.raises(CampaignError, match="changed since the campaign"):
        campaign(adapters, corpus, tmp_path / "b", cache, bugs=True).run()
    # A mechanical campaign in the bug campaign's folder: another campaign, refused.
    with pytest.raises(CampaignError, match="holds another campaign"):
        campaign(adapters, corpus, tmp_path / "b", cache).run()


@pytest.mark.slow
def test_shards_of_bug_models_merge_into_the_whole(corpus: Path, adapters: Path,
                                                  tmp_path: Path) -> None:
    cache = cache_root(tmp_path / "cache")
    parts = [campaign(adapters, corpus, tmp_path / f"s{k}", cache, shard=(k, 2), bugs=True)
             .run() for k in range(2)]
    assert sorted(len(p.mutants) for p in parts) == [1, 2]
    joined = merge(parts)
    assert joined.kind == "bugs" and joined.shard is None
    assert [r.mutant.id for r in joined.mutants] == [
        "accepts-expired", "extension-reason-from-policy", "unknown-prefix-without-dot"]
    c = joined.counts
    assert (c.generated, c.killed_by_corpus, c.killed_by_one_case) == (3, 2, 0)
    assert {r.mutant.id: r.killing_cases for r in joined.mutants}["accepts-expired"] == 4
    # the command writes the bug report; a bug shard and a mechanical report do not mix
    from fixturegen.cli import main

    assert main(["mutate", "merge", str(tmp_path / "s0"), str(tmp_path / "s1"), "--out",
                 str(tmp_path / "joined")]) == 0
    assert load_report(tmp_path / "joined" / "mutation.json") == joined
    assert "## Every bug model" in (tmp_path / "joined" / "mutation.md").read_text()
    with pytest.raises(MergeError, match="differ in kind"):
        merge([parts[0], parts[1].model_copy(update={"kind": "mutants"})])


INTERRUPTED = """
import sys
from pathlib import Path
sys.path.insert(0, {root!r})
from tests.test_mutation import campaign
from fixturegen.builds.cache import cache_root
campaign(Path({adapters!r}), Path({corpus!r}), Path({out!r}), cache_root(Path({cache!r})),
         bugs=True).run()
"""


def test_an_interrupted_bug_of_several_files_is_put_back_whole(corpus: Path, adapters: Path,
                                                               tmp_path: Path) -> None:
    """A bug whose edits change two files: while its build runs (the build has said so with
    its marker file), both files carry their edits; a SIGINT then leaves both as the pristine
    tree has them."""
    shipped = adapters / "mutable" / "mutation" / "test-mutable.bugs.json"
    data = json.loads(shipped.read_text())
    data["bugs"] = [{"id": "slow-two-files", "description": "waits in its build",
                     "kind": "test", "edits": [
                         {"file": FILE, "find": "def helper():",
                          "replace": "def helper():  # SLEEP_IN_BUILD"},
                         {"file": POLICY, "find": "EXTENSION_REASON = ",
                          "replace": "EXTENSION_REASON = 'edited' or "}]}]
    shipped.write_text(json.dumps(data))
    cache = cache_root(tmp_path / "cache")
    out = tmp_path / "b"
    script = INTERRUPTED.format(root=str(TESTS.parent), adapters=str(adapters),
                                corpus=str(corpus), out=str(out), cache=str(cache))
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=default_signals, env=dict(os.environ))
    marker = cache / "shared" / "mutable" / "building-slow"
    deadline = time.monotonic() + 600
    while not marker.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the slow build never started"
        time.sleep(0.05)
    tree = out / "work" / "tree"
    assert "SLEEP_IN_BUILD" in (tree / FILE).read_text()
    assert "'edited' or" in (tree / POLICY).read_text()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode != 0 and b"KeyboardInterrupt" in err
    work = out / "work"
    assert not filecmp.dircmp(work / "pristine" / "testimpl", tree / "testimpl").diff_files
    assert (tree / POLICY).read_text() == (IMPL / POLICY).read_text()
    assert not (out / "results").exists() or not list((out / "results").glob("*.json"))


def test_the_command_checks_the_bug_file_before_fetching_anything(corpus: Path,
                                                                  tmp_path: Path) -> None:
    """``fixturegen mutate --impl NAME --bugs`` with a shipped adapter: a missing or broken
    bug file is refused in one line (exit 2), before the source is fetched or a folder made."""
    shipped = tmp_path / "shipped"
    source = TESTS.parent / "adapters" / "go-libp2p"
    shutil.copytree(source / "mutation", shipped / "go-libp2p" / "mutation",
                    ignore=shutil.ignore_patterns("gomut", "*.bugs.json"))
    shutil.copy2(source / "mutate", shipped / "go-libp2p")
    (shipped / "build").write_text("#!/bin/sh\n")
    out = tmp_path / "b"

    def command() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "fixturegen", "mutate", "--impl",
                               "go-libp2p", "--bugs", "--mode", "api", "--adapters",
                               str(shipped), "--corpus", str(corpus), "--out", str(out)],
                              capture_output=True, text=True, check=False)

    missing = command()
    assert missing.returncode == 2 and "has no bug models" in missing.stderr
    from fixturegen.harness.adapters import BY_NAME

    version = BY_NAME["go-libp2p"].version
    path = shipped / "go-libp2p" / "mutation" / "go-libp2p.bugs.json"
    path.write_text(json.dumps({"implementation": "go-libp2p", "version": version,
                                "author": "a test", "bugs": [one(file="p2p/net/other.go")]}))
    outside = command()
    assert outside.returncode == 2 and len(outside.stderr.strip().splitlines()) == 1
    assert "'p2p/net/other.go' is not in the mutation scope" in outside.stderr
    assert "Traceback" not in outside.stderr and not out.exists()


def test_every_shipped_bug_file_fits_its_scope() -> None:
    """Each implementation's reviewed bug models (when its file is there) parse, name the
    implementation and its pinned version, stay in the scope, and number at least 30 (the
    finds are checked against the source by the campaign, which fetches it)."""
    from fixturegen.harness.adapters import SHIPPED, adapters_dir
    from fixturegen.mutation.bugs import bugs_path, check
    from fixturegen.mutation.setup import load_setup

    base = adapters_dir(TESTS.parent / "adapters")
    found = 0
    for adapter in SHIPPED:
        path = bugs_path(base, adapter.folder, adapter.name)
        if not path.is_file():
            continue
        setup = load_setup(base, adapter.folder, adapter.name)
        bugs = read(path)
        check(bugs, path, name=adapter.name, version=adapter.version,
              files=setup.bug_scope, tree=None)
        assert len(bugs.bugs) >= 30, (adapter.name, len(bugs.bugs))
        found += 1
    if not found:
        pytest.skip("no implementation has a bug model file yet")


MAKE = "testimpl/make.py"
MADE = [f"generate:{kind}#{n}" for kind in ("ed25519", "secp256k1", "ecdsa") for n in (1, 2)]


@pytest.mark.slow
def test_bugs_of_the_generator_are_killed_by_the_generate_check(corpus: Path, adapters: Path,
                                                                tmp_path: Path) -> None:
    """The stand-in's generator (testimpl/make.py) makes ed25519, secp256k1 and ecdsa
    certificates and no rsa one. Bugs in it are killed by the generate requests whose baseline
    certificate the reference accepted (by verdict, named generate:TYPE#N); a bug of the
    verifier keeps the corpus's kill list alone."""
    shipped = adapters / "mutable" / "mutation" / "test-mutable.bugs.json"
    data = json.loads(shipped.read_text())
    data["bugs"] += [
        {"id": "signature-without-prefix", "kind": "host-key-signature",
         "description": "The host key signs the bare SubjectPublicKeyInfo, without the prefix",
         "edits": [{"file": MAKE, "find": "sign(PREFIX + spki)", "replace": "sign(spki)"}]},
        {"id": "ed25519-signs-with-another-key", "kind": "host-key-signature",
         "description": "An ed25519 host key's signature is made by a fresh key",
         "edits": [{"file": MAKE, "find": "return 1, raw, key.sign",
                    "replace": "return 1, raw, ed25519.Ed25519PrivateKey.generate().sign"}]},
        {"id": "secp256k1-hangs", "kind": "hang",
         "description": "Making a secp256k1 host key never ends",
         "edits": [{"file": MAKE, "find": 'key = ec.generate_private_key(ec.SECP256K1() if',
                    "replace": 'key = __import__("time").sleep(60 if kind == "secp256k1" '
                               'else 0) or ec.generate_private_key(ec.SECP256K1() if'}]}]
    shipped.write_text(json.dumps(data))
    report = campaign(adapters, corpus, tmp_path / "b", cache_root(tmp_path / "cache"),
                      bugs=True, only=("accepts-expired", "signature-without-prefix",
                                       "ed25519-signs-with-another-key",
                                       "secp256k1-hangs")).run()
    # The baseline: six certificates the reference accepts; rsa it cannot make (not counted).
    made = json.loads((tmp_path / "b" / "baseline.json").read_text())["generate"]
    assert sorted(n for n, (accepted, _) in made.items() if accepted) == sorted(MADE)
    assert made["generate:rsa#1"][0] is False and made["generate:rsa#1"][1].startswith("skip")
    seen = {r.mutant.id: r for r in report.mutants}
    # Every certificate made is rejected: six killing cases, no corpus case among them.
    prefix = seen["signature-without-prefix"]
    assert (prefix.status, prefix.category, prefix.killing_cases) == ("killed", "corpus_only", 6)
    assert prefix.corpus is not None and prefix.corpus.cases == MADE
    assert prefix.corpus.verdict == [f"test-mutable:{n}" for n in MADE]
    assert not prefix.corpus.reason
    # Only the ed25519 certificates are wrong: only their requests kill.
    ed25519 = seen["ed25519-signs-with-another-key"]
    assert ed25519.corpus is not None
    assert ed25519.corpus.cases == ["generate:ed25519#1", "generate:ed25519#2"]
    # A hang stops the requests there, killed by it (the later requests not sent).
    hang = seen["secp256k1-hangs"]
    assert hang.corpus is not None and hang.corpus.cases == ["generate:secp256k1#1"]
    # A bug of the verifier (the generator untouched): its kill list is the corpus's alone.
    expired = seen["accepts-expired"]
    assert expired.corpus is not None
    assert expired.corpus.verdict == ["test-mutable:clock.expired-minutes-ago",
                                      "test-mutable:invalid.expired",
                                      "test-mutable:invalid.expired.ed25519-certificate",
                                      "test-mutable:clock.expired-since-start"]
    assert expired.killing_cases == 4
    text = (tmp_path / "b" / "mutation.md").read_text()
    assert "| `secp256k1-hangs` | `generate:secp256k1#1` | verdict |" in text


def test_bug_files_are_edited_by_bug_models_only_and_reach_handshakes(tmp_path: Path) -> None:
    """A scope's bug_files are files only bug models edit: the mutation tool's own list
    (``files``) never names them, every shipped one is edited by some bug model, and a change
    there also runs in handshake mode."""
    from fixturegen.harness.adapters import SHIPPED, adapters_dir
    from fixturegen.mutation.bugs import bugs_path
    from fixturegen.mutation.setup import SetupError, load_setup

    base = adapters_dir(TESTS.parent / "adapters")
    named = 0
    for adapter in SHIPPED:
        if not bugs_path(base, adapter.folder, adapter.name).is_file():
            continue
        setup = load_setup(base, adapter.folder, adapter.name)
        assert not set(setup.bug_files) & set(setup.files), adapter.name
        edited = {e.file for b in read(bugs_path(base, adapter.folder, adapter.name)).bugs
                  for e in b.edits}
        assert set(setup.bug_files) <= edited, adapter.name
        named += len(setup.bug_files)
    assert named >= 3
    folder = tmp_path / "impl"
    (folder / "mutation").mkdir(parents=True)
    (folder / "mutate").write_text("#!/bin/sh\n")
    (folder / "mutation" / "x.json").write_text(json.dumps({
        "tool": "t", "files": ["a.py"], "activation": "rebuild",
        "handshake_files": ["b.py"], "bug_files": ["c.py"]}))
    setup = load_setup(tmp_path, "impl", "x")
    assert setup.bug_scope == ("a.py", "b.py", "c.py")
    assert set(setup.reaches_handshakes) == {"b.py", "c.py"}
    (folder / "mutation" / "x.json").write_text(json.dumps({
        "tool": "t", "files": ["a.py"], "activation": "rebuild", "bug_files": ["a.py"]}))
    with pytest.raises(SetupError, match=r"a\.py is in files and in bug_files"):
        load_setup(tmp_path, "impl", "x")
