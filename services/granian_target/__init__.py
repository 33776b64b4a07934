"""granian (a Rust HTTP server) serving the lab's own FastAPI app as ASGI and its Flask app as WSGI."""
