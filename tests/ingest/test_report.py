"""The job report: whatever happens to the images, the counts add up and the issues stay
capped."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ingest.report import Report

events = st.lists(
    st.sampled_from(["stored", "refused", "repeated", "duplicate", "note"]), max_size=300
)


@given(events, st.integers(0, 50))
def test_the_counts_always_add_up(sequence, max_issues):
    report = Report(max_issues=max_issues, album_images=len(sequence))
    issues_sent = 0
    for n, event in enumerate(sequence):
        url = f"https://example.com/{n}.jpg"
        if event == "stored":
            report.image_stored()
        elif event == "refused":
            report.image_refused(index=n, url=url, reason="HTTP 404")
            issues_sent += 1
        elif event == "repeated":
            report.image_repeated(index=n, url=url, first_index=0)
            issues_sent += 1
        elif event == "duplicate" and report.duplicates < report.stored:
            report.image_duplicate(index=n, url=url, reason="near-duplicate")
            issues_sent += 1
        elif event == "duplicate":
            # Every stored image is flagged already: the report refuses and counts nothing.
            with pytest.raises(ValueError, match="only a stored image"):
                report.image_duplicate(index=n, url=url, reason="near-duplicate")
        elif event == "note":
            report.issue(index=n, url=url, reason="stored as a main image")
            issues_sent += 1

    counts = report.as_dict()["counts"]
    assert counts["received"] == counts["stored"] + counts["refused"] + counts["repeated"]
    assert 0 <= counts["duplicates"] <= counts["stored"]
    assert len(report.issues) == min(issues_sent, max_issues)
    assert report.issues_truncated == (issues_sent > max_issues)


def test_a_near_duplicate_must_be_a_stored_image():
    report = Report()

    with pytest.raises(ValueError):
        report.image_duplicate(index=0, url="https://example.com/0.jpg", reason="x")


def test_the_report_shape():
    report = Report(album_images=2)
    report.image_stored()
    report.image_refused(index=1, url="https://example.com/1.jpg", reason="HTTP 404")

    assert report.as_dict() == {
        "album_images": 2,
        "counts": {"received": 2, "stored": 1, "refused": 1, "repeated": 0, "duplicates": 0},
        "issues": [{"index": 1, "url": "https://example.com/1.jpg", "reason": "HTTP 404"}],
        "issues_truncated": False,
    }
