"""Action ids and the button value / modal metadata codecs."""

from __future__ import annotations

import pytest

from blocks import ids
from blocks.ids import ButtonValue, ModalMetadata


def test_button_value_round_trip() -> None:
    value = ButtonValue(run_id="run123abc456", intervention_id="int987", option=3)
    raw = value.encode()
    assert raw == '{"r":"run123abc456","i":"int987","o":3}'
    assert ButtonValue.decode(raw) == value


def test_button_value_round_trip_without_optional_fields() -> None:
    value = ButtonValue(run_id="r1")
    assert value.encode() == '{"r":"r1"}'
    decoded = ButtonValue.decode(value.encode())
    assert decoded.intervention_id is None and decoded.option is None


def test_button_value_decodes_long_field_names() -> None:
    decoded = ButtonValue.decode('{"run_id":"r1","intervention_id":"i1","option":0}')
    assert decoded == ButtonValue(run_id="r1", intervention_id="i1", option=0)


def test_button_value_is_always_under_2000_chars() -> None:
    biggest = ButtonValue(run_id="r" * 200, intervention_id="i" * 200, option=10_000)
    assert len(biggest.encode()) <= 2000
    with pytest.raises(ValueError):
        ButtonValue(run_id="r" * 201)


@pytest.mark.parametrize(
    "garbage",
    [
        "",
        "not json",
        "[1, 2]",
        "null",
        '"r"',
        "{}",
        '{"r": ""}',
        '{"r": 5}',
        '{"r": "x", "o": -1}',
        '{"r": "x", "o": "two"}',
        '{"r": "x", "o": "2"}',
        '{"r": "x", "o": true}',
        '{"r": "x", "extra": 1}',
        '{"r": "x"',
    ],
)
def test_button_value_rejects_garbage(garbage: str) -> None:
    with pytest.raises(ValueError, match="button value"):
        ButtonValue.decode(garbage)


def test_modal_metadata_round_trip() -> None:
    meta = ModalMetadata(
        run_id="run1", intervention_id="int1", channel="C1", thread_ts="1700000000.000100"
    )
    raw = meta.encode()
    assert len(raw) <= 3000
    assert ModalMetadata.decode(raw) == meta


@pytest.mark.parametrize("garbage", ["", "{}", "[]", '{"r":"x"}', "%%%"])
def test_modal_metadata_rejects_garbage(garbage: str) -> None:
    with pytest.raises(ValueError, match="modal metadata"):
        ModalMetadata.decode(garbage)


def test_option_action_ids() -> None:
    assert ids.option_action_id(4) == "grace_escalate_option:4"
    assert ids.parse_option_action_id("grace_escalate_option:4") == 4
    assert ids.parse_option_action_id(ids.ESCALATE_PROCEED) is None
    assert ids.ESCALATE_OPTION_PATTERN.match(ids.option_action_id(12))


def test_action_ids_are_unique_and_prefixed() -> None:
    names = [*ids.ALL_BUTTON_ACTIONS, ids.ESCALATE_OPTION, ids.MODIFY_MODAL_CALLBACK]
    assert len(set(names)) == len(names)
    assert all(n.startswith("grace_") for n in names)
