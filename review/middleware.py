"""The admin in the editors' time zone (EDITORS_TIME_ZONE): the times an editor types into a
go-live or expiry field are read there, and every time the admin shows is written there. The
database and the public API stay in UTC."""

from django.conf import settings
from django.urls import reverse
from django.utils import timezone


class EditorsTimeZoneMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not request.path_info.startswith(reverse("admin:index")):
            return self.get_response(request)
        with timezone.override(settings.EDITORS_TIME_ZONE):
            return self.get_response(request)
