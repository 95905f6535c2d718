"""Records and their locks: what every catalog write to an existing record goes through.

Every write to an existing record runs in a transaction, locks the record row first
(`record_lock`) and saves through `record_save`, which bumps `version`: two writers of one
album (two editors, an editor and a re-crawl) take turns, and the admin can refuse an edit
made on a page that was loaded before the write. `record_save` is also where a write the
public may see is announced (catalog.visibility): the bytes move and the edge is purged after
commit, whoever made the write. The refusals every catalog write raises, and
who may curate a record (`record_check_may_curate`), live here too.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import F, Field
from django.utils import timezone

from catalog.models import Record, RecordImage
from catalog.visibility import bytes_public_on_save, record_change_note

# --- Refusals ----------------------------------------------------------------------------------


class RecordWriteRefused(Exception):
    """A write the record's current state does not allow; nothing was written.

    The message is for the editor. Every refusal of a catalog write is one of these, so a
    caller that only reports refusals catches this class alone.
    """


class RecordStateError(RecordWriteRefused):
    """The record is not in the state the write requires: it is deleted, or (a reopen) it is
    not rejected. The ingest pipeline catches this one: for a job it means that the record
    changed between the job's lookup and its lock."""


class StaleRecord(RecordWriteRefused):
    """The record changed since the version the caller loaded; nothing was written.

    Carries the current (locked) record so the caller can say what changed.
    """

    def __init__(self, record: Record, expected_version: int):
        self.record = record
        self.expected_version = expected_version
        super().__init__(
            f"“{record}” changed since you opened it. Nothing was saved: reload the page to see "
            "it as it is now, then make your changes again."
        )


# --- Lock and save: what every write to an existing record goes through -----------------------


def record_lock[R: Record](*, record: R, expected_version: int | None = None) -> R:
    """Re-read `record` under a row lock (the caller is in a transaction) and check it.

    Refuses a soft-deleted record, and a record whose version is not `expected_version`
    (None: the caller has no loaded version to compare, e.g. a bulk action on a list or an
    ingest job). Only the primary key of `record` is used.
    """
    # A row of record's own model (the stubs type the manager of the abstract base).
    locked = cast(R, type(record).objects.select_for_update().get(pk=record.pk))
    if locked.deleted_at is not None:
        raise RecordStateError(f"“{locked}” is deleted; it cannot be changed.")
    if expected_version is not None and locked.version != expected_version:
        raise StaleRecord(locked, expected_version)
    # What the public saw before this write: record_save announces a change it may see.
    locked._public_when_locked = locked.is_public()  # type: ignore[attr-defined]
    return locked


def record_save[R: Record](
    *, record: R, fields: Iterable[str], refuse_taken_key: bool = True, announce: bool = False
) -> R:
    """Save `fields` of a locked record and bump its version.

    With `refuse_taken_key` (the editors' writes), an entity-key collision (another live
    album already has the edited key) is refused with a message instead of an IntegrityError;
    the savepoint keeps the caller's transaction usable so nothing else of it is
    half-applied. The ingest pipeline passes False: for a job, a key violation means another
    job won the race, and the pipeline needs the IntegrityError itself to end as skipped.
    """
    fields = list(fields)
    if {"status", "deleted_at", "go_live_at", "expires_at"} & set(fields):
        # A record that leaves the public stops showing with this write; one that joins it
        # shows once its bytes are public (catalog.visibility).
        record.bytes_public = bytes_public_on_save(record)
        fields.append("bytes_public")
    record.version = F("version") + 1
    update_fields = [*fields, "version", "updated_at"]
    if refuse_taken_key:
        try:
            with transaction.atomic():
                record.save(update_fields=update_fields)
        except IntegrityError as error:
            raise RecordWriteRefused(record.entity_key_taken) from error
    else:
        record.save(update_fields=update_fields)
    if not isinstance(record.version, int):  # backends without UPDATE ... RETURNING
        record.refresh_from_db(fields=["version"])
    # Every write to an album the public saw or will see moves its bytes and purges the edge,
    # after commit (an outbox row in this transaction: catalog.visibility).
    # (`announce`: whatever the public saw.)
    if announce or getattr(record, "_public_when_locked", True) or record.is_public():
        record_change_note(record)
    # An embargo's go-live and expiry to come: the job runs at each (moves the bytes, purges the
    # edge), whether or not anything else asks for one then.
    if record.status == Record.Status.PUBLISHED and record.deleted_at is None:
        now = timezone.now()
        for moment in (record.go_live_at, record.expires_at):
            if moment is not None and moment > now:
                record_change_note(record, due_at=moment)
    return record


def record_apply_edits(*, record: Record, changes: dict[str, Any]) -> dict[str, list[str]]:
    """Set the editor's field edits on a locked record (not saved yet).

    Returns what actually changed as {field: [old, new]} in display form, for the history.
    """
    allowed = record.editable_fields
    unknown = set(changes) - set(allowed)
    if unknown:
        # A programming error (a form offering a field it should not), not an editor's.
        raise ValueError(f"Not editable on {type(record).__name__}: {sorted(unknown)}")
    diff: dict[str, list[str]] = {}
    for name, value in changes.items():
        # editable_fields names the model's own fields, never a reverse relation.
        field = cast(Field, record._meta.get_field(name))
        old = getattr(record, field.attname)
        new = value.pk if field.is_relation and value is not None else value
        if old == new:
            continue
        old_shown = str(getattr(record, name)) if field.is_relation else str(old)
        setattr(record, name, value)
        diff[name] = [old_shown, str(value)]
    return diff


# --- Who may curate -------------------------------------------------------------------------


def permission_name(model: type[Record] | type[RecordImage], action: str) -> str:
    """The full name of a model permission, e.g. `catalog.change_runway`,
    `catalog.publish_streetsnap`."""
    opts = model._meta
    return f"{opts.app_label}.{action}_{opts.model_name}"


def record_check_may_curate(*, record: Record, actor: User, images: bool) -> None:
    """Refuse `actor` a curation write to a locked `record`: its fields (`images` False) or
    its images (True).

    Editing needs the change permission of what is edited. A published album is on the
    public site: changing it needs, besides, the permission to publish (approve and
    unpublish) the kind, or an editor kept from publishing could still rename a published
    album or empty it of its images. Checked under the lock, on the status the write finds.
    """
    model = type(record)
    plural = model._meta.verbose_name_plural
    if not actor.has_perm(permission_name(model.image_model() if images else model, "change")):
        what = f"the images of {plural}" if images else f"{plural}"
        raise RecordWriteRefused(f"You do not have permission to change {what}.")
    if record.status == Record.Status.PUBLISHED and not actor.has_perm(
        permission_name(model, "publish")
    ):
        raise RecordWriteRefused(
            f"“{record}” is published, so it is on the public site: changing its fields or "
            f"images needs the permission to approve and unpublish {plural}, which your "
            "account does not have. Nothing was changed. Ask an editor who can publish to "
            "make the change."
        )


def first_main_image(record: Record) -> RecordImage | None:
    """The record's first live main image by (sort_order, id): where the cover goes when a
    record is written with new images or loses its cover. (The legacy import applies the
    same rule to legacy rows in catalog.legacy.planner.images.choose_cover.)"""
    return record.images.live().main().order_by("sort_order", "pk").first()
