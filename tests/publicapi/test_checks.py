"""publicapi's system checks: a similar-images distance the band lookup cannot serve stops
the start (config/wsgi.py runs the checks) instead of making every similar-images request a
500."""

import pytest
from django.core import checks

from publicapi.checks import check_similar_max_distance


@pytest.mark.parametrize("distance", [0, 7, 15])
def test_a_distance_the_band_lookup_serves_is_fine(settings, distance):
    settings.PUBLIC_SIMILAR_MAX_DISTANCE = distance

    assert check_similar_max_distance(None) == []


@pytest.mark.parametrize("distance", [-1, 16, 64])
def test_a_distance_out_of_range_is_an_error_naming_the_setting(settings, distance):
    settings.PUBLIC_SIMILAR_MAX_DISTANCE = distance

    (error,) = check_similar_max_distance(None)

    assert error.id == "publicapi.E001"
    assert f"PUBLIC_SIMILAR_MAX_DISTANCE ({distance})" in error.msg
    assert "0 to 15" in error.hint


@pytest.mark.django_db  # some apps' checks read the database
def test_the_checks_the_start_runs_refuse_it(settings):
    settings.PUBLIC_SIMILAR_MAX_DISTANCE = 16

    serious = [m.id for m in checks.run_checks() if m.is_serious()]  # as config/wsgi.py

    assert "publicapi.E001" in serious
