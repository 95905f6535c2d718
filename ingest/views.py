"""The crawler-facing endpoints: submit an album, read a job's status. Both are signed with
Standard Webhooks headers (ingest.auth), the submission over its body and the status read over
its path; neither does any work beyond the database."""

from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import (
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
)
from rest_framework import status
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from ingest.auth import IsSignedCrawler, StandardWebhookAuthentication
from ingest.models import IngestJob
from ingest.serializers import (
    ALBUM_SERIALIZERS,
    AcceptedSerializer,
    JobStatusSerializer,
    album_validate,
)
from ingest.services import WebhookReplayed, ingest_job_accept


class AlbumJSONParser(JSONParser):
    """DRF's JSON parser; a body nested past Python's recursion limit is a 400 like any other
    malformed JSON (DRF only turns ``ValueError`` into one)."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply.") from None


class AsciiJSONRenderer(JSONRenderer):
    """Error messages may quote a crawler's field names, and JSON lets those hold lone
    surrogates that UTF-8 cannot encode: escaped output renders whatever was quoted."""

    ensure_ascii = True


class SignedView(APIView):
    authentication_classes = [StandardWebhookAuthentication]
    permission_classes = [IsSignedCrawler]
    parser_classes = [AlbumJSONParser]
    renderer_classes = [AsciiJSONRenderer]
    throttle_classes: list = []


class AlbumSubmitView(SignedView):
    @extend_schema(
        operation_id="ingest_album_submit",
        summary="Submit a crawled album (signed, Standard Webhooks)",
        request=PolymorphicProxySerializer(
            component_name="Album",
            serializers=dict(ALBUM_SERIALIZERS),
            resource_type_field_name="kind",
        ),
        responses={
            202: AcceptedSerializer,
            400: OpenApiResponse(description="Invalid album: field messages."),
            401: OpenApiResponse(description="Missing, wrong or expired signature."),
            409: OpenApiResponse(description="This webhook-id was already used."),
        },
        tags=["ingest"],
    )
    def post(self, request):
        album = album_validate(request.data)
        try:
            job = ingest_job_accept(webhook_id=request.auth.webhook_id, album=album)
        except WebhookReplayed as replay:
            return Response(
                {"detail": "This webhook-id was already used.", "job_id": replay.job_id},
                status=status.HTTP_409_CONFLICT,
            )
        status_url = reverse("ingest:job-status", args=[job.pk])
        return Response(
            {"job_id": job.pk, "status": job.status, "status_url": status_url},
            status=status.HTTP_202_ACCEPTED,
            headers={"Location": status_url},
        )


class JobStatusView(SignedView):
    @extend_schema(
        operation_id="ingest_job_status",
        summary="Status and report of an ingest job (signed over its path)",
        responses={200: JobStatusSerializer, 401: None, 404: None},
        tags=["ingest"],
    )
    def get(self, request, pk: int):
        job = get_object_or_404(IngestJob, pk=pk)
        return Response(JobStatusSerializer(job).data)
