"""`python -m fastapi_target`: the one definition of how this target is served.

The Dockerfile, the local launcher and the Helm chart all run this; they differ only in the
LAB_* environment (see workload.settings.TargetSettings).
"""

from __future__ import annotations

from pathlib import Path

from workload.serving import serve_uvicorn


def main() -> None:
    serve_uvicorn("fastapi_target.app:create_app", reload_dirs=[str(Path(__file__).parent)])


if __name__ == "__main__":
    main()
