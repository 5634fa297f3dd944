from __future__ import annotations

import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def root() -> pathlib.Path:
    return ROOT


def _assert_reader_error(call, arg: str) -> None:
    """`call()` raises AttnBookError whose Chinese message names `arg`, what it got and what it expected."""
    from attnbook import AttnBookError

    with pytest.raises(AttnBookError) as info:
        call()
    message = str(info.value)
    assert f"`{arg}`" in message, message
    assert "收到" in message and "应为" in message, message


@pytest.fixture()
def assert_reader_error():
    return _assert_reader_error
