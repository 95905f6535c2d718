"""The JSON of the public API (docs/api.md). Read-only: every serializer here only renders
rows of the public_* views.

One module per part: images (and their URLs), records (runways, street snaps, brands, the
home page), facets, similar images and errors. Each shape is one serializer, which both
renders the response and describes it in the OpenAPI schema (drf-spectacular).
"""
