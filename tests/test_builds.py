"""Builds of any version (fixturegen.builds): version order and SPECs, the build cache (built
once, a source tree rebuilt in place when it changes, failures remembered, two runs at once,
timeouts), with a test adapter folder whose build script behaves like a shipped one's."""

from __future__ import annotations

import json
import multiprocessing
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fixturegen.builds.build import (
    BuildError,
    Recipe,
    Wanted,
    _key,
    adapter_hash,
    ensure,
    parse_impl,
)
from fixturegen.builds.cache import CacheError, cache_root, tree_hash
from fixturegen.builds.versions import Version, VersionError, parse_spec

TESTS = Path(__file__).resolve().parent
RECIPE = Recipe("test-impl", "buildable", "npm", "test-impl", "1.0.0", "1.0.0", "artefact")


@pytest.fixture()
def adapters(tmp_path: Path) -> Path:
    """A copy of the test adapters' folder (tests may change the adapter's sources)."""
    folder = tmp_path / "adapters"
    shutil.copytree(TESTS / "adapters" / "buildable", folder / "buildable")
    (folder / "build").write_text("#!/bin/sh\n")
    (folder / ".gitignore").write_text("buildable/artefact\n")
    return folder


def builds(cache: Path) -> list[str]:
    log = cache / "shared" / "buildable" / "builds.log"
    return log.read_text().splitlines() if log.exists() else []


def answer(built_folder: Path) -> str:
    out = subprocess.run([str(built_folder / "artefact")], input='{"id": "x"}\n', text=True,
                         capture_output=True, check=True, timeout=30).stdout
    return str(json.loads(out)["error"])


# -- versions and SPECs ------------------------------------------------------------------------

def test_versions_order_across_ecosystems() -> None:
    texts = ["0.10.0", "0.9.1", "v0.52.0", "1.0.0-alpha", "1.0.0-alpha.2", "1.0.0", "0.8.1rc1",
             "0.8.1", "0.8.1.post1", "0.1.0-alpha.10"]
    ordered = [v.text for v in sorted(Version.parse(t) for t in texts)]
    assert ordered == ["0.1.0-alpha.10", "0.8.1rc1", "0.8.1", "0.8.1.post1", "0.9.1", "0.10.0",
                       "v0.52.0", "1.0.0-alpha", "1.0.0-alpha.2", "1.0.0"]
    assert Version.parse("v0.48.0") == Version.parse("0.48") == Version.parse("0.48.0")
    assert Version.parse("1.0.0-alpha").prerelease and not Version.parse("0.8.1.post1").prerelease
    with pytest.raises(VersionError):
        Version.parse("latest-and-greatest")


def test_a_spec_selects_releases() -> None:
    available = [Version.parse(t) for t in
                 ("0.3.0", "0.3.1", "0.4.0", "0.4.1", "0.5.0", "0.6.0-rc1", "0.6.0", "0.7.0")]

    def select(text: str) -> list[str]:
        return [v.text for v in parse_spec(text).select(available)]

    assert select("all") == ["0.3.0", "0.3.1", "0.4.0", "0.4.1", "0.5.0", "0.6.0", "0.7.0"]
    assert select(">=0.4,<0.6") == ["0.4.0", "0.4.1", "0.5.0"]
    assert select("minors") == ["0.3.1", "0.4.1", "0.5.0", "0.6.0", "0.7.0"]
    assert select("latest") == ["0.7.0"]
    assert select("0.3.1, 0.6.0-rc1") == ["0.3.1", "0.6.0-rc1"]  # a pre-release when named
    assert select("minors,>=0.5") == ["0.5.0", "0.6.0", "0.7.0"]
    assert select("0.9.9") == ["0.9.9"]  # kept: its build will say the registry lacks it
    for bad in ("", ">=x.y", "0.4,,banana", ">=" * 3000):
        with pytest.raises(VersionError):
            parse_spec(bad)


def test_impl_names_a_version() -> None:
    assert parse_impl("go-libp2p") == ("go-libp2p", None)
    assert parse_impl("go-libp2p@v0.48.0") == ("go-libp2p", "v0.48.0")
    for bad in ("go-libp2p@", "go-libp2p@tuesday"):
        with pytest.raises(VersionError):
            parse_impl(bad)


# -- the cache ---------------------------------------------------------------------------------

