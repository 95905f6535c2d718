"""ingest.errors.short: the helper that cuts error text for job rows and report issues."""

import pytest

from ingest.errors import short


def test_a_short_message_is_kept_as_it_is():
    assert short(ValueError("bad header"), 80) == "bad header"


def test_a_long_message_is_cut_to_the_limit_with_an_ellipsis():
    text = short(OSError("x" * 500), 80)

    assert len(text) == 80
    assert text == "x" * 77 + "..."


@pytest.mark.parametrize("limit", [300, 80])
def test_an_exception_without_a_message_is_named_by_its_type(limit):
    assert short(TimeoutError(), limit) == "TimeoutError"
