"""The archive: brands, runway and street-style records, and their images.

One table per kind for records and one for their images; review state is a column, so there
are no draft tables. The public side never reads these tables: it reads the `public_*` views
that `publicapi` creates over them. One module per concern:

- `base`: what every record and image is (review state, source, embargo, soft delete; the
  stored original, its hashes and renditions), and the constraint and index factories;
- `runways`, `street_snaps`: each kind, with its image model; each says what differs (its
  kind, its image model, its entity key, its edge tag...), once;
- `brands`: brands and their aliases;
- `duplicates`: pairs of pictures editors said are not near-duplicates;
- `media`: the objects behind the images (stored, public), the outbox and the sweeps;
- `legacy`: the legacy import's id map.

The kinds are listed here (`RECORD_MODELS`), the one registry of the catalog's side: every
other module asks a model, or this map, and keeps no table of kinds of its own.
"""

from catalog.models.base import (
    COMPARABLE_PHASH,
    LEGACY_PHASH_ALGORITHM,
    THUMBNAIL_WIDTH,
    YEAR_MAX,
    YEAR_MIN,
    ImageQuerySet,
    Record,
    RecordImage,
    RecordQuerySet,
    embargo_indexes,
    image_indexes,
    in_window,
    public_q,
    record_constraints,
    scheduled_q,
)
from catalog.models.brands import Brand, BrandAlias
from catalog.models.duplicates import NotDuplicate
from catalog.models.legacy import LegacyIdMap
from catalog.models.media import MediaChange, MediaSweep, PublicObject, StoredObject
from catalog.models.runways import Runway, RunwayImage
from catalog.models.street_snaps import StreetSnap, StreetSnapImage

# The kinds by the ingest payload's words (`manage.py renditions --record KIND:ID`, the jobs'
# arguments, the outbox's rows): the one map from a kind to its models.
RECORD_MODELS: dict[str, type[Runway] | type[StreetSnap]] = {
    model.kind: model for model in (Runway, StreetSnap)
}
IMAGE_MODELS: dict[str, type[RunwayImage] | type[StreetSnapImage]] = {
    kind: model.image_model() for kind, model in RECORD_MODELS.items()
}
IMAGE_PARENT_FIELD = {kind: f"{model.record_field}_id" for kind, model in IMAGE_MODELS.items()}

__all__ = [
    "COMPARABLE_PHASH",
    "IMAGE_MODELS",
    "IMAGE_PARENT_FIELD",
    "LEGACY_PHASH_ALGORITHM",
    "RECORD_MODELS",
    "THUMBNAIL_WIDTH",
    "YEAR_MAX",
    "YEAR_MIN",
    "Brand",
    "BrandAlias",
    "ImageQuerySet",
    "LegacyIdMap",
    "MediaChange",
    "MediaSweep",
    "NotDuplicate",
    "PublicObject",
    "Record",
    "RecordImage",
    "RecordQuerySet",
    "Runway",
    "RunwayImage",
    "StoredObject",
    "StreetSnap",
    "StreetSnapImage",
    "embargo_indexes",
    "image_indexes",
    "in_window",
    "public_q",
    "scheduled_q",
    "record_constraints",
]
