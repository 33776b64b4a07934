"""`python -m flask_target`: the one definition of how this target is served.

Replaces this process with gunicorn (same pid, so the launcher's process is the arbiter); all
settings come from the LAB_* environment through workload.gunicorn_conf.
"""

from __future__ import annotations

from workload.serving import exec_gunicorn


def main() -> None:
    exec_gunicorn("flask_target.app:create_app()")


if __name__ == "__main__":
    main()
