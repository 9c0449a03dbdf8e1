"""Write a profile into a repository's test-asset folder.

The folder may hold other files (an old ``gen.sh``, sources): only the profile's own files are
written, each replaced atomically, after the whole set was built in a staging folder and
checked by the reference verifier. A failed run changes nothing.
"""

from __future__ import annotations

import shlex
import shutil
import tempfile
from pathlib import Path

from fixturegen import __version__
from fixturegen.keys import KeyPair
from fixturegen.model.manifest import (
    SCHEMA_VERSION,
    Fixture,
    Generator,
    Manifest,
    dumps,
    manifest_schema,
)
from fixturegen.owned import NotOwned, check, publish
from fixturegen.profiles.model import Asset, Profile, ProfileError
from fixturegen.verify.codes import ERROR_CODES, NOTES


def _fixture(asset: Asset, fixture: Fixture, key_path: str) -> Fixture:
    return fixture.model_copy(update={"path": asset.file, "chain": [asset.file],
                                      "certificate_key_path": key_path})


def regenerate_text(profile: Profile, variant: str, seed: str, assets: list[Asset],
                    fixtures: list[Fixture], user_key: KeyPair | None = None) -> str:
    rows = "\n".join(
        f"| `{a.file}` | {a.description} | {a.asserts} | {f.expected.result}"
        f"{' (' + f.expected.error + ')' if f.expected.error else ''} |"
        for a, f in zip(assets, fixtures, strict=True))
    key_text = ""
    command = (f"# fixturegen {__version__} (see 'Getting fixturegen' below)\n"
               f"fixturegen profile {profile.name} --variant {variant} --seed {shlex.quote(seed)} "
               f"--out {profile.folder}")
    if user_key is not None:
        command += " \\\n    --certificate-key YOUR_KEY.pk8"
        key_text = (f"\nThe files that say so are signed with the repository's own {user_key.kind} "
                    f"key (SHA-256 of its SubjectPublicKeyInfo: `{user_key.fingerprint}`), "
                    "given with `--certificate-key`; it is copied only into `keys/`.\n")
    flip = ""
    if variant == "valid":
        flip = ("\nIn this variant every `check_cert!` file verifies: flip "
                "`assert!(cert.verify().is_err())` to `assert!(cert.verify().is_ok())` (ed448 "
                "and nistp521_sha512 stay errors where the crypto backend cannot verify them: "
                "ring has neither).\n")
    return f"""# Test assets made by fixturegen

These files are {profile.summary} ({profile.repository}, `{profile.folder}`), made by one
command instead of hand-kept openssl scripts:

```sh
{command}
```
{key_text}
fixturegen {__version__}, seed `{seed}`, variant `{variant}`: {profile.variants[variant]}.
The same command gives the same bytes on any machine. Every certificate key and host key is a
throwaway key derived from the seed (the certificate keys are in `keys/`, PKCS#8 PEM); they
are test keys, never used elsewhere. Validity: 1999-01-01 to 3000-01-01.
{flip}
`manifest.json` (schema `manifest.schema.json`) states each file's scheme, keys, PeerId and the
verdict of fixturegen's reference verifier (`fixturegen verify --manifest manifest.json`).

| file | what it is | what its tests may assert | reference verdict |
|---|---|---|---|
{rows}
## Getting fixturegen

fixturegen is a Python package (Python 3.11 or later) that is not on a package index yet: it
is installed from a clone of its git repository, checked out at version {__version__}:

```sh
python3 -m venv .venv && .venv/bin/pip install .   # in the fixturegen clone
.venv/bin/fixturegen version                        # must print: fixturegen {__version__}
```

Another version may write other bytes (a new case, a changed one); the same version and seed
write these bytes on any machine.
"""


COMMAND = "profile"


def write(profile: Profile, variant: str, out: Path, seed: str,
          user_key: KeyPair | None = None) -> list[Fixture]:
    from fixturegen.verify.manifest_check import check_manifest

    if variant not in profile.variants:
        raise ProfileError(f"--variant {variant!r}: {profile.name} has "
                           f"{', '.join(profile.variants)}")
    try:
        out = check(out, COMMAND, shared=True)
    except NotOwned as exc:
        raise ProfileError(str(exc)) from None
    assets = profile.assets(variant)
    if user_key is not None:
        if profile.keyed is None:
            raise ProfileError(f"--certificate-key: the {profile.name} profile signs nothing "
                               "with a key of yours")
        assets += profile.keyed(user_key)
    seed_bytes = seed.encode()
    out.parent.mkdir(parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(prefix=f".{out.name}.profile-", dir=out.parent))
    try:
        (staged / "keys").mkdir()
        fixtures = []
        for asset in assets:
            rendered = asset.case(profile.name).render(
                seed_bytes, {user_key.kind: user_key} if user_key is not None else None)
            files = dict(rendered.files)
            stem = asset.file.rsplit(".", 1)[0]
            key_path = f"keys/{stem}.pem"
            (staged / asset.file).write_bytes(files[rendered.fixture.path])
            (staged / key_path).write_bytes(rendered.key_pem)
            fixtures.append(_fixture(asset, rendered.fixture, key_path))
        used = sorted({f for fx in fixtures for f in fx.flags})
        manifest = Manifest(
            schema_version=SCHEMA_VERSION,
            generator=Generator(name="fixturegen", version=__version__), seed=seed,
            reproducible=True, notes={f: NOTES[f] for f in used},
            error_codes=dict(ERROR_CODES), fixtures=fixtures)
        (staged / "manifest.json").write_text(dumps(manifest.model_dump(mode="json")))
        (staged / "manifest.schema.json").write_text(dumps(manifest_schema()))
        (staged / "REGENERATE.md").write_text(
            regenerate_text(profile, variant, seed, assets, fixtures, user_key))
        problems, _ = check_manifest(staged / "manifest.json")
        if problems:  # pragma: no cover - the reference verifier disagrees with a profile
            raise ProfileError("the reference verifier disagrees with the profile: "
                               + "; ".join(f"{p.id} {p.what}" for p in problems))
        try:  # every target checked before the first is written; only the profile's own
            publish(out, COMMAND, [(str(path.relative_to(staged)), path.read_bytes())
                                   for path in sorted(staged.rglob("*")) if path.is_file()],
                    shared=True)
        except NotOwned as exc:
            raise ProfileError(str(exc)) from None
        return fixtures
    finally:
        shutil.rmtree(staged, ignore_errors=True)
