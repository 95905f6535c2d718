"""ingest's system checks: secrets, and a job timeout that leaves room for the downloads."""

import pytest

from ingest.checks import (
    JOB_TIMEOUT_MARGIN_SECONDS,
    check_duplicate_distance,
    check_job_timeout_covers_downloads,
)


def test_the_defaults_leave_the_job_timeout_room_for_the_download_budget(settings):
    assert settings.INGEST_JOB_TIMEOUT >= settings.INGEST_DOWNLOAD_BUDGET + 120

    assert check_job_timeout_covers_downloads(None) == []


def test_a_job_timeout_too_short_for_the_download_budget_is_a_warning(settings):
    settings.INGEST_JOB_TIMEOUT = 900
    settings.INGEST_DOWNLOAD_BUDGET = 900 - JOB_TIMEOUT_MARGIN_SECONDS + 1

    (warning,) = check_job_timeout_covers_downloads(None)

    assert warning.id == "ingest.W002"
    assert "INGEST_JOB_TIMEOUT (900s)" in warning.msg
    assert "INGEST_DOWNLOAD_BUDGET (781s)" in warning.msg
    assert "at least 901" in warning.hint


def test_a_job_timeout_exactly_covering_budget_and_margin_is_fine(settings):
    settings.INGEST_JOB_TIMEOUT = 900
    settings.INGEST_DOWNLOAD_BUDGET = 900 - JOB_TIMEOUT_MARGIN_SECONDS

    assert check_job_timeout_covers_downloads(None) == []


@pytest.mark.parametrize("distance", [0, 7, 15])
def test_a_duplicate_distance_the_band_lookup_serves_is_fine(settings, distance):
    settings.INGEST_DUPLICATE_MAX_DISTANCE = distance

    assert check_duplicate_distance(None) == []


@pytest.mark.parametrize("distance", [-1, 16, 64])
def test_a_duplicate_distance_the_band_lookup_cannot_serve_is_an_error(settings, distance):
    settings.INGEST_DUPLICATE_MAX_DISTANCE = distance

    (error,) = check_duplicate_distance(None)

    assert error.id == "ingest.E002"
    assert f"({distance})" in error.msg
