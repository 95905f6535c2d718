"""The field table of the public records and images: each object's fields declared once.

A Table lists an object's Columns in the order the JSON shows them. The same table makes the
serializer (TableSerializer: its fields, so the schema drf-spectacular writes and DRF's own
field-by-field rendering) and the direct rendering the views use (Table.render: one dict
built from the object's attributes). DRF's generic path deep-copies every declared field per
serializer and walks them per object, which was the largest share of a list request's time
in Python (docs/api.md, "Speed"); tests/publicapi/test_serializers.py renders every page both
ways and compares.
"""

from collections.abc import Callable
from dataclasses import dataclass
from keyword import iskeyword
from operator import attrgetter
from typing import Any, ClassVar

from django.db.models import Model
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

# What a column's render function takes: the object (a row of publicapi.queries or a model
# instance) and the request (or None), and gives the column's JSON value.
Render = Callable[[Any, Any], Any]


@dataclass(frozen=True)
class Column:
    """One field of an object's JSON.

    Without `field`, the model's field of the same name (ModelSerializer builds it), described
    by `help_text`; with one, that field (which carries its own help text). Without `render`,
    the direct rendering reads what `field` reads: the attribute of that name, a nested table
    serializer's rendering, or a Computed field's function.
    """

    name: str
    help_text: str = ""
    field: serializers.Field | None = None
    render: Render | None = None

    def __post_init__(self):
        if self.field is not None and self.help_text:
            raise ValueError(f"{self.name}: a declared field carries its own help_text")


class Computed(serializers.Field):
    """A value computed from the whole object and the request by `compute`, on both paths;
    `schema` is its OpenAPI type (a drf-spectacular annotation)."""

    def __init__(self, compute: Render, schema: Any, **kwargs):
        super().__init__(source="*", read_only=True, **kwargs)
        self.compute = compute
        # On the field object, where drf-spectacular looks first (its decorator's usual
        # targets are classes and methods).
        extend_schema_field(schema)(self)  # type: ignore[type-var]

    def to_representation(self, value):
        return self.compute(value, self.context.get("request"))


class Table:
    def __init__(self, model: type[Model], *columns: Column):
        self.model = model
        self.columns = columns
        self.names = [column.name for column in columns]
        # render(instance, request): the object's JSON, as its serializer gives it.
        self.render: Callable[[Any, Any], dict] = _compiled([_step(c) for c in columns])

    def extended(self, *columns: Column) -> "Table":
        return Table(self.model, *self.columns, *columns)


def _compiled(steps: list[tuple[str, str | None, Render | None]]) -> Callable[[Any, Any], dict]:
    """One function that returns the object's dict as a literal, each attribute read and each
    render function called in place: its source is made here from the columns, as dataclasses
    make an __init__. A loop over the columns cost an image's rendering a tenth more
    (docs/api.md); tests/publicapi/serializers/test_table.py compares every page with DRF's."""
    namespace: dict[str, Any] = {}
    entries = []
    for number, (name, path, render) in enumerate(steps):
        if path is None:
            namespace[f"render_{number}"] = render
            value = f"render_{number}(instance, request)"
        elif all(part.isidentifier() and not iskeyword(part) for part in path.split(".")):
            value = f"instance.{path}"
        else:  # not a name Python would read as one: looked up by attrgetter
            namespace[f"get_{number}"] = attrgetter(path)
            value = f"get_{number}(instance)"
        entries.append(f"{name!r}: {value}")
    source = "def render(instance, request):\n    return {" + ", ".join(entries) + "}\n"
    exec(source, namespace)  # noqa: S102 - our own source: the columns' names and functions
    return namespace["render"]


# DRF fields whose JSON is the attribute's value as it is (an int, a str, a bool or None).
_AS_IS = (serializers.IntegerField, serializers.CharField, serializers.BooleanField)


def _step(column: Column) -> tuple[str, str | None, Render | None]:
    """(name, the attribute it is, or the function that renders it)."""
    field = column.field
    if column.render is not None:
        return column.name, None, column.render
    if field is None:
        return column.name, column.name, None
    if isinstance(field, Computed):
        return column.name, None, field.compute
    source = field.source or column.name
    if isinstance(field, TableSerializer):
        return column.name, None, _nested(attrgetter(source), field.table)
    if isinstance(field, serializers.ListSerializer) and isinstance(field.child, TableSerializer):
        return column.name, None, _nested_list(attrgetter(source), field.child.table)
    if isinstance(field, _AS_IS) and source != "*":
        return column.name, source, None
    raise TypeError(f"{column.name}: give the column a render function for {field!r}")


def _nested(get: Callable[[Any], Any], table: Table) -> Render:
    def render(instance, request):
        value = get(instance)
        return None if value is None else table.render(value, request)

    return render


def _nested_list(get: Callable[[Any], Any], table: Table) -> Render:
    def render(instance, request):
        values = get(instance)
        if not isinstance(values, list):  # a related manager, as on a model instance
            values = values.all()
        return [table.render(value, request) for value in values]

    return render


class TableSerializer(serializers.ModelSerializer):
    """A read-only ModelSerializer made from `table`: a subclass sets `table` and nothing else.
    It renders directly with the table; `fast = False` (on this class, for the bench and the
    tests) falls back to DRF's field-by-field rendering of the same fields."""

    table: ClassVar[Table]
    fast: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        table = cls.table
        # DRF's metaclass has collected the class's declared fields before this runs (none:
        # they are the table's).
        cls._declared_fields = {c.name: c.field for c in table.columns if c.field is not None}

        class Meta:
            model = table.model
            fields = table.names
            read_only_fields = table.names
            extra_kwargs = {
                c.name: {"help_text": c.help_text}
                for c in table.columns
                if c.field is None and c.help_text
            }

        cls.Meta = Meta  # type: ignore[misc,assignment]  # ModelSerializer reads it per instance

    def to_representation(self, instance):
        if not self.fast:
            return super().to_representation(instance)
        return self.table.render(instance, self.context.get("request"))
