"""catalog.text.truncate: the one helper that cuts error text for job rows, image rows, report
issues and the fetcher's refusals. Pure: no database."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from catalog.text import ELLIPSIS, truncate


def test_a_short_message_is_kept_as_it_is():
    assert truncate(ValueError("bad header"), 80) == "bad header"


def test_a_long_message_is_cut_to_the_limit_with_an_ellipsis():
    text = truncate(OSError("x" * 500), 80)

    assert len(text) == 80
    assert text == "x" * 79 + "…"


@pytest.mark.parametrize("limit", [300, 80])
def test_an_exception_without_a_message_is_named_by_its_type(limit):
    assert truncate(TimeoutError(), limit) == "TimeoutError"


@given(text=st.text(), limit=st.integers(min_value=1, max_value=400))
def test_the_result_fits_and_keeps_the_start_of_the_text(text, limit):
    cut = truncate(text, limit)

    assert len(cut) <= limit
    if len(text) <= limit:
        assert cut == text
    else:
        assert cut.endswith(ELLIPSIS)
        assert text.startswith(cut[:-1])
