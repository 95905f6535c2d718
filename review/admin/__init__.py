"""The editors' admin: the review queues of runways and street snaps, their record pages
(fields, image grid, street groups, approve / reject / unpublish), brands with aliases, and
the review history.

Admin code holds no business rules: every write to an album goes through review.services
(transitions, field edits, image operations; built on catalog.services), and their refusals
become messages. One ModelAdmin per kind (records), whose get_urls routes each page and
button to a plain view of review.admin.views, a function of the model admin as Django's
delete_selected is.
"""

from review.admin import brands, history, records

__all__ = ["brands", "history", "records"]
