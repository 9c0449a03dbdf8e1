"""The command line: ``fixturegen generate | list | show | verify | keys``.

Exit codes: 0 success (all accepted, or all as expected); 1 rejections, disagreements or a
corpus that failed its check; 2 usage errors (a bad option, a pattern that matches nothing, an
unwritable folder, an unreadable manifest); 130 interrupted (SIGINT), 143 / 129 terminated
(SIGTERM / SIGHUP). Errors are one line on standard error.
"""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Annotated, Any, TextIO

import typer

from fixturegen import __version__
from fixturegen.errors import (
    EXIT_INTERRUPTED,
    fail,
    out_path,
    parse_time,
    seed_option,
    stopped_code,
)
from fixturegen.fuzz.commands import fuzz as fuzz_command

# typer (0.2x) vendors click; its exceptions are what a usage error raises.
from fixturegen.harness.adapters import ADAPTERS_HELP
from fixturegen.harness.commands import harness_app
from fixturegen.importer.commands import import_command
from fixturegen.keys import KeyPair
from fixturegen.mutation.commands import mutate_app
from fixturegen.verify.inputs import printable, visible
from fixturegen.versions import commands as versions_commands

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  rich_markup_mode=None, help="libp2p TLS certificate fixtures.")
keys_app = typer.Typer(no_args_is_help=True, help="The fixed keys under keys/.")
app.add_typer(keys_app, name="keys")
app.add_typer(harness_app, name="harness")
app.command("fuzz")(fuzz_command)
harness_app.command("matrix")(versions_commands.matrix)
harness_app.command("check")(versions_commands.check_command)
harness_app.command("profile")(versions_commands.profile_command)
harness_app.command("build")(versions_commands.build_command)
app.add_typer(mutate_app, name="mutate")
app.command("import")(import_command)


@app.command()
def profile(
    name: Annotated[str, typer.Argument(help="A profile (see 'fixturegen profile list').")],
    out: Annotated[Path | None, typer.Option(parser=out_path,
        help="The repository's test-asset folder (only the profile's files are written).")
    ] = None,
    variant: Annotated[str, typer.Option(help="drop-in or valid (see the list).")
                       ] = "drop-in",
    seed: Annotated[str, typer.Option(help="Seed for the throwaway keys and salts.",
                                      callback=seed_option)] = "libp2p-fixturegen",
    certificate_key: Annotated[Path | None, typer.Option(
        help="A key the repository already has (PKCS#8 DER or PEM): the profile adds the "
        "fixtures it signs (rust-libp2p: rsa_fixture_*, an RSA key).")] = None,
) -> None:
    """Write an implementation's test assets under its own file names (or list profiles)."""
    from fixturegen.profiles import profiles
    from fixturegen.profiles.model import ProfileError
    from fixturegen.profiles.writer import write

    known = profiles()
    if name == "list":
        for p in known.values():
            typer.echo(f"{p.name:14} {p.folder}  ({p.summary})")
            for v, what in p.variants.items():
                typer.echo(f"  --variant {v:8} {what}")
        return
    if name not in known:
        fail(f"no profile {name!r} (known: {', '.join(known)}; 'fixturegen profile list')")
    if out is None:
        fail("--out DIR is required: the folder the repository's tests load from")
    try:
        fixtures = write(known[name], variant, out, seed, _user_key(certificate_key))
    except ProfileError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write {out}: {exc.strerror or exc}")
    typer.echo(f"wrote {len(fixtures)} {name} test assets to {out}/ (variant {variant}, "
               f"seed {seed!r}); see {out}/REGENERATE.md")

@app.command()
def export(
    lang: Annotated[str, typer.Option(help="go, python, rust or ts.")],
    corpus: Annotated[Path, typer.Option(help="The corpus folder (make fixtures).")
                      ] = Path("out"),
    only: Annotated[list[str] | None, typer.Option(
        help="Only the fixtures whose id matches this glob (repeatable: any of them).")
    ] = None,
    out: Annotated[Path | None, typer.Option(
        parser=out_path, help="The file to write (default: stdout).")
                   ] = None,
) -> None:
    """Render the corpus's fixtures as a test source file for an implementation."""
    from fixturegen.output.export import ExportError, render, write

    try:
        text, count = render(corpus, lang, only)
        if out is None:
            sys.stdout.write(text)
            return
        write(text, out)
    except ExportError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write {out}: {exc.strerror or exc}")
    typer.echo(f"wrote {count} fixtures to {out} ({lang})", err=True)


EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


@app.command()
def generate(
    out: Annotated[Path, typer.Option(
        parser=out_path, help="The corpus folder (replaced only on success).")] = Path(
        "out"),
    seed: Annotated[str, typer.Option(help="Seed for throwaway keys and salts.",
                                      callback=seed_option)] = "libp2p-fixturegen",
    random: Annotated[bool, typer.Option("--random", help="Fresh randomness (not reproducible)."
                                         )] = False,
    only: Annotated[str | None, typer.Option(
        help="Only the cases whose id matches this glob (with any case one of them is checked "
        "after).")] = None,
    jobs: Annotated[int, typer.Option(min=0, help="Worker processes (0: one per core).")] = 0,
    certificate_key: Annotated[Path | None, typer.Option(
        help="Your own certificate key (PKCS#8 DER or PEM): it replaces the fixed key of its "
        "kind.")] = None,
) -> None:
    """Build the corpus, check it with the reference verifier, then replace OUT."""
    from fixturegen.keys.fixed import FixedKeyError
    from fixturegen.output.writer import CheckFailed, OutputError, select
    from fixturegen.output.writer import generate as run

    try:
        total = len(select(only, with_firsts=True))
    except OutputError as exc:
        fail(str(exc))
    with contextlib.ExitStack() as stack:
        progress = None
        if sys.stderr.isatty():
            bar = stack.enter_context(
                typer.progressbar(length=total, label="building", file=sys.stderr))
            progress = lambda: bar.update(1)  # noqa: E731
        try:
            manifest = run(out, seed=None if random else seed, only=only,
                           progress=progress, check=corpus_check, workers=jobs or None,
                           user_key=_user_key(certificate_key))
        except OutputError as exc:
            fail(str(exc))
        except FixedKeyError as exc:
            fail(str(exc), EXIT_FAIL)
        except CheckFailed as exc:
            typer.echo(exc.report, err=True)
            fail(f"{exc}; {out} was left as it was", EXIT_FAIL)
    typer.echo(f"wrote {len(manifest.fixtures)} fixtures to {out}/ "
               f"({'seed ' + repr(seed) if not random else 'fresh randomness, not reproducible'})")


def _user_key(path: Path | None) -> KeyPair | None:
    from fixturegen.keys.user import UserKeyError, load_user_key

    if path is None:
        return None
    try:
        return load_user_key(path)
    except UserKeyError as exc:
        fail(f"--certificate-key: {exc}")


def corpus_check(staged: Path, manifest: object) -> str | None:
    from fixturegen.verify.corpus_check import check_corpus

    return check_corpus(staged, manifest)


RESULTS = ("valid", "invalid", "acceptable")
LIST_HEADER = f"{'ID':<64} {'RESULT':<10} {'ERROR':<30} IMPORTANCE"


@app.command("list")
def list_cases(
    only: Annotated[str | None, typer.Option(help="Glob over case ids.")] = None,
    result: Annotated[str | None, typer.Option(
        metavar="RESULT", help="Only the cases of this expected result: valid, invalid or "
        "acceptable.")] = None,
    as_json: Annotated[bool, typer.Option(
        "--json", help="One JSON object per line (no header).")] = False,
) -> None:
    """List the cases of the catalogue: a header line, then id, expected result, error code
    and importance."""
    from fixturegen.model.outputs import ListLine
    from fixturegen.output.writer import OutputError, select

    if result is not None and result not in RESULTS:
        fail(f"--result {result!r}: expected one of {', '.join(RESULTS)}")
    try:
        cases = select(only)
    except OutputError as exc:
        fail(str(exc))
    cases = [c for c in cases if result is None or c.result == result]
    if not as_json:
        typer.echo(LIST_HEADER)
    for c in cases:
        if as_json:
            typer.echo(ListLine(id=c.id, result=c.result, error=c.error,
                                importance=c.importance, flags=list(c.flags),
                                description=c.description).model_dump_json())
        else:
            typer.echo(f"{c.id:<64} {c.result:<10} {c.error or '-':<30} {c.importance or ''}")


