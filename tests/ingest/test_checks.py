"""ingest's system checks: secrets, and a job timeout that leaves room for the downloads."""

import base64

import pytest

from ingest.checks import (
    JOB_TIMEOUT_MARGIN_SECONDS,
    check_decode_memory_holds_the_pixel_limit,
    check_duplicate_distance,
    check_ingest_secrets,
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


def whsec(key: bytes) -> str:
    return "whsec_" + base64.b64encode(key).decode()


@pytest.mark.parametrize(
    "secrets",
    [
        [whsec(b"k" * 24)],  # the shortest key Standard Webhooks allows
        [whsec(b"k" * 64), whsec(bytes(range(32)))],  # rotation: two active at once
        [f"  {whsec(b'k' * 32)} "],  # spaces around an entry of a comma-separated list
        [],  # ingest closed: a deploy warning (ingest.W001), not an error
    ],
)
def test_well_formed_secrets_pass_the_check(settings, secrets):
    settings.INGEST_SECRETS = secrets

    assert check_ingest_secrets(None) == []


@pytest.mark.parametrize(
    ("secret", "says"),
    [
        ("whsec_ab", "standard base64"),  # the library would take it as a 1-byte key
        ("whsec_" + base64.b64encode(b"k" * 32).decode().rstrip("="), "standard base64"),
        (whsec(b"k" * 23), "23-byte key"),
        ("whsec_", "0-byte key"),
        (base64.b64encode(b"k" * 32).decode(), "does not start with whsec_"),
        ("WHSEC_" + base64.b64encode(b"k" * 32).decode(), "does not start with whsec_"),
        ("whsec_" + base64.urlsafe_b64encode(b"\xff" * 30).decode(), "standard base64"),
        ("whsec_" + "a secret phrase of many words", "standard base64"),
        ("whsec_" + "QUJD" * 8 + "\u00e9", "standard base64"),
        ("whsec_" + "QUJD" * 4 + " " + "QUJD" * 4, "standard base64"),
    ],
)
def test_a_malformed_secret_is_a_check_error_that_names_its_entry(settings, secret, says):
    settings.INGEST_SECRETS = [whsec(b"k" * 32), secret]

    (error,) = check_ingest_secrets(None)

    assert error.id == "ingest.E001"
    assert error.is_serious()
    assert error.msg.startswith("INGEST_SECRETS entry 2 ")
    assert says in error.msg
    # The message names the entry, never its value: check output ends up in logs.
    assert secret.strip() not in error.msg


def test_the_default_decode_budget_holds_the_largest_png_the_pixel_limit_admits(settings):
    assert check_decode_memory_holds_the_pixel_limit(None) == []


def test_a_decode_budget_below_the_pixel_limit_is_a_warning(settings):
    settings.INGEST_DECODE_MEMORY_BYTES = 128 * 1024 * 1024

    (warning,) = check_decode_memory_holds_the_pixel_limit(None)

    assert warning.id == "ingest.W003"
    assert "(128 MiB)" in warning.msg
    assert "INGEST_MAX_IMAGE_PIXELS (64000000)" in warning.msg
