"""The ``handshake`` request of ``adapter.py quic``: py-libp2p's QUIC transport (aioquic
inside) against fixturegen's fixture peer, as a node uses it: ``QUICTransport(key, config)``
with its background nursery, then ``dial(/ip4/.../udp/PORT/quic-v1/p2p/PEER)``, or
``create_listener(handler)`` + ``listen`` and the handler's connection.

py-libp2p reports a refused handshake only as a timeout (a CONNECTION_CLOSE becomes aioquic's
``ConnectionTerminated``, logged at debug, and the dial waits ``CONNECTION_HANDSHAKE_TIMEOUT``).
The reason is on aioquic's ``quic`` logger ("Connection close received/sent (code, reason)")
and py-libp2p's own loggers: this module listens to them, and a close logged for the
connection being made ends the wait at once, with those words as the verdict's text. A
listener that never calls its handler for a failed inbound handshake ends on the harness's
cancel line.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import logging
import queue
from collections.abc import Callable
from typing import Any

import multiaddr
import trio
from libp2p.crypto.ed25519 import create_new_key_pair
from libp2p.transport.quic.config import QUICTransportConfig
from libp2p.transport.quic.transport import QUICTransport

Verdict = dict[str, Any]
WATCHED = ("quic", "libp2p.transport.quic")


class _Closes(logging.Handler):
    """Collects what the QUIC loggers say about closes and failures."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.said: list[str] = []
        self.closed = trio.Event()
        #: The library said it gave up on the connection (its own log, not a timer).
        self.refused = False

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
        except Exception:  # a record that cannot format is not a verdict
            return
        lowered = text.lower()
        if any(w in lowered for w in ("connection close", "terminated", "fail", "invalid",
                                      "mismatch", "error", "alert")):
            self.said.append(f"{record.name}: {text}")
            if "connection close" in lowered or "terminated" in lowered:
                self.closed.set()
            if any(w in lowered for w in ("connection close", "failed to establish",
                                          "parsing failed")):
                self.refused = True


