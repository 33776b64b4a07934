"""FastAPI on uvicorn: one event loop per worker, and the ways to use it well and badly."""
