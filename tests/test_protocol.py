"""The adapter protocol as the reference documents it: every kind of line the harness and the
fixture peer code writes or reads is a model of ``fixturegen.harness.protocol.MESSAGES``, has
its shipped schema, and is on the reference page; the lines the harness sends validate against
their schemas."""

from __future__ import annotations

import ast
import inspect
import json
import re
from pathlib import Path

import jsonschema
from pydantic import BaseModel

from fixturegen.harness import driver, handshake, protocol
from fixturegen.harness.protocol import MESSAGES, Cancel, PeerAddress, PeerRequest, PeerStop

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs/reference/formats/harness-protocol.md"


def _models_of(module: object) -> set[str]:
    """The protocol models a module names (imports, then uses) in its source."""
    names = {m.model.__name__ for m in MESSAGES}
    tree = ast.parse(inspect.getsource(module))  # type: ignore[arg-type]
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    return names & used


def test_every_model_of_the_protocol_is_a_message() -> None:
    models = {v for v in vars(protocol).values()
              if inspect.isclass(v) and issubclass(v, BaseModel)
              and v.__module__ == protocol.__name__}
    assert models == {m.model for m in MESSAGES}
    assert len({m.schema for m in MESSAGES}) == len(MESSAGES)


def test_the_driver_and_the_fixture_peer_code_speak_only_listed_messages() -> None:
    used = _models_of(driver) | _models_of(handshake)
    listed = {m.model.__name__ for m in MESSAGES}
    # The lines the harness writes to or reads from an adapter and the fixture peer.
    assert {"Request", "Reply", "Listening", "Cancel", "PeerRequest", "PeerAddress", "PeerStop",
            "PeerEvent"} <= used
    assert used <= listed


def test_the_reference_page_names_and_describes_every_message() -> None:
    page = PAGE.read_text(encoding="utf-8")
    headings = set(re.findall(r"^### (\w+)$", page, re.M))
    for m in MESSAGES:
        name = m.model.__name__
        assert name in headings, name
        assert f"](#{name.lower()})" in page  # in the table of messages
        assert f"../../schemas/{m.schema}.schema.json" in page
        for field in m.model.model_fields:
            assert f"| `{field}` |" in page, (name, field)
    # a sequence diagram of a handshake in each direction
    assert page.count('<svg class="sequence"') == 2
    assert "## A handshake, dialling" in page and "## A handshake, listening" in page


def test_each_message_has_its_shipped_schema() -> None:
    for m in MESSAGES:
        shipped = json.loads((ROOT / f"fixturegen/schemas/{m.schema}.schema.json").read_text())
        assert shipped == m.json_schema(), m.schema
        jsonschema.Draft202012Validator.check_schema(shipped)


def test_the_lines_the_harness_sends_the_peer_and_a_listener_validate() -> None:
    schemas = {m.model: m.json_schema() for m in MESSAGES}
    lines = [
        Cancel(id="c", cancel="the fixture peer's side ended (failed: tls: bad certificate)",
               grace_ms=0),
        PeerRequest(id="c", transport="quic", role="client", certificates=["AAAA"], key=None,
                    scheme=None, fault="", timeout_ms=7500),
        PeerAddress(id="c", address="127.0.0.1:4001"),
        PeerStop(id="c", stop=True, verdict=None),
    ]
    for line in lines:
        jsonschema.validate(json.loads(line.model_dump_json()), schemas[type(line)])
    # and what they refuse: a negative grace, a stop that is not one
    bad = [({"id": "c", "cancel": "x", "grace_ms": -1}, Cancel),
           ({"id": "c", "stop": False, "verdict": "accept"}, PeerStop),
           ({"id": "c", "address": "x", "more": 1}, PeerAddress)]
    for data, model in bad:
        assert not jsonschema.Draft202012Validator(schemas[model]).is_valid(data), data


def test_the_cancel_grace_on_the_page_is_the_code_s() -> None:
    page = PAGE.read_text(encoding="utf-8")
    assert f"else {handshake.CANCEL_GRACE_MS}." in page
    assert f"(default {driver.DEFAULT_TIMEOUT:g} s)" in page
