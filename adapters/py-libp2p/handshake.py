"""The ``handshake`` request of ``adapter.py tls``: py-libp2p's real secure-channel upgrade over
TCP against fixturegen's fixture peer, as its swarm runs it.

The swarm dials with ``TCP._dial_resolved`` (``RawConnection(TrioTCPStream(stream), True)``)
and accepts with ``RawConnection(TrioTCPStream(stream), False)``, then calls
``TransportUpgrader.upgrade_security(raw, is_initiator, peer_id)``: multistream-select
(``MultiselectClient.select_one_of`` / ``Multiselect.negotiate``) for ``/tls/1.0.0``, then
``TLSTransport.secure_outbound`` / ``secure_inbound``. This module builds the same objects with
only the TLS transport and calls that method. The upgrader rewraps the transport's errors
(``SecurityUpgradeFailure``): the reply carries the whole chain of causes, the library's own
words. The library's own timeouts are silent (30 s, 5 s per read); ``trio.fail_after`` with the
request's ``timeout_ms`` is the real limit.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import trio
from libp2p.crypto.ed25519 import create_new_key_pair
from libp2p.io.trio import TrioTCPStream
from libp2p.network.connection.raw_connection import RawConnection
from libp2p.security.tls.transport import PROTOCOL_ID, TLSTransport
from libp2p.transport.upgrader import TransportUpgrader
from peer_text import parse_peer_id

Verdict = dict[str, Any]


def upgrader() -> TransportUpgrader:
    """An upgrader with only the TLS security transport, for a fresh Ed25519 host key."""
    return TransportUpgrader({PROTOCOL_ID: TLSTransport(create_new_key_pair())}, {})


def describe(exc: BaseException) -> str:
    """The exception and its causes, outermost first: what each layer said."""
    parts: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        parts.append(f"{type(current).__name__}: {current}")
        current = current.__cause__ or current.__context__
    return " <- ".join(parts)


async def _close(conn: Any) -> None:
    with trio.move_on_after(1) as scope, contextlib.suppress(Exception):
        scope.shield = True  # closing after the verdict: nothing left to report
        await conn.close()


async def _handshake(request: dict[str, Any], up: TransportUpgrader,
                     announce: Callable[[dict[str, str]], None]) -> Verdict:
    case = str(request.get("id", ""))
    seconds = (request.get("timeout_ms") or 10000) / 1000
    raw: RawConnection | None = None
    secure: Any = None
    try:
        with trio.fail_after(seconds):
            if request.get("direction") == "listen":
                listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
                try:
                    host, port = listeners[0].socket.getsockname()[:2]
                    announce({"id": case, "listening": f"{host}:{port}"})
                    stream = await listeners[0].accept()
                finally:
                    for listener in listeners:
                        await listener.aclose()
                raw = RawConnection(TrioTCPStream(stream), False)
                secure = await up.upgrade_security(raw, False)
            else:
                host, _, port = str(request["address"]).rpartition(":")
                wanted = request.get("expect_peer_id")
                if not wanted:
                    return {"id": case, "verdict": "skip", "peer_id": None,
                            "error": "adapter: py-libp2p dials only a known PeerId"}
                expected = parse_peer_id(wanted)
                stream = await trio.open_tcp_stream(host, int(port))
                raw = RawConnection(TrioTCPStream(stream), True)
                secure = await up.upgrade_security(raw, True, expected)
        return {"id": case, "verdict": "accept", "error": None,
                "peer_id": secure.get_remote_peer().to_base58()}
    except trio.TooSlowError:
        return {"id": case, "verdict": "reject", "peer_id": None,
                "error": f"adapter: no verdict within {seconds:g} s (the handshake hung)"}
    except Exception as exc:  # the library's rejection, whatever its type
        return {"id": case, "verdict": "reject", "peer_id": None, "error": describe(exc)}
    finally:
        if secure is not None:
            await _close(secure)
        elif raw is not None:
            await _close(raw)


def handshake(request: dict[str, Any], up: TransportUpgrader,
              announce: Callable[[dict[str, str]], None]) -> Verdict:
    if request.get("transport") != "tcp":
        return {"id": str(request.get("id", "")), "verdict": "skip", "peer_id": None,
                "error": f"adapter: transport {request.get('transport')!r} is not built into "
                "this adapter's tls mode"}
    return trio.run(_handshake, request, up, announce)
