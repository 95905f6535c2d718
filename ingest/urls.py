from django.urls import path

from ingest import views

app_name = "ingest"

# Paths are part of the pinned contract (no trailing slash).
urlpatterns = [
    path("albums", views.AlbumSubmitView.as_view(), name="album-submit"),
    path("jobs/<int:pk>", views.JobStatusView.as_view(), name="job-status"),
]
