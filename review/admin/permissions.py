"""What an editor may do to the albums of one kind: the base of the record admins."""

from __future__ import annotations

from django.contrib import admin

from catalog.models import RecordImage
from catalog.services import IMAGE_MODEL, permission_name
from review.admin.filters import Status
from review.services import Action, transition_permission_name


class RecordPermissionsAdmin(admin.ModelAdmin):
    """The permissions the runway and street snap admins share, and the two attributes
    every part of them reads."""

    image_model: type[RecordImage]
    record_fk: str  # the image's foreign key to its record

    # --- permissions ---------------------------------------------------------------------
    # Records come from ingest and the legacy import; editors never add them. Deleting is not
    # offered: rejecting takes an album off the site and keeps it for reference.
    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def has_publish_permission(self, request, obj=None) -> bool:
        return request.user.has_perm(transition_permission_name(self.model, Action.APPROVE))

    def has_reject_permission(self, request, obj=None) -> bool:
        return request.user.has_perm(transition_permission_name(self.model, Action.REJECT))

    def has_change_permission(self, request, obj=None) -> bool:
        # A published album is on the public site: changing its fields or images needs the
        # publish permission too (catalog.services.record_check_may_curate refuses it
        # anyway). Without it the page is read-only and says why (published_read_only).
        return self.has_kind_change_permission(request, obj) and not self.published_read_only(
            request, obj
        )

    def has_kind_change_permission(self, request, obj=None) -> bool:
        """Django's own change permission: of the kind, whatever the album's status."""
        return super().has_change_permission(request, obj)

    def published_read_only(self, request, obj=None) -> bool:
        return (
            obj is not None
            and obj.status == Status.PUBLISHED
            and not self.has_publish_permission(request, obj)
        )

    def has_curate_permission(self, request, obj=None) -> bool:
        return self.has_change_permission(request, obj) and request.user.has_perm(
            permission_name(IMAGE_MODEL[self.model], "change")
        )