def _text(exc: BaseException) -> str:
    """An exception's type and words; a (Trio nursery's) group, its members'."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_text(member) for member in exc.exceptions)
    return f"{type(exc).__name__}: {exc}"


def _transport(seconds: float) -> QUICTransport:
    config = QUICTransportConfig()
    config.CONNECTION_HANDSHAKE_TIMEOUT = seconds  # its default is 10 s
    config.connection_timeout = seconds
    return QUICTransport(create_new_key_pair().private_key, config)


async def _handshake(request: dict[str, Any], announce: Callable[[dict[str, str]], None],
                     lines: queue.Queue[str | None], closes: _Closes) -> Verdict:
    case = str(request.get("id", ""))
    seconds = (request.get("timeout_ms") or 10000) / 1000
    transport = _transport(seconds)
    outcome: dict[str, Any] = {}
    try:
        async with trio.open_nursery() as nursery:
            transport.set_background_nursery(nursery)
            with trio.move_on_after(seconds) as deadline:
                if request.get("direction") == "listen":
                    await _listen(case, transport, announce, lines, closes, outcome, nursery)
                else:
                    await _dial(request, transport, closes, outcome)
            if deadline.cancelled_caught and not outcome:
                outcome["error"] = f"adapter: no verdict within {seconds:g} s"
            nursery.cancel_scope.cancel()
    except Exception as exc:  # the library's rejection, whatever its type
        outcome.setdefault("error", _text(exc))
    finally:
        with trio.move_on_after(1) as scope, contextlib.suppress(Exception):
            scope.shield = True  # closing after the verdict: nothing left to report
            await transport.close()
    if "peer" in outcome:
        return {"id": case, "verdict": "accept", "peer_id": outcome["peer"], "error": None}
    said = "; ".join(dict.fromkeys(closes.said))
    text = outcome.get("error") or "adapter: no connection"
    return {"id": case, "verdict": "reject", "peer_id": None,
            "error": f"{text} [logged: {said}]" if said else text}


async def _dial(request: dict[str, Any], transport: QUICTransport, closes: _Closes,
                outcome: dict[str, Any]) -> None:
    host, _, port = str(request["address"]).rpartition(":")
    wanted = request.get("expect_peer_id")
    if not wanted:
        outcome["error"] = "adapter: py-libp2p dials only a known PeerId"
        return
    address = multiaddr.Multiaddr(f"/ip4/{host}/udp/{port}/quic-v1/p2p/{wanted}")
    async with trio.open_nursery() as race:
        async def dial() -> None:
            try:
                conn = await transport.dial(address)
                peer = conn.remote_peer_id()
                outcome["peer"] = peer.to_base58() if peer is not None else None
            except Exception as exc:
                outcome["error"] = _text(exc)
            race.cancel_scope.cancel()

        async def refused() -> None:
            await closes.closed.wait()
            await trio.sleep(0.01)  # the dial's own error, if it has one, wins
            outcome.setdefault("error", "the connection was closed during the handshake")
            race.cancel_scope.cancel()

        race.start_soon(dial)
        race.start_soon(refused)


async def _listen(case: str, transport: QUICTransport, announce: Callable[[dict[str, str]], None],
                  lines: queue.Queue[str | None], closes: _Closes,
                  outcome: dict[str, Any], nursery: trio.Nursery) -> None:
    accepted = trio.Event()

    async def handler(conn: Any) -> None:
        peer = conn.remote_peer_id()
        outcome["peer"] = peer.to_base58() if peer is not None else None
        accepted.set()

    listener = transport.create_listener(handler)
    where = multiaddr.Multiaddr("/ip4/127.0.0.1/udp/0/quic-v1")
    if "nursery" in inspect.signature(listener.listen).parameters:  # py-libp2p before 0.7.0
        await listener.listen(where, nursery)
    else:
        await listener.listen(where)
    try:
        port = listener.get_addrs()[0].value_for_protocol("udp")
        announce({"id": case, "listening": f"127.0.0.1:{port}"})
        while not accepted.is_set():
            with trio.move_on_after(0.002):
                await accepted.wait()
            if accepted.is_set():
                break
            try:
                line = lines.get_nowait()
            except queue.Empty:
                continue
            if line is not None and '"cancel"' in line and case in line:
                # A connection still on its way gets grace_ms (0: the fixture peer was
                # refused, so none is coming; 250 ms from harnesses that do not say), and none
                # when py-libp2p has already logged that it failed this one: its TLS client
                # side completes before the listener judges the certificate, so the peer
                # cannot tell.
                try:
                    grace = int(json.loads(line).get("grace_ms", 250)) / 1000
                except (ValueError, TypeError, AttributeError):
                    grace = 0.25
                if closes.refused:
                    grace = 0.0
                with trio.move_on_after(min(max(grace, 0.0), 1.0)):
                    await accepted.wait()
                if not accepted.is_set():
                    outcome["error"] = ("adapter: the QUIC listener accepted no connection; "
                                        + line.strip())
                return
    finally:
        await listener.close()


def handshake(request: dict[str, Any], announce: Callable[[dict[str, str]], None],
              lines: queue.Queue[str | None]) -> Verdict:
    if request.get("transport") != "quic":
        return {"id": str(request.get("id", "")), "verdict": "skip", "peer_id": None,
                "error": f"adapter: transport {request.get('transport')!r} is not built into "
                "this adapter's quic mode"}
    closes = _Closes()
    loggers = [logging.getLogger(name) for name in WATCHED]
    logging.disable(logging.NOTSET)
    for log in loggers:
        log.addHandler(closes)
        log.setLevel(logging.DEBUG)
    try:
        return trio.run(_handshake, request, announce, lines, closes)
    finally:
        for log in loggers:
            log.removeHandler(closes)
        logging.disable(logging.CRITICAL)
