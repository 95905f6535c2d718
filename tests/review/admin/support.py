"""Helpers of the admin's tests: URLs, reading a page's messages and forms, posting
an image operation, and the queue an editor came from."""

import re
from urllib.parse import urlencode

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.review.support import (
    editors_group,
    form_data,
    make_runway,
    make_street_snap,
)

KINDS = [
    pytest.param(make_runway, id="runway"),
    pytest.param(make_street_snap, id="street"),
]


def url(record_or_model, view: str, *args) -> str:
    opts = record_or_model._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_{view}", args=args)


def change_url(record) -> str:
    return url(record, "change", record.pk)


def main_form(record) -> str:
    return f"{record._meta.model_name}_form"


def messages_of(response) -> list[str]:
    return [str(m) for m in response.context["messages"]] if response.context else []


def count_queries(client, path: str) -> int:
    # The first request of a process fills per-process caches (content types): measure the
    # second of two identical requests, so counts compare pages, not cache warmth.
    client.get(path)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(path)
    assert response.status_code == 200
    return len(queries)


def duplicate_notes(html: str) -> dict[int, str]:
    """Each image tile of a record page with its near-duplicate marker, whitespace folded
    ('' for a tile without one)."""
    notes = {}
    for tile in re.split(r'(?=<div class="review-tile[ "])', html)[1:]:
        image_id = int(re.search(r'id="image-(\d+)"', tile).group(1))
        note = re.search(r'<div class="review-dup">(.*?)</div>', tile, re.S)
        notes[image_id] = " ".join(note.group(1).split()) if note else ""
    return notes


def post_image_op(client, record, image_id: int, operation: str, page=None, **extra):
    page = page or client.get(change_url(record))
    data = {**form_data(page, "image-ops"), **extra}
    return client.post(url(record, "image", record.pk, image_id, operation), data, follow=True)


def in_queue(path: str, **filters) -> str:
    """`path` as the list with `filters` links to it (Django's preserved filters)."""
    return f"{path}?{urlencode({'_changelist_filters': urlencode(filters)})}"


def client_for(username: str) -> Client:
    user = User.objects.create_user(username, is_staff=True)
    user.groups.add(editors_group())
    client = Client()
    client.force_login(user)
    return client


def messages_after(client, response) -> list[str]:
    """The messages the page a redirect leads to shows."""
    return [str(message) for message in client.get(response.url).context["messages"]]


def approve(client, record, filters: dict):
    page = client.get(in_queue(url(record, "change", record.pk), **filters))
    return client.post(
        in_queue(url(record, "change", record.pk), **filters),
        form_data(page, "runway_form", _approve="Approve and publish"),
    )