def test_a_version_is_built_once_then_taken_from_the_cache(adapters: Path,
                                                            tmp_path: Path) -> None:
    cache = cache_root(tmp_path / "cache")
    first = ensure(RECIPE, adapters, Wanted(version="1.2.0"), cache)
    first.hold.release()
    assert (first.version, first.reused, first.transports) == ("1.2.0", False, ("tcp",))
    assert first.notes == ("test build of 1.2.0",)
    assert not first.folder.is_relative_to(adapters)  # never in the checkout
    assert answer(first.folder) == "built as 1.2.0"
    again = ensure(RECIPE, adapters, Wanted(version="1.2.0"), cache)
    again.hold.release()
    assert (again.folder, again.reused, again.version) == (first.folder, True, "1.2.0")
    assert len(builds(cache)) == 1
    ensure(RECIPE, adapters, Wanted(version="1.2.0"), cache, rebuild=True).hold.release()
    assert len(builds(cache)) == 2
    # The adapter's own sources are part of the key: a changed adapter is built afresh.
    before = adapter_hash(adapters, "buildable")
    (adapters / "buildable" / "adapter.py").write_text(
        (adapters / "buildable" / "adapter.py").read_text() + "# changed\n")
    assert adapter_hash(adapters, "buildable") != before
    moved = ensure(RECIPE, adapters, Wanted(version="1.2.0"), cache)
    moved.hold.release()
    assert moved.folder != first.folder and not moved.reused
    assert len(builds(cache)) == 3


def test_the_build_output_of_the_checkout_is_not_copied(adapters: Path, tmp_path: Path) -> None:
    (adapters / "buildable" / "artefact").write_text("#!/bin/sh\necho stale\n")
    built = ensure(RECIPE, adapters, Wanted(version="1.3.0"), cache_root(tmp_path / "c"))
    built.hold.release()
    assert answer(built.folder) == "built as 1.3.0"
    assert "in " + str(built.folder) in builds(tmp_path / "c")[0]


def test_a_source_tree_is_rebuilt_in_place_when_it_changes(adapters: Path,
                                                           tmp_path: Path) -> None:
    tree = tmp_path / "checkout"
    tree.mkdir()
    (tree / "VERSION").write_text("2.0.0-dev")
    (tree / "lib.txt").write_text("one")
    (tree / "target").mkdir()  # build output of the tree itself is not part of its hash
    (tree / "target" / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n")
    cache = cache_root(tmp_path / "cache")
    first = ensure(RECIPE, adapters, Wanted(source=tree), cache)
    first.hold.release()
    assert first.version == f"2.0.0-dev+src.{tree_hash(tree)[:10]}"
    assert first.source == str(tree.resolve())
    (tree / "target" / "x.o").write_text("noise")
    same = ensure(RECIPE, adapters, Wanted(source=tree), cache)
    same.hold.release()
    assert same.reused and len(builds(cache)) == 1
    (tree / "lib.txt").write_text("two")
    changed = ensure(RECIPE, adapters, Wanted(source=tree), cache)
    changed.hold.release()
    assert not changed.reused and changed.folder == first.folder
    assert changed.version != first.version
    log = (changed.folder / "build.log").read_text()
    assert "incremental: an artefact of the previous build is here" in log
    assert len(builds(cache)) == 2


def test_a_failed_build_says_why_in_one_line_and_is_remembered(adapters: Path,
                                                              tmp_path: Path) -> None:
    cache = cache_root(tmp_path / "cache")
    with pytest.raises(BuildError) as caught:
        ensure(RECIPE, adapters, Wanted(version="9.9.9"), cache)
    text = str(caught.value)
    assert text.startswith("test-impl@9.9.9: cannot build: error: 9.9.9 does not compile (test)")
    assert "\n" not in text and not caught.value.request
    with pytest.raises(BuildError, match="remembered from"):
        ensure(RECIPE, adapters, Wanted(version="9.9.9"), cache)
    assert len(builds(cache)) == 1
    with pytest.raises(BuildError, match="does not compile"):
        ensure(RECIPE, adapters, Wanted(version="9.9.9"), cache, rebuild=True)
    assert len(builds(cache)) == 2
    with pytest.raises(BuildError, match="not served by the test registry") as served:
        ensure(RECIPE, adapters, Wanted(version="8.8.8"), cache)
    assert served.value.request
    with pytest.raises(BuildError, match=r"older than 1\.0\.0"):
        ensure(RECIPE, adapters, Wanted(version="0.9.0"), cache)
    not_a_checkout = tmp_path / "elsewhere"
    not_a_checkout.mkdir()
    with pytest.raises(BuildError, match="not a checkout of the test implementation") as where:
        ensure(RECIPE, adapters, Wanted(source=not_a_checkout), cache)
    assert where.value.request
    with pytest.raises(BuildError, match="not a folder"):
        ensure(RECIPE, adapters, Wanted(source=tmp_path / "missing"), cache)


def test_a_version_is_keyed_as_it_orders_not_as_it_is_spelt() -> None:
    """``v1.2.0``, `` 1.2.0 `` and ``1.2`` are one build; a pre-release or another release is
    another; a long version still makes a short key."""
    def key(version: str) -> str:
        return _key(RECIPE, Wanted(version=version), "adapter")

    assert key("v1.2.0") == key("1.2.0") == key(" 1.2.0 ") == key("1.2")
    assert len({key("1.2.0"), key("1.2.0-rc.1"), key("1.2.1"), key("1.20.0")}) == 4
    long = "1." + ".".join(["1"] * 60)
    assert len(key(long)) < 80


def test_a_build_that_says_ok_without_its_artefact_is_built_again(adapters: Path,
                                                                 tmp_path: Path) -> None:
    cache = cache_root(tmp_path / "cache")
    first = ensure(RECIPE, adapters, Wanted(version="1.2.0"), cache)
    first.hold.release()
    (first.folder / RECIPE.marker).unlink()  # the cache's record still says ok
    again = ensure(RECIPE, adapters, Wanted(version="1.2.0"), cache)
    again.hold.release()
    assert not again.reused and (again.folder / RECIPE.marker).exists()
    assert answer(again.folder) == "built as 1.2.0"


def test_a_timed_out_build_is_not_remembered_as_a_failure(adapters: Path,
                                                          tmp_path: Path) -> None:
    """A timeout says nothing about the build (a busy machine): the next command tries again
    instead of answering 'cannot build' from the cache."""
    cache = cache_root(tmp_path / "cache")
    for _ in range(2):
        with pytest.raises(BuildError) as caught:
            ensure(RECIPE, adapters, Wanted(version="7.7.7"), cache, timeout=1.0)
        assert "timed out after 1 s" in str(caught.value)
        assert "remembered" not in str(caught.value)
    assert len(builds(cache)) == 2  # built twice, not answered from the record


def test_a_hanging_build_is_killed_at_its_timeout(adapters: Path, tmp_path: Path) -> None:
    """Killed, not awaited: the script would write its 'awaited' file after its sleep, and
    its process is gone when ensure returns (no clock compared: a loaded machine changes
    nothing here)."""
    cache = cache_root(tmp_path / "cache")
    with pytest.raises(BuildError, match="timed out after 1 s"):
        ensure(RECIPE, adapters, Wanted(version="7.7.7"), cache, timeout=1.0)
    shared = cache / "shared" / "buildable"
    pids = [int(p) for p in (shared / "hanging.pids").read_text().split()]  # script, sleep
    assert len(pids) == 2 and not (shared / "awaited").exists()
    # SIGKILL is delivered asynchronously: a bounded moment for the kernel to finish them
    deadline = time.monotonic() + 30
    while [pid for pid in pids if _alive(pid)] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in pids if _alive(pid)]


