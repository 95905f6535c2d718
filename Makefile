# The README's words. `make run` and `make test` are the two set-up commands; `make demo` is
# the step after the first.
.PHONY: help run demo test test-fast lint hooks worker scheduler bench constraints
.DEFAULT_GOAL := help

help:  ## list these targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  make %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

run:  ## install and start the embedded system (SQLite, local media, in-process jobs)
	scripts/run.sh

demo:  ## push a demo runway and street album to `make run`'s server, for a first review
	scripts/demo.sh

test:  ## install and run everything CI runs
	scripts/test.sh

test-fast:  ## the same without the slow stress and fault tests
	scripts/test.sh -m "not slow"

lint:  ## ruff, the import contracts, the code's shape and mypy (the static part of `make test`)
	scripts/bootstrap.sh requirements-dev.txt
	.venv/bin/ruff check . && .venv/bin/ruff format --check . && .venv/bin/lint-imports
	.venv/bin/python scripts/check_shape.py
	.venv/bin/mypy

worker:  ## an rq worker for every queue (needs REDIS_URL)
	.venv/bin/python manage.py rqworker visibility ingest renditions maintenance --with-scheduler

scheduler:  ## rq's cron scheduler, riding out Redis outages: enqueues the maintenance jobs (needs REDIS_URL)
	.venv/bin/python manage.py rqcron config.cron

bench:  ## every script in bench/ (BENCH_DATABASE_URL: the PostgreSQL server they use)
	scripts/bootstrap.sh requirements-dev.txt
	scripts/services.sh
	scripts/varnish.sh
	for script in bench/*.py; do echo "== $$script"; .venv/bin/python $$script || exit 1; done

hooks:  ## install the git hooks of .pre-commit-config.yaml (ruff, mypy, commit subject)
	scripts/bootstrap.sh requirements-dev.txt
	.venv/bin/pre-commit install

constraints:  ## re-pin every indirect dependency: a fresh venv, requirements-dev.txt, pip freeze
	scripts/bootstrap.sh requirements-dev.txt
	rm -rf /tmp/archive-constraints && .venv/bin/python -m venv /tmp/archive-constraints
	/tmp/archive-constraints/bin/pip install --quiet -r requirements-dev.txt
	{ grep '^#' constraints.txt; /tmp/archive-constraints/bin/pip freeze; } >constraints.txt.new
	mv constraints.txt.new constraints.txt
