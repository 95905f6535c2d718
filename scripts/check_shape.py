#!/usr/bin/env python3
"""The shape of the application code (issue 34's targets), checked: what makes a change harder
than it should be, found by reading the code, not by running it.

- No module over 500 lines (migrations aside): a module that size holds more than one concern.
- The two record kinds are told apart in one place on each side of the import contract:
  catalog's models (`catalog/models/`) and publicapi's view models (`publicapi/models.py`).
  Outside them:
  - no kind-keyed dict: a dict display (``{...}``) with a key that names a kind, i.e. a kind's
    word as a string (``"runway"``, ``"street"``, ``"street_snap"``, ``"street-snap"``), a record
    or image model class (``Runway``, ``PublicStreetSnapImage``...), or a kind constant
    (``IngestJob.Kind.RUNWAY``, ``MediaChange.Kind.STREET``, the legacy import's ``RUNWAY``).
    A dict made from the registry (``{m.kind: m for m in RECORD_MODELS.values()}``) is not one;
  - no ``isinstance``/``issubclass`` on a record or image model, and no ``is``/``==`` test of a
    class against one (``model is Runway``): the model says what differs (an attribute, a
    method), the caller asks it.
- `catalog/visibility/` and `review/services/` are packages, one module per concern.

Each violation is printed as ``path:line: what``; the exit status is 1 if there is any. There is
no list of exceptions: code that must tell the kinds apart asks the model. Run from anywhere:
``python scripts/check_shape.py`` (CI: scripts/test.sh; tests/test_shape.py runs it).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPS = ("catalog", "ingest", "review", "publicapi", "config")
MAX_LINES = 500
# Where the kinds are told apart: each side's registry (the import contract keeps publicapi off
# catalog, so publicapi has its own).
REGISTRIES = ("catalog/models/", "publicapi/models.py")
PACKAGES = ("catalog/visibility", "review/services")

KIND_WORDS = frozenset({"runway", "street", "street_snap", "street-snap"})
MODELS = frozenset(
    {
        "Runway",
        "StreetSnap",
        "RunwayImage",
        "StreetSnapImage",
        "PublicRunway",
        "PublicStreetSnap",
        "PublicRunwayImage",
        "PublicStreetSnapImage",
    }
)
KIND_CONSTANTS = frozenset({"RUNWAY", "STREET"})


@dataclass(frozen=True)
class Violation:
    path: str
    line: int
    check: str
    subject: str
    detail: str = ""  # e.g. a module's line count

    def __str__(self) -> str:
        detail = f" ({self.detail})" if self.detail else ""
        return f"{self.path}:{self.line}: {self.check}: {self.subject}{detail}"


def modules(root: Path) -> Iterator[Path]:
    for app in APPS:
        for path in sorted((root / app).rglob("*.py")):
            if "migrations" not in path.relative_to(root).parts:
                yield path


def _name(node: ast.expr) -> str | None:
    """The last name of ``Runway``, ``models.Runway``, ``IngestJob.Kind.RUNWAY``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _kind_key(key: ast.expr | None) -> str | None:
    """What a dict key names of a kind, as the violation says it; None if nothing."""
    if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value in KIND_WORDS:
        return repr(key.value)
    name = _name(key) if key is not None else None
    if name in MODELS or name in KIND_CONSTANTS:
        return name
    return None


def _models_in(node: ast.expr) -> list[str]:
    """The model classes an isinstance's second argument names (one, or a tuple of them)."""
    items = node.elts if isinstance(node, ast.Tuple) else [node]
    return [name for item in items if (name := _name(item)) in MODELS]


def shape_violations(path: Path, relative: str) -> Iterator[Violation]:
    text = path.read_text(encoding="utf-8")
    lines = len(text.splitlines())
    if lines > MAX_LINES:
        yield Violation(relative, 1, "module too long", f"over {MAX_LINES} lines", f"{lines} lines")
    if relative.startswith(REGISTRIES):
        return
    tree = ast.parse(text, filename=relative)
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            # One violation per dict, named by its first key that names a kind.
            named = next((k for key in node.keys if (k := _kind_key(key)) is not None), None)
            if named is not None:
                yield Violation(relative, node.lineno, "kind-keyed dict", named)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("isinstance", "issubclass")
            and len(node.args) == 2
        ):
            for model in _models_in(node.args[1]):
                yield Violation(relative, node.lineno, "isinstance on a model", model)
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            tests = (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)
            if all(isinstance(op, tests) for op in node.ops):
                for operand in operands:
                    name = _name(operand)
                    if name in MODELS:
                        yield Violation(relative, node.lineno, "class compared with a model", name)


def package_violations(root: Path) -> Iterator[Violation]:
    for package in PACKAGES:
        if not (root / package / "__init__.py").is_file():
            yield Violation(f"{package}/", 1, "not a package", "one module per concern")
        if (root / f"{package}.py").exists():
            yield Violation(f"{package}.py", 1, "a module beside the package", package)


def check(root: Path = ROOT) -> list[Violation]:
    found = list(package_violations(root))
    for path in modules(root):
        found += shape_violations(path, path.relative_to(root).as_posix())
    return found


def main() -> int:
    found = check()
    for violation in found:
        print(violation)
    if found:
        print(f"{len(found)} violation(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
