"""granian (a Rust HTTP server) serving the lab's own FastAPI app as ASGI and its Flask app as WSGI;
how granian serves an app factory (granian_target.serving) also serves a team's app (app_target)."""