def _alive(pid: int) -> bool:
    """The process exists and is not a zombie (a zombie is gone for every purpose here)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def _ensure_in_child(args: tuple[str, str]) -> str:
    adapters, cache = args
    built = ensure(RECIPE, Path(adapters), Wanted(version="3.0.0"), Path(cache))
    built.hold.release()
    return str(built.folder)


def test_two_runs_at_once_make_one_build(adapters: Path, tmp_path: Path) -> None:
    cache = cache_root(tmp_path / "cache")
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        folders = pool.map(_ensure_in_child, [(str(adapters), str(cache))] * 2)
    assert folders[0] == folders[1]
    assert len(builds(cache)) == 1
    assert answer(Path(folders[0])) == "built as 3.0.0"


def test_a_run_holds_its_build_while_a_rebuild_waits(adapters: Path, tmp_path: Path) -> None:
    """A shared lock is held while a build is used; a rebuild of it takes the lock exclusively,
    so it waits until the run lets go (here: a child process trying without blocking fails)."""
    cache = cache_root(tmp_path / "cache")
    built = ensure(RECIPE, adapters, Wanted(version="4.0.0"), cache)
    lock = next((cache / "builds" / "buildable").glob("*.lock"))
    probe = ("import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR)\n"
             "try:\n fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB); print('free')\n"
             "except BlockingIOError: print('held')")
    held = subprocess.run([sys.executable, "-c", probe, str(lock)], capture_output=True,
                          text=True, check=True).stdout.strip()
    built.hold.release()
    free = subprocess.run([sys.executable, "-c", probe, str(lock)], capture_output=True,
                          text=True, check=True).stdout.strip()
    assert (held, free) == ("held", "free")


def test_the_cache_folder_is_checked(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(CacheError, match="cannot make the build cache"):
        cache_root(tmp_path / "file" / "below")
    with pytest.raises(CacheError, match="folder of its own"):
        cache_root(Path("/"))
