"""factory_boy factories for every model, the one place tests build rows. Entity keys come
from sequences so two factory records never collide unless a test makes them.

Albums come with their images: ``RunwayFactory(images=6)``, ``images=[{...}, ...]``,
``StreetSnapFactory(images="MdMd")`` (main, detail, ...), ``published=True``; the first image
is the cover and image_count counts them (the ``images`` hooks below say the rest).
``images__photos=True`` stores real photographs (scikit-image's samples) under their keys."""

import hashlib
import io
from datetime import timedelta

import factory
import skimage.data
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.utils import timezone
from PIL import Image

from catalog.models import (
    Brand,
    BrandAlias,
    LegacyIdMap,
    MediaChange,
    MediaSweep,
    NotDuplicate,
    PublicObject,
    Runway,
    RunwayImage,
    StoredObject,
    StreetSnap,
    StreetSnapImage,
)
from ingest.models import IngestJob, UsedWebhookId
from review.models import PreviewLink, ReviewClaim, ReviewEvent

# --- Photographs: scikit-image's bundled samples, for images whose bytes are really stored ------

PHOTOS = ["astronaut", "coffee", "chelsea", "rocket", "camera", "moon", "coins", "clock"]
_encoded: dict[str, bytes] = {}


def photo_bytes(name: str) -> bytes:
    """A bundled scikit-image sample as a small JPEG, encoded in memory (cached per run)."""
    if name not in _encoded:
        image = Image.fromarray(getattr(skimage.data, name)())
        image.thumbnail((320, 320))
        buffer = io.BytesIO()
        image.convert("RGB").save(buffer, format="JPEG", quality=80)
        _encoded[name] = buffer.getvalue()
    return _encoded[name]


def distinct_photo(n: int) -> bytes:
    """A photograph of its own for image n (a sample, shifted by n pixels): every tile of a
    big album is another file, as in a real album, so the browser cannot reuse one."""
    base = Image.open(io.BytesIO(photo_bytes(PHOTOS[n % len(PHOTOS)])))
    shifted = base.crop((n % 37, 0, base.width, base.height))
    out = io.BytesIO()
    shifted.save(out, format="JPEG", quality=80)
    return out.getvalue()


def store(key: str, data: bytes) -> str:
    if not default_storage.exists(key):
        default_storage.save(key, ContentFile(data))
    return key


class BrandFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Brand
        django_get_or_create = ("slug",)

    name = factory.Sequence(lambda n: f"Brand {n}")
    slug = factory.Sequence(lambda n: f"brand-{n}")


class BrandAliasFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = BrandAlias

    brand = factory.SubFactory(BrandFactory)
    alias = factory.Sequence(lambda n: f"Alias {n}")


