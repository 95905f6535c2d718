"""What a frontend developer gets from the API's docs: a docs page that works without the
internet, a schema to read in the browser, and a generated client that needs no credentials
for the public API."""

import json
import subprocess
import sys
from urllib.parse import urlsplit

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from tests.factories import RunwayFactory, RunwayImageFactory


def test_the_docs_page_works_with_nothing_but_the_server(live_server, browser_page):
    page = browser_page
    server = urlsplit(live_server.url).netloc
    elsewhere: list[str] = []

    def only_the_server(route):
        if urlsplit(route.request.url).netloc == server:
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    page.route("**/*", only_the_server)
    page.goto(live_server.url + "/api/docs/")

    # Swagger UI drew the operations, from files the project served.
    expect(page.locator(".opblock").first).to_be_visible()
    assert page.locator(".opblock").count() >= 10
    assert elsewhere == []
    # The description links the schema as JSON, which the browser shows rather than saves.
    link = page.get_by_role("link", name="as JSON").get_attribute("href")
    page.goto(live_server.url + link)
    assert json.loads(page.locator("body").inner_text())["openapi"].startswith("3.")


@pytest.mark.django_db
def test_the_schema_as_json_is_shown_in_the_browser(client):
    response = client.get("/api/schema.json", HTTP_ACCEPT="text/html,*/*;q=0.8")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/json")
    assert not response["Content-Disposition"].startswith("attachment")
    assert "/api/v1/runways/" in json.loads(response.content)["paths"]


@pytest.fixture
def schema(tmp_path) -> dict:
    out = tmp_path / "schema.json"
    call_command("spectacular", "--format", "openapi-json", "--file", str(out))
    return json.loads(out.read_text())


@pytest.mark.django_db
def test_public_operations_carry_no_security_requirement(schema):
    operations = {
        (method, path): operation
        for path, methods in schema["paths"].items()
        for method, operation in methods.items()
    }

    public = {key: op for key, op in operations.items() if key[1].startswith("/api/v1/")}
    assert public and all("security" not in op for op in public.values())
    # The crawler's endpoints keep their signature.
    assert operations[("post", "/api/ingest/v1/albums")]["security"] == [
        {"webhookId": [], "webhookTimestamp": [], "webhookSignature": []}
    ]


GENERATED_CLIENT_USE = """
from archive_client import Client
from archive_client.api.runways import v1_runways_list, v1_runways_retrieve
from archive_client.models import PaginatedRunwayList, RunwayDetail

client = Client(base_url="{url}")
page = v1_runways_list.sync(client=client, page_size=10)
assert isinstance(page, PaginatedRunwayList), page
detail = v1_runways_retrieve.sync(id=page.results[0].id, client=client)
assert isinstance(detail, RunwayDetail), detail
print(detail.title, len(detail.images))
"""


@pytest.mark.slow
def test_a_generated_client_calls_the_public_api_with_a_plain_client(live_server, tmp_path, schema):
    runway = RunwayFactory(title="Acme Fall 2024 RTW", published=True)
    RunwayImageFactory.create_batch(2, runway=runway)
    (tmp_path / "schema.json").write_text(json.dumps(schema))
    bin_dir = f"{sys.prefix}/bin"
    subprocess.run(  # noqa: S603 - the venv's generator, fixed arguments
        [f"{bin_dir}/openapi-python-client", "generate", "--path", "schema.json", "--meta",
         "none", "--output-path", "archive_client"],
        cwd=tmp_path, check=True, capture_output=True,
    )  # fmt: skip
    use = tmp_path / "use.py"
    use.write_text(GENERATED_CLIENT_USE.format(url=live_server.url))

    # Type-checked as a frontend developer's code would be; the generated package's own
    # internals are the generator's business (--follow-imports=silent).
    typed = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent",
         "--no-incremental", "--config-file=/dev/null", "use.py"],
        cwd=tmp_path, capture_output=True, text=True,
    )  # fmt: skip
    assert typed.returncode == 0, typed.stdout
    ran = subprocess.run(
        [sys.executable, "use.py"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "Acme Fall 2024 RTW 2"
