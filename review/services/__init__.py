"""The review's writes: one module per concern, named as the admin's views that call them
(review/admin/views/): transitions, curation, repeats, takedown, claims, embargo,
previews; the history's rows in history. Callers import from here.
"""

from review.services.claims import (
    claim_release,
    claim_take,
)
from review.services.curation import (
    Curated,
    album_of,
    curated,
    image_attach_to_previous,
    image_delete,
    image_detach,
    image_make_cover,
    image_names,
    images_attach,
    published_edit_log,
    record_edit,
)
from review.services.embargo import (
    ScheduleRefused,
    record_approve_for,
    record_embargo_reached,
    record_schedule,
)
from review.services.history import (
    history_append,
)
from review.services.previews import (
    PREVIEW_HOURS_DEFAULT,
    PREVIEW_HOURS_MAX,
    PreviewRefused,
    preview_link_find,
    preview_link_make,
    preview_link_open,
    preview_link_revoke,
)
from review.services.repeats import (
    image_not_duplicate,
    record_merge_into,
    record_not_duplicate,
    record_reject_as_duplicate,
    record_reject_as_repeat,
    record_reject_undo,
    record_reposts_reject,
    repeating_images,
)
from review.services.takedown import (
    image_take_down,
    record_take_down,
    takedown_permission_name,
)
from review.services.transitions import (
    TRANSITIONS,
    Action,
    Transition,
    TransitionRefused,
    kind_label,
    record_approve,
    record_reject,
    record_transition,
    transition_permission_name,
)

__all__ = [
    "PREVIEW_HOURS_DEFAULT",
    "PREVIEW_HOURS_MAX",
    "PreviewRefused",
    "preview_link_find",
    "preview_link_make",
    "preview_link_open",
    "preview_link_revoke",
    "ScheduleRefused",
    "record_approve_for",
    "record_embargo_reached",
    "record_schedule",
    "TRANSITIONS",
    "Action",
    "Curated",
    "Transition",
    "TransitionRefused",
    "album_of",
    "claim_release",
    "claim_take",
    "curated",
    "history_append",
    "image_attach_to_previous",
    "image_delete",
    "image_detach",
    "image_make_cover",
    "image_names",
    "image_not_duplicate",
    "image_take_down",
    "images_attach",
    "kind_label",
    "published_edit_log",
    "record_approve",
    "record_edit",
    "record_merge_into",
    "record_not_duplicate",
    "record_reject",
    "record_reject_as_duplicate",
    "record_reject_as_repeat",
    "record_reject_undo",
    "record_reposts_reject",
    "record_take_down",
    "record_transition",
    "repeating_images",
    "takedown_permission_name",
    "transition_permission_name",
]
