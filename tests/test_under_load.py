"""tools/under_load.py, the check behind `make test-under-load`: its load is really there while
a run goes and gone after it, and a run's failures are named from its output."""

from __future__ import annotations

from pathlib import Path

from tools.under_load import load, run_tests, spinning


def test_the_load_spins_while_the_block_runs_and_is_stopped_after(tmp_path: Path) -> None:
    with load(2) as spinners:
        assert len(spinners) == 2 and spinning(spinners)
        pids = [s.pid for s in spinners]
    assert not spinning(spinners)
    assert all(s.returncode is not None for s in spinners) and len(set(pids)) == 2


def test_a_run_names_its_failed_tests_and_keeps_makes_exit(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text(
        "test:\n"
        "\t@echo 'FAILED tests/test_a.py::test_one - assert 1 == 2'\n"
        "\t@echo 'ERROR tests/test_b.py::test_two'\n"
        "\t@echo 'FAILED tests/test_a.py::test_one - again'\n"
        "\t@exit 1\n")
    status, _, failed = run_tests(tmp_path, tmp_path / "RUN-1.log")
    assert status == 2  # make's own exit when a recipe fails
    assert failed == ["tests/test_a.py::test_one", "tests/test_b.py::test_two"]
    assert "ERROR tests/test_b.py::test_two" in (tmp_path / "RUN-1.log").read_text()


def test_a_passing_run_names_nothing(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text("test:\n\t@echo '3 passed in 0.1s'\n")
    status, _, failed = run_tests(tmp_path, tmp_path / "RUN-1.log")
    assert (status, failed) == (0, [])
