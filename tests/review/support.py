"""Helpers for the review tests (and the scenarios that review): editors as the Editors group
makes them, albums whose images are real photographs in storage, what the ingest pipeline hands
the catalog on a re-crawl, and a reader for the forms of a rendered admin page."""

import importlib
from html.parser import HTMLParser
from types import SimpleNamespace

from django.apps import apps as django_apps
from django.contrib.auth.models import Group, User
from django.db import connection
from django.test import Client

from catalog.models import Runway
from catalog.services import NewImage, RunwayContent
from tests.factories import (
    RunwayFactory,
    StreetSnapFactory,
    distinct_photo,
)

# review's data migrations that make the Editors group, and the function of each.
EDITORS_GROUP_MIGRATIONS = [
    ("0002_editors_group", "create_editors_group"),
    ("0004_editors_delete_brand_aliases", "grant_delete_brand_alias"),
    ("0007_takedown", "grant_takedown"),
]


def editors_group() -> Group:
    """The Editors group as review's data migrations make it.

    A transactional test elsewhere in the suite flushes the database, group included; this
    puts it back by running the migrations' own functions, so the tests exercise exactly the
    permissions the migrations grant (restoring a serialized copy instead collides with the
    content types that the flush's post_migrate recreated under new ids).
    """
    schema_editor = SimpleNamespace(connection=connection)
    for name, function in EDITORS_GROUP_MIGRATIONS:
        migration = importlib.import_module(f"review.migrations.{name}")
        getattr(migration, function)(django_apps, schema_editor)
    return Group.objects.get(name=migration.GROUP)


def make_runway(
    images: int = 3, *, duplicate: bool = False, renditions_made: bool = False, **fields
):
    """A runway of `images` photographs, two to a look; `renditions_made`: as the renditions
    job leaves these small ones (narrower than 400 px: shown as they are), else as ingest
    leaves them (no thumbnail yet: the pages show placeholders)."""
    made_by_renditions = (
        {"images__rendition_status": "done", "images__width": 320} if renditions_made else {}
    )
    return RunwayFactory(
        images=images,
        images__photos=True,
        images__shots=2,
        images__duplicate=duplicate,
        **made_by_renditions,
        **fields,
    )


def make_street_snap(images: int = 4, *, details: bool = True, **fields):
    """Images alternate main, detail, main, detail, ... (each detail under the main before)."""
    return StreetSnapFactory(images=images, images__details=details, images__photos=True, **fields)


def recrawled_image(ingest_job_id: int) -> NewImage:
    """An image as the ingest pipeline hands it to catalog.services for a re-crawl."""
    sha1 = f"{ingest_job_id:040x}"
    return NewImage(
        storage_key=f"images/{sha1[:2]}/{sha1}.jpg",
        sha1=sha1,
        width=800,
        height=1200,
        byte_size=1000,
        mime_type="image/jpeg",
        original_url=f"https://example.com/{ingest_job_id}.jpg",
        sort_order=0,
        phash=None,
        phash_algorithm="",
    )


def recrawl(runway, *, ingest_job_id: int) -> dict:
    """What the ingest pipeline passes to runway_reopen for a re-crawl of `runway`."""
    content = RunwayContent(
        brand=runway.brand,
        season_code=runway.season_code,
        season=runway.season,
        year=runway.year,
        collection_type=runway.collection_type,
        title=f"Crawl of job {ingest_job_id}",
        description="",
        source="vogue",
        source_url=f"https://example.com/shows/{runway.pk}",
        ingest_job_id=ingest_job_id,
        content_checksum=f"{ingest_job_id:064x}",
    )
    return {"content": content, "images": [recrawled_image(ingest_job_id)]}


class FormReader(HTMLParser):
    """Collects the inputs a browser would submit with each form of a page (by form id,
    honouring the form= attribute): enough to post what the page holds, as a browser would."""

    def __init__(self):
        super().__init__()
        self.forms: dict[str, dict[str, list[str]]] = {}
        self._stack: list[str] = []
        self._textarea: tuple[str, str] | None = None
        self._select: tuple[str, str] | None = None
        self._options: list[tuple[str, bool]] = []

    def _owner(self, attrs: dict) -> str | None:
        return attrs.get("form") or (self._stack[-1] if self._stack else None)

    def _add(self, form: str | None, name: str | None, value: str) -> None:
        if form is not None and name:
            self.forms.setdefault(form, {}).setdefault(name, []).append(value)

    def handle_starttag(self, tag, attrs):
        attrs = {k: (v if v is not None else "") for k, v in attrs}
        if tag == "form":
            self._stack.append(attrs.get("id", f"form{len(self.forms)}"))
            self.forms.setdefault(self._stack[-1], {})
        elif tag == "input":
            kind = attrs.get("type", "text")
            if kind in {"submit", "button", "image", "reset", "file"}:
                return
            if kind in {"checkbox", "radio"} and "checked" not in attrs:
                return
            default = "on" if kind in {"checkbox", "radio"} else ""
            self._add(self._owner(attrs), attrs.get("name"), attrs.get("value", default))
        elif tag == "textarea":
            self._textarea = (self._owner(attrs), attrs.get("name"))
            self._add(*self._textarea, "")
        elif tag == "select":
            self._select = (self._owner(attrs), attrs.get("name"))
            self._options = []
        elif tag == "option" and self._select:
            self._options.append((attrs.get("value", ""), "selected" in attrs))

    def handle_data(self, data):
        if self._textarea:
            form, name = self._textarea
            if form is not None and name:
                self.forms[form][name][-1] += data

    def handle_endtag(self, tag):
        if tag == "form" and self._stack:
            self._stack.pop()
        elif tag == "textarea":
            self._textarea = None
        elif tag == "select" and self._select:
            # A browser sends the selected option, or the first one when none is selected.
            chosen = [value for value, selected in self._options if selected]
            if not chosen and self._options:
                chosen = [self._options[0][0]]
            for value in chosen:
                self._add(*self._select, value)
            self._select = None


def page_forms(response) -> dict[str, dict[str, list[str]]]:
    reader = FormReader()
    reader.feed(response.content.decode())
    return reader.forms


def form_data(response, form_id: str, **overrides) -> dict:
    """The submission of one form of a rendered page, with some fields changed."""
    data = {name: values if len(values) > 1 else values[0] for name, values in
            page_forms(response)[form_id].items()}  # fmt: skip
    data.update(overrides)
    return data


def log_in(page, live_server, username: str) -> None:
    """The editor's session in the browser (the login form is the one
    tests/scenarios/test_editor_in_browser.py fills in)."""
    user = User.objects.create_user(username, password=f"{username}-pw", is_staff=True)
    user.groups.add(editors_group())
    client = Client()
    client.force_login(user)
    page.context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )


# --- Albums for the browser tests (tests/review/test_browser_*.py) --------------------------


def runway_with_looks(
    looks: int, *, shots: int = 1, first_id: int | None = None, **fields
) -> Runway:
    """A runway of `looks` looks of `shots` photographs each, every one a file of its own;
    its images' ids from `first_id` if given (an archive's ids, as long as a big one's)."""
    ids = (lambda n: {"id": first_id + n}) if first_id is not None else (lambda n: {})
    return RunwayFactory(
        images=[{"photo": distinct_photo(n), **ids(n)} for n in range(looks * shots)],
        images__shots=shots,
        # Made, and none 400 wide: the tile shows the small photo as it is.
        images__rendition_status="done",
        images__width=300,
        images__height=320,
        **fields,
    )
