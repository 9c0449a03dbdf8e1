"""The harness's peers (the fixture peer, the message-level peer) spoken to line by line as the
harness does, and the multistream-select framing a test needs to reach their TLS."""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol


class Presents(Protocol):
    certificates: tuple[str, ...]
    key: str | None


class Peer:
    """A peer process: requests and control lines in, events out."""

    def __init__(self, command: Path | Sequence[str]) -> None:
        argv = [str(command)] if isinstance(command, Path) else list(command)
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)

    def send(self, line: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(line) + "\n")
        self.proc.stdin.flush()

    def event(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, "the peer exited"
        event: dict[str, Any] = json.loads(line)
        return event

    def request(self, base: Presents, *, case: str, transport: str, role: str,
                protocol: str, timeout_ms: int = 20_000, scheme: int | None = None,
                fault: str = "") -> dict[str, Any]:
        self.send({"id": case, "transport": transport, "role": role,
                   "certificates": list(base.certificates), "key": base.key, "scheme": scheme,
                   "fault": fault, "protocol": protocol, "timeout_ms": timeout_ms})
        return self.event()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


@contextmanager
def running(command: Path | Sequence[str]) -> Iterator[Peer]:
    p = Peer(command)
    try:
        yield p
    finally:
        if p.proc.poll() is None:
            p.proc.kill()
            p.proc.wait()


def _uvarint(n: int) -> bytes:
    out = b""
    while n >= 0x80:
        out += bytes([n & 0x7F | 0x80])
        n >>= 7
    return out + bytes([n])


def ms(*messages: str) -> bytes:
    """multistream-select messages: a uvarint length, the text, a newline."""
    return b"".join(_uvarint(len(m) + 1) + m.encode() + b"\n" for m in messages)


def read_ms(sock: socket.socket) -> str:
    """One multistream-select message."""
    length, shift = 0, 0
    while True:
        byte = sock.recv(1)[0]
        length |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            break
    data = b""
    while len(data) < length:
        data += sock.recv(length - len(data))
    return data[:-1].decode()
