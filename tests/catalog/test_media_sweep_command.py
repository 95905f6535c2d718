"""`manage.py media_sweep`: the sweep by hand (after an upgrade: --full), and its exit status."""

import pytest
from django.core.management import call_command

from catalog.models import Runway
from publicapi.models import PublicRunway
from tests.visibility_support import album, keys_of, public_files

pytestmark = pytest.mark.django_db


def test_it_converges_and_says_what_it_fixed(public_copies, capsys):
    runway = album(status="pending")
    Runway.objects.filter(pk=runway.pk).update(status="published")

    call_command("media_sweep", "--full")

    out = capsys.readouterr().out
    assert f"published {len(keys_of(runway))}" in out and "records_to_publish 1" in out
    assert public_files() == keys_of(runway)
    assert PublicRunway.objects.filter(pk=runway.pk).exists()
    call_command("media_sweep")
    assert capsys.readouterr().out.startswith("no drift")