class RunwayFactory(factory.django.DjangoModelFactory):
    """A runway; ``images=`` gives it images (see ``images`` below), ``published=True``
    publishes it."""

    class Meta:
        model = Runway
        skip_postgeneration_save = True

    brand = factory.SubFactory(BrandFactory)
    season_code = factory.Sequence(lambda n: f"FW{n:04d}")
    season = "Fall/Winter"
    year = 2024
    collection_type = "ready-to-wear"
    title = factory.Sequence(lambda n: f"Runway {n}")

    class Params:
        published = factory.Trait(
            status=Runway.Status.PUBLISHED,
            published_at=factory.LazyFunction(timezone.now),
            reviewed_at=factory.LazyFunction(timezone.now),
            reviewer="editor",
            bytes_public=True,
        )

    @factory.post_generation
    def images(runway, create, extracted, **fields):
        """``images=3``: three images; ``images=[{...}, ...]``: one image per dict of fields.
        They take sort_order 0, 1, ...; the first is the cover and image_count counts them.

        ``images__<field>=...`` sets a field of every image, and besides the fields:
        ``images__photos=True`` stores a real photograph under each key (PHOTOS in turn),
        ``images__shots=2`` puts two images in each look (looks 1, 1, 2, 2, ...),
        ``images__duplicate=True`` marks the last image a duplicate of the first and
        ``images__cover=None`` (or an index) sets the cover.
        """
        if not create or extracted is None:
            return
        shots = fields.pop("shots", None)
        duplicate = fields.pop("duplicate", False)
        cover = fields.pop("cover", 0)
        made = [
            RunwayImageFactory(
                runway=runway, **({"look_index": n // shots + 1} if shots else {}) | values
            )
            for n, values in enumerate(_image_values(extracted, fields))
        ]
        if duplicate and len(made) > 1:
            made[-1].is_duplicate, made[-1].dup_of = True, made[0]
            made[-1].save(update_fields=["is_duplicate", "dup_of"])
        _set_cover(runway, made, cover)


def images_of(record) -> list:
    """An album's images in their order, deleted ones included."""
    return list(record.images.order_by("sort_order"))


def _image_values(extracted, fields: dict) -> list[dict]:
    """The fields of each image an album factory's ``images=`` asks for (a count or a list of
    dicts), in order; ``photos=True`` among ``fields``: sample n's bytes for image n."""
    photos = fields.pop("photos", False)
    specs = [{} for _ in range(extracted)] if isinstance(extracted, int) else list(extracted)
    values = []
    for n, spec in enumerate(specs):
        one = {"sort_order": n, **fields, **spec}
        if photos and "photo" not in one:
            one["photo"] = PHOTOS[n % len(PHOTOS)]
        if isinstance(one.get("photo"), bytes):
            one.setdefault("byte_size", len(one["photo"]))
        values.append(one)
    return values


def _set_cover(record, images: list, cover: int | None) -> None:
    record.cover = images[cover] if images and cover is not None else None
    record.image_count = len(images)
    type(record).objects.filter(pk=record.pk).update(
        cover=record.cover, image_count=record.image_count
    )


def _store_photo(image, create: bool, extracted) -> None:
    if create and extracted:
        data = extracted if isinstance(extracted, bytes) else photo_bytes(extracted)
        store(image.storage_key, data)


def _key(n: int) -> str:
    digest = hashlib.sha1(str(n).encode()).hexdigest()  # noqa: S324 - a test key, not security
    return f"images/{digest[:2]}/{digest}.jpg"


class RunwayImageFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = RunwayImage
        skip_postgeneration_save = True

    runway = factory.SubFactory(RunwayFactory)
    storage_key = factory.Sequence(_key)
    sha1 = factory.LazyAttribute(lambda o: o.storage_key.rsplit("/", 1)[-1][:40])
    width = 800
    height = 1200
    byte_size = 123_456
    mime_type = "image/jpeg"
    original_url = factory.Sequence(lambda n: f"https://example.com/a/{n}.jpg")
    sort_order = factory.Sequence(lambda n: n)
    look_index = factory.Sequence(lambda n: n + 1)

    # ``photo="coffee"`` (a sample of PHOTOS) or ``photo=b"..."``: those bytes are stored under
    # the image's key, as ingest leaves an original.
    photo = factory.PostGeneration(_store_photo)


class StreetSnapFactory(factory.django.DjangoModelFactory):
    """A street album; ``images=`` gives it images (see ``images`` below), ``published=True``
    publishes it."""

    class Meta:
        model = StreetSnap
        skip_postgeneration_save = True

    city = "Copenhagen"
    year = 2026
    month = 8
    title = factory.Sequence(lambda n: f"Street Style {n}")

    class Params:
        published = factory.Trait(
            status=StreetSnap.Status.PUBLISHED,
            published_at=factory.LazyFunction(timezone.now),
            reviewed_at=factory.LazyFunction(timezone.now),
            reviewer="editor",
            bytes_public=True,
        )

    @factory.post_generation
    def images(snap, create, extracted, **fields):
        """As RunwayFactory's ``images``, with details: ``images="MdMdd"`` lays the album out
        (M a main image, d a detail of the main before it), and ``images__details=True``
        with a count or a list alternates main, detail, main, ..."""
        if not create or extracted is None:
            return
        cover = fields.pop("cover", 0)
        count = len(extracted) if isinstance(extracted, list | str) else extracted
        if isinstance(extracted, str):
            layout = extracted
        else:
            layout = ("Md" if fields.pop("details", False) else "M") * count
        layout = layout[:count]
        made: list[StreetSnapImage] = []
        main = None
        specs = extracted if isinstance(extracted, list) else len(layout)
        for kind, values in zip(layout, _image_values(specs, fields), strict=True):
            image = StreetSnapImageFactory(
                street_snap=snap, **({"parent": main} if kind == "d" else {}), **values
            )
            main = image if kind == "M" else main
            made.append(image)
        _set_cover(snap, made, cover)


class StreetSnapImageFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = StreetSnapImage
        skip_postgeneration_save = True

    street_snap = factory.SubFactory(StreetSnapFactory)
    storage_key = factory.Sequence(_key)
    sha1 = factory.LazyAttribute(lambda o: o.storage_key.rsplit("/", 1)[-1][:40])
    width = 800
    height = 1200
    byte_size = 98_765
    mime_type = "image/jpeg"
    original_url = factory.Sequence(lambda n: f"https://example.com/s/{n}.jpg")
    sort_order = factory.Sequence(lambda n: n)
    is_detail = factory.LazyAttribute(lambda o: o.parent is not None)
    parent = None

    photo = factory.PostGeneration(_store_photo)  # as RunwayImageFactory's


class IngestJobFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = IngestJob

    kind = IngestJob.Kind.RUNWAY
    source = "vogue"
    source_url = factory.Sequence(lambda n: f"https://example.com/shows/{n}")
    payload = factory.LazyAttribute(
        lambda o: {"kind": o.kind, "source": o.source, "source_url": o.source_url, "images": []}
    )
    payload_checksum = factory.Sequence(lambda n: hashlib.sha256(str(n).encode()).hexdigest())
    webhook_id = factory.Sequence(lambda n: f"msg_{n}")


class NotDuplicateFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = NotDuplicate

    # The smaller sha1 first (not_duplicate_ordered).
    sha1_low = factory.Sequence(lambda n: f"a{n:039x}")
    sha1_high = factory.Sequence(lambda n: f"b{n:039x}")


class UsedWebhookIdFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = UsedWebhookId

    webhook_id = factory.Sequence(lambda n: f"msg_used_{n}")


class LegacyIdMapFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = LegacyIdMap

    legacy_table = "brand_runways"
    legacy_id = factory.Sequence(lambda n: n + 1)
    new_id = factory.Sequence(lambda n: n + 1)
    outcome = "imported"


class StoredObjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = StoredObject

    key = factory.Sequence(
        lambda n: f"images/runway/{hashlib.sha256(str(n).encode()).hexdigest()[:40]}.jpg"
    )
    last_stored_at = factory.LazyFunction(timezone.now)


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"editor{n}")
    is_staff = True


class ReviewEventFactory(factory.django.DjangoModelFactory):
    """A history row as review.services writes it (tests of the history's readers only: the
    service is its one writer)."""

    class Meta:
        model = ReviewEvent

    runway = factory.SubFactory(RunwayFactory, published=True)
    action = ReviewEvent.Action.APPROVE
    from_status = "pending"
    to_status = "published"
    actor = factory.SubFactory(UserFactory)
    at = factory.LazyFunction(timezone.now)
    record_version = 1


class ReviewClaimFactory(factory.django.DjangoModelFactory):
    """An editor holding an album open (review.services.claim_take is the writer in the app)."""

    class Meta:
        model = ReviewClaim

    kind = "runway"
    record_id = factory.LazyAttribute(lambda _: RunwayFactory().pk)
    user = factory.SubFactory(UserFactory)
    touched_at = factory.LazyFunction(timezone.now)


class PreviewLinkFactory(factory.django.DjangoModelFactory):
    """A press preview link of a pending runway, 48 hours from now; its token is
    ``"token-<n>"`` (review.services.preview_link_make is the writer in the app, which makes
    an unguessable one and returns it once)."""

    class Meta:
        model = PreviewLink

    class Params:
        token = factory.Sequence(lambda n: f"token-{n}")

    runway = factory.SubFactory(RunwayFactory)
    token_hash = factory.LazyAttribute(lambda o: hashlib.sha256(o.token.encode()).hexdigest())
    label = factory.Sequence(lambda n: f"Journalist {n}")
    made_by = factory.SubFactory(UserFactory)
    made_at = factory.LazyFunction(timezone.now)
    expires_at = factory.LazyAttribute(lambda o: o.made_at + timedelta(hours=48))


class PublicObjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = PublicObject

    key = factory.Sequence(_key)
    confirmed = True
    changed_at = factory.LazyFunction(timezone.now)


class MediaChangeFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = MediaChange

    kind = MediaChange.Kind.RUNWAY
    record_id = factory.Sequence(lambda n: n + 1)
    tags = factory.LazyAttribute(lambda o: [f"runway:{o.record_id}", "runways"])


class MediaSweepFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = MediaSweep

    started_at = factory.LazyFunction(timezone.now)
