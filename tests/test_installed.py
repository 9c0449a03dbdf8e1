"""An installed fixturegen (the wheel): where it finds its adapters, how its working copy is
made in the cache, how a pinned adapter of that copy is built on first use, and the catalogue
version every report names. The wheel itself, installed for real: tests/test_package.py and
tests/test_ci_job.py."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from fixturegen.builds.build import BuildError, Wanted, build_in_place, ensure
from fixturegen.cases import CATALOGUE
from fixturegen.cases import releases as rel
from fixturegen.cases.model import catalogue_version
from fixturegen.harness import adapters as shipped
from fixturegen.harness.adapters import (
    AdaptersNotFound,
    adapters_dir,
    installed_adapters,
    is_adapters_folder,
)
from fixturegen.harness.results import diff, load_results

ROOT = Path(__file__).resolve().parents[1]


def _packaged(tmp_path: Path) -> Path:
    """A packaged adapters folder as a wheel may install it: scripts without their x bit."""
    base = tmp_path / "site" / "adapters"
    (base / "fixture-peer").mkdir(parents=True)
    (base / "build").write_text("#!/usr/bin/env bash\necho built\n")
    (base / "fixture-peer" / "build").write_text("#!/usr/bin/env bash\n")
    (base / "fixture-peer" / "main.go").write_text("package main\n")
    for path in base.rglob("*"):
        if path.is_file():
            path.chmod(0o644)
    return base


def test_the_installed_copy_is_made_once_whole_and_its_scripts_run(tmp_path: Path) -> None:
    packaged = _packaged(tmp_path)
    copy = installed_adapters(packaged, tmp_path / "cache")
    assert copy.parent == tmp_path / "cache" / "adapters"
    assert copy.name.startswith("0.") and (copy / ".copied").is_file()
    assert os.stat(copy / "build").st_mode & stat.S_IXUSR
    assert os.stat(copy / "fixture-peer" / "build").st_mode & stat.S_IXUSR
    assert not os.stat(copy / "fixture-peer" / "main.go").st_mode & stat.S_IXUSR
    (copy / "fixture-peer" / "built-here").write_text("x")
    assert installed_adapters(packaged, tmp_path / "cache") == copy  # reused, not re-copied
    assert (copy / "fixture-peer" / "built-here").is_file()
    # another content is another copy
    (packaged / "fixture-peer" / "main.go").write_text("package main // changed\n")
    assert installed_adapters(packaged, tmp_path / "cache") != copy
    # a copy a killed run left without its marker is made again
    (copy / ".copied").unlink()
    (packaged / "fixture-peer" / "main.go").write_text("package main\n")
    again = installed_adapters(packaged, tmp_path / "cache")
    assert again == copy and not (copy / "fixture-peer" / "built-here").exists()
    assert [p.name for p in copy.parent.iterdir() if p.name.startswith(".copy-")] == []


def test_where_the_adapters_are_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FIXTUREGEN_ADAPTERS", raising=False)
    monkeypatch.setenv("FIXTUREGEN_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    packaged = _packaged(tmp_path)
    monkeypatch.setattr(shipped, "PACKAGED", packaged)
    monkeypatch.setattr(shipped, "CHECKOUT", tmp_path / "no-checkout")
    (tmp_path / "adapters").mkdir()  # another project's adapters/ folder
    (tmp_path / "adapters" / "build").write_text("#!/bin/sh\n")
    assert not is_adapters_folder(tmp_path / "adapters")
    found = adapters_dir()
    assert found.parent == tmp_path / "cache" / "adapters"
    # a checkout's folder (as an editable install has) comes before the installed copy
    monkeypatch.setattr(shipped, "CHECKOUT", ROOT / "adapters")
    assert adapters_dir() == ROOT / "adapters"
    # ./adapters, when it is fixturegen's, comes first
    (tmp_path / "adapters" / "fixture-peer").mkdir()
    (tmp_path / "adapters" / "fixture-peer" / "build").write_text("#!/bin/sh\n")
    assert adapters_dir() == tmp_path / "adapters"
    # --adapters and $FIXTUREGEN_ADAPTERS are taken as given, and checked
    assert adapters_dir(ROOT / "adapters") == ROOT / "adapters"
    monkeypatch.setenv("FIXTUREGEN_ADAPTERS", str(tmp_path / "nowhere"))
    with pytest.raises(AdaptersNotFound, match="FIXTUREGEN_ADAPTERS"):
        adapters_dir()
    # nothing anywhere: one line that says what to do
    monkeypatch.delenv("FIXTUREGEN_ADAPTERS")
    monkeypatch.chdir(tmp_path / "cache")
    monkeypatch.setattr(shipped, "CHECKOUT", tmp_path / "no-checkout")
    monkeypatch.setattr(shipped, "PACKAGED", tmp_path / "no-package")
    with pytest.raises(AdaptersNotFound, match="installed without its adapters"):
        adapters_dir()


def _installed_with(tmp_path: Path, script: str) -> Path:
    base = tmp_path / "copy"
    (base / "thing").mkdir(parents=True)
    (base / ".copied").write_text("fixturegen\n")
    (base / "build").write_text(script)
    (base / "build").chmod(0o755)
    return base


def test_a_pinned_adapter_of_the_installed_copy_is_built_on_first_use(tmp_path: Path) -> None:
    base = _installed_with(tmp_path, "#!/usr/bin/env bash\necho \"$1\" >> calls\n"
                           "touch thing/made\n")
    recipe = shipped.BY_NAME["go-libp2p"].recipe
    recipe = type(recipe)(recipe.name, "thing", recipe.ecosystem, recipe.package,
                          recipe.pinned, recipe.since, "made")
    said: list[str] = []
    built = ensure(recipe, base, Wanted(), tmp_path / "cache", say=said.append)
    built.hold.release()
    assert built.folder == base / "thing" and (base / "thing" / "made").is_file()
    assert (base / "calls").read_text() == "go-libp2p\n"
    assert said and said[0].startswith("building go-libp2p (pinned) in")
    ensure(recipe, base, Wanted(), tmp_path / "cache").hold.release()
    assert (base / "calls").read_text() == "go-libp2p\n"  # built once


def test_a_pinned_build_that_fails_names_its_log(tmp_path: Path) -> None:
    base = _installed_with(tmp_path, "#!/usr/bin/env bash\necho 'cargo: no such crate' >&2\n"
                           "exit 1\n")
    with pytest.raises(BuildError, match=r"litep2p: cannot build: cargo: no such crate \(log: "):
        build_in_place(base, "litep2p", "thing/made")
    assert (base / ".build-litep2p.log").read_text() == "cargo: no such crate\n"


def test_a_checkout_is_never_built_behind_the_users_back(tmp_path: Path) -> None:
    base = tmp_path / "checkout"
    (base / "thing").mkdir(parents=True)
    (base / "build").write_text("#!/bin/sh\ntouch thing/made\n")
    (base / "build").chmod(0o755)
    recipe = shipped.BY_NAME["go-libp2p"].recipe
    recipe = type(recipe)(recipe.name, "thing", recipe.ecosystem, recipe.package,
                          recipe.pinned, recipe.since, "made")
    with pytest.raises(BuildError, match="not built: run 'make adapters'"):
        ensure(recipe, base, Wanted(), tmp_path / "cache")
    assert not (base / "thing" / "made").exists()


def test_the_catalogue_version_follows_what_the_cases_expect() -> None:
    version = catalogue_version()
    count, digest = version.split("-")
    assert int(count) == len(CATALOGUE) and len(digest) == 12
    assert catalogue_version(list(reversed(CATALOGUE))) == version  # order does not matter
    assert catalogue_version(CATALOGUE[1:]) != version
    first = CATALOGUE[0]
    other = "invalid" if first.result != "invalid" else "valid"
    changed = [first.__class__(**{**first.__dict__, "result": other}), *CATALOGUE[1:]]
    assert catalogue_version(changed).split("-")[0] == count
    assert catalogue_version(changed) != version


def test_a_released_entry_is_frozen_and_the_current_one_follows_the_catalogue() -> None:
    old = rel.Release("0.0.9", "2026-01-01", "2-abc", ("a.b", "c.d"))
    stale_current = rel.Release(rel.__version__, None, "1-x", ("a.b",))
    got = rel.updated([old, stale_current])
    assert got[0] == old and got[1] == rel.current()
    assert rel.current().catalogue == catalogue_version()
    frozen = rel.Release(rel.__version__, "2026-12-01", "1-x", ("a.b",))
    assert rel.updated([old, frozen]) == [old, frozen]
    changes = rel.changes([old, rel.Release("0.1.0", None, "2-y", ("a.b", "e.f"))])
    assert changes[1][1:] == (["e.f"], ["c.d"])
    assert rel.load() == rel.updated(rel.load())  # the shipped file is up to date


def test_every_report_names_the_version_the_seed_and_the_catalogue(corpus: Path,
                                                                    tmp_path: Path) -> None:
    manifest = json.loads((corpus / "manifest.json").read_text())
    assert manifest["catalogue"] == catalogue_version()
    out = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "fixturegen", "harness", "run", "--corpus",
                           str(corpus), "--out", str(out), "--no-transcripts", "--name", "ref",
                           "--", sys.executable, str(ROOT / "adapters" / "reference" /
                                                     "adapter.py")],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    results = json.loads((out / "results.json").read_text())
    version = manifest["catalogue"]
    assert (results["catalogue_version"], results["seed"], results["generator"]) == (
        version, "libp2p-fixturegen", f"fixturegen {rel.__version__}")
    assert f"(seed `libp2p-fixturegen`, catalogue `{version}`), fixturegen" in \
        (out / "summary.md").read_text()
    assert f"catalogue {version})" in (out / "index.html").read_text()
    suite = ET.parse(out / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props == {"version": "unknown", "fixturegen": f"fixturegen {rel.__version__}",
                     "seed": "libp2p-fixturegen", "catalogue": version}
    header = (out / "known-divergences.txt").read_text().splitlines()[1]
    assert header == f"# fixturegen {rel.__version__}, seed libp2p-fixturegen, catalogue {version}"
    # a run over another catalogue: harness diff says so before any case
    older = load_results(out / "results.json")
    older = older.model_copy(update={"catalogue_version": "748-000000000000",
                                     "catalogue": older.catalogue[1:]})
    lines = diff(older, load_results(out / "results.json"))
    assert lines == [f"~ catalogue 748-000000000000 -> {version}: 1 cases added, 0 removed "
                     "(a case that is absent before is new, not a regression)"]
