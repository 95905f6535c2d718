"""Writes to the catalog, by concern:

- `records`: the record lock and save every write to an existing record goes through, the
  refusals, and who may curate;
- `curation`: the editors' field edits and image operations;
- `ingest_writes`: the ingest pipeline's create and reopen, with their content types;
- `renditions`: the renditions, placeholder and colour of stored images (storage, then the
  image row; the pure rendering is catalog.imaging).

Callers import from here; the modules say where each write lives.
"""

from catalog.services.curation import (
    image_delete,
    image_take_down,
    images_copy_into,
    images_mark_not_duplicate,
    record_set_cover,
    record_update,
    street_image_attach,
    street_image_attach_to_previous,
    street_image_detach,
    street_images_attach,
)
from catalog.services.ingest_writes import (
    NewImage,
    RecordContent,
    RunwayContent,
    StreetSnapContent,
    record_create,
    record_reopen,
    runway_create,
    runway_reopen,
    street_snap_create,
    street_snap_reopen,
)
from catalog.services.records import (
    RecordStateError,
    RecordWriteRefused,
    StaleRecord,
    permission_name,
    record_apply_edits,
    record_check_may_curate,
    record_lock,
    record_save,
)
from catalog.services.renditions import image_renditions_make, record_renditions_make

__all__ = [
    "NewImage",
    "RecordContent",
    "RecordStateError",
    "RecordWriteRefused",
    "RunwayContent",
    "StaleRecord",
    "StreetSnapContent",
    "image_renditions_make",
    "image_delete",
    "image_take_down",
    "images_copy_into",
    "images_mark_not_duplicate",
    "permission_name",
    "record_apply_edits",
    "record_check_may_curate",
    "record_create",
    "record_lock",
    "record_renditions_make",
    "record_reopen",
    "record_save",
    "record_set_cover",
    "record_update",
    "runway_create",
    "runway_reopen",
    "street_image_attach",
    "street_image_attach_to_previous",
    "street_image_detach",
    "street_images_attach",
    "street_snap_create",
    "street_snap_reopen",
]
