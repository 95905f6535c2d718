"""The editors' admin: the review queues of runways and street snaps, their record pages
(fields, image grid, street groups, approve / reject / unpublish), brands with aliases, and
the review history.

Admin code holds no business rules: every write to an album goes through review.services
(transitions, field edits, image operations; built on catalog.services), and their refusals
become messages. One module per concern; the record admins are one class chain, each part
adding what its module is for: permissions, record_list, queue, curation, record_page,
transitions, and records (the two kinds, registered).
"""

from review.admin import brands, history, records

__all__ = ["brands", "history", "records"]
