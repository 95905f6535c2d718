"""Endpoints for the machines around the app: /healthz, /readyz, /metrics.

They are answered by a middleware near the top of the stack, before Django checks the Host
header and before the HTTPS redirect: a container's HEALTHCHECK, a kubelet probe or a
Prometheus scrape reaches the process by its address over plain HTTP, a Host no
ALLOWED_HOSTS lists. Nothing below runs for them (no session, no CSRF, no throttle, no cache).
"""

from asgiref.sync import async_to_sync

from config import health, metrics

_ENDPOINTS = {
    "/healthz": health.liveness,
    "/readyz": async_to_sync(health.readiness),
    "/metrics": metrics.metrics_view,
}


class OpsEndpointsMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        view = _ENDPOINTS.get(request.path_info)
        if view is None:
            return self.get_response(request)
        return view(request)
