"""scripts/image_tag.py: an image's tag follows what its build reads, and the chart deploys it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from labtester.targets import REPO_ROOT
from tests.chart.conftest import PREFIX, find, render_chart
from tests.script_module import SCRIPTS, load_script

image_tag = load_script("scripts/image_tag.py")
DOCKERFILE = Path("images/Dockerfile")
REPOSITORY = "concurrency-lab/fastapi-target"
# The shape of the lab's Dockerfiles: a build stage copying the sources and the wheelhouse, a
# final stage copying from it, and a build argument naming the package.
TEST_DOCKERFILE = """ARG BASE_IMAGE=python:3.12-slim
FROM ${BASE_IMAGE} AS build
COPY build/wheelhouse /wheelhouse
COPY pyproject.toml ./
COPY services ./services
COPY tester ./tester
RUN pip install --no-index --find-links /wheelhouse .
FROM ${BASE_IMAGE}
ARG MODULE
COPY --from=build /opt/venv /opt/venv
EXPOSE 8000
CMD ["python", "-m", "${MODULE}"]
"""


@pytest.fixture
def context(tmp_path: Path) -> Path:
    """A copy of the build context's inputs, to change without touching the checkout."""
    for name in ("services", "tester"):
        shutil.copytree(REPO_ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", ".dockerignore", "README.md"):
        shutil.copy(REPO_ROOT / name, tmp_path / name)
    (tmp_path / "build" / "wheelhouse").mkdir(parents=True)
    (tmp_path / "build" / "wheelhouse" / "fastapi-1.0-py3-none-any.whl").write_bytes(b"wheel")
    (tmp_path / DOCKERFILE).parent.mkdir()
    (tmp_path / DOCKERFILE).write_text(TEST_DOCKERFILE)
    return tmp_path


def tag(context: Path, *build_args: str) -> str:
    """The script as the Makefile runs it."""
    command = [
        sys.executable,
        str(SCRIPTS / "image_tag.py"),
        str(context / DOCKERFILE),
        "--context",
        str(context),
    ]
    command += [arg for build_arg in build_args for arg in ("--build-arg", build_arg)]
    return subprocess.run(command, capture_output=True, text=True, check=True, timeout=60).stdout.strip()


def test_a_code_change_gives_a_new_tag_and_the_deployment_points_at_it(context: Path) -> None:
    before = tag(context)
    assert tag(context) == before, "the same content, the same tag"
    source = context / "services" / "apps" / "lab_fastapi" / "app.py"
    source.write_text(source.read_text() + "\n# a change\n")
    after = tag(context)
    assert after != before

    manifests = render_chart(set_string=(f"image.tags.{REPOSITORY}={after}",))
    (container,) = find(manifests, "Deployment", f"{PREFIX}-fastapi")["spec"]["template"]["spec"][
        "containers"
    ]
    assert container["image"] == f"{REPOSITORY}:{after}"
    # Images the tags do not name keep the shared tag.
    (tester,) = find(manifests, "Job", f"{PREFIX}-tester")["spec"]["template"]["spec"]["containers"]
    assert tester["image"] == "concurrency-lab/tester:dev"


@pytest.mark.parametrize("change", ["README.md", "services/apps/lab_fastapi/__pycache__/x.cpython-311.pyc"])
def test_what_the_build_does_not_read_keeps_the_tag(context: Path, change: str) -> None:
    """Outside every COPY, or excluded by .dockerignore: unchanged image, unchanged tag, no roll."""
    before = tag(context)
    (context / change).parent.mkdir(parents=True, exist_ok=True)
    (context / change).write_bytes(b"changed")
    assert tag(context) == before


@pytest.mark.parametrize("change", ["wheel", "build arg", "dockerfile"])
def test_dependencies_base_image_and_dockerfile_are_part_of_the_tag(context: Path, change: str) -> None:
    before = tag(context, "BASE_IMAGE=python:3.12-slim")
    if change == "wheel":
        (context / "build" / "wheelhouse" / "httpx-1.0-py3-none-any.whl").write_bytes(b"another wheel")
        assert tag(context, "BASE_IMAGE=python:3.12-slim") != before
    elif change == "build arg":
        assert tag(context, "BASE_IMAGE=concurrency-lab/debian-python:bookworm") != before
    else:
        dockerfile = context / DOCKERFILE
        dockerfile.write_text(dockerfile.read_text().replace("EXPOSE 8000", "EXPOSE 8001"))
        assert tag(context, "BASE_IMAGE=python:3.12-slim") != before


def test_tags_that_look_like_numbers_stay_strings() -> None:
    """--set would turn 1e10 into a number (1e+10); the tags are set with --set-string."""
    manifests = render_chart(set_string=(f"image.tags.{REPOSITORY}=1e10",))
    (container,) = find(manifests, "Deployment", f"{PREFIX}-fastapi")["spec"]["template"]["spec"][
        "containers"
    ]
    assert container["image"] == f"{REPOSITORY}:1e10"


@pytest.mark.parametrize("dockerfile", sorted(REPO_ROOT.glob("*/**/Dockerfile")), ids=str)
def test_every_dockerfile_of_the_lab_gets_a_stable_tag(dockerfile: Path) -> None:
    first = image_tag.content_tag(dockerfile, {"BASE_IMAGE": "python:3.12-slim"}, REPO_ROOT)
    assert first.startswith(image_tag.PREFIX) and len(first) == len(image_tag.PREFIX) + image_tag.DIGEST_CHARS
    assert image_tag.content_tag(dockerfile, {"BASE_IMAGE": "python:3.12-slim"}, REPO_ROOT) == first
    assert image_tag.context_sources(dockerfile.read_text(), {}), "it copies nothing from the context?"


def test_copy_sources_follow_build_args_and_skip_other_stages() -> None:
    dockerfile = """ARG FAMILY=fastapi_target
FROM base AS build
COPY --chown=1:1 services/${FAMILY} \\
     pyproject.toml /src/
COPY --from=build /opt/venv /opt/venv
ADD ["tester", "/tester"]
"""
    assert image_tag.context_sources(dockerfile, {}) == [
        "services/fastapi_target",
        "pyproject.toml",
        "tester",
    ]
    assert image_tag.context_sources(dockerfile, {"FAMILY": "flask_target"})[0] == "services/flask_target"
