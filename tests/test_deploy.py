"""The deployable stack, checked without Docker (there is none on these machines): every
command compose.yaml and the Dockerfile run is one this project has, every variable they set
is one it reads, and the image holds the app and nothing of the tests."""

import importlib
import re
import shlex
from pathlib import Path

import pytest
import yaml
from django.conf import settings
from django.core.management import get_commands

ROOT = Path(__file__).resolve().parent.parent
APP_IMAGE = "fashion-archive:latest"
# Read from the environment by a library rather than by our settings (docs/operations.md).
READ_BY_LIBRARIES = {
    "AWS_ACCESS_KEY_ID": "boto3",
    "AWS_SECRET_ACCESS_KEY": "boto3",
}


def compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def app_services() -> dict[str, dict]:
    return {
        name: service
        for name, service in compose()["services"].items()
        if service.get("image") == APP_IMAGE or "build" in service
    }


def variables_the_project_reads() -> set[str]:
    names = set()
    settings = sorted((ROOT / "config" / "settings").glob("*.py"))
    for path in [*settings, ROOT / "config" / "gunicorn.py"]:
        text = path.read_text()
        names |= set(re.findall(r'env\.\w+\(\s*"([A-Z][A-Z0-9_]*)"', text))
        names |= set(re.findall(r'os\.environ(?:\.get)?[\[(]\s*"([A-Z][A-Z0-9_]*)"', text))
    return names | set(READ_BY_LIBRARIES)


def test_the_stack_has_every_service():
    assert {"web", "worker", "scheduler", "postgres", "redis", "s3", "migrate"} <= set(
        compose()["services"]
    )
    assert set(app_services()) == {"web", "worker", "scheduler", "migrate"}


def test_the_variable_scan_finds_what_settings_read():
    # The scan below would pass vacuously if it found nothing.
    assert {"DATABASE_URL", "REDIS_URL", "SECRET_KEY", "WEB_CONCURRENCY"} <= (
        variables_the_project_reads()
    )


@pytest.mark.parametrize("name", ["web", "worker", "scheduler", "migrate"])
def test_each_variable_an_app_service_sets_is_one_the_project_reads(name):
    known = variables_the_project_reads()

    unknown = set(app_services()[name]["environment"]) - known

    assert not unknown, f"{name} sets variables nothing reads: {sorted(unknown)}"


def run_command(command: list[str]) -> None:
    """Fail unless ``command`` is one the project can run."""
    if command[0] == "gunicorn":
        assert command[1:3] == ["-c", "config/gunicorn.py"]
        config = (ROOT / "config" / "gunicorn.py").read_text()
        module, _, app = re.search(r'wsgi_app = "([\w.:]+)"', config).group(1).partition(":")
        # Importing it would run the system checks (config/wsgi.py); test_metrics serves
        # through this very configuration.
        source = ROOT / (module.replace(".", "/") + ".py")
        assert re.search(rf"^{app} = ", source.read_text(), re.M), source
        return
    assert command[:2] == ["python", "manage.py"], command
    subcommand, args = command[2], command[3:]
    assert subcommand in get_commands(), f"no management command {subcommand!r}"
    if subcommand == "rqworker":
        queues = [arg for arg in args if not arg.startswith("-")]
        assert queues and set(queues) <= set(settings.RQ_QUEUES), queues
    if subcommand == "rqcron":
        importlib.import_module(args[0])  # registers the schedule; fails if a task is gone


@pytest.mark.parametrize("name", ["web", "worker", "scheduler", "migrate"])
def test_each_app_service_runs_a_command_the_project_has(name):
    run_command(app_services()[name]["command"])


def test_services_wait_for_migrations_and_migrate_runs_once():
    services = compose()["services"]
    assert services["migrate"]["restart"] == "no"
    for name in ("web", "worker", "scheduler"):
        condition = services[name]["depends_on"]["migrate"]["condition"]
        assert condition == "service_completed_successfully", name


# --- The Dockerfile --------------------------------------------------------------------------


def dockerfile() -> list[tuple[str, str]]:
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    return [
        (line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line else "")
        for line in map(str.strip, text.splitlines())
        if line and not line.startswith("#")
    ]


def test_the_image_is_built_in_two_stages_and_runs_as_a_user():
    instructions = dockerfile()
    stages = [args for op, args in instructions if op == "FROM"]
    assert len(stages) == 2 and stages[0].endswith("AS build")
    users = [args for op, args in instructions if op == "USER"]
    assert users and users[-1] not in {"root", "0"}


def test_the_image_holds_the_app_and_not_the_tests():
    copied = {
        shlex.split(args)[0]
        for op, args in dockerfile()
        if op == "COPY" and not args.startswith("--from")
    }
    for source in copied:
        assert (ROOT / source).exists(), source
    local_apps = {app for app in settings.INSTALLED_APPS if (ROOT / app).is_dir()}
    assert local_apps | {"config", "manage.py"} <= copied
    assert not copied & {"tests", "bench", "docs", "scripts", "requirements-dev.txt", "."}


def test_the_image_serves_with_gunicorn_and_checks_healthz():
    instructions = dict(dockerfile())
    assert shlex.split(instructions["CMD"].replace(",", " ").strip("[]")) == [
        "gunicorn",
        "-c",
        "config/gunicorn.py",
    ]
    assert "/healthz" in instructions["HEALTHCHECK"]
    run_command(["gunicorn", "-c", "config/gunicorn.py"])


WORKER_QUEUES = ["visibility", "ingest", "renditions", "maintenance"]


def test_every_worker_command_serves_the_queues_in_one_order():
    # Takedowns first, then new albums, then their renditions, then maintenance: rq takes
    # from the first queue that has a job (docs/operations.md, "Queues").
    commands = [app_services()["worker"]["command"]]
    for path in ("Makefile", "Dockerfile", "docs/operations.md"):
        text = (ROOT / path).read_text()
        found = re.findall(r"manage\.py rqworker ([\w -]+?)(?: --with-scheduler|`|$)", text, re.M)
        assert found, path
        commands += [["python", "manage.py", "rqworker", *line.split()] for line in found]
    for command in commands:
        queues = [arg for arg in command[3:] if not arg.startswith("-")]
        assert queues == WORKER_QUEUES, command
