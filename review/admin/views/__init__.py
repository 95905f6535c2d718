"""The record admins' own pages and buttons, as plain functions of the model admin (as
Django's `delete_selected(modeladmin, request, queryset)` is): RecordAdmin.get_urls routes
each URL to one of them, and the bulk actions are listed in RecordAdmin.actions.

- curation: the image buttons of the record page, and the grid they redraw
- compare: a near-duplicate beside the image it repeats
- transitions: approve, reject and unpublish, from the page and in bulk
- claims: the page's sign of life, and skipping to the next album
- previews: the album's press preview links, made and revoked from its page
"""