@app.command()
def show(
    case_id: Annotated[str, typer.Argument(metavar="ID")],
    seed: Annotated[str, typer.Option(callback=seed_option)] = "libp2p-fixturegen",
) -> None:
    """Build one case and show its manifest entry and the reference verifier's verdict."""
    from fixturegen.output.writer import render_case
    from fixturegen.verify import Verifier

    try:
        rendered = render_case(case_id, seed.encode())
    except KeyError:
        fail(f"no case {case_id!r} (see `fixturegen list`)")
    f = rendered.fixture
    certs = [data for rel, data in rendered.files if rel in f.chain]
    verdict = Verifier().verify(certs, expect_peer_id=f.expect_peer_id)
    typer.echo(json.dumps({"fixture": f.model_dump(mode="json"), "verdict": verdict.to_json()},
                          indent=2))


@app.command()
def verify(
    paths: Annotated[list[Path] | None, typer.Argument(help="DER or PEM certificate files.")
                     ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per input.")] = False,
    expect_peer_id: Annotated[str | None, typer.Option(help="The PeerId the caller dialled.")
                              ] = None,
    at: Annotated[str | None, typer.Option(help="Validation time, ISO 8601 (default: now).")
                  ] = None,
    manifest: Annotated[Path | None, typer.Option(help="Check a corpus against its manifest.")
                        ] = None,
    transcripts: Annotated[Path | None, typer.Option(
        help="Check CertificateVerify vectors and proof sets (out/transcripts.json).")] = None,
) -> None:
    """Verify certificates as a strict libp2p TLS peer would, and explain the verdict."""
    from fixturegen.model.outputs import VerifyLine
    from fixturegen.verify import Verifier
    from fixturegen.verify.inputs import InputError, printable, read_certificates
    from fixturegen.verify.manifest_check import ManifestError, check_manifest

    moment = parse_time(at)
    if manifest is None and transcripts is None and not paths:
        fail("give certificate files, --manifest FILE or --transcripts FILE")
    verifier = Verifier()
    status = EXIT_OK
    if manifest is not None:
        try:
            problems, count = check_manifest(manifest, verifier, moment)
        except ManifestError as exc:
            fail(str(exc))
        status = max(status, report(problems, count, "fixtures", manifest))
    if transcripts is not None:
        from fixturegen.verify.transcript import TranscriptChecker, check_transcripts

        try:
            tproblems, tcount = check_transcripts(transcripts, TranscriptChecker(verifier))
        except ManifestError as exc:
            fail(str(exc))
        status = max(status, report(tproblems, tcount, "vectors and proof sets", transcripts))
    for path in paths or []:
        name = printable(str(path))
        try:
            certs = read_certificates(path)
        except InputError as exc:
            status = EXIT_FAIL
            if as_json:
                typer.echo(VerifyLine(path=name, result="error", error="unreadable",
                                      detail=str(exc), peer_id=None).model_dump_json())
            else:
                typer.echo(f"{name}: ERROR {exc}")
            continue
        verdict = verifier.verify(certs, expect_peer_id=expect_peer_id, at=moment)
        if not verdict.accepted:
            status = EXIT_FAIL
        if as_json:
            typer.echo(VerifyLine.model_validate({"path": name, **verdict.to_json()})
                       .model_dump_json())
        else:
            typer.echo(explain(name, verdict))
    raise typer.Exit(status)


def report(problems: list[Any], count: int, what: str, source: Path) -> int:
    """Print a disagreement table (or the all-agree line); the exit status it implies."""
    from fixturegen.verify.manifest_check import format_table

    if not problems:
        typer.echo(f"all {count} {what} agree with {source}")
        return EXIT_OK
    typer.echo(format_table(problems))
    typer.echo(f"{len(problems)} disagreements in {count} {what}")
    return EXIT_FAIL


def explain(path: str, verdict: object) -> str:
    from fixturegen.verify import ERROR_CODES, Verdict

    assert isinstance(verdict, Verdict)
    head = "ACCEPT" if verdict.accepted else f"REJECT {verdict.error}"
    lines = [f"{path}: {head}"]
    for i, name in enumerate(verdict.checks, 1):
        failed = not verdict.accepted and i == len(verdict.checks)
        detail = " ".join(verdict.detail.split())  # one line, whatever the input said
        lines.append(f"  {i:2}. {name:<26} {'FAILED: ' + detail if failed else 'ok'}")
    if verdict.error:
        lines.append(f"      ({verdict.error}: {ERROR_CODES[verdict.error]})")
    lines.append(f"  scheme {verdict.signature_scheme or '-'}, host key "
                 f"{verdict.host_key_type or '-'}, PeerId {verdict.peer_id or '-'}")
    lines.append(f"  {verdict.signature_verifications} signature verifications, "
                 f"validated at {verdict.validation_time}")
    if verdict.flags:
        lines.append(f"  borderline: {', '.join(verdict.flags)}")
    return "\n".join(lines)


KEYS_COMMAND = "keys generate"


@keys_app.command("generate")
def keys_generate(
    directory: Annotated[Path, typer.Option("--dir", parser=out_path)] = Path("keys"),
    only: Annotated[list[str] | None, typer.Option(help="Only this kind (repeatable).")] = None,
    force: Annotated[bool, typer.Option(help="Replace existing key files.")] = False,
) -> None:
    """Make fresh fixed keys (once: every fixed-key fixture changes with them)."""
    from fixturegen.keys import FIXED_KINDS
    from fixturegen.keys.fixed import FixedKeyError, fixed_files
    from fixturegen.owned import NotOwned, check, publish

    kinds = only or list(FIXED_KINDS)
    try:
        check(directory, KEYS_COMMAND, shared=True)
    except NotOwned as exc:
        fail(str(exc))
    existing = [k for k in kinds if (directory / f"{k}.pem").exists()]
    if existing and not force:
        fail(f"{directory} already holds {', '.join(existing)}; pass --force to replace")
    try:
        pairs, files = fixed_files(directory, kinds)
        publish(directory, KEYS_COMMAND, [(name, data) for name, data, _ in files],
                shared=True, keep=[f"{k}.pem" for k in FIXED_KINDS],
                modes={name: mode for name, _, mode in files})
    except (FixedKeyError, NotOwned) as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write {directory}: {exc.strerror or exc}")
    typer.echo(f"wrote {len(kinds)} keys to {directory}/ ({len(pairs)} listed in README.md)")


@keys_app.command("list")
def keys_list() -> None:
    """The fixed keys and their fingerprints."""
    from fixturegen.keys import FIXED_KINDS
    from fixturegen.keys.fixed import FixedKeyError, fingerprint, load_fixed

    for kind in FIXED_KINDS:
        try:
            typer.echo(f"{kind:<10} {fingerprint(load_fixed(kind))}")
        except FixedKeyError as exc:
            fail(str(exc), EXIT_FAIL)


@app.command()
def doctor(
    adapters: Annotated[Path | None, typer.Option(
        help=ADAPTERS_HELP)
    ] = None,
) -> None:
    """Which shipped adapters are built here, which can be built (`make adapters`), and what
    each build lacks, with where to get it. Exit 0 when every adapter is built or can be,
    1 when a tool is missing, 2 when the adapters' folder is not one."""
    from fixturegen.harness.commands import adapters_folder
    from fixturegen.harness.doctor import lines, readiness

    base = adapters_folder(adapters)
    ready = readiness(base)
    typer.echo(f"doctor: the adapters in {printable(str(base))}")
    for line in lines(ready):
        typer.echo(line)
    raise typer.Exit(1 if any(r.missing and not r.built for r in ready) else 0)


@app.command()
def version() -> None:
    """Print the version."""
    typer.echo(f"fixturegen {__version__}")


class _Visible:
    """A text stream that writes every control character but tab and line feed as ``\\xNN``
    (``visible``): no text a command prints (a path, a version, what an adapter or a file
    said) reaches the terminal raw, whichever message carries it."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(visible(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def main(argv: list[str] | None = None) -> int:
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Visible(sys.stdout), _Visible(sys.stderr)
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = streams


def _main(argv: list[str] | None = None) -> int:
    command = typer.main.get_command(app)
    try:
        rv = command.main(argv, prog_name="fixturegen", standalone_mode=False)
    except (typer.Abort, KeyboardInterrupt):
        rv = EXIT_INTERRUPTED
    except typer.TyperException as exc:  # typer's public base of its usage and click errors
        format_message = getattr(exc, "format_message", None)
        text = format_message() if callable(format_message) else str(exc)
        fail_line = " ".join(printable(str(text)).split())
        typer.echo(f"fixturegen: error: {fail_line}", err=True)
        code = getattr(exc, "exit_code", EXIT_USAGE)
        return code if isinstance(code, int) else EXIT_USAGE
    if rv == EXIT_INTERRUPTED:  # typer turns a KeyboardInterrupt into a silent Exit(130)
        word, rv = stopped_code()
        with contextlib.suppress(OSError):  # a closed terminal (SIGHUP) cannot take the line
            typer.echo(f"fixturegen: {word}", err=True)
    return rv if isinstance(rv, int) else EXIT_OK
