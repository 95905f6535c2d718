"""scripts/check_shape.py: the code's shape (issue 34) holds in this repository, and the script
finds each thing it is meant to refuse, at its line, in a tree made for it."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "check_shape.py"


@pytest.fixture(scope="module")
def shape():
    spec = importlib.util.spec_from_file_location("check_shape", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["check_shape"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def tree(tmp_path):
    """An application tree that keeps every target: the two packages, short modules."""
    for package in ("catalog/visibility", "review/services"):
        (tmp_path / package).mkdir(parents=True)
        (tmp_path / package / "__init__.py").write_text("")
    return tmp_path


def write(root: Path, path: str, text: str) -> None:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(text)


def found(shape, root: Path) -> list[str]:
    return [str(violation) for violation in shape.check(root)]


def test_the_repository_keeps_its_shape():
    result = subprocess.run(  # noqa: S603 - the repository's own script, no arguments
        [sys.executable, str(SCRIPT)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )

    assert result.returncode == 0, result.stdout + result.stderr


def test_a_tree_that_keeps_every_target_passes(shape, tree):
    write(tree, "ingest/kinds.py", "KINDS = {kind.name: kind for kind in (RUNWAY, STREET)}\n")
    write(tree, "catalog/models/runways.py", 'MAP = {"runway": 1}\nisinstance(x, Runway)\n')

    assert found(shape, tree) == []


def test_a_module_over_500_lines_is_refused_and_migrations_are_not(shape, tree):
    write(tree, "ingest/long.py", "x = 1\n" * 501)
    write(tree, "ingest/migrations/0001_initial.py", "x = 1\n" * 900)
    write(tree, "ingest/short.py", "x = 1\n" * 500)

    assert found(shape, tree) == ["ingest/long.py:1: module too long: over 500 lines (501 lines)"]


@pytest.mark.parametrize(
    ("code", "subject"),
    [
        ('FIELDS = {\n    "runway": ("a",),\n    "street": ("b",),\n}\n', "'runway'"),
        ('owner = {"street_snap": record}\n', "'street_snap'"),
        ("MODEL = {Runway: RunwayImage}\n", "Runway"),
        ("SERIALIZERS = {IngestJob.Kind.STREET: StreetAlbumSerializer}\n", "STREET"),
        ("IMAGES = {models.PublicStreetSnapImage: 1}\n", "PublicStreetSnapImage"),
    ],
)
def test_a_kind_keyed_dict_is_refused_at_its_line(shape, tree, code, subject):
    write(tree, "publicapi/views.py", "import os\n\n" + code)

    assert found(shape, tree) == [f"publicapi/views.py:3: kind-keyed dict: {subject}"]


def test_a_dict_of_other_words_is_not_a_kind_map(shape, tree):
    write(tree, "config/x.py", 'HEADERS = {"brand": 1, "kind": "runway", "runways": 2}\n')

    assert found(shape, tree) == []


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("isinstance(record, Runway)", "isinstance on a model: Runway"),
        ("isinstance(image, (RunwayImage, int))", "isinstance on a model: RunwayImage"),
        ("issubclass(model, m.StreetSnap)", "isinstance on a model: StreetSnap"),
        ("model is StreetSnapImage", "class compared with a model: StreetSnapImage"),
        ("type(record) == PublicRunway", "class compared with a model: PublicRunway"),
    ],
)
def test_telling_the_models_apart_outside_the_registries_is_refused(shape, tree, code, message):
    write(tree, "review/admin.py", f"def f():\n    return {code}\n")

    assert found(shape, tree) == [f"review/admin.py:2: {message}"]


def test_the_registries_may_tell_the_kinds_apart(shape, tree):
    code = 'MAP = {"runway": 1}\nisinstance(x, PublicRunway)\n'
    write(tree, "publicapi/models.py", code)
    write(tree, "catalog/models/__init__.py", code)

    assert found(shape, tree) == []


def test_the_two_packages_must_be_packages(shape, tmp_path):
    write(tmp_path, "catalog/visibility.py", "")

    assert found(shape, tmp_path) == [
        "catalog/visibility/:1: not a package: one module per concern",
        "catalog/visibility.py:1: a module beside the package: catalog/visibility",
        "review/services/:1: not a package: one module per concern",
    ]
