"""OpenAPI annotations shared by the public endpoints (drf-spectacular): the caching and
throttling headers, and the error responses each endpoint can give."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema

from publicapi.facets import MAX_VALUES as MAX_FACET_VALUES
from publicapi.serializers.errors import ErrorSerializer
from publicapi.serializers.similar import SimilarImagesSerializer
from publicapi.similar import MAX_RESULTS as MAX_SIMILAR

CACHE_HEADERS = [
    OpenApiParameter(
        "If-None-Match",
        OpenApiTypes.STR,
        OpenApiParameter.HEADER,
        required=False,
        description="An ETag from an earlier response: 304 with no body while it still holds.",
    ),
    OpenApiParameter(
        "ETag",
        OpenApiTypes.STR,
        OpenApiParameter.HEADER,
        response=[200, 304],
        description="A hash of the body: it changes exactly when the content changes.",
    ),
    OpenApiParameter(
        "Cache-Control",
        OpenApiTypes.STR,
        OpenApiParameter.HEADER,
        response=[200, 304],
        description="`public, max-age=<PUBLIC_API_CACHE_SECONDS>` (60 by default). Errors "
        "carry `no-store`.",
    ),
    OpenApiParameter(
        "Retry-After",
        OpenApiTypes.INT,
        OpenApiParameter.HEADER,
        response=[429],
        description="Seconds to wait before the next request.",
    ),
]
RECORD_ID = OpenApiParameter(
    "id",
    {"type": "integer", "minimum": 1},
    OpenApiParameter.PATH,
    description="The record's id, as in the list.",
)
NOT_MODIFIED = OpenApiResponse(description="Not modified: the ETag in If-None-Match still holds.")
BAD_QUERY = OpenApiResponse(ErrorSerializer, description="An invalid query parameter.")
PAGE_NOT_FOUND = OpenApiResponse(ErrorSerializer, description="A page past the last one.")
NOT_FOUND = OpenApiResponse(
    ErrorSerializer,
    description="Nothing public by this name: unknown, or not (or no longer) published.",
)
THROTTLED = OpenApiResponse(
    ErrorSerializer, description="Too many requests; Retry-After says when to try again."
)


def list_schema(serializer, tag: str, summary: str, description: str = ""):
    return extend_schema(
        tags=[tag],
        summary=summary,
        description=description,
        parameters=CACHE_HEADERS,
        responses={
            200: serializer(many=True),
            304: NOT_MODIFIED,
            400: BAD_QUERY,
            404: PAGE_NOT_FOUND,
            429: THROTTLED,
        },
    )


def detail_schema(serializer, tag: str, summary: str, description: str = "", by_id=True):
    return extend_schema(
        tags=[tag],
        summary=summary,
        description=description,
        parameters=[*CACHE_HEADERS, *([RECORD_ID] if by_id else [])],
        responses={200: serializer, 304: NOT_MODIFIED, 404: NOT_FOUND, 429: THROTTLED},
    )


def facets_schema(serializer, tag: str, summary: str, description: str = ""):
    return extend_schema(
        tags=[tag],
        summary=summary,
        description=(
            "Takes the list's filters (and `q`; `page` and `page_size` are ignored). `count` "
            "is the list's count. Each facet counts its values with every *other* filter "
            "applied, so a sidebar can show the alternatives to the value chosen; values by "
            f"count (highest first) then value, at most {MAX_FACET_VALUES}. {description}"
        ),
        filters=True,
        parameters=CACHE_HEADERS,
        responses={200: serializer, 304: NOT_MODIFIED, 400: BAD_QUERY, 429: THROTTLED},
    )


def similar_schema(tag: str, what: str):
    return extend_schema(
        tags=[tag],
        summary=f"{what} that look like this one",
        description=(
            "Published images of *other* albums, runways and street snaps alike, whose "
            "perceptual hash differs from this image's in at most `PUBLIC_SIMILAR_MAX_DISTANCE` "
            f"bits (by default the ingest duplicate distance, 7): nearest first (runways before "
            f"street snaps, then by image id, on a tie), at most {MAX_SIMILAR}. An image with no "
            "comparable hash (some imported ones) has no matches."
        ),
        parameters=[
            *CACHE_HEADERS,
            OpenApiParameter(
                "id",
                {"type": "integer", "minimum": 1},
                OpenApiParameter.PATH,
                description="The image's id, as in an album's `images`.",
            ),
        ],
        responses={
            200: SimilarImagesSerializer,
            304: NOT_MODIFIED,
            404: OpenApiResponse(ErrorSerializer, description="No public image by this id."),
            429: THROTTLED,
        },
    )
