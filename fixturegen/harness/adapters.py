"""The shipped adapters: where each lives, how it is run, and the exact version it pins.

Each adapter is built from its package registry by ``adapters/build`` (``make adapters``); the
version below is the one its lock file pins (``tests/test_harness.py`` checks they agree), and
it is recorded in every results file.

The adapters are source trees with lock files, built on the machine. A checkout has them in its
``adapters/`` folder; an installed fixturegen (the wheel) carries the same files in
``fixturegen/shipped/adapters`` (``setup.py`` copies them there, less what
``adapters/.gitignore`` names as build output) and builds them in a copy in the user's cache,
never in the installed package. :func:`adapters_dir` finds the folder: ``--adapters DIR``, else
``$FIXTUREGEN_ADAPTERS``, else ``./adapters`` when it is a fixturegen adapters folder (a
checkout, as ``make conformance`` runs), else the checkout an editable install runs from, else
the installed copy, put in ``CACHE/adapters/VERSION-DIGEST/`` the first time
(:func:`installed_adapters`). The fixture peer, the harness's own side of a handshake, is built
there too (``fixture-peer/``, :data:`PEER`), and so is the message-level peer, its twin over TCP
for what crypto/tls will not send (``message-peer/``,
:data:`fixturegen.harness.handshake.MESSAGE_PEER`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from fixturegen import __version__
from fixturegen.builds.build import COPIED, Built, Recipe
from fixturegen.builds.cache import CacheError, Hold, cache_root, tree_hash
from fixturegen.builds.registries import Ecosystem
from fixturegen.harness.reasons import ReasonTable, load_table, table_path

if TYPE_CHECKING:
    from fixturegen.harness.session import Target

ENV = "FIXTUREGEN_ADAPTERS"
#: The --adapters option's help, in every command that has it.
ADAPTERS_HELP = ("The shipped adapters' folder (default: $FIXTUREGEN_ADAPTERS, else ./adapters, "
                 "else the installed fixturegen's own, copied into the build cache).")


class AdaptersNotFound(Exception):
    """No folder of shipped adapters where one was looked for (a usage error)."""


#: Where an installed fixturegen carries the shipped adapters (``setup.py`` puts them there).
PACKAGED = Path(__file__).resolve().parent.parent / "shipped" / "adapters"
#: The checkout an editable install (``pip install -e``) runs from.
CHECKOUT = Path(__file__).resolve().parents[2] / "adapters"


def is_adapters_folder(base: Path) -> bool:
    """Whether ``base`` holds fixturegen's shipped adapters (their ``build`` script and the
    fixture peer's): another project's ``adapters/`` folder is not taken for it."""
    return (base / "build").is_file() and (base / "fixture-peer" / "build").is_file()


def adapters_dir(given: Path | None = None, cache: Path | None = None) -> Path:
    """The folder holding the shipped adapters (it has their ``build`` script); the installed
    copy is put in the build cache (``cache``, else the default) the first time."""
    if given is not None:
        base, how = given, "--adapters"
    elif os.environ.get(ENV):
        base, how = Path(os.environ[ENV]), f"${ENV}"
    else:
        for base in (Path("adapters"), CHECKOUT):
            if is_adapters_folder(base):
                return base.absolute()
        if is_adapters_folder(PACKAGED):
            try:
                return installed_adapters(PACKAGED, cache)
            except (CacheError, OSError) as exc:
                raise AdaptersNotFound(f"cannot copy the installed adapters into the build "
                                       f"cache: {exc}") from None
        raise AdaptersNotFound(
            "no fixturegen adapters folder: this fixturegen was installed without its adapters "
            f"and ./adapters is not one; pass --adapters DIR or set {ENV}")
    if not (base / "build").is_file():
        raise AdaptersNotFound(
            f"{how} ({base}) is not a fixturegen adapters folder (no 'build' in it): run from "
            f"a fixturegen checkout, or pass --adapters DIR or set {ENV}")
    return base.absolute()


def installed_adapters(packaged: Path, cache: Path | None = None) -> Path:
    """The installed adapters' working copy, ``CACHE/adapters/VERSION-DIGEST/``: made the first
    time (copied whole, then renamed into place under a lock, so a half copy is never used),
    built there by ``adapters/build`` like a checkout's. DIGEST is a hash of the packaged files,
    so another fixturegen (or a changed adapter) gets a copy of its own; deleting it is safe."""
    root = cache_root(cache) / "adapters"
    root.mkdir(parents=True, exist_ok=True)
    dest = root / f"{__version__}-{tree_hash(packaged)[:16]}"
    done = dest / COPIED
    if done.is_file():
        return dest
    with Hold(root / f"{dest.name}.lock", exclusive=True):
        if done.is_file():
            return dest
        if dest.exists():  # a copy left half made by a run that was killed
            shutil.rmtree(dest)
        staging = Path(tempfile.mkdtemp(prefix=".copy-", dir=root))
        try:
            # less the byte code pip compiled in site-packages (never source)
            shutil.copytree(packaged, staging, dirs_exist_ok=True, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__"))
            for path in staging.rglob("*"):
                if path.is_file() and not path.is_symlink():
                    with path.open("rb") as handle:
                        script = handle.read(2) == b"#!"
                    # a wheel may drop the executable bit: every script gets it back
                    path.chmod(0o755 if script else 0o644)
            (staging / COPIED).write_text(f"fixturegen {__version__}\n", encoding="utf-8")
            staging.rename(dest)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return dest


@dataclass(frozen=True)
class Adapter:
    name: str
    package: str
    version: str
    folder: str
    command: tuple[str, ...]
    verifier: str = ""
    marker: str = ""
    handshake: str = ""  # the upgrade a handshake request runs; "" when it has none yet
    transports: tuple[Literal["tcp", "quic"], ...] = ()
    api: bool = True  # False: certificate requests answer skip (handshake mode only)
    #: The transports whose listener the library can tell the PeerId it expects (go-libp2p's
    #: SecureInbound peer argument, @libp2p/tls secureInbound's remotePeer): there the adapter
    #: passes a listen request's ``expect_peer_id`` on; elsewhere such a case is ``skip``.
    listener_expects: tuple[Literal["tcp", "quic"], ...] = ()
    export: str = ""  # the ``fixturegen export --lang`` whose test calls this same check
    # Builds of other versions (fixturegen.builds): the registry, the package as it names it,
    # and the first version that carries the verifier the adapter calls.
    ecosystem: Ecosystem = "crates"
    registry_name: str = ""
    since: str = ""

    def argv(self, adapters: Path) -> list[str]:
        return self.argv_in(adapters / self.folder)

    def argv_in(self, folder: Path) -> list[str]:
        """The command line of the adapter built in ``folder`` (the checkout's, or a cached
        build of another version)."""
        return [str(folder / part) if part.startswith("./") else part for part in self.command]

    def built(self, adapters: Path) -> bool:
        """Whether ``adapters/build`` has left what the command needs."""
        return (adapters / self.folder / self.marker).exists()

    @property
    def recipe(self) -> Recipe:
        return Recipe(self.name, self.folder, self.ecosystem, self.registry_name, self.version,
                      self.since, self.marker)

    def reasons(self, adapters: Path) -> ReasonTable | None:
        """Its reviewed reason table (``FOLDER/mutation/NAME.errors.json``; None: it has none).
        Raises ``ReasonTableError`` for a table that cannot be read."""
        return load_table(table_path(adapters, self.folder, self.name))

    def target(self, adapters: Path, build: Built | None = None) -> Target:
        """The harness target: the checkout's pinned build, or ``build`` (another version or a
        source tree), with the handshake transports that build has, and the checkout's reason
        table (raises ``ReasonTableError`` when it cannot be read)."""
        from fixturegen.harness.session import Target

        reasons = self.reasons(adapters)
        if build is None or build.folder == adapters / self.folder:
            return Target(self.name, self.package, self.version, self.verifier,
                          tuple(self.argv(adapters)), self.handshake, self.transports,
                          reasons=reasons, api=self.api,
                          listener_expects=self.listener_expects)
        transports = self.transports if build.transports is None else tuple(
            t for t in self.transports if t in build.transports)
        package = (self.package if build.source is None
                   else f"{self.package} (source {build.source})")
        return Target(self.name, package, build.version, self.verifier,
                      tuple(self.argv_in(build.folder)), self.handshake, transports,
                      build.notes, reasons=reasons, api=self.api,
                      listener_expects=self.listener_expects)


SHIPPED: tuple[Adapter, ...] = (
    Adapter("rust-libp2p", "crates.io libp2p-tls", "0.7.0", "rust-libp2p-tls",
            ("./target/release/adapter",),
            verifier="libp2p_tls::certificate::parse, P2pCertificate::peer_id, verify_signature",
            marker="target/release/adapter",
            handshake="multistream_select::dialer_select_proto (V1Lazy) / listener_select_proto, "
            "then libp2p_tls::Config upgrade_outbound / upgrade_inbound; QUIC: libp2p-quic "
            "Transport dial / listen_on; the dialled PeerId compared after the upgrade, as the "
            "swarm does (both transports build their TLS client config with "
            "make_client_config(keypair, None): rust-libp2p never gives its TLS verifier the "
            "PeerId it dials)",
            transports=("tcp", "quic"), export="rust",
            ecosystem="crates", registry_name="libp2p-tls", since="0.1.0-alpha"),
    Adapter("go-libp2p", "github.com/libp2p/go-libp2p", "v0.52.0", "go-libp2p", ("./adapter",),
            verifier="p2p/security/tls Identity.ConfigForPeer(...).VerifyPeerCertificate",
            marker="adapter",
            handshake="go-multistream SelectOneOf / MultistreamMuxer.Negotiate, then "
            "p2p/security/tls Transport.SecureOutbound / SecureInbound; QUIC: p2p/transport/quic "
            "Transport.Dial / Listen + Accept",
            transports=("tcp", "quic"), export="go", listener_expects=("tcp",),
            ecosystem="go", registry_name="github.com/libp2p/go-libp2p", since="v0.8.0"),
    Adapter("js-libp2p", "npm @libp2p/tls", "3.1.10", "js-libp2p-tls", ("node", "./adapter.js"),
            verifier="@libp2p/tls/utils verifyPeerCertificate",
            marker="node_modules/@libp2p/tcp/package.json",
            handshake="@libp2p/tcp dial / createListener, @libp2p/multistream-select select / "
            "handle, then @libp2p/tls secureOutbound / secureInbound; QUIC: "
            "@chainsafe/libp2p-quic dial / createListener",
            transports=("tcp", "quic"), export="ts", listener_expects=("tcp",),
            ecosystem="npm", registry_name="@libp2p/tls", since="1.0.0"),
    Adapter("py-libp2p-tls", "PyPI libp2p", "0.8.1", "py-libp2p",
            ("./.venv/bin/python", "./adapter.py", "tls"),
            verifier="libp2p.security.tls.certificate.verify_certificate_chain",
            marker=".venv/.installed",
            handshake="TransportUpgrader.upgrade_security (multistream-select, then TLSTransport."
            "secure_outbound / secure_inbound) on a RawConnection over TCP",
            transports=("tcp",), export="python",
            ecosystem="pypi", registry_name="libp2p", since="0.4.0"),
    Adapter("py-libp2p-quic", "PyPI libp2p", "0.8.1", "py-libp2p",
            ("./.venv/bin/python", "./adapter.py", "quic"),
            verifier="libp2p.transport.quic.security.PeerAuthenticator.verify_peer_certificate",
            marker=".venv/.installed",
            handshake="QUICTransport.dial / create_listener + listen (aioquic), the reason of a "
            "refusal taken from its loggers",
            transports=("quic",),
            ecosystem="pypi", registry_name="libp2p", since="0.3.0"),
    # Handshake mode only: litep2p's certificate module is crate-private (no API mode: its
    # certificate requests answer skip; a generate reads what a litep2p listener presents, Ed25519
    # only), and TLS is only in its QUIC transport (its TCP transport secures with Noise).
    # Other versions from 0.14.0: before it, litep2p needs multihash 0.17, whose core2 "^0.4" is
    # yanked from crates.io (no build resolves).
    Adapter("litep2p", "crates.io litep2p", "0.16.0", "litep2p",
            ("./target/release/adapter",),
            verifier="none (handshake mode only: crypto::tls::certificate is crate-private)",
            marker="target/release/adapter",
            handshake="Litep2p (QUIC transport only) dial_address of /quic-v1/p2p/PEERID / "
            "listen, ConnectionEstablished or DialFailure; no API mode (crypto::tls is "
            "crate-private), no TLS over TCP (Noise)",
            transports=("quic",), api=False,
            ecosystem="crates", registry_name="litep2p", since="0.14.0"),
)

BY_NAME = {adapter.name: adapter for adapter in SHIPPED}

#: The fixture peer's binary, under the adapters folder (``adapters/build fixture-peer``).
PEER = "fixture-peer/fixture-peer"
