"""Albums whose bytes are really in the private store (real photographs, their WebP
renditions), and what the public store holds: for the tests of catalog.visibility, the media
routes, the edge and the takedown admin."""

import hashlib
import io
from pathlib import Path

from django.core.files.storage import default_storage, storages

from catalog.models import Record, RunwayImage, StreetSnapImage
from catalog.storage import image_store, rendition_key, rendition_put
from catalog.visibility import media_changes_process
from tests.factories import (
    RunwayFactory,
    StreetSnapFactory,
)
from tests.ingest.support import jpeg, photo

PHOTOS = ("astronaut", "coffee", "chelsea", "rocket")


def webp(name: str, width: int) -> bytes:
    image = photo(name)
    image = image.resize((width, round(width * image.height / image.width)))
    buffer = io.BytesIO()
    image.save(buffer, format="WEBP", quality=60)
    return buffer.getvalue()


def stored_image(name: str, *, size: int = 96, renditions: bool = True) -> dict:
    """Store a photograph as ingest does (and its 400 px rendition as the renditions job
    does); the image row's fields that name them."""
    data = jpeg(name, size=size)
    sha1 = hashlib.sha1(data, usedforsecurity=False).hexdigest()
    key = image_store(data=data, sha1=sha1, mime_type="image/jpeg")
    listed = []
    if renditions:
        rkey = rendition_key(sha1=sha1, width=400)
        rendition_put(key=rkey, data=webp(name, 64))
        listed.append({"width": 400, "height": 400, "key": rkey})
    return {
        "storage_key": key,
        "sha1": sha1,
        "renditions": listed,
        "rendition_status": "done" if renditions else "pending",
    }


def album(kind: str = "runway", *, photos=PHOTOS[:2], renditions: bool = True, **fields) -> Record:
    """A record with one image per photograph, each stored; ``published=True`` for a
    published one (as the factories do: its bytes are taken as public)."""
    factory = {"runway": RunwayFactory, "street": StreetSnapFactory}[kind]
    return factory(images=[stored_image(name, renditions=renditions) for name in photos], **fields)


def keys_of(record: Record, *, live_only: bool = True) -> set[str]:
    images = record.images.live() if live_only else record.images.all()
    keys = set()
    for image in images:
        keys.add(image.storage_key)
        keys.update(r["key"] for r in image.renditions)
    return keys


def public_files() -> set[str]:
    """The keys the public store holds (a folder of copies)."""
    root = Path(storages["public"].location)
    if not root.exists():
        return set()
    return {str(path.relative_to(root)) for path in root.rglob("*") if path.is_file()}


def private_files() -> set[str]:
    root = Path(default_storage.location)
    return {str(path.relative_to(root)) for path in root.rglob("*") if path.is_file()}


def run_jobs():
    """What the visibility job does after the commit of each change."""
    return media_changes_process()


def image_model(record: Record) -> type[RunwayImage] | type[StreetSnapImage]:
    return record.images.model
