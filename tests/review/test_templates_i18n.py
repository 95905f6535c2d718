"""Every template of review/ and config/ with words of its own loads i18n, so a word added
to a page without {% translate %} has the tag at hand, and a template added without it is
caught here rather than when a locale is. A cheap guard: it reads the files, it renders
nothing, and it cannot tell a translated word from a raw one in a template that loads i18n."""

import re

import pytest

from tests.support import ROOT

TEMPLATES = sorted(
    path.relative_to(ROOT)
    for folder in ("review/templates", "config/templates")
    for path in (ROOT / folder).rglob("*.html")
)
LOADS_I18N = re.compile(r"{%\s*load\s[^%]*\bi18n\b[^%]*%}")
# What is not words a reader sees, in the order it goes: comments first (they may hold tags),
# then style and script bodies, the template's tags and variables, the HTML tags (emptied of
# their template tags just before), and entities.
NOT_TEXT = [
    re.compile(r"{%\s*comment\s*%}.*?{%\s*endcomment\s*%}", re.DOTALL),
    re.compile(r"{#.*?#}", re.DOTALL),
    re.compile(r"<(style|script)\b.*?</\1>", re.DOTALL | re.IGNORECASE),
    re.compile(r"{%.*?%}|{{.*?}}", re.DOTALL),
    re.compile(r"<[^>]*>"),
    re.compile(r"&#?\w+;"),
]


def words(source: str) -> str:
    """The letters a template shows of its own; punctuation, digits and spaces dropped."""
    for pattern in NOT_TEXT:
        source = pattern.sub(" ", source)
    return re.sub(r"[\W\d_]+", "", source)


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        (
            '{% extends "admin/submit_line.html" %}{% block row %}{{ block.super }}{% endblock %}',
            "",
        ),
        ("{% comment %}\nWhy this page{% endcomment %}<div>{{ n }} × {{ m }} · &nbsp;→</div>", ""),
        ("{# a note #}<style>body { color: red; }</style><a href='{% url \"x\" %}'></a>", ""),
        ('<p>{% translate "Saved" %}</p>', ""),
        ("<p>{{ count }} albums</p>", "albums"),
        ("<h1>\n  Press preview\n</h1>", "Presspreview"),
    ],
)
def test_words_are_what_is_left_outside_tags_comments_and_markup(source, shown):
    assert words(source) == shown


def test_the_templates_are_found():
    assert {
        "review/templates/review/preview.html",
        "config/templates/admin/archive_index.html",
    } <= {str(path) for path in TEMPLATES}


@pytest.mark.parametrize("path", TEMPLATES, ids=str)
def test_a_template_with_words_loads_i18n(path):
    source = (ROOT / path).read_text()

    if words(source):
        assert LOADS_I18N.search(source), f"{path} shows {words(source)[:60]!r} without i18n"
