"""The shape of the record admins (review.admin.records): one ModelAdmin per kind whose
URLs lead straight to plain views, and no ladder of the project's own classes."""

import importlib
import inspect
import pkgutil

import pytest
from django.contrib import admin

import review.admin
from catalog.models import Runway, StreetSnap

PROJECT = ("catalog", "ingest", "review", "publicapi", "config")


def admin_modules():
    for info in pkgutil.walk_packages(review.admin.__path__, "review.admin."):
        yield importlib.import_module(info.name)


def test_no_class_in_the_admin_has_more_than_two_bases_of_the_projects_own():
    ladders = {}
    for module in admin_modules():
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__:
                continue
            own = [base for base in cls.__mro__[1:] if base.__module__.startswith(PROJECT)]
            if len(own) > 2:
                ladders[f"{module.__name__}.{name}"] = [base.__name__ for base in own]
    assert ladders == {}


@pytest.mark.parametrize("model", [Runway, StreetSnap])
def test_each_extra_url_leads_to_a_plain_view_of_the_model_admin(model):
    model_admin = admin.site._registry[model]
    django_own = {"changelist", "add", "history", "delete", "change"}
    extra = [
        pattern
        for pattern in model_admin.get_urls()
        if pattern.name and pattern.name.rsplit("_", 1)[-1] not in django_own
    ]

    views = {pattern.name.rsplit("_", 1)[-1]: inspect.unwrap(pattern.callback) for pattern in extra}

    assert set(views) == {
        "compare",
        "image",
        "attach",
        "approve",
        "reject",
        "unpublish",
        "skip",
        "claim",
        "repeats",
        "repeat",
        "takedown",
        "takedownimage",
        "undo",
        "schedule",
        "approvefor",
        "previewmake",
        "previewrevoke",
    }
    for view in views.values():
        assert inspect.isfunction(view)
        assert view.__module__.startswith("review.admin.views.")
        assert next(iter(inspect.signature(view).parameters)) == "modeladmin"
