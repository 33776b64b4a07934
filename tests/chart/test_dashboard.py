"""The Grafana dashboard: generated as code, committed as JSON, provisioned as the chart says."""

from __future__ import annotations

import json

import yaml

from tests.chart.conftest import PREFIX, Manifest, deployed_definitions, find
from tests.chart.dashboard import DASHBOARD_JSON, committed, expressions, load_generator, panels


def test_committed_json_is_what_the_generator_builds() -> None:
    assert DASHBOARD_JSON.read_text() == load_generator().render(), (
        "dashboards/lab.json is stale: run .venv/bin/python charts/concurrency-lab/dashboards/build.py"
    )


def test_dashboard_has_the_lab_panels() -> None:
    exprs = expressions(committed())
    # (what the panel shows, a fragment its query must contain)
    required = {
        "requests/s by target and route": "sum by (target, route) (rate(lab_http_requests_total",
        "latency p50": "histogram_quantile(0.5, sum by (target, le)",
        "latency p95": "histogram_quantile(0.95, sum by (target, le)",
        "latency p99": "histogram_quantile(0.99, sum by (target, le)",
        "in flight by target": "sum by (target) (lab_http_requests_in_flight)",
        "processes by target": "sum by (target, role) (lab_server_processes)",
        "threads by target": "sum by (target) (lab_server_threads)",
        "CPU by target": "sum by (target) (rate(lab_server_cpu_seconds_total",
        "CPU throttling by target": "sum by (target) (rate(lab_cgroup_cpu_throttled_seconds_total",
        "errors by status": 'sum by (target, status) (rate(lab_http_requests_total{status=~"[45].."}',
    }
    missing = [what for what, fragment in required.items() if not any(fragment in expr for expr in exprs)]
    assert not missing


def test_every_query_uses_the_provisioned_datasource(default_manifests: list[Manifest]) -> None:
    provisioning = find(default_manifests, "ConfigMap", f"{PREFIX}-grafana-provisioning")["data"]
    (datasource,) = yaml.safe_load(provisioning["datasources.yaml"])["datasources"]
    expected = {"type": datasource["type"], "uid": datasource["uid"]}
    for panel in panels(committed()):
        assert panel["datasource"] == expected, panel["title"]
        assert all(target["datasource"] == expected for target in panel["targets"]), panel["title"]
    prometheus = find(default_manifests, "Service", f"{PREFIX}-prometheus")
    assert (
        datasource["url"]
        == f"http://{prometheus['metadata']['name']}:{prometheus['spec']['ports'][0]['port']}"
    )


def test_grafana_embeds_the_committed_dashboard(default_manifests: list[Manifest]) -> None:
    data = find(default_manifests, "ConfigMap", f"{PREFIX}-grafana-dashboards")["data"]
    assert json.loads(data["lab.json"]) == committed()


def test_grafana_is_anonymous_read_only_with_a_secret_admin_password(
    default_manifests: list[Manifest],
) -> None:
    deployment = find(default_manifests, "Deployment", f"{PREFIX}-grafana")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    env = {item["name"]: item for item in container["env"]}
    assert env["GF_AUTH_ANONYMOUS_ENABLED"]["value"] == "true"
    assert env["GF_AUTH_ANONYMOUS_ORG_ROLE"]["value"] == "Viewer"
    secret_ref = env["GF_SECURITY_ADMIN_PASSWORD"]["valueFrom"]["secretKeyRef"]
    secret = find(default_manifests, "Secret", secret_ref["name"])
    assert len(secret["data"][secret_ref["key"]]) >= 16  # generated, base64


def test_prometheus_scrapes_every_target_with_its_name_at_its_metrics_port(
    default_manifests: list[Manifest],
) -> None:
    """The `metrics` port: /metrics from a thread the request path cannot hold (CONTRACT.md)."""
    config = yaml.safe_load(
        find(default_manifests, "ConfigMap", f"{PREFIX}-prometheus")["data"]["prometheus.yml"]
    )
    static = [group for job in config["scrape_configs"] for group in job["static_configs"]]
    scraped = {group["labels"]["target"]: group["targets"] for group in static}
    expected = {}
    for definition in deployed_definitions():
        service = find(default_manifests, "Service", f"{PREFIX}-{definition.name}")
        (port,) = [port for port in service["spec"]["ports"] if port["name"] == "metrics"]
        deployment = find(default_manifests, "Deployment", f"{PREFIX}-{definition.name}")
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        (container_port,) = [p for p in container["ports"] if p["name"] == port["targetPort"]]
        env = {item["name"]: item["value"] for item in container["env"]}
        assert container_port["containerPort"] == int(env["LAB_METRICS_PORT"]) == 9100
        expected[definition.name] = [f"{service['metadata']['name']}:{port['port']}"]
    assert scraped == expected


def test_prometheus_and_grafana_have_startup_probes(default_manifests: list[Manifest]) -> None:
    """Liveness waits for a slow first start (WAL replay, database migrations) on a small CPU share."""
    for component in ("prometheus", "grafana"):
        deployment = find(default_manifests, "Deployment", f"{PREFIX}-{component}")
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        startup = container["startupProbe"]
        assert startup["httpGet"] == container["readinessProbe"]["httpGet"], component
        assert startup["periodSeconds"] * startup["failureThreshold"] >= 300, component
        assert "initialDelaySeconds" not in container["livenessProbe"], component
