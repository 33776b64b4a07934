"""The app's values entry: one server per configuration of its interface, rendered like a target."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from labtester.targets import DEFAULT_VALUES
from tests.chart.conftest import PREFIX, Manifest, Render, find, helm_template
from tests.chart.test_targets import container_env, target_container

MODULE = "examples.shop.flask_app:app"
PATHS = ("/products", "/search?q=lamp")


def configurations() -> list[dict[str, Any]]:
    return list(yaml.safe_load(DEFAULT_VALUES.read_text())["app"]["configurations"])


def enabled(interface: str) -> tuple[str, ...]:
    return (
        "app.enabled=true",
        f"app.module={MODULE}",
        f"app.interface={interface}",
        f"app.paths={{{','.join(PATHS)}}}",
    )


def app_deployments(manifests: list[Manifest]) -> set[str]:
    return {
        m["metadata"]["name"].removeprefix(f"{PREFIX}-")
        for m in manifests
        if m["kind"] == "Deployment" and m["metadata"]["labels"]["app.kubernetes.io/component"] == "app"
    }


def test_the_app_is_not_rendered_unless_enabled(default_manifests: list[Manifest]) -> None:
    assert app_deployments(default_manifests) == set()


@pytest.mark.parametrize("interface", ["asgi", "wsgi"])
def test_one_server_per_configuration_of_the_apps_interface(render: Render, interface: str) -> None:
    manifests = render(set_values=enabled(interface))
    mine = [c for c in configurations() if c["interface"] == interface]
    assert app_deployments(manifests) == {f"app-{c['name']}" for c in mine}
    scrape = yaml.safe_load(find(manifests, "ConfigMap", f"{PREFIX}-prometheus")["data"]["prometheus.yml"])
    scraped = {
        group["labels"]["target"] for job in scrape["scrape_configs"] for group in job["static_configs"]
    }
    for configuration in mine:
        name = f"app-{configuration['name']}"
        container = target_container(manifests, name)
        env = container_env(container)
        assert container["command"] == ["python", "-m", "app_target"]
        assert container["image"].startswith("concurrency-lab/app-target:")
        assert env.items() >= configuration["env"].items()
        assert (env["LAB_APP"], env["LAB_APP_PATHS"], env["LAB_NAME"]) == (MODULE, ",".join(PATHS), name)
        assert env["LAB_DOWNSTREAM_URL"] == f"http://{PREFIX}-downstream:8000"
        find(manifests, "Service", f"{PREFIX}-{name}")
        assert name in scraped


def test_an_enabled_app_names_its_module_and_interface() -> None:
    for missing in (("app.enabled=true", "app.interface=wsgi"), ("app.enabled=true", f"app.module={MODULE}")):
        rendered = helm_template(*(arg for value in missing for arg in ("--set", value)))
        assert rendered.returncode != 0
        assert "app/module" in rendered.stderr or "app/interface" in rendered.stderr, rendered.stderr


def test_paths_start_with_a_slash() -> None:
    rendered = helm_template(
        "--set",
        "app.enabled=true",
        "--set",
        f"app.module={MODULE}",
        "--set",
        "app.interface=wsgi",
        "--set",
        "app.paths={products}",
    )
    assert rendered.returncode != 0 and "app/paths/0" in rendered.stderr, rendered.stderr
